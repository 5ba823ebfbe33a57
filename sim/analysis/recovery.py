"""Did the server recover after an outage, and when: a verdict that noise, a partial return, a
collapse of latency or an oscillation cannot fool, and that means the same at every client count.

A run's **baseline** is its steady state before the first outage: goodput per bucket over the second
half of the time before it (the first half is warm-up), with its spread (at least Poisson's) and
how many buckets it rests on, the median latency of the requests that succeeded in it, and the
pace of its *timely* successes (those within ``LATENCY_FACTOR`` times that median).

**What the verdict tells apart.** Goodput back to 90% of the baseline (``RECOVERY_LEVEL``) is
recovery; back to 80% (``SHORT_LEVEL``) is not. The verdict's comparisons are one-sided at ``Z``
(99%: a sweep gives many verdicts, and a wrong one, "never" for a server that came back or
"recovered" for one at 80%, costs more than an honest "—") and allow for the noise of both sides: with ``σ²`` a bucket's variance at the baseline's
level, the mean of ``n`` buckets at a level ``ρ`` of the baseline varies by ``σ²ρ/n`` (a count's
variance grows with its mean), the baseline's mean over ``B`` buckets, scaled by ``ρ``, by
``ρ²σ²/B``, so their difference by

    sd(ρ, n) = σ · sqrt(ρ/n + ρ²/B),

where ``σ²`` is the baseline's dispersion (its variance over its mean, at least Poisson's 1) times
its level, estimated for a stretch from both sides as if the stretch were at ``ρ`` exactly (the
score test of two Poisson rates; ``Baseline.sd``).

Two floors follow for the mean of a stretch of ``n`` buckets (per bucket, ``m`` the baseline's mean):

- **strict**: ``max(THRESHOLD·m, 0.8·m + Z·sd(0.8, n))``: at least 85% (midway between 80% and
  90%), and above 80% beyond the noise, so a server at 80% passes with probability at most 1%;
- **lenient**: ``min(THRESHOLD·m, 0.9·m − Z·sd(0.9, n))``: at least 85%, or short of 90% by no
  more than the noise, so a server at 90% fails with probability at most 1%.

Where the noise is small (``Z·sd`` under 5% of the baseline) both are 85% of the baseline: one
threshold, the same at every size. At Poisson noise and a long stretch that takes some 1,750
successes in the baseline (``(Z·0.9/0.05)²``); at 1000 clients in ``examples/server_outage.toml``
(1,500) the floors are 85% and 84.4%. Where the noise is larger they part, and a run between them
could be at 80% as well as at 90%.

The run is judged twice, the same way with each floor. After the last outage, a **window** of
``RECOVERY_WINDOW`` buckets is *healthy* when the median latency of the requests that succeeded
in it is under the baseline's **latency ceiling** and its goodput reaches the floor of
an endless stretch (the baseline's noise only, ``n`` → ∞: the *level*) less ``WINDOW_Z`` (3)
standard errors of its own noise, ``σ·sqrt(level/width)``: many windows are tested, and the
baseline's error is shared by all of them, so the window's own noise alone must not break a
stretch. Windows find where the server is back and whether it stays; the stretch's floor decides
at what level.

**The latency ceiling** is ``LATENCY_FACTOR`` (2) times the baseline's median latency, widened by
the baseline's own variability. A window's median is not a mean of independent draws: a queue's
latency wanders on its relaxation time, ~1/(μ(1 − √ρ)²) for M/M/1 (370 services at ρ = 0.9,
1,560 at 0.95: 16 s of 10 ms services), far longer than a 3 s window, so the window's count says
nothing of its median's spread, and two windows' medians differ as two draws of the queue's
level: for M/M/1 the chance that one exceeds twice the other is about 1/3, the 20–39% of
undisturbed runs the former fixed 2x called "never" (``bench/calm_verdict.py``). So the spread is
measured, not assumed: the baseline is cut into ``K`` ≥ ``MIN_BATCHES`` (8) batches no longer
than a window (shorter batches vary more, which errs on the calm side), ``s`` is the standard deviation
of their log medians, and a window's log median is predicted within ``t · s · sqrt(1 + 1/K)`` of
theirs (a prediction interval for one more draw, Student's t at ``K − 1`` degrees of freedom,
one-sided ``1 − CEILING_ALPHA``). ``CEILING_ALPHA`` = 0.1%: the stretch after an incident holds
some ten windows that do not overlap (a 60 s horizon's 30 s after the incident, 3 s windows), so
a calm run fails one with probability about 10 × 0.1% = 1% at most (Bonferroni); measured, 0 of
100–200 runs of M/M/1, M/M/4 and M/M/16 at ρ 0.8–0.95 (study notes). A baseline whose latency
does not move (constant service, a synthetic run) keeps 2x exactly; a latency collapse (10x and
more, or requests served after their timeout, when goodput falls too) stays far above it.

A **stretch** of healthy windows that lasts to the end of the horizon is a recovery when

- it lasts a window at least, counted from the recovery instant (below), and its goodput from
  there reaches the floor (for its own length);
- a short dip is forgiven: an unhealthy run of at most one window's worth of positions that
  follows at least ``DIP_AFTER`` windows of health does not end the stretch (nor does such a dip
  at the very end); dips in quick succession are a relapse;
- it is longer than every earlier healthy stretch that ended in a relapse, so an oscillation (say
  30 s at twice the baseline, 30 s at zero) is never recovery, while a single relapse followed by a
  long steady return dates the recovery after the relapse.

The verdict: **recovered** when the strict judgement finds a recovery (dated from it); **never**
(``nan``) when even the lenient one finds none; otherwise **undecided** (``None``): the data cannot
tell 80% from 90% of the baseline, and the note says whose noise is the larger share of ``sd``:
the baseline's (``TOO_NOISY``: a longer baseline would tell) or the return's (``TOO_SHORT``: say a
ramp still climbing at the horizon; a longer horizon would tell). A collapse (goodput near zero)
is "never" at any size; a return to the full baseline is "recovered" once the strict floor is
under it by the stretch's noise: from some 150 successes in the baseline at the least
(``0.64·(Z/0.15)²``, an endless stretch), a few hundred in practice (with the example's 15 s
baseline a full return is decided at 300 clients, 450 successes, and only now and then at 100,
150); every return from the 1,750 above.

**When** (``recovery_instant``): from the events, not the buckets. Within the first window of the
stretch (each judgement dates its own), the recovery instant is where the cumulative deficit of timely successes against
half the baseline's timely pace peaks (a CUSUM change point): before the return the successes lag
that pace and the deficit grows, after it they outrun it and the deficit shrinks. Half the pace
makes both slopes equal for a return from nothing to the baseline, which puts the peak within a
success or two of the step: the error is the time until a walk with drift −(1 − r) and spread r
per success (r the reference's share of the pace) last reaches its maximum, about r²/(1 − r)²
successes: 1 at r = ½, 32 at r = 0.85. At 1000 clients (~100 successes a second) that is ~10 ms
(95th percentile 75 ms in 2,000 simulated steps) where the example's 1.5 s buckets quantised it. Only
timely successes count, so the burst of requests held through the outage (served at once, seconds
late) does not read as recovery.

A baseline with too few successes for a window's test (``TOO_FEW``: under ``WINDOW_SUCCESSES``,
some 10.6 per window, a window without a single success would pass) is not judged, and its note
says the rate it would need (``too_few_note``: "needs ≥ 3.5/s" for 3 s windows).

A run too noisy to judge (``TOO_NOISY``) carries the rate of successes its baseline had and the
rate it would need (``Recovery.rate``, ``Recovery.needed_rate``: ``DECIDING_SUCCESSES`` times its
dispersion over the baseline's length, 1,753 successes at Poisson noise: 117 a second over the
example's 15 s), so a user knows how much more load or a longer baseline would tell.

``None`` also means there is nothing to judge: no outage (no note), or no baseline (an outage at or
near t = 0, or no success before it: the note ``NO_BASELINE``).

``RecoverySummary`` aggregates the repetitions: "3/3 recovered, median 600 (400–1,000)",
"1/3 recovered", "never (0/3)", with ", 2 undecided" when some could not be told.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.models.workloads import Outage

RECOVERY_LEVEL = 0.9  # goodput, as a fraction of the baseline: recovered
SHORT_LEVEL = 0.8  # goodput, as a fraction of the baseline: not recovered
THRESHOLD = (RECOVERY_LEVEL + SHORT_LEVEL) / 2  # where the two floors meet when noise is small
Z = 2.3263478740408408  # one-sided 99%: each floor errs on its own side at most 1% of the time
LATENCY_FACTOR = 2.0  # median latency, as a multiple of the baseline's
RECOVERY_WINDOW = 10  # buckets per window (the default bucket is a 200th of the horizon)
WINDOW_Z = 3.0  # a window may fall this many standard errors of its own noise short of the level
DIP_AFTER = 2  # windows of health before a dip is forgiven
MIN_BASELINE = 4  # buckets the baseline needs at least
MIN_BATCHES = 8  # batches the baseline's latency is cut into at least (``latency_ceiling``)
CEILING_ALPHA = 0.001  # a calm window's median passes the latency ceiling but this often
PACE_SHARE = 0.5  # the recovery instant's reference: this share of the baseline's timely pace

TOO_NOISY = "baseline too noisy to tell 80% from 90%"  # its noise is the larger share
TOO_SHORT = "too little time after the return to tell 80% from 90%"  # the return's is
# Too few successes per window for a window's test to mean anything; its note goes on with the
# rate that would do (``too_few_note``).
TOO_FEW = "too few calls per window to judge"
UNDECIDED = (TOO_NOISY, TOO_SHORT, TOO_FEW)  # the notes of runs that had a baseline but no verdict
NO_BASELINE = "no baseline before the outage"


@dataclass(frozen=True)
class Baseline:
    """The steady state before the first outage."""

    goodput: float  # mean successes per bucket
    spread: float  # standard deviation per bucket, at least Poisson's sqrt(mean)
    buckets: int
    latency: float  # median latency of its successes
    pace: float = math.nan  # timely successes (latency <= LATENCY_FACTOR x median) per time unit
    ceiling: float = math.nan  # a healthy window's median latency at most (``latency_ceiling``)

    def sd(self, level: float, buckets: float, mean: float | None = None) -> float:
        """Standard deviation of (a mean over ``buckets`` buckets at ``level`` of the baseline −
        ``level`` × the baseline's mean), see the module; ``buckets`` = inf: the baseline's part.
        With the stretch's ``mean``, the baseline's level in it is estimated from both sides as if
        the stretch were at ``level`` exactly (the score test of two Poisson rates): from the
        baseline's own mean alone, a baseline that came out low would also look less noisy, and
        at 10 clients 8% of returns to 80% passed a 95% strict floor instead of 5%."""
        dispersion = self.spread ** 2 / self.goodput  # >= 1: Poisson's or more
        if mean is None:
            rate = self.goodput
        else:
            rate = (self.buckets * self.goodput + buckets * mean) / (self.buckets + level * buckets)
        return math.sqrt(dispersion * rate * (level / buckets + level ** 2 / self.buckets))

    def floor(self, strict: bool, buckets: float, mean: float | None = None) -> float:
        """Per-bucket goodput a stretch of ``buckets`` buckets (at ``mean``) must reach: strict,
        above 80% beyond the noise (and at least 85%); lenient, short of 90% by no more than the
        noise (or at least 85%)."""
        m = self.goodput
        if strict:
            return max(THRESHOLD * m, SHORT_LEVEL * m + Z * self.sd(SHORT_LEVEL, buckets, mean))
        return min(THRESHOLD * m, RECOVERY_LEVEL * m - Z * self.sd(RECOVERY_LEVEL, buckets, mean))

    def window_floor(self, strict: bool, width: int) -> float:
        """Per-bucket goodput a window of ``width`` buckets must reach: the level (the floor of an
        endless stretch) less ``WINDOW_Z`` standard errors of the window's own noise."""
        level = max(0.0, self.floor(strict, math.inf) / self.goodput)  # < 0: a handful of successes
        return level * self.goodput - WINDOW_Z * self.spread * math.sqrt(level / width)


# Successes the baseline needs (times its dispersion) for every return to be told 80% from 90%:
# the lenient floor of an endless stretch, 0.9·m − Z·0.9·σ/√B with σ² = dispersion·m, reaches
# THRESHOLD·m once m·B ≥ dispersion·(Z·0.9/0.05)² (the strict one sooner: (Z·0.8/0.05)² = 1,385).
DECIDING_SUCCESSES = (Z * RECOVERY_LEVEL / (RECOVERY_LEVEL - THRESHOLD)) ** 2  # 1,753


@dataclass(frozen=True)
class Recovery:
    """One run's verdict: ``time`` after the last outage's end, ``nan`` never, ``None`` not
    judged (``note`` says why: too noisy, no baseline; empty without an outage). A run too
    noisy to judge (``TOO_NOISY``) says the rate of successes its baseline had (``rate``, per
    time unit) and the rate it would need (``needed_rate``, ``rate_needed``)."""

    time: float | None
    note: str = ""
    rate: float = math.nan
    needed_rate: float = math.nan


# Successes a window needs at the baseline's rate for its goodput test to tell a dead server
# from a live one. A window of ``width`` buckets passes when its mean reaches ``window_floor``,
# level·m − WINDOW_Z·σ·sqrt(level/width); in successes per window (μ = m·width, Poisson
# σ² = m, the least noise a count has) that is level·μ − WINDOW_Z·sqrt(level·μ), which is ≤ 0
# once level·μ ≤ WINDOW_Z²: a window without a single success then passes (and its latency test
# has no success to look at), so a collapse reads as health. The strict level is at least
# THRESHOLD (``Baseline.floor``), so μ must exceed WINDOW_Z² / THRESHOLD = 9 / 0.85 ≈ 10.6
# successes per window: a rate of WINDOW_SUCCESSES / (width · bucket) per time unit at least.
WINDOW_SUCCESSES = WINDOW_Z ** 2 / THRESHOLD


def window_rate_needed(width: int, bucket: float) -> float:
    """Successes per time unit a baseline needs for windows of ``width`` buckets to be judged
    (``WINDOW_SUCCESSES`` per window)."""
    return WINDOW_SUCCESSES / (width * bucket)


def too_few_note(needed: float, time_unit: str | None) -> str:
    """``too few calls per window to judge (needs ≥ 3.5/s)``: the rate per second where the time
    unit has a length in seconds, else per time unit (``tick``; None: a replay's unknown unit)."""
    from sim.vocabulary.units import seconds_per_unit

    seconds = seconds_per_unit(time_unit) if time_unit is not None else None
    if seconds is not None:
        return f"{TOO_FEW} (needs ≥ {needed / seconds:.3g}/s)"
    return f"{TOO_FEW} (needs ≥ {needed:.3g} per {time_unit or 'time unit'})"


def undecided_reason(note: str) -> str | None:
    """Which of ``UNDECIDED`` a run's note is (``TOO_FEW``'s carries its rate), None for none."""
    if note in UNDECIDED:
        return note
    return TOO_FEW if note.startswith(TOO_FEW) else None


def rate_needed(base: Baseline, bucket: float) -> float:
    """Successes per time unit a baseline as long as ``base`` (and as dispersed) would need for
    every return to be decided (``DECIDING_SUCCESSES`` over its length)."""
    dispersion = base.spread ** 2 / base.goodput
    return DECIDING_SUCCESSES * dispersion / (base.buckets * bucket)


def baseline(goodput: np.ndarray, bucket: float, first: Outage, success_times: np.ndarray,
             latencies: np.ndarray, width: int = RECOVERY_WINDOW) -> Baseline | None:
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
    median = float(np.median(latencies[in_span]))
    timely = int(np.count_nonzero(latencies[in_span] <= LATENCY_FACTOR * median))
    ceiling = latency_ceiling(success_times[in_span], latencies[in_span], lo * bucket, bucket,
                              hi - lo, width, median)
    return Baseline(level, spread, before.size, median, timely / ((hi - lo) * bucket), ceiling)


def latency_ceiling(times: np.ndarray, latencies: np.ndarray, since: float, bucket: float,
                    buckets: int, width: int, median: float) -> float:
    """The median latency a healthy window of ``width`` buckets stays under: ``LATENCY_FACTOR``
    times the baseline's median, widened by how much the baseline's own medians move from batch
    to batch (see the module: a queue's latency wanders for longer than a window)."""
    size = max(1, min(width, buckets // MIN_BATCHES))  # batches no longer than a window
    count = buckets // size
    edges = np.searchsorted(times, since + np.arange(count + 1) * size * bucket, side="left")
    medians = [float(np.median(latencies[a:b])) for a, b in zip(edges[:-1], edges[1:]) if b > a]
    logs = [math.log(m) for m in medians if m > 0]
    if len(logs) < 2:
        return LATENCY_FACTOR * median
    spread = float(np.std(logs, ddof=1))
    return LATENCY_FACTOR * median * math.exp(t_quantile(len(logs) - 1) * spread * math.sqrt(1 + 1 / len(logs)))


# Student's t at one-sided 1 - CEILING_ALPHA for 1 ... 30 degrees of freedom (scipy.stats.t.ppf
# (0.999, df), to 3 decimals; tests/test_recovery_calm.py checks them when scipy is there).
_T_999 = (318.309, 22.327, 10.215, 7.173, 5.893, 5.208, 4.785, 4.501, 4.297, 4.144, 4.025, 3.930,
          3.852, 3.787, 3.733, 3.686, 3.646, 3.610, 3.579, 3.552, 3.527, 3.505, 3.485, 3.467, 3.450,
          3.435, 3.421, 3.408, 3.396, 3.385)
_Z_999 = 3.090232306167813  # the normal's


def t_quantile(df: int) -> float:
    """Student's t quantile at 1 − ``CEILING_ALPHA`` for ``df`` degrees of freedom: the table
    up to 30, then the Cornish–Fisher expansion's first two terms (within 0.002 from 30 on)."""
    if df <= len(_T_999):
        return _T_999[df - 1]
    z = _Z_999
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def bucket_edges(success_times: np.ndarray, buckets: int, bucket: float) -> np.ndarray:
    """``edges[b]``: index of the first success at or after bucket ``b``'s start (times sorted)."""
    return np.searchsorted(success_times, np.arange(buckets + 1) * bucket, side="left")


def healthy_windows(goodput: np.ndarray, start: int, floor: float, ceiling: float,
                    edges: np.ndarray, latencies: np.ndarray, width: int) -> np.ndarray:
    """For each window start ``start, start + 1, ..., len(goodput) − width``: is the window's mean
    goodput at least ``floor`` and the median latency of its successes at most ``ceiling``?"""
    g = np.asarray(goodput, dtype=np.float64)
    n = g.size
    if n - width < start:
        return np.zeros(0, dtype=bool)
    sums = np.convolve(g, np.ones(width), mode="valid")[start:]  # sums[i] covers start+i ...
    healthy = sums / width >= floor
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


def recovered_from(goodput: np.ndarray, start: int, width: int, base: Baseline, strict: bool,
                   edges: np.ndarray, success_times: np.ndarray, latencies: np.ndarray,
                   bucket: float, end: float) -> float | None:
    """The instant the final recovered stretch starts, judged with the strict or the lenient
    floor (see the module), after an outage that ended at ``end``; None when there is none. The
    stretch's goodput is counted from the bucket edge nearest that instant, so the dead buckets
    of a window that is healthy only for its later part do not pull it down."""
    healthy = healthy_windows(goodput, start, base.window_floor(strict, width),
                              base.ceiling, edges, latencies, width)
    point = recovery_point(healthy, width)
    if point is None:
        return None
    first = start + point
    # The step lies in the first window of the stretch; the part of a bucket the outage left
    # before the first whole one is searched too.
    since = end if first == start else first * bucket
    instant = recovery_instant(success_times, latencies, since, (first + width) * bucket, base)
    stretch = np.asarray(goodput[max(first, round(instant / bucket)):], dtype=np.float64)
    if stretch.size < width:
        return None  # seen for less than a window: whether it lasts is unknown
    mean = float(stretch.mean())
    return instant if mean >= base.floor(strict, stretch.size, mean) else None


def recovery_instant(success_times: np.ndarray, latencies: np.ndarray, since: float, until: float,
                     base: Baseline) -> float:
    """When in ``[since, until)`` the timely successes step up past half the baseline's timely
    pace: where their cumulative deficit against it peaks (see the module); ``since`` when they
    never lag it."""
    a, b = np.searchsorted(success_times, (since, until), side="left")
    times = success_times[a:b][latencies[a:b] <= LATENCY_FACTOR * base.latency]
    if times.size == 0:
        return since
    # Just before the i-th timely success (i from 0) the deficit is pace × elapsed − i.
    deficit = PACE_SHARE * base.pace * (times - since) - np.arange(times.size)
    peak = int(np.argmax(deficit))
    return float(times[peak]) if deficit[peak] > 0 else since


def recovery_verdict(goodput: np.ndarray, bucket: float, outages: Sequence[Outage],
                     success_times: np.ndarray, latencies: np.ndarray,
                     width: int = RECOVERY_WINDOW, time_unit: str | None = None) -> Recovery:
    """Whether and when the run recovered after its last outage (see the module); a baseline
    with too few successes per window is not judged (``TOO_FEW``, the note in ``time_unit``)."""
    if not outages:
        return Recovery(None)
    success_times = np.asarray(success_times, dtype=np.float64)
    latencies = np.asarray(latencies, dtype=np.float64)
    last = outages[-1]
    start = int(math.ceil(last.end / bucket - 1e-9))
    width = min(width, max(1, len(goodput) - start))
    base = baseline(goodput, bucket, outages[0], success_times, latencies, width)
    if base is None:
        return Recovery(None, NO_BASELINE)
    if base.goodput * width < WINDOW_SUCCESSES:
        needed = window_rate_needed(width, bucket)
        return Recovery(None, too_few_note(needed, time_unit), base.goodput / bucket, needed)
    edges = bucket_edges(success_times, len(goodput), bucket)
    judged = (goodput, start, width, base)
    instant = recovered_from(*judged, True, edges, success_times, latencies, bucket, last.end)
    if instant is None:
        lenient = recovered_from(*judged, False, edges, success_times, latencies, bucket, last.end)
        if lenient is None:
            return Recovery(math.nan)
        # Whose noise is the larger share of sd(0.9, n): the return's own (0.9/n, n its buckets:
        # say a ramp still climbing at the horizon) or the baseline's (0.81/B).
        n = len(goodput) - max(start, round(lenient / bucket))
        if RECOVERY_LEVEL * n < base.buckets:
            return Recovery(None, TOO_SHORT)
        return Recovery(None, TOO_NOISY, base.goodput / bucket, rate_needed(base, bucket))
    return Recovery(max(0.0, instant - last.end))


def recovery_time(goodput: np.ndarray, bucket: float, outages: Sequence[Outage],
                  success_times: np.ndarray, latencies: np.ndarray,
                  width: int = RECOVERY_WINDOW) -> float | None:
    """Time from the last outage's end until the run recovered (see the module); nan: never
    within the horizon; None: no outage, no baseline, or too noisy to tell."""
    return recovery_verdict(goodput, bucket, outages, success_times, latencies, width).time


def summary_note(notes: Sequence[str]) -> str:
    """Why repetitions were not judged, for a table's or CSV's note: each distinct reason, with
    how many of the repetitions it applies to when not all (``baseline too noisy ... (2 of 5
    runs)``); empty when every repetition was judged or had no outage."""
    counts = Counter(note for note in notes if note)
    return "; ".join(note if n == len(notes) else f"{note} ({n} of {len(notes)} runs)"
                     for note, n in counts.items())


NEVER_GLYPH = "✗"  # a strategy that never recovered, beside its verdict's words


@dataclass(frozen=True)
class RecoverySummary:
    """The recovery verdicts of a strategy's repetitions at one client count."""

    runs: int  # repetitions judged (recovered or never)
    times: tuple[float, ...]  # recovery times of those that recovered
    undecided: int = 0  # repetitions with a baseline that were too noisy to judge (UNDECIDED)

    @classmethod
    def of(cls, values: Sequence[float | None], undecided: int = 0) -> RecoverySummary | None:
        """From per-repetition ``recovery_time`` values (``undecided`` of the Nones were too
        noisy to judge); None when none could be judged."""
        judged = [v for v in values if v is not None]
        if not judged:
            return None
        return cls(len(judged), tuple(sorted(v for v in judged if not math.isnan(v))), undecided)

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

    def text(self, number=lambda v: f"{v:,.1f}", unit: str = "", *, compact: bool = False,
             glyph: bool = False) -> str:
        """The verdict in words, the one text every table, caption and title gives:
        ``3/3 recovered, median 0.6 (0.4–1.0)``, ``1/3 recovered`` or ``never (0/3)``; with
        ``unit``, the median says it (``median 600 ms (400–1,000)``); ``compact``: every
        repetition recovered reads ``3/3 · 600`` (a narrow table's cell); ``glyph``: never reads
        ``✗ never (0/3)`` (not colour alone); ``, 2 undecided`` after it when some repetitions
        could not be told."""
        return (self._text(number, unit, compact, glyph)
                + (f", {self.undecided} undecided" if self.undecided else ""))

    def _text(self, number, unit: str, compact: bool, glyph: bool) -> str:
        if self.never:
            return f"{NEVER_GLYPH + ' ' if glyph else ''}never (0/{self.runs})"
        if not self.all_recovered:
            return f"{self.recovered}/{self.runs} recovered"
        median = f"{number(self.median)} {unit}" if unit else number(self.median)
        if compact:
            return f"{self.runs}/{self.runs} · {median}"
        spread = f" ({number(self.times[0])}–{number(self.times[-1])})" if self.runs > 1 else ""
        return f"{self.runs}/{self.runs} recovered, median {median}{spread}"
