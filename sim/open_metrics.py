"""Metrics of runs against replying servers: latency percentiles, counts, time series, recovery.

Recovery after an outage: the pre-outage goodput level is the mean over the second half of the time
before the first outage (skipping the warm-up); the run has recovered at the first bucket after the
last outage's end from which goodput, smoothed over ``RECOVERY_SMOOTHING`` buckets (10% of the horizon by default, so Poisson noise does not read as a relapse), stays at or
above ``RECOVERY_LEVEL`` of that level until the horizon. ``nan`` means it never did.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .metrics import RunMetrics
from .workloads import Outage

PERCENTILES = (50, 75, 90, 99)
RECOVERY_LEVEL = 0.9
RECOVERY_SMOOTHING = 20


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
    attempts_per_client: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    bucket: float = 1.0
    series: dict[str, np.ndarray] = field(default_factory=dict)
    recovery_time: float | None = None  # None: no outage; nan: never recovered

    @property
    def requests(self) -> int:
        return self.work

    @property
    def goodput(self) -> float:
        """Successful requests per time unit over the horizon."""
        return self.successes / self.horizon if self.horizon else math.nan

    @property
    def retries_per_client(self) -> float:
        n = self.attempts_per_client.size
        return (self.work - self.offered) / n if n else math.nan

    def latency_percentiles(self) -> dict[str, float]:
        return latency_summary(self.latencies)

    @property
    def recovered(self) -> bool:
        return self.recovery_time is None or not math.isnan(self.recovery_time)


def latency_summary(latencies: np.ndarray) -> dict[str, float]:
    """p50, p75, p90, p99 and max of request latencies (nan when nothing succeeded)."""
    if latencies.size == 0:
        return {**{f"p{p}": math.nan for p in PERCENTILES}, "max": math.nan}
    values = np.percentile(latencies, PERCENTILES)
    return {**{f"p{p}": float(v) for p, v in zip(PERCENTILES, values)}, "max": float(latencies.max())}


def recovery_time(goodput: np.ndarray, bucket: float, outages: tuple[Outage, ...]) -> float | None:
    """Time from the last outage's end until smoothed goodput stays >= 90% of its pre-outage level."""
    if not outages:
        return None
    first, last = outages[0], outages[-1]
    before = goodput[int(first.start / 2 / bucket):int(first.start / bucket)]
    if before.size == 0 or before.mean() <= 0:
        return math.nan
    target = RECOVERY_LEVEL * float(before.mean())
    width = min(RECOVERY_SMOOTHING, goodput.size)
    smooth = np.convolve(goodput, np.ones(width) / width, mode="valid")  # smooth[i] covers i..i+width-1
    start = int(math.ceil(last.end / bucket - 1e-9))
    if start >= smooth.size:
        return math.nan
    below = np.nonzero(smooth[start:] < target)[0]
    if below.size == 0:
        index = start
    elif below[-1] + start + 1 >= smooth.size:
        return math.nan
    else:
        index = start + int(below[-1]) + 1
    return max(0.0, index * bucket - last.end)
