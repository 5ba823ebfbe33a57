"""Open traffic by its rate or load (``rate``, ``load``) instead of a client's ``think_time``.

An SRE knows the calls per second a service takes, or how loaded it runs, not the think time of a
client: ``rate`` is the calls per second of the whole workload (``clients`` open Poisson sources
share it), ``load`` the fraction of the server's capacity, its workers (or slots) over its mean
service time. Either sets the ``open`` workload's ``think_time`` = clients / calls per time unit,
so the run is exactly the one with that ``think_time`` written out (to 12 significant digits).
"""

from __future__ import annotations

from typing import Any

RATE_KEYS = ("rate", "load")


def capacity_per_unit(control: Any) -> float | None:
    """Calls per time unit the server completes at most: a PoolServer's workers over its mean
    service time, a QueueServer's slots over its service time; None for other servers."""
    from sim.models.pool import PoolServer
    from sim.models.servers import QueueServer

    if isinstance(control, PoolServer):
        return int(control.workers) / control.mean_service
    if isinstance(control, QueueServer):
        return int(control.concurrency) / float(control.service_time)
    return None


def think_time(clients: int, rate_per_unit: float) -> float:
    """The mean gap of each of ``clients`` open sources that together start ``rate_per_unit``,
    to 12 significant digits (as CSVs write numbers): ``rate = 320`` over 32 clients is the run of
    ``think_time = 100.0``, not of 99.99999999999999 (32 / 0.32 in floating point)."""
    return float(f"{clients / rate_per_unit:.12g}")
