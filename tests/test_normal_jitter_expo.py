"""NormalJitterExpo, study 003's client: the first retry waits ``min_delay``; each next delay is
``min(previous · factor, max_delay)`` plus N(0, jitter · delay), never below 0; and every new
request starts again from ``min_delay``.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from support import make_spec, numpy_uniform, take

from sim.runs.engine import record_run
from sim.vocabulary.errors import ParamError
from sim.models.strategies import STRATEGIES, NormalJitterExpo

U_HIGH = 1.0 - 2.0**-53  # the largest value numpy's random() can return


def test_registered_under_its_name() -> None:
    assert STRATEGIES["NormalJitterExpo"] is NormalJitterExpo


@pytest.mark.parametrize("jitter", [0.0, 0.1, 2.0])
@pytest.mark.parametrize("u", [0.0, 0.5, U_HIGH])
def test_first_delay_is_min_delay(jitter: float, u: float) -> None:
    s = NormalJitterExpo(min_delay=100.0, factor=2.718, max_delay=300000.0, jitter=jitter)
    assert next(s.delays(itertools.repeat(u).__next__)) == 100.0


def test_without_jitter_the_delay_grows_by_factor_up_to_max_delay() -> None:
    s = NormalJitterExpo(min_delay=100.0, factor=2.718, max_delay=300000.0, jitter=0.0)
    expected = [min(100.0 * 2.718 ** n, 300000.0) for n in range(20)]
    assert take(s, numpy_uniform(1), 20) == pytest.approx(expected, rel=1e-12)
    assert take(s, numpy_uniform(1), 20)[-1] == 300000.0
    # Without jitter no uniform is consumed.
    calls = []
    take(s, lambda: calls.append(1) or 0.5, 20)
    assert calls == []


def test_one_step_matches_the_formula() -> None:
    """The second delay is min_delay·factor·(1 + z·jitter) with z from Box–Muller on the client's
    two next uniforms."""
    u1, u2 = 0.3, 0.1
    z = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)
    s = NormalJitterExpo(min_delay=10.0, factor=2.0, max_delay=1000.0, jitter=0.2)
    first, second = take(s, iter([u1, u2]).__next__, 2)
    assert first == 10.0
    assert second == pytest.approx(20.0 + z * 0.2 * 20.0)


def test_jittered_delays_are_never_negative() -> None:
    # A large jitter drives delays to 0 often; they must clip there, never go below.
    s = NormalJitterExpo(min_delay=5.0, factor=1.5, max_delay=100.0, jitter=3.0)
    for seed in range(20):
        values = take(s, numpy_uniform(seed), 50)
        assert min(values) >= 0.0 and all(math.isfinite(v) for v in values)
    extremes = itertools.cycle([U_HIGH, 0.5, 0.0, 0.0, U_HIGH, 0.0]).__next__
    assert min(take(s, extremes, 50)) >= 0.0


def test_the_spread_scales_with_the_delay() -> None:
    """Jitter is relative: the same uniforms give delays exactly proportional to the scale, and the
    spread of each step is ``jitter`` times its un-jittered delay."""
    small = NormalJitterExpo(min_delay=1.0, factor=2.0, max_delay=1e9, jitter=0.1)
    large = NormalJitterExpo(min_delay=1000.0, factor=2.0, max_delay=1e12, jitter=0.1)
    for seed in range(5):
        a, b = take(small, numpy_uniform(seed), 15), take(large, numpy_uniform(seed), 15)
        assert b == pytest.approx([1000.0 * x for x in a], rel=1e-9)

    s = NormalJitterExpo(min_delay=100.0, factor=2.718, max_delay=10000.0, jitter=0.1)
    runs = np.array([take(s, numpy_uniform(seed), 12) for seed in range(3000)])
    second = runs[:, 1]  # 100·2.718, jittered once
    assert second.mean() == pytest.approx(271.8, rel=0.01)
    assert second.std() == pytest.approx(0.1 * 271.8, rel=0.08)
    at_cap = runs[:, 11]  # long since capped: 10000 jittered
    assert at_cap.mean() == pytest.approx(10000.0, rel=0.01)
    assert at_cap.std() == pytest.approx(0.1 * 10000.0, rel=0.08)
    # The jitter is normal: about 68% within one standard deviation.
    z = (second / 271.8 - 1.0) / 0.1
    assert np.mean(np.abs(z) < 1.0) == pytest.approx(0.683, abs=0.03)


@pytest.mark.parametrize("params, key", [
    ({"min_delay": 0.0, "factor": 2.0, "max_delay": 10.0}, "min_delay"),
    ({"min_delay": 1.0, "factor": 0.5, "max_delay": 10.0}, "factor"),
    ({"min_delay": 10.0, "factor": 2.0, "max_delay": 5.0}, "max_delay"),
    ({"min_delay": 1.0, "factor": 2.0, "max_delay": 10.0, "jitter": -0.1}, "jitter"),
])
def test_impossible_parameters(params: dict, key: str) -> None:
    with pytest.raises(ParamError) as info:
        NormalJitterExpo(**params)
    assert info.value.key == key


def test_each_new_request_starts_again_from_min_delay() -> None:
    """In a Poisson run against a server slower than the timeout, each request retries up to its
    limit and gives up; the next request backs off from min_delay again, then grows from there."""
    min_delay, factor, jitter = 2.0, 3.0, 0.1
    spec = make_spec("LatencyServer", [{"type": "NormalJitterExpo", "min_delay": min_delay, "factor": factor,
                                        "max_delay": 1000.0, "jitter": jitter, "max_attempts": 4}],
                     clients=[20], repeat=1, base_latency=40.0, concurrency_limit=100, factor=1.0, k=1.0,
                     workload="poisson", think_time=20.0, horizon=800.0, timeout=20.0)
    run = record_run(spec, spec.labels[0], 20, 0)
    # Each request's back-off gaps, in order: from client_backs_off to its next attempt.
    gaps: dict[tuple[int, int], list[float]] = defaultdict(list)
    request: dict[int, int] = defaultdict(int)
    backed_off: dict[int, float] = {}
    for t, c, name, detail in run.history.rows():
        if name == "client_requests_write":
            if detail == "attempt=1":
                request[c] += 1
            elif c in backed_off:
                gaps[(c, request[c])].append(t - backed_off.pop(c))
        elif name == "client_backs_off":
            backed_off[c] = t
    assert max(request.values()) >= 3  # several requests per client, each with its own retries
    complete = [g for g in gaps.values() if len(g) == 3]
    assert len(complete) > 40
    for first, second, third in complete:
        assert first == pytest.approx(min_delay, abs=1e-9)
        assert second == pytest.approx(min_delay * factor, rel=6 * jitter)
        assert third == pytest.approx(min_delay * factor ** 2, rel=5 * jitter)
