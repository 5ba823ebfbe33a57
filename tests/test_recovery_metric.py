"""The recovery verdict (``sim.analysis.recovery``) on synthetic runs, one test per way it could be fooled.

A synthetic run is a goodput per bucket and a latency per bucket; each bucket's successes are
spread evenly over it with that latency. The baseline runs at ``LEVEL`` successes per bucket with
latency ``BASE_LATENCY``; the outage covers buckets 60–79 of 300 (1-wide buckets).

Thresholds come from the definition (90% of the baseline's goodput, 2x its median latency) and
from the window: a return is dated at the first healthy bucket of the first healthy window, so a
ramp reads at most ``EARLY`` buckets early (10% of a window), a sharp step exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim.analysis.open_metrics import OpenRunMetrics
from sim.analysis.recovery import LATENCY_FACTOR, RECOVERY_LEVEL, RECOVERY_WINDOW, RecoverySummary, recovery_time
from sim.models.workloads import Outage

BUCKETS = 300
LEVEL = 100.0
BASE_LATENCY = 120.0
OUTAGE = Outage(start=60.0, duration=20.0)  # buckets 60-79; recovery counts from bucket 80
END = 80
EARLY = RECOVERY_WINDOW * (1 - RECOVERY_LEVEL)


def run(goodput: np.ndarray, latency: np.ndarray | float = BASE_LATENCY, bucket: float = 1.0,
        outages: tuple[Outage, ...] = (OUTAGE,)) -> float | None:
    """``recovery_time`` of a synthetic run: successes spread evenly over each bucket."""
    goodput = np.asarray(goodput, dtype=np.float64)
    latency = np.broadcast_to(np.asarray(latency, dtype=np.float64), goodput.shape)
    counts = goodput.astype(np.int64)
    first = np.repeat(np.cumsum(counts) - counts, counts)  # index of each bucket's first success
    per = np.repeat(counts, counts)
    within = (np.arange(per.size) - first + 0.5) / np.maximum(per, 1)
    times = (np.repeat(np.arange(counts.size), counts) + within) * bucket
    return recovery_time(goodput, bucket, outages, times, np.repeat(latency, counts))


def series(after: float = LEVEL, dead_for: int = 0) -> np.ndarray:
    """LEVEL before the outage, 0 during it and for ``dead_for`` buckets after, then ``after``."""
    g = np.full(BUCKETS, LEVEL)
    g[60:END + dead_for] = 0.0
    g[END + dead_for:] = after
    return g


def never(value: float | None) -> bool:
    return value is not None and math.isnan(value)


# --- nothing to judge ------------------------------------------------------------------------

def test_no_outage_is_none() -> None:
    assert run(series(), outages=()) is None
    assert OpenRunMetrics(0, 0.0, 0.0, 0, 0, recovery_time=None).recovered


def test_an_outage_at_the_start_has_no_baseline() -> None:
    """A server down from t = 0 has no steady state to return to: not judged (None), not never."""
    g = series()
    g[:20] = 0.0
    assert run(g, outages=(Outage(0.0, 20.0),)) is None


def test_no_goodput_before_the_outage_is_not_judged() -> None:
    g = series()
    g[:60] = 0.0
    assert run(g) is None


# --- returns ---------------------------------------------------------------------------------

def test_immediate_recovery() -> None:
    assert run(series()) == 0.0


def test_immediate_recovery_when_the_outage_ends_inside_a_bucket() -> None:
    """Recovery is counted from the first whole bucket after the end: under one bucket."""
    outage = Outage(start=60.0, duration=20.4)
    g = series()
    g[80] = 0.0
    assert 0 <= run(g, outages=(outage,)) == pytest.approx(81.0 - 80.4)


@pytest.mark.parametrize("dead_for", [5, 30, 90])
def test_recovery_after_a_dead_spell(dead_for: int) -> None:
    assert dead_for - EARLY - 1e-9 <= run(series(dead_for=dead_for)) <= dead_for


@pytest.mark.parametrize("bucket", [0.5, 15.0])
def test_recovery_is_in_time_units_not_buckets(bucket: float) -> None:
    outage = Outage(start=60.0 * bucket, duration=20.0 * bucket)
    r = run(series(dead_for=30), bucket=bucket, outages=(outage,))
    assert (30 - EARLY) * bucket - 1e-9 <= r <= 30 * bucket


def test_level_comes_from_before_the_first_outage_and_recovery_from_the_last() -> None:
    first, second = Outage(60.0, 10.0), Outage(100.0, 10.0)
    g = np.full(BUCKETS, LEVEL)
    g[60:70] = 0.0
    g[100:140] = 0.0  # dead for 30 buckets after the second outage's end
    r = run(g, outages=(first, second))
    assert 30 - EARLY <= r <= 30
    # The baseline is the second half before the first outage: a warm-up is ignored...
    g[:30] = 0.0
    assert run(g, outages=(first, second)) == r
    # ...but a higher level there raises the bar out of reach.
    g[30:60] = 2 * LEVEL
    assert never(run(g, outages=(first, second)))


# --- failure modes ---------------------------------------------------------------------------

def test_a_partial_return_is_never() -> None:
    """Goodput back at 80% of the baseline is not recovered, however long it lasts; 95% is."""
    assert never(run(series(after=0.8 * LEVEL)))
    assert run(series(after=0.95 * LEVEL)) == 0.0


def test_goodput_back_with_latency_still_high_is_never() -> None:
    """The server answers as many requests as before, but each takes more than twice as long."""
    latency = np.full(BUCKETS, BASE_LATENCY)
    latency[END:] = 1.2 * LATENCY_FACTOR * BASE_LATENCY
    assert never(run(series(), latency))
    latency[END:] = 0.8 * LATENCY_FACTOR * BASE_LATENCY  # within 2x: recovered
    assert run(series(), latency) == 0.0
    # Latency that comes back later dates the recovery.
    latency[END:END + 40] = 10 * BASE_LATENCY
    latency[END + 40:] = BASE_LATENCY
    assert 40 - RECOVERY_WINDOW / 2 <= run(series(), latency) <= 40


def test_oscillation_is_not_recovery() -> None:
    """30 buckets at twice the baseline, 30 at zero, over and over: the mean is the baseline's,
    but the server has not recovered. Nor does the last up-swing, cut by the horizon, count."""
    g = series()
    for start in range(END, BUCKETS, 60):
        g[start:start + 30] = 2 * LEVEL
        g[start + 30:start + 60] = 0.0
    assert g[END:END + 180].mean() == LEVEL
    assert never(run(g))
    for cut in (BUCKETS - 10, BUCKETS - 25, BUCKETS - 45):
        assert never(run(g[:cut])), cut


def test_a_single_short_dip_after_a_long_recovery_does_not_flip_it() -> None:
    for at in (150, BUCKETS - 4):  # in the middle, and at the very end
        g = series(dead_for=10)
        g[at:at + 3] = 0.0
        assert 10 - EARLY <= run(g) <= 10, at


def test_a_long_relapse_dates_recovery_after_it() -> None:
    """A first return, a relapse of 30 buckets, then a return longer than the first: recovered
    after the relapse (not never, not at the first return)."""
    g = series(dead_for=10)
    g[120:150] = 0.0
    assert 150 - END - EARLY <= run(g) <= 150 - END


def test_dips_in_quick_succession_are_a_relapse() -> None:
    """Short dips each after a long healthy run are each forgiven; a second dip soon after the
    first is not: the recovery dates from after it (the return after it is longer than before)."""
    g = series(dead_for=10)
    g[150:153] = 0.0
    g[220:223] = 0.0
    assert run(g) == 10
    g[157:160] = 0.0
    assert 160 - END - EARLY <= run(g) <= 160 - END


def test_recovering_only_at_the_very_end_is_never() -> None:
    """Full goodput over fewer buckets than a window is too short to count."""
    g = series(dead_for=BUCKETS - END - RECOVERY_WINDOW + 2)
    assert never(run(g))


# --- noise and the baseline's own uncertainty --------------------------------------------------

def test_noise_does_not_fool_it() -> None:
    """Poisson noise at study 003's scale reads neither as never recovering nor as a late
    recovery; a long dead spell still reads as that long."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        g = rng.poisson(LEVEL, BUCKETS).astype(float)
        latency = BASE_LATENCY * rng.uniform(0.9, 1.1, BUCKETS)
        g[60:80] = 0.0
        assert run(g, latency) <= 3.0
        g[80:130] = 0.0
        assert 50 - EARLY - 3 <= run(g, latency) <= 50 + 3


def test_noise_around_a_lower_level_is_still_never() -> None:
    rng = np.random.default_rng(11)
    for _ in range(20):
        g = rng.poisson(LEVEL, BUCKETS).astype(float)
        g[60:] = rng.poisson(0.7 * LEVEL, BUCKETS - 60)
        g[60:80] = 0.0
        assert never(run(g))


def test_a_short_baseline_is_judged_with_its_uncertainty() -> None:
    """Goodput back at 86% of the baseline: within the noise of a baseline measured over 4
    buckets (its mean is uncertain by ±5% at one standard error, Poisson), clearly short of 90%
    after one measured over 100."""
    short = Outage(start=8.0, duration=20.0)  # baseline: buckets 4-7
    g = np.full(BUCKETS, LEVEL)
    g[8:28] = 0.0
    g[28:] = 0.86 * LEVEL
    assert run(g, outages=(short,)) == 0.0
    long = Outage(start=200.0, duration=20.0)  # baseline: buckets 100-199
    g = np.full(BUCKETS + 200, LEVEL)
    g[200:220] = 0.0
    g[220:] = 0.86 * LEVEL
    assert never(run(g, outages=(long,)))


# --- the aggregate over repetitions ------------------------------------------------------------

def test_summary_texts() -> None:
    assert RecoverySummary.of([600.0, 400.0, 1000.0]).text() == "3/3 recovered, median 600.0 (400.0–1,000.0)"
    assert RecoverySummary.of([600.0, math.nan, math.nan]).text() == "1/3 recovered"
    assert RecoverySummary.of([math.nan] * 3).text() == "never (0/3)"
    assert RecoverySummary.of([5.0]).text() == "1/1 recovered, median 5.0"
    assert RecoverySummary.of([None, None]) is None  # nothing judged: no outage, or no baseline


def test_one_never_is_not_a_veto() -> None:
    s = RecoverySummary.of([600.0, math.nan, 800.0])
    assert (s.recovered, s.runs, s.median) == (2, 3, 700.0)
    assert not s.all_recovered and not s.never
