"""What a run counted, as a plain record: the only thing its metrics are computed from
(``engine._metrics``). The reference engine fills one from its models (``engine.counters_of``),
a compiled kernel's run from its arrays (``fast_run.ArrayRun.counters``), so neither imitates
the other's internals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.analysis.tiers import TierRunCounts


@dataclass(slots=True)
class RunCounters:
    """A run's counters as it ended (or stands, for a run still going). Every run has the first
    group; a run whose server keeps series (``Capabilities.keeps_series``) the rest too (None,
    or 0, in the others)."""

    work: int  # attempts sent
    calls: int  # calls started (a run with series counts them in ``series["offered"]``)
    gave_up: int
    retries_denied: int = 0
    calls_refused: int = 0
    breaker_open_time: float = 0.0  # up to the run's end
    # Per-bucket series by name (``Series.names``, each of its buckets, int64), and their width;
    # None for a run that keeps none.
    series: dict[str, np.ndarray] | None = None
    bucket: float = 0.0
    successes: int = 0
    rejections: int = 0
    timeouts: int = 0
    unfinished: int = 0  # calls still open at the horizon
    attempts: np.ndarray | None = None  # per client (int64)
    latencies: np.ndarray | None = None  # the latency sample: each kept success's latency,
    latency_clients: np.ndarray | None = None  # its client (int64)
    latency_times: np.ndarray | None = None  # and when it ended
    refused: int = 0  # arrivals the outage gate's accept queue refused
    dropped: int = 0  # held requests it dropped at a resume
    tiers: tuple[TierRunCounts, ...] = ()  # every tier's, tier 1 first; () without tiers
    hosts: tuple = ()  # a fleet's hosts' counts (``sim.analysis.hosts.host_counts``); () without one
    hedges: int = 0  # hedged copies sent (a strategy entry's ``hedging``, sim.models.fleet)
