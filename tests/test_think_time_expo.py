"""ThinkTimeExpo, study 003's real Go client (``client.go`` with ``-exponential-backoff``): the
first backoff is ``factor`` × the think time before the call, each next ``factor`` × the
previous, capped at ``max_delay``, plus an absolute N(0, ``jitter``); a negative delay sleeps 0
and stays the next one's base, as Go's ``time.After`` and ``lastDelay`` do.

The Go loop is transcribed below independently (``go_client_delays``) and fed the same normal
variates; runs check that the client hands the strategy the think time that preceded each call.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterator

import pytest
from support import decode, make_spec, numpy_uniform

from sim.vocabulary.errors import ConfigError
from sim.models.strategies import STRATEGIES, ThinkTimeExpo
from sim.runs.engine import Run, run_metrics

E = 2.71828  # client.go: expFactor
MAX_DELAY = 5 * 60 * 1000.0  # expMaxDelay = 5 * time.Minute, in ms
JITTER = 100.0  # expJitter * time.Second = 0.1 s, in ms


def normals(uniform: Callable[[], float]) -> Iterator[float]:
    """Normal variates by Box–Muller from a uniform stream (two uniforms each), as Go's
    ``rand.NormFloat64`` stands in for them."""
    while True:
        u1, u2 = uniform(), uniform()
        yield math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


def go_client_delays(think: float, z: Iterator[float], n: int) -> list[float]:
    """client.go's loop after a failure, in ms: ``delay = lastDelay * expFactor``; capped above;
    ``delay += NormFloat64 * expJitter * 1 s``; ``lastDelay = delay``; ``<-time.After(delay)``
    (which returns at once for delay <= 0). ``lastDelay`` starts as the think delay."""
    last_delay, slept = think, []
    for _ in range(n):
        delay = last_delay * E
        if delay > MAX_DELAY:
            delay = MAX_DELAY
        delay += next(z) * JITTER
        last_delay = delay
        slept.append(max(delay, 0.0))
    return slept


def test_registered_with_the_go_clients_constants_as_defaults() -> None:
    assert STRATEGIES["ThinkTimeExpo"] is ThinkTimeExpo
    s = ThinkTimeExpo()
    assert (s.factor, s.max_delay, s.jitter) == (E, MAX_DELAY, JITTER)
    assert s.FROM_THINK_TIME


@pytest.mark.parametrize("think", [0.5, 30.0, 2000.0, 10000.0, 60000.0])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_delays_are_the_go_loops(think: float, seed: int) -> None:
    ours = list(itertools.islice(ThinkTimeExpo().think_delays(numpy_uniform(seed), think), 12))
    theirs = go_client_delays(think, normals(numpy_uniform(seed)), 12)
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-9)


def test_without_jitter_the_first_backoff_is_e_times_the_think_time() -> None:
    s = ThinkTimeExpo(jitter=0.0)
    delays = list(itertools.islice(s.think_delays(lambda: 0.5, 10000.0), 5))
    # 27.2 s, 73.9 s, 200.9 s, then the 5 minute cap
    assert delays == pytest.approx([10000.0 * E, 10000.0 * E**2, 10000.0 * E**3, MAX_DELAY, MAX_DELAY])


def test_a_negative_delay_sleeps_zero_and_stays_negative() -> None:
    """A short think time and a negative jitter (z = −√(2 ln 2) for u = 0.5, 0.5) make the delay
    negative; it then only grows more negative (×e, −118 ms a step): every retry is immediate."""
    z = -math.sqrt(2.0 * math.log(2.0))
    delays = list(itertools.islice(ThinkTimeExpo().think_delays(lambda: 0.5, 10.0), 8))
    assert delays == [0.0] * 8
    assert 10.0 * E + z * JITTER < 0
    # The same think time with a positive draw (u2 = 0: z = +√(2 ln 2)) backs off.
    positive = list(itertools.islice(ThinkTimeExpo().think_delays(itertools.cycle([0.5, 0.0]).__next__, 10.0), 3))
    assert positive[0] == pytest.approx(10.0 * E - z * JITTER) and positive[2] > positive[1] > positive[0]


def test_delays_asks_for_the_think_time() -> None:
    with pytest.raises(TypeError, match="think_delays"):
        next(ThinkTimeExpo().delays(lambda: 0.5))


# --- in runs -----------------------------------------------------------------------------------

OPEN = dict(base_latency=10.0, concurrency_limit=12, factor=1.2, k=3.0, check_interval=2.0,
            workload="poisson", think_time=25.0, horizon=2000.0, timeout=30.0, network_mu=1.0,
            network_sigma=0.5, clients=[40], repeat=1, outages=[{"start": 300.0, "duration": 200.0}])


@pytest.mark.parametrize("limits", [{}, {"max_attempts": 50}], ids=["plain", "chain"])
def test_each_calls_first_backoff_is_e_times_its_think_time(limits: dict) -> None:
    """In a recorded run (no jitter), every call's first backoff is factor × the gap between the
    previous call's end (its success; 0 for the first call) and the call's first attempt; the
    fast path and the policy chain (a retry limit) agree."""
    spec = make_spec("LatencyServer", [{"type": "ThinkTimeExpo", "factor": 2.0, "jitter": 0.0,
                                        "name": "go", **limits}], **OPEN)
    h = decode(Run(spec, "go", 40, 0).run())
    per_client = defaultdict(list)
    for e in h:
        if e[1] >= 0:
            per_client[e[1]].append(e)
    checked = 0
    for own in per_client.values():
        ended, think, failed_at = 0.0, None, None
        for t, _, name, d in own:
            if name == "client_requests_write" and d == 1:
                think = t - ended
            elif name == "client_requests_write" and d == 2:
                assert t - failed_at == pytest.approx(2.0 * think, rel=1e-9, abs=1e-9)
                checked += 1
            elif name == "client_times_out":
                failed_at = t
            elif name == "client_succeeds":
                ended = t
    # Every client has a call in the 200 ms outage (8 mean think times) that times out (30 ms).
    assert checked >= 40
    plain = make_spec("LatencyServer", [{"type": "ThinkTimeExpo", "name": "go"}], **OPEN)
    chain = make_spec("LatencyServer", [{"type": "ThinkTimeExpo", "name": "go", "max_attempts": 10**6}], **OPEN)
    a, b = (run_metrics(s, s.strategies[0].chain, 40, 0) for s in (plain, chain))
    assert (a.requests, a.successes, a.timeouts) == (b.requests, b.successes, b.timeouts)


def test_a_workload_without_think_times_is_one_line() -> None:
    with pytest.raises(ConfigError) as info:
        make_spec("LatencyServer", [{"type": "ThinkTimeExpo"}],
                  **{k: v for k, v in OPEN.items() if k not in ("think_time", "workload")}, workload="burst")
    text = str(info.value)
    assert "ThinkTimeExpo starts its backoff from the client's last think time" in text and "\n" not in text
