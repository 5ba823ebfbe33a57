"""The recovery verdict of a fluid run, meaning what ``sim.analysis.recovery`` means for a
simulated one: goodput per bucket back to the baseline's level with the median latency of the
calls that succeed at most ``LATENCY_FACTOR`` times the baseline's, in a stretch that lasts to
the horizon (the same ``recovery_point`` rule: dips, relapses, oscillations), dated where the
timely successes step up past half the baseline's timely pace (the same change point).

The fluid path is the mean's and has no noise, so the two floors of the simulation's verdict
(strict above 80%, lenient below 90%, apart by the noise) meet at their noise-free value,
``THRESHOLD`` (85%) of the baseline, for a window and a stretch alike, and nothing is
undecided. A window's median latency is at most ``LATENCY_FACTOR`` × the baseline's when at
least half of its successes are timely (each step's first attempts and retried calls carry a
latency each: ``sim.fluid.model.Series``).
"""

from __future__ import annotations

import math

import numpy as np

from sim.analysis.recovery import (LATENCY_FACTOR, MIN_BASELINE, PACE_SHARE, RECOVERY_WINDOW, THRESHOLD,
                                   recovery_point)
from sim.models.workloads import Outage


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The ``q`` quantile of ``values`` weighted by ``weights`` (nan when nothing weighs)."""
    return weighted_quantiles(values, weights, (q,))[0]


def weighted_quantiles(values: np.ndarray, weights: np.ndarray, qs: tuple[float, ...]) -> tuple[float, ...]:
    """``weighted_quantile`` at each of ``qs``, from one sort."""
    keep = (weights > 0) & np.isfinite(values)
    if not keep.any():
        return tuple(math.nan for _ in qs)
    v, w = values[keep], weights[keep]
    order = np.argsort(v, kind="stable")
    cum = np.cumsum(w[order])
    ordered = v[order]
    return tuple(float(ordered[min(int(np.searchsorted(cum, q * cum[-1])), v.size - 1)]) for q in qs)


def fluid_recovery(first: np.ndarray, first_latency: np.ndarray, retried: np.ndarray,
                   retried_latency: np.ndarray, step: float, network: float, bucket: float,
                   horizon: float, disruptions: tuple[Outage, ...],
                   width: int = RECOVERY_WINDOW) -> tuple[float, float]:
    """``(recovered, recovery_time)`` of one fluid run: (1, time after the last disruption's
    end), (0, nan) never, (nan, nan) nothing to judge (no disruption, no baseline)."""
    if not disruptions:
        return math.nan, math.nan
    steps = first.size
    arrive = (np.arange(steps) + 1) * step + network  # when each step's replies reach the clients
    buckets = int(math.ceil(horizon / bucket - 1e-9))
    index = np.minimum((arrive / bucket).astype(np.int64), buckets - 1)
    total = first + retried
    goodput = np.bincount(index, weights=total, minlength=buckets)[:buckets]
    outage = disruptions[0]
    lo, hi = int(outage.start / 2 / bucket), int(outage.start / bucket)
    before = goodput[lo:hi]
    if before.size < MIN_BASELINE or before.mean() <= 0:
        return math.nan, math.nan
    level = float(before.mean())
    span = (arrive >= lo * bucket) & (arrive < hi * bucket)
    values = np.concatenate([first_latency[span], retried_latency[span]])
    weights = np.concatenate([first[span], retried[span]])
    median = weighted_quantile(values, weights, 0.5)
    ceiling = LATENCY_FACTOR * median
    with np.errstate(invalid="ignore"):
        timely = (np.where(first_latency <= ceiling, first, 0.0)
                  + np.where(retried_latency <= ceiling, retried, 0.0))
    pace = float(timely[span].sum()) / ((hi - lo) * bucket)
    timely_b = np.bincount(index, weights=timely, minlength=buckets)[:buckets]
    last = disruptions[-1]
    start = int(math.ceil(last.end / bucket - 1e-9))
    width = min(width, max(1, buckets - start))
    if buckets - width < start:
        return math.nan, math.nan
    kernel = np.ones(width)
    sums = np.convolve(goodput, kernel, mode="valid")[start:]
    timely_sums = np.convolve(timely_b, kernel, mode="valid")[start:]
    healthy = (sums / width >= THRESHOLD * level) & (timely_sums >= 0.5 * sums) & (sums > 0)
    point = recovery_point(healthy, width)
    if point is None:
        return 0.0, math.nan
    first_bucket = start + point
    since = last.end if first_bucket == start else first_bucket * bucket
    until = (first_bucket + width) * bucket
    inside = (arrive >= since) & (arrive < until)
    instant = since
    if inside.any():
        t = arrive[inside]
        deficit = PACE_SHARE * pace * (t - since) - np.concatenate([[0.0], np.cumsum(timely[inside])[:-1]])
        peak = int(np.argmax(deficit))
        instant = float(t[peak]) if deficit[peak] > 0 else since
    stretch = goodput[max(first_bucket, round(instant / bucket)):]
    if stretch.size < width or stretch.mean() < THRESHOLD * level:
        return 0.0, math.nan
    return 1.0, max(0.0, instant - last.end)
