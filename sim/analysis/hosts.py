"""Per-host figures of a fleet (issue 35): what each host behind the balancer got and answered.

A run keeps, per host, the attempts the balancer sent it (``requests``), the successes and
failure replies it answered, the attempts whose client stopped waiting (``timeouts``), the
copies sent it as hedges (``hedges``, among its requests), its
ejections and time out of the balancer's set (outlier detection), and the latencies of its
successful attempts (sent to answered: what the balancer measured). Over a sweep cell's
repetitions: the means, the host's share of the fleet's traffic (its requests over all hosts'),
and the percentiles of every repetition's attempt latencies pooled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sim.analysis.open_metrics import OpenRunMetrics


@dataclass(frozen=True)
class HostRunCounts:
    """One host in one run (``sim.models.fleet.FleetRun.counts``)."""

    requests: int
    successes: int
    errors: int
    timeouts: int
    ejections: int
    ejected_time: float
    latencies: np.ndarray = field(default_factory=lambda: np.zeros(0))
    hedges: int = 0  # of the requests, the copies sent as hedges


@dataclass(frozen=True)
class HostSummary:
    """One host over a sweep cell's repetitions (means per run, the share of the fleet's
    requests, the pooled latency percentiles)."""

    host: int
    requests: float
    successes: float
    errors: float
    timeouts: float
    ejections: float
    ejected_time: float
    share: float
    p50: float
    p99: float
    hedges: float = 0.0


def host_counts(fleet: Any, end: float) -> tuple[HostRunCounts, ...]:
    """Each host's counts from a run's fleet (``sim.models.fleet.FleetRun``) at its ``end``."""
    return tuple(HostRunCounts(fleet.requests[h], fleet.successes[h], fleet.errors[h], fleet.timeouts[h],
                               fleet.ejections[h], spent, np.asarray(fleet.latencies[h], dtype=np.float64),
                               fleet.hedges[h])
                 for h, spent in enumerate(fleet.ejected_time(end)))


def host_summaries(runs: Sequence[OpenRunMetrics]) -> list[HostSummary]:
    """Per host (0 first), over the repetitions ``runs`` of one cell; [] without a fleet."""
    if not runs or not runs[0].hosts:
        return []
    total = sum(h.requests for m in runs for h in m.hosts)
    out = []
    for i in range(len(runs[0].hosts)):
        hosts = [m.hosts[i] for m in runs]
        pooled = np.concatenate([h.latencies for h in hosts])
        p50, p99 = (np.percentile(pooled, (50, 99)).tolist() if pooled.size else (math.nan, math.nan))
        requests = sum(h.requests for h in hosts)
        out.append(HostSummary(
            i, requests / len(hosts), float(np.mean([h.successes for h in hosts])),
            float(np.mean([h.errors for h in hosts])), float(np.mean([h.timeouts for h in hosts])),
            float(np.mean([h.ejections for h in hosts])), float(np.mean([h.ejected_time for h in hosts])),
            requests / total if total else math.nan, float(p50), float(p99),
            float(np.mean([h.hedges for h in hosts]))))
    return out
