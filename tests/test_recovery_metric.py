"""``recovery_time`` on synthetic goodput series: the time from the last outage's end until smoothed
goodput stays at or above 90% of its pre-outage level, nan when that never happens in the horizon,
None without an outage.

The smoothing window looks forward ``RECOVERY_SMOOTHING`` buckets and tolerates 10% below target,
so a sharp return to full goodput reads at most ``RECOVERY_SMOOTHING · (1 − RECOVERY_LEVEL)`` buckets
early, never late.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim.open_metrics import RECOVERY_LEVEL, RECOVERY_SMOOTHING, OpenRunMetrics, recovery_time
from sim.workloads import Outage

BUCKETS = 200
LEVEL = 10.0
OUTAGE = Outage(start=60.0, duration=20.0)  # ends at bucket 80 with 1-wide buckets
EARLY = RECOVERY_SMOOTHING * (1 - RECOVERY_LEVEL)  # how many buckets early a sharp step can read


def goodput(after_end: list[float] | None = None, *, dead_for: int = 0, bucket: float = 1.0,
            outage: Outage = OUTAGE) -> np.ndarray:
    """LEVEL everywhere, 0 during the outage and for ``dead_for`` buckets after it."""
    g = np.full(BUCKETS, LEVEL)
    first = int(outage.start / bucket)
    end = math.ceil(outage.end / bucket)
    g[first:end + dead_for] = 0.0
    if after_end is not None:
        g[end:end + len(after_end)] = after_end
    return g


def test_no_outage_is_none() -> None:
    assert recovery_time(goodput(), 1.0, ()) is None
    assert OpenRunMetrics(0, 0.0, 0.0, 0, 0, recovery_time=None).recovered


def test_immediate_recovery() -> None:
    assert recovery_time(goodput(), 1.0, (OUTAGE,)) == 0.0


def test_immediate_recovery_when_the_outage_ends_inside_a_bucket() -> None:
    """Recovery is counted from the first whole bucket after the end: under one bucket."""
    outage = Outage(start=60.0, duration=20.4)
    r = recovery_time(goodput(outage=outage), 1.0, (outage,))
    assert r == pytest.approx(81.0 - 80.4)
    assert 0 <= r < 1.0


@pytest.mark.parametrize("dead_for", [5, 30, 90])
def test_recovery_after_n_buckets(dead_for: int) -> None:
    r = recovery_time(goodput(dead_for=dead_for), 1.0, (OUTAGE,))
    assert dead_for - EARLY - 1e-9 <= r <= dead_for


@pytest.mark.parametrize("bucket", [0.5, 2.0, 15.0])
def test_recovery_is_in_time_units_not_buckets(bucket: float) -> None:
    outage = Outage(start=60.0 * bucket, duration=20.0 * bucket)
    r = recovery_time(goodput(dead_for=30, bucket=bucket, outage=outage), bucket, (outage,))
    assert (30 - EARLY) * bucket - 1e-9 <= r <= 30 * bucket


def test_a_slow_ramp_recovers_when_it_reaches_ninety_percent() -> None:
    ramp = list(np.linspace(0.0, LEVEL, 61))  # full level 60 buckets after the end
    r = recovery_time(goodput(ramp), 1.0, (OUTAGE,))
    # The window's mean reaches 90% when the ramp is around 90% (54 buckets in), give or take a window.
    assert 54 - RECOVERY_SMOOTHING <= r <= 54


def test_never_recovers_is_nan() -> None:
    dead = goodput(dead_for=BUCKETS)
    r = recovery_time(dead, 1.0, (OUTAGE,))
    assert math.isnan(r)
    assert not OpenRunMetrics(0, 0.0, 0.0, 0, 0, recovery_time=r).recovered


def test_a_partial_recovery_is_never() -> None:
    """Goodput back at 80% of its former level is not recovered, however long it lasts."""
    g = goodput([0.8 * LEVEL] * (BUCKETS - 80))
    assert math.isnan(recovery_time(g, 1.0, (OUTAGE,)))


def test_recovering_only_at_the_very_end_is_never() -> None:
    """Full goodput over the last few buckets is too short to count (less than a smoothing window)."""
    g = goodput(dead_for=BUCKETS - 80 - 5)
    assert g[-5:].tolist() == [LEVEL] * 5 and g[-6] == 0
    assert math.isnan(recovery_time(g, 1.0, (OUTAGE,)))


def test_a_relapse_moves_recovery_past_it() -> None:
    """Recovery means staying at the level: a long relapse after a first return counts from its end."""
    g = goodput(dead_for=10)
    g[120:150] = 0.0
    r = recovery_time(g, 1.0, (OUTAGE,))
    assert 150 - 80 - EARLY <= r <= 150 - 80


def test_noise_does_not_fool_it() -> None:
    """Poisson noise at study 003's scale (about 60 successes per bucket; 100 here) reads neither
    as never recovering nor as a late recovery; nor does one empty bucket among full ones."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        g = rng.poisson(100.0, BUCKETS).astype(float)
        g[60:80] = 0.0
        assert recovery_time(g, 1.0, (OUTAGE,)) <= 3.0
        # The same noise after a long dead spell still reads as that long.
        g[80:130] = 0.0
        assert 50 - EARLY - 3 <= recovery_time(g, 1.0, (OUTAGE,)) <= 50 + 3
    g = goodput()
    g[[100, 130, 160]] = 0.0  # isolated empty buckets, each alone in its window
    assert recovery_time(g, 1.0, (OUTAGE,)) == 0.0


def test_noise_around_a_lower_level_is_still_never() -> None:
    rng = np.random.default_rng(11)
    for _ in range(20):
        g = rng.poisson(100.0, BUCKETS).astype(float)
        g[60:] = rng.poisson(70.0, BUCKETS - 60)
        g[60:80] = 0.0
        assert math.isnan(recovery_time(g, 1.0, (OUTAGE,)))


def test_level_comes_from_before_the_first_outage_and_recovery_from_the_last() -> None:
    first, second = Outage(60.0, 10.0), Outage(100.0, 10.0)
    g = np.full(BUCKETS, LEVEL)
    g[60:70] = 0.0
    g[100:140] = 0.0  # dead for 30 buckets after the second outage's end
    r = recovery_time(g, 1.0, (first, second))
    assert 30 - EARLY <= r <= 30
    # The level is the mean over the second half before the first outage: a warm-up is ignored.
    g[:30] = 0.0
    assert recovery_time(g, 1.0, (first, second)) == r
    # ...but a higher level there raises the bar.
    g[30:60] = 2 * LEVEL
    assert math.isnan(recovery_time(g, 1.0, (first, second)))


def test_no_goodput_before_the_outage_is_never() -> None:
    g = goodput()
    g[:60] = 0.0
    assert math.isnan(recovery_time(g, 1.0, (OUTAGE,)))
