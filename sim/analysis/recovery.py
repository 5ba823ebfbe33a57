"""Did the server recover after an outage, and when: a verdict that noise, a partial return, a
collapse of latency or an oscillation cannot fool.

A run's **baseline** is its steady state before the first outage: goodput per bucket over the second
half of the time before it (the first half is warm-up), with its spread (at least Poisson's) and
how many buckets it rests on, and the median latency of the requests that succeeded in it.

After the last outage, a **window** of ``RECOVERY_WINDOW`` buckets is *healthy* when

- its goodput is at least ``RECOVERY_LEVEL`` (90%) of the baseline's, less ``WINDOW_Z`` standard
  errors of the difference (the window's noise and the baseline's own uncertainty), and
- the median latency of the requests that succeeded in it is at most ``LATENCY_FACTOR`` (2) times
  the baseline's median.

The run has **recovered** at the first bucket of a stretch of healthy windows that lasts to the end
of the horizon, where

- the whole stretch's goodput reaches 90% of the baseline less ``STRETCH_Z`` standard errors (a
  return to 80% is never read as recovery, however noisy each window is);
- a short dip is forgiven: an unhealthy run of at most one window's worth of positions that
  follows at least ``DIP_AFTER`` windows of health does not end the stretch (nor does such a dip
  at the very end); dips in quick succession are a relapse;
- the stretch is longer than every earlier healthy stretch that ended in a relapse, so an
  oscillation (say 30 s at twice the baseline, 30 s at zero) is never recovery, while a single
  relapse followed by a long steady return dates the recovery after the relapse.

``nan`` means never within the horizon; ``None`` means there is nothing to judge: no outage, or no
baseline (an outage at or near t = 0, or no success before it). The recovery point is the first
bucket of the first healthy window that is healthy on its own, so a sharp return reads exactly and
a slow ramp at most part of a window early.

``RecoverySummary`` aggregates the repetitions: "3/3 recovered, median 600 (400–1,000)",
"1/3 recovered", "never (0/3)". One repetition that never recovered no longer vetoes the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.models.workloads import Outage

RECOVERY_LEVEL = 0.9  # goodput, as a fraction of the baseline
LATENCY_FACTOR = 2.0  # median latency, as a multiple of the baseline's
RECOVERY_WINDOW = 10  # buckets per window (the default bucket is a 200th of the horizon)
WINDOW_Z = 3.0  # a window may fall this many standard errors short (many windows are tested)
STRETCH_Z = 2.0  # the whole stretch may fall this many standard errors short
DIP_AFTER = 2  # windows of health before a dip is forgiven
MIN_BASELINE = 4  # buckets the baseline needs at least


@dataclass(frozen=True)
class Baseline:
    """The steady state before the first outage."""

    goodput: float  # mean successes per bucket
    spread: float  # standard deviation per bucket, at least Poisson's sqrt(mean)
    buckets: int
    latency: float  # median latency of its successes

    def allowance(self, buckets: int, z: float) -> float:
        """How far below 90% of the baseline a mean over ``buckets`` buckets may fall by noise:
        ``z`` standard errors of (that mean − 0.9 × the baseline's mean)."""
        return z * self.spread * math.sqrt(1.0 / buckets + RECOVERY_LEVEL ** 2 / self.buckets)


def baseline(goodput: np.ndarray, bucket: float, first: Outage, success_times: np.ndarray,
             latencies: np.ndarray) -> Baseline | None:
    """The baseline before ``first``, or None when there is none to compare against."""
    lo, hi = int(first.start / 2 / bucket), int(first.start / bucket)
    before = np.asarray(goodput[lo:hi], dtype=np.float64)
    if before.size < MIN_BASELINE or before.mean() <= 0:
        return None
    in_span = (success_times >= lo * bucket) & (success_times < hi * bucket)
    if not in_span.any():
        return None
    level = float(before.mean())
    spread = max(float(before.std(ddof=1)), math.sqrt(level))
    return Baseline(level, spread, before.size, float(np.median(latencies[in_span])))


def bucket_edges(success_times: np.ndarray, buckets: int, bucket: float) -> np.ndarray:
    """``edges[b]``: index of the first success at or after bucket ``b``'s start (times sorted)."""
    return np.searchsorted(success_times, np.arange(buckets + 1) * bucket, side="left")


def healthy_windows(goodput: np.ndarray, start: int, base: Baseline, edges: np.ndarray,
                    latencies: np.ndarray, width: int) -> np.ndarray:
    """For each window start ``start, start + 1, ..., len(goodput) − width``: is the window healthy?"""
    g = np.asarray(goodput, dtype=np.float64)
    n = g.size
    if n - width < start:
        return np.zeros(0, dtype=bool)
    sums = np.convolve(g, np.ones(width), mode="valid")[start:]  # sums[i] covers start+i ...
    floor = RECOVERY_LEVEL * base.goodput - base.allowance(width, WINDOW_Z)
    healthy = sums / width >= floor
    ceiling = LATENCY_FACTOR * base.latency
    for i in np.nonzero(healthy)[0]:
        a, b = edges[start + i], edges[start + i + width]
        if b > a and np.median(latencies[a:b]) > ceiling:
            healthy[i] = False
    return healthy


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """``(first, end)`` of each run of True values (end exclusive)."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def recovery_point(healthy: np.ndarray, width: int) -> int | None:
    """Index (into ``healthy``) where the final recovered stretch starts, or None (see the module)."""
    runs = _runs(healthy)
    if not runs:
        return None
    positions = healthy.size
    # Short dips after long healthy runs are forgiven: merge the runs across them.
    merged: list[tuple[int, int]] = [runs[0]]
    for (prev_first, prev_end), (first, end) in zip(runs, runs[1:]):
        if first - prev_end <= width and prev_end - prev_first >= DIP_AFTER * width:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((first, end))
    first, end = merged[-1]
    last_first, last_end = runs[-1]
    if end < positions and (positions - end > width or last_end - last_first < DIP_AFTER * width):
        return None  # unhealthy at the end, and not as a short dip
    # Longer than every earlier healthy stretch (each followed by a relapse): not an oscillation.
    # Spans in buckets: a run of window starts [a, b) covers buckets a ... b - 1 + width (a dip
    # forgiven at the very end does not lengthen the final stretch).
    final_span = end - first + width - 1
    if any(e - f + width - 1 >= final_span for f, e in merged[:-1]):
        return None
    return first


def first_healthy_bucket(goodput: np.ndarray, start: int, width: int, base: Baseline,
                         edges: np.ndarray, latencies: np.ndarray) -> int:
    """The first bucket of the window at ``start`` that is healthy on its own (its goodput within
    one bucket's noise of 90%, its median latency within 2x): a sharp return is not read early."""
    floor = RECOVERY_LEVEL * base.goodput - base.allowance(1, WINDOW_Z)
    ceiling = LATENCY_FACTOR * base.latency
    for b in range(start, min(start + width, len(goodput))):
        a, z = edges[b], edges[b + 1]
        if goodput[b] >= floor and (z == a or np.median(latencies[a:z]) <= ceiling):
            return b
    return start


def recovery_time(goodput: np.ndarray, bucket: float, outages: Sequence[Outage],
                  success_times: np.ndarray, latencies: np.ndarray,
                  width: int = RECOVERY_WINDOW) -> float | None:
    """Time from the last outage's end until the run recovered (see the module); nan: never
    within the horizon; None: no outage, or no baseline to judge against."""
    if not outages:
        return None
    success_times = np.asarray(success_times, dtype=np.float64)
    latencies = np.asarray(latencies, dtype=np.float64)
    base = baseline(goodput, bucket, outages[0], success_times, latencies)
    if base is None:
        return None
    last = outages[-1]
    start = int(math.ceil(last.end / bucket - 1e-9))
    width = min(width, max(1, len(goodput) - start))
    edges = bucket_edges(success_times, len(goodput), bucket)
    healthy = healthy_windows(goodput, start, base, edges, latencies, width)
    point = recovery_point(healthy, width)
    if point is None:
        return math.nan
    stretch = np.asarray(goodput[start + point:], dtype=np.float64)
    if stretch.mean() < RECOVERY_LEVEL * base.goodput - base.allowance(stretch.size, STRETCH_Z):
        return math.nan
    first = first_healthy_bucket(goodput, start + point, width, base, edges, latencies)
    return max(0.0, first * bucket - last.end)


@dataclass(frozen=True)
class RecoverySummary:
    """The recovery verdicts of a strategy's repetitions at one client count."""

    runs: int  # repetitions judged (those with a baseline)
    times: tuple[float, ...]  # recovery times of those that recovered

    @classmethod
    def of(cls, values: Sequence[float | None]) -> RecoverySummary | None:
        """From per-repetition ``recovery_time`` values; None when none could be judged."""
        judged = [v for v in values if v is not None]
        if not judged:
            return None
        return cls(len(judged), tuple(sorted(v for v in judged if not math.isnan(v))))

    @property
    def recovered(self) -> int:
        return len(self.times)

    @property
    def fraction(self) -> float:
        """Recovered repetitions as a fraction of those judged (what a map is coloured by)."""
        return self.recovered / self.runs

    @property
    def all_recovered(self) -> bool:
        return self.recovered == self.runs

    @property
    def never(self) -> bool:
        return self.recovered == 0

    @property
    def median(self) -> float:
        """Median recovery time of the repetitions that recovered (nan if none did)."""
        return float(np.median(self.times)) if self.times else math.nan

    def text(self, number=lambda v: f"{v:,.1f}", unit: str = "") -> str:
        """``3/3 recovered, median 0.6 (0.4–1.0)``, ``1/3 recovered`` or ``never (0/3)``; with
        ``unit``, the median says it (``median 600 ms (400–1,000)``)."""
        if self.never:
            return f"never (0/{self.runs})"
        if not self.all_recovered:
            return f"{self.recovered}/{self.runs} recovered"
        spread = f" ({number(self.times[0])}–{number(self.times[-1])})" if self.runs > 1 else ""
        median = f"{number(self.median)} {unit}" if unit else number(self.median)
        return f"{self.runs}/{self.runs} recovered, median {median}{spread}"
