"""A rate profile for open traffic (``rate_profile``) and a ramp back after an incident (``ramp``),
issue 34 item 7: arrivals follow the profile's integral within Poisson noise, a run before the
first point is the run without a profile, a ramped capacity serves a linearly rising rate, and
every misuse is one line."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from support import make_spec

from sim.models.incidents import RAMP_STEPS
from sim.models.rate_profile import RateClock, RatePoint
from sim.runs.engine import run_metrics
from sim.vocabulary.errors import ConfigError

ONE_TRY = [{"type": "Constant", "constant": 0.0, "max_attempts": 1}]
# A pool far above the offered load (64 workers of 1 ms against at most 0.4 calls/ms): arrivals
# are the workload's alone, whatever the server does.
WIDE = dict(control="PoolServer", workers=64, service_time=1.0, workload="open", clients=[32], rate=100.0,
            horizon=30000.0, bucket=1000.0, timeout=1000.0, repeat=1, network_mu=0.0, network_sigma=0.0)
# 100/s to 10 s; a step to 400/s; a ramp from there down to 0 at 20 s; nothing to 25 s; 200/s.
PROFILE = [{"at": 10000.0, "rate": 400.0}, {"at": 20000.0, "rate": 0.0, "ramp": True},
           {"at": 25000.0, "rate": 200.0}]
# Each segment's expected calls, the profile's integral over it (rates per second x seconds):
# the ramp's halves are trapezoids, (400 + 200)/2 x 5 and (200 + 0)/2 x 5.
SEGMENTS = {(0, 10): 100 * 10, (10, 15): (400 + 200) / 2 * 5, (15, 20): (200 + 0) / 2 * 5,
            (20, 25): 0.0, (25, 30): 200 * 5}
# A segment's count is Poisson with mean mu (a Poisson process's count over any interval), so
# within 4 standard deviations, 4·sqrt(mu), but with probability 6.3e-5 each (the normal's
# two-sided tail at 4, which Poisson's matches at these means of 500 and more): over the 4
# random segments x 3 repetitions checked, a false failure has odds under 1e-3, for fixed seeds
# never (the draws are deterministic).
SIGMAS = 4.0


def offered(spec, repetition: int = 0) -> np.ndarray:
    m = run_metrics(spec, spec.strategies[0].chain, spec.clients[0], repetition)
    return np.asarray(m.series["offered"], dtype=np.int64)


def test_arrivals_over_each_segment_match_the_profiles_integral() -> None:
    spec = make_spec(strategies=ONE_TRY, **{**WIDE, "rate_profile": PROFILE})
    for repetition in range(3):
        counts = offered(spec, repetition)
        for (a, b), mu in SEGMENTS.items():
            n = int(counts[a:b].sum())  # 1 s buckets: bucket i is [i, i + 1) s
            if mu == 0:
                assert n == 0, (a, b)  # rate 0: no call at all
            else:
                assert abs(n - mu) <= SIGMAS * math.sqrt(mu), (a, b, n, mu)


def test_the_ramp_is_linear_in_its_arrivals() -> None:
    """Over the ramp (400/s at 10 s to 0 at 20 s) the arrivals' mean time in it is a third of its
    length (a density falling linearly to 0 has its mean at 1/3), within the mean's standard error
    times SIGMAS: a step or a sudden drop would put it at 1/2."""
    spec = make_spec(strategies=ONE_TRY, **{**WIDE, "rate_profile": PROFILE, "bucket": 100.0})
    counts = offered(spec)[100:200]  # 100 ms buckets over [10, 20) s
    centres = (np.arange(100) + 0.5) / 100  # each bucket's middle, as a fraction of the ramp
    n = counts.sum()
    mean = float((counts * centres).sum() / n)
    # A linearly falling density on [0, 1]: variance 1/18; the mean of n arrivals varies by
    # sqrt(1/18 / n); the buckets' midpoints move it by at most half a bucket (0.005).
    assert abs(mean - 1 / 3) <= SIGMAS * math.sqrt(1 / 18 / n) + 0.005, mean


def test_before_the_first_point_the_run_is_the_one_without_a_profile() -> None:
    plain = offered(make_spec(strategies=ONE_TRY, **WIDE))
    profiled = offered(make_spec(strategies=ONE_TRY, **{**WIDE, "rate_profile": PROFILE}))
    assert np.array_equal(plain[:10], profiled[:10])
    assert not np.array_equal(plain[10:], profiled[10:])


def test_a_profile_is_seeded_and_deterministic() -> None:
    spec = make_spec(strategies=ONE_TRY, **{**WIDE, "rate_profile": PROFILE})
    assert np.array_equal(offered(spec), offered(spec))
    assert not np.array_equal(offered(spec, 0), offered(spec, 1))


def test_the_clock_inverts_its_integral() -> None:
    """``RateClock.inverse`` undoes ``integral`` on steps, ramps up and down, and a rate of 0."""
    clock = RateClock(2.0, (RatePoint(5.0, 6.0), RatePoint(9.0, 0.0, ramp=True), RatePoint(12.0, 0.0),
                            RatePoint(15.0, 1.0, ramp=True)))
    for t in np.linspace(0.0, 30.0, 301):
        y = clock.integral(float(t))
        back = clock.inverse(y)
        # On a stretch of rate 0 (9 to 12 s) every time has one integral: the inverse is its end.
        assert back == pytest.approx(12.0 if 9.0 <= t <= 12.0 else float(t), abs=1e-9), t
    assert clock.integral(5.0) == 5.0 and clock.integral(9.0) == pytest.approx(5.0 + 4 * 3 / 2)
    assert math.isinf(RateClock(1.0, (RatePoint(1.0, 0.0),)).inverse(2.0))  # it ends at rate 0


# --- ramp: capacity coming back gradually -------------------------------------------------------

# 16 slots of 10 ms serve 1.6 calls/ms, 1,600 a second; offered 1.5 times that, with a queue
# that holds everything, so the server is busy throughout and serves capacity x 1,600 a second.
SATURATED = dict(control="QueueServer", concurrency=16, service_time=10.0, queue_size=1_000_000, workload="open",
                 clients=[64], load=1.5, horizon=40000.0, bucket=1000.0, repeat=1, network_mu=0.0,
                 network_sigma=0.0, time_unit="ms")
RAMPED = [{"start": 5000.0, "duration": 5000.0, "capacity": 0.25, "ramp": 20000.0}]


def test_a_ramped_capacity_serves_a_linearly_rising_rate() -> None:
    """From the incident's end (10 s) capacity climbs from 25% to 100% over 20 s: each 1 s
    bucket serves 1,600 times the mean capacity over it. Allowed off by the 16 requests a slot
    change or a bucket edge can move to the next bucket (one per slot), plus the staircase's
    error, half a step of the change (0.75 / (2 · RAMP_STEPS) of 1,600, 9.4)."""
    spec = make_spec(strategies=ONE_TRY, **{**SATURATED, "incidents": RAMPED})
    m = run_metrics(spec, spec.strategies[0].chain, 64, 0)
    served = np.asarray(m.series["goodput"], dtype=np.float64)
    tolerance = 16 + 1600 * 0.75 / (2 * RAMP_STEPS)
    for second in range(10, 30):
        capacity = 0.25 + 0.75 * (second + 0.5 - 10) / 20  # the linear ramp's mean over the bucket
        assert abs(served[second] - 1600 * capacity) <= tolerance, (second, served[second])
    assert all(abs(served[s] - 1600 * 0.25) <= 16 for s in range(6, 10))  # the incident itself
    assert all(abs(served[s] - 1600) <= 16 for s in range(31, 40))  # back to normal
    # The incident ends (its event, its window) when the ramp is done.
    assert spec.disruptions[0].end == 30000.0


def test_a_ramped_slowdown_returns_gradually() -> None:
    """A slowdown x4 ramped back over 20 s: the served rate climbs through the ramp, from the
    incident's quarter to the full rate, never all at once."""
    spec = make_spec(strategies=ONE_TRY, **{**SATURATED, "incidents": [
        {"start": 5000.0, "duration": 5000.0, "slowdown": 4.0, "ramp": 20000.0}]})
    m = run_metrics(spec, spec.strategies[0].chain, 64, 0)
    served = np.asarray(m.series["goodput"], dtype=np.float64)
    assert served[8] == pytest.approx(400, abs=16)
    middle = served[19]  # slowdown about 4 - 3 x 0.475 = 2.6: 1,600 / 2.6
    assert 1600 / 2.8 < middle < 1600 / 2.4
    assert np.all(np.diff(served[10:30]) > -16)  # rising, but for a bucket edge's slots
    assert served[35] == pytest.approx(1600, abs=16)


# --- misuse: one line each ----------------------------------------------------------------------

@pytest.mark.parametrize("keys, message", [
    ({"rate_profile": [{"at": 5.0, "rate": 1.0}, {"at": 5.0, "rate": 2.0}]},
     "key 'rate_profile[1].at': must be after the previous point's at (5)"),
    ({"rate_profile": [{"at": 5.0}]}, "key 'rate_profile[0].rate': is missing"),
    ({"rate_profile": [{"at": 5.0, "rate": -1.0}]}, "key 'rate_profile[0].rate': must be >= 0 (calls per second), got -1.0"),
    ({"rate_profile": [{"at": 5.0, "rate": "fast"}]}, "key 'rate_profile[0].rate': must be a finite number, got 'fast'"),
    ({"rate_profile": [{"at": 5.0, "rate": 1.0, "ramp": "yes"}]}, "key 'rate_profile[0].ramp': must be true or false"),
    ({"rate_profile": [{"at": 5.0, "rate": 1.0, "slope": 2.0}]}, "key 'rate_profile[0].slope': is not a rate_profile key"),
    ({"rate_profile": []}, "key 'rate_profile': must be a non-empty list of tables"),
    ({"rate_profile": [{"at": 5.0, "rate": 1.0}], "workload": "poisson", "rate": None, "think_time": 10.0},
     "key 'rate_profile': is a parameter of workload 'open', not 'poisson'"),
    ({"rate_profile": [{"at": 5.0, "rate": 1.0}], "time_unit": "tick", "rate": None, "think_time": 10.0},
     "key 'rate_profile': rates are calls per second, but time_unit 'tick'"),
    ({"incidents": [{"start": 5.0, "duration": 5.0, "capacity": 0.0, "ramp": 10.0}]},
     "key 'incidents[0].ramp': an outage (capacity 0) resumes at once"),
    ({"incidents": [{"start": 5.0, "duration": 5.0, "capacity": 0.5, "ramp": -1.0}]},
     "key 'incidents[0].ramp': must be >= 0"),
])
def test_misuse_is_one_line(keys: dict[str, Any], message: str) -> None:
    table = {**WIDE, **keys}
    table = {k: v for k, v in table.items() if v is not None}
    with pytest.raises(ConfigError) as info:
        make_spec(strategies=ONE_TRY, **table)
    text = str(info.value)
    assert message in text, text
    assert all("\n" not in line for line in info.value.lines()), text


def test_the_offered_load_of_a_profile_is_its_peak() -> None:
    """``run``'s offered-load line gives a profile's peak (400/s, 0.4 per ms) as an upper bound."""
    from sim.analysis.load import offered_load

    load = offered_load(make_spec(strategies=ONE_TRY, **{**WIDE, "rate_profile": PROFILE}))
    assert load.at_most and load.calls == pytest.approx(0.4)
    assert not offered_load(make_spec(strategies=ONE_TRY, **WIDE)).at_most


def test_the_fluid_model_refuses_what_it_does_not_model() -> None:
    """Explore's fluid model has neither a profile's changing rate, nor a ramp, nor a backoff
    counted from the send: it says so (the cell is simulated), rather than answer for another run."""
    from dataclasses import replace

    from sim.fluid.express import fluid_case

    base = make_spec(strategies=ONE_TRY, **WIDE)
    assert not isinstance(fluid_case(base, 0), str)
    profiled = make_spec(strategies=ONE_TRY, **{**WIDE, "rate_profile": PROFILE})
    ramped = make_spec(strategies=ONE_TRY, **{**WIDE, "incidents": [
        {"start": 5000.0, "duration": 5000.0, "capacity": 0.5, "ramp": 1000.0}]})
    assert fluid_case(profiled, 0) == "a rate_profile"
    assert fluid_case(ramped, 0) == "an incident's ramp"
    assert fluid_case(replace(base, backoff_from="send"), 0) == 'backoff_from = "send"'


def test_a_spike_in_the_profile_is_a_window_the_verdict_judges() -> None:
    """The spans above the own rate are disruptions (a load spike judged as an incident is): a
    step up and back is its own window; a ramp up from the own rate rises where it crosses it;
    a profile that ends above its own rate has a new normal and no window."""
    from sim.models.rate_profile import RatePoint, above_windows

    step = (RatePoint(at=1000.0, rate=20.0), RatePoint(at=4000.0, rate=10.0))
    assert above_windows(step, 10.0) == ((1000.0, 4000.0),)
    # From 5 (half the own rate) at t = 0 up to 15 at 2000: it crosses 10 at 1000; the step back
    # down to 10 at 3000 ends it.
    ramp = (RatePoint(at=0.0, rate=5.0), RatePoint(at=2000.0, rate=15.0, ramp=True),
            RatePoint(at=3000.0, rate=10.0))
    assert above_windows(ramp, 10.0) == ((1000.0, 3000.0),)
    assert above_windows((RatePoint(at=1000.0, rate=20.0),), 10.0) == ()
    assert above_windows((RatePoint(at=1000.0, rate=5.0), RatePoint(at=2000.0, rate=10.0)), 10.0) == ()
