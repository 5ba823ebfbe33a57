"""Per-tier figures of a tiered simulation: what each tier of a call chain saw (issue 21).

A run keeps, per tier, the attempts that arrived at it, the successes it answered and the
latencies of its callers' successful calls (first attempt to success, retries included: what
the tier costs the one above it; at tier 1 that is the clients' latency). Amplification at a
tier is its arrivals per client call (calls the clients offered): with each layer making up to
a attempts against a failing bottom, a^k at tier k.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from sim.analysis.metrics import amplification
from sim.analysis.stats import Estimate, estimate

if TYPE_CHECKING:
    from sim.analysis.open_metrics import OpenRunMetrics


@dataclass(frozen=True)
class TierRunCounts:
    """One tier in one run: attempts arriving, successes answered, call latencies (a sample),
    and the retries of calls to it that its callers' policies denied (a retry budget, a
    breaker: at tier 1 the clients' ``retries_denied``)."""

    requests: int
    successes: int
    latencies: np.ndarray = field(default_factory=lambda: np.zeros(0))
    retries_denied: int = 0


@dataclass(frozen=True)
class TierSummary:
    """One tier over a sweep cell's repetitions: amplification (mean, 95% CI), mean requests and
    successes, the latency percentiles of every repetition's calls pooled, and the mean retries
    of calls to the tier that a policy denied."""

    tier: int
    amplification: Estimate
    requests: float
    successes: float
    p50: float
    p99: float
    retries_denied: float = 0.0


def tier_summaries(runs: Sequence[OpenRunMetrics]) -> list[TierSummary]:
    """Per tier (1 = the server the clients call), over the repetitions ``runs`` of one cell."""
    if not runs:
        return []
    out = []
    for i in range(len(runs[0].tiers)):
        per_call = np.array([amplification(m.tiers[i].requests, m.offered) for m in runs])
        pooled = np.concatenate([m.tiers[i].latencies for m in runs])
        p50, p99 = (np.percentile(pooled, (50, 99)).tolist() if pooled.size else (math.nan, math.nan))
        out.append(TierSummary(i + 1, estimate(per_call),
                               float(np.mean([m.tiers[i].requests for m in runs])),
                               float(np.mean([m.tiers[i].successes for m in runs])), float(p50), float(p99),
                               float(np.mean([m.tiers[i].retries_denied for m in runs]))))
    return out
