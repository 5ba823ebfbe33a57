"""What ``backoff-sim check`` reports of an incident's runs, besides the recovery verdict
(``SweepResult.recovery``, the run tables' own): the extra load the retries put on the service,
the p99 the callers saw, and the share of calls lost.

- **extra load**: attempts arriving at the service per call, less the call itself (0.0: no
  retry reached it; 2.0: three attempts a call), the mean over the runs. The service is the
  last tier of a tiered simulation, else the server the clients call.
- **p99**: the 99th percentile of the clients' call latencies (first attempt to success), the
  mean over the runs of each run's own (``per_run``: as the run tables chart it).
- **goodput lost**: the share of the calls offered that never succeeded by the horizon (failed,
  gave up, or still waiting), the mean over the runs: 1 − success rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.analysis.metrics import amplification
from sim.analysis.open_metrics import OpenRunMetrics, per_run


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else math.nan


def service_attempts(m: OpenRunMetrics) -> int:
    """Attempts that reached the service in one run: the last tier's arrivals, or the first's."""
    return m.tiers[-1].requests if m.tiers else m.work


def extra_load(runs: Sequence[OpenRunMetrics]) -> float:
    """Mean attempts per call at the service beyond the first (see the module)."""
    return _mean([amplification(service_attempts(m), m.offered) - 1.0 for m in runs])


def p99(runs: Sequence[OpenRunMetrics]) -> float:
    """Mean over the runs of each run's p99 call latency (NaN where nothing succeeded)."""
    return _mean(per_run(list(runs), "p99").tolist()) if runs else math.nan


def goodput_lost(runs: Sequence[OpenRunMetrics]) -> float:
    """Mean share of the offered calls that did not succeed (1 − success rate)."""
    return _mean([1.0 - m.success_rate for m in runs])


@dataclass(frozen=True)
class IncidentFigures:
    """An incident's runs in three numbers (see the module)."""

    extra_load: float
    p99: float
    goodput_lost: float

    @classmethod
    def of(cls, runs: Sequence[OpenRunMetrics]) -> IncidentFigures:
        return cls(extra_load(runs), p99(runs), goodput_lost(runs))
