"""Metrics of runs against replying servers: latency percentiles, counts, time series, recovery.

Recovery after an outage is judged by ``recovery.recovery_verdict``; ``nan`` means never within the
horizon, ``None`` not judged: no outage, or (``recovery_note`` says which) no baseline before it, or
a baseline too noisy to tell 80% from 90% of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sim.analysis.metrics import RunMetrics, goodput, share_of_calls
from sim.analysis.recovery import recovery_time, recovery_verdict

__all__ = ["OpenRunMetrics", "latency_summary", "recovery_time", "recovery_verdict", "PERCENTILES"]

PERCENTILES = (50, 75, 90, 99)


@dataclass(frozen=True)
class OpenRunMetrics(RunMetrics):
    """A run against a replying server. ``work`` counts every attempt, as for the other controls."""

    offered: int = 0
    successes: int = 0
    rejections: int = 0
    timeouts: int = 0
    unfinished: int = 0
    horizon: float = 0.0
    latencies: np.ndarray = field(default_factory=lambda: np.zeros(0))
    latency_clients: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    latency_times: np.ndarray = field(default_factory=lambda: np.zeros(0))  # when each success arrived
    attempts_per_client: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    bucket: float = 1.0
    series: dict[str, np.ndarray] = field(default_factory=dict)
    refused: int = 0  # arrivals refused during outages (backlog full)
    dropped: int = 0  # held arrivals dropped at a resume (their client no longer waited)
    recovery_time: float | None = None  # None: not judged (see recovery_note); nan: never recovered
    recovery_note: str = ""  # why recovery_time is None with an outage (sim.analysis.recovery)
    # A tiered simulation's per-tier counts, tier 1 first (sim.analysis.tiers); () without tiers.
    tiers: tuple = ()
    # A fleet's per-host counts, host 0 first (sim.analysis.hosts); () without a fleet.
    hosts: tuple = ()

    @property
    def requests(self) -> int:
        return self.work

    @property
    def success_rate(self) -> float:
        """Share of the calls offered that succeeded by the horizon: a call still under way
        there (``unfinished``) or refused during an outage has not; NaN without calls."""
        return share_of_calls(self.successes, self.calls)

    @property
    def goodput(self) -> float:
        """Successful requests per time unit over the horizon."""
        return goodput(self.successes, self.horizon)

    def latency_percentiles(self) -> dict[str, float]:
        return latency_summary(self.latencies)

    @property
    def recovered(self) -> bool:
        return self.recovery_time is None or not math.isnan(self.recovery_time)


def latency_summary(latencies: np.ndarray) -> dict[str, float]:
    """p50, p75, p90, p99, max and mean of request latencies (nan when nothing succeeded). The
    mean is the kept sample's (every success up to ``LATENCY_SAMPLE``, then an even share)."""
    if latencies.size == 0:
        return {**{f"p{p}": math.nan for p in PERCENTILES}, "max": math.nan, "mean": math.nan}
    values = np.percentile(latencies, PERCENTILES)
    return {**{f"p{p}": float(v) for p, v in zip(PERCENTILES, values)}, "max": float(latencies.max()),
            "mean": float(latencies.mean())}


def per_run(runs: list[OpenRunMetrics], name: str) -> np.ndarray:
    """One value per run of ``goodput`` (successes per time unit) or a latency percentile
    (``p50``, ``p99``: of the run's own successes; NaN for a run with none), for a chart of
    their mean and CI over repetitions."""
    if name == "goodput":
        return np.array([m.goodput for m in runs], dtype=np.float64)
    return np.array([m.latency_percentiles()[name] for m in runs], dtype=np.float64)
