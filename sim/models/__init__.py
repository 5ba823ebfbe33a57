"""The models a simulation is made of, one module per family, each registering its classes:
backoff strategies (``strategies``, ``library_strategies``), contention controls (``controls``),
servers that reply (``servers``, ``flaky``), workloads (``workloads``), clients (``clients``) and outages
(``outage``).

Importing this package imports every family, so the registries below are complete: nothing
imports a model module only for its registration side effect.
"""

from __future__ import annotations

from sim.models import clients, controls, flaky, library_strategies, outage, servers, strategies, workloads  # noqa: F401
from sim.models.controls import CONTROLS
from sim.models.strategies import STRATEGIES
from sim.models.workloads import WORKLOADS

__all__ = ["CONTROLS", "STRATEGIES", "WORKLOADS"]


def replying_only_events() -> frozenset[int]:
    """Event codes that only runs against servers that reply record (from the declared
    ``Capabilities`` and client models): their presence in an events file marks such a run."""
    from sim.models.clients import client_events

    replying: set[int] = set()
    other: set[int] = set()
    for cls in CONTROLS.values():
        (replying if cls.CAPS.replies else other).update(cls.CAPS.events | client_events(cls.CAPS))
    return frozenset(replying - other)
