"""Metrics of runs against replying servers: latency percentiles, counts, time series, recovery.

Recovery after an outage is defined in ``recovery_time``; ``nan`` means never within the horizon.
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
    """Time from the last outage's end until goodput stays at or above 90% of its pre-outage level.

    The level is the mean over the second half of the time before the first outage. The run has
    recovered at the first bucket ``b`` after the last outage such that (1) the mean goodput over
    the ``RECOVERY_SMOOTHING`` buckets from ``b`` reaches 90% of the level, (2) no later such window
    falls below that by more than three standard errors of a window mean (estimated from the
    pre-outage buckets, at least Poisson's), so noise is not read as a relapse while a real one is,
    and (3) the mean from ``b`` to the horizon reaches 90%. A sharp return reads at most
    ``RECOVERY_SMOOTHING · 10%`` buckets early. ``nan``: never within the horizon.
    """
    if not outages:
        return None
    first, last = outages[0], outages[-1]
    before = goodput[int(first.start / 2 / bucket):int(first.start / bucket)].astype(np.float64)
    if before.size == 0 or before.mean() <= 0:
        return math.nan
    level = float(before.mean())
    target = RECOVERY_LEVEL * level
    width = min(RECOVERY_SMOOTHING, goodput.size)
    spread = float(before.std(ddof=1)) if before.size > 1 else 0.0
    floor = target - 3.0 * max(spread, math.sqrt(level)) / math.sqrt(width)
    smooth = np.convolve(goodput, np.ones(width) / width, mode="valid")  # smooth[i] covers i..i+width-1
    start = int(math.ceil(last.end / bucket - 1e-9))
    if start >= smooth.size:
        return math.nan
    # (2): no window after the recovery point may dip below the noise floor
    below = np.nonzero(smooth[start:] < floor)[0]
    first_ok = start if below.size == 0 else start + int(below[-1]) + 1
    # (1) and (3): the first such point whose own window, and the mean from there to the horizon,
    # reach the target
    tail = goodput[first_ok:].astype(np.float64)
    if tail.size < width:
        return math.nan
    tail_means = (np.cumsum(tail[::-1])[::-1] / np.arange(tail.size, 0, -1))[:tail.size - width + 1]
    ok = np.nonzero((smooth[first_ok:] >= target) & (tail_means >= target))[0]
    if ok.size == 0:
        return math.nan
    return max(0.0, (first_ok + int(ok[0])) * bucket - last.end)
