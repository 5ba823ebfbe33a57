"""``QueueServer``'s per-tick overload rule (study 004's "each request equally likely to make
forward progress"), against theory on hand-built scenarios, and against the ``at_start`` rule
where the two must agree.

The scenario of the theory tests: a burst of N clients at t = 0 with no network delay, one slot
(``concurrency = 1``) and rejections that take for ever (``reject_delay`` past the horizon). The
first client to arrive is served; it is alone for that instant, so it runs through the first tick
(p = 1 then); from tick 1 on the other N - 1 are being rejected and the outstanding count stays N,
so at each tick it goes on with probability p = threshold / N = 1 / slowdown. With its
``service_time`` of S ticks it needs S - 1 more ticks of progress: the number of ticks T until it
has them is negative binomial (S - 1 successes at p), and it completes at T + 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from support import make_spec

from sim.runs import resources
from sim.runs.engine import run_metrics
from sim.settings.spec import SimulationSpec

SERVICE = 5  # ticks of work: the served client needs SERVICE - 1 after the first tick
THRESHOLD = 5
REPETITIONS = 300

NEVER = 1e6  # a rejection that outlasts the horizon: its client is outstanding throughout


def burst(clients: int, rule: str = "per_tick", **kw: Any) -> SimulationSpec:
    table: dict[str, Any] = dict(
        clients=[clients], repeat=1, network_mu=0.0, network_sigma=0.0, work_to_duration=0.0,
        concurrency=1, service_time=float(SERVICE), queue_size=0, reject_delay=NEVER,
        overload_threshold=THRESHOLD, overload_rule=rule, workload="burst", horizon=2000.0)
    table.update(kw)
    return make_spec("QueueServer", [{"type": "NoBackoff"}], **table)


def served_latencies(spec: SimulationSpec) -> np.ndarray:
    """The one served client's latency in each of REPETITIONS runs."""
    clients, strategy = spec.clients[0], spec.strategies[0].chain
    out = []
    for r in range(REPETITIONS):
        m = run_metrics(spec, strategy, clients, r)
        assert m.successes == 1 and m.unfinished == clients - 1
        out.append(m.latencies[0])
    return np.asarray(out)


# A statistical check (a few seconds a case): every case under -m slow, for the default run's budget.
@pytest.mark.slow
@pytest.mark.parametrize("clients", [10, 20, 40])
def test_mean_progress_per_tick_is_one_over_the_slowdown(clients: int) -> None:
    """T ~ NegBin(S - 1, p), p = threshold / N: mean (S - 1) / p, variance (S - 1)(1 - p) / p².
    Over 300 runs the mean is within 4 standard errors (a false alarm about once in 16,000), and
    the sample variance within 35% of the theory's: its relative standard error is about
    sqrt((2 + excess kurtosis) / 300), under 0.11 for these p (kurtosis 6/(S-1) + p²/((S-1)(1-p))),
    so 35% is over 3 of them."""
    p = THRESHOLD / clients
    k = SERVICE - 1
    mean, var = k / p, k * (1 - p) / p**2
    ticks = served_latencies(burst(clients)) - 1.0
    assert np.all(ticks == np.round(ticks))  # whole ticks: it ends as its last tick ends
    assert abs(ticks.mean() - mean) < 4 * math.sqrt(var / REPETITIONS), (ticks.mean(), mean)
    assert abs(ticks.var(ddof=1) / var - 1) < 0.35, (ticks.var(ddof=1), var)


@pytest.mark.slow  # a statistical finding at small scale; the examples' own tests stay in the default run
def test_at_start_fixes_the_time_when_the_request_starts() -> None:
    """The same burst under the old rule: the served client started alone (slowdown 1), so the
    load that comes at that instant does not touch it; per tick it is held back 8-fold."""
    latency = served_latencies(burst(40, "at_start"))
    assert np.all(latency == SERVICE)
    assert served_latencies(burst(40)).mean() > 4 * SERVICE


@pytest.mark.slow  # a few seconds of ticks; the default run keeps the whole-tick cases
def test_a_fractional_tick_scales_the_progress() -> None:
    """Ticks of 0.5: the same chance per tick, twice the ticks of work, so the time after the
    first tick is (2S - 1) / p ticks of 0.5 on average (within 4 standard errors)."""
    p, k, tick = THRESHOLD / 20, 2 * SERVICE - 1, 0.5
    after = (served_latencies(burst(20, overload_tick=tick)) - tick) / tick
    assert abs(after.mean() - k / p) < 4 * math.sqrt(k * (1 - p) / p**2 / REPETITIONS)


QUEUE: dict[str, Any] = dict(
    clients=[40], repeat=2, network_mu=1.0, network_sigma=0.5, work_to_duration=0.0,
    concurrency=3, service_time=4.0, queue_size=4, reject_delay=1.0, workload="spike",
    spike_fraction=0.5, spike_width=5.0, arrival_window=100.0, horizon=400.0, timeout=12.0,
    outages=[{"start": 30.3, "duration": 17.9}])
STRATEGIES = [{"type": "Constant", "constant": 2.0}, {"type": "FullJitteredExpo", "base": 1.0, "cap": 50.0}]


@pytest.mark.parametrize("threshold", [0, 1000])
def test_never_overwhelmed_both_rules_agree(threshold: int) -> None:
    """Below the threshold every request runs without a pause: the same completions as a time
    fixed at the start (within float rounding of the ticks' subtractions), outages included."""
    runs = {}
    for rule in ("per_tick", "at_start"):
        spec = make_spec("QueueServer", STRATEGIES, overload_threshold=threshold, overload_rule=rule, **QUEUE)
        runs[rule] = [run_metrics(spec, s.chain, 40, r) for s in spec.strategies for r in range(2)]
    for tick, start in zip(runs["per_tick"], runs["at_start"]):
        assert (tick.requests, tick.successes, tick.timeouts, tick.rejections, tick.unfinished) == (
            start.requests, start.successes, start.timeouts, start.rejections, start.unfinished)
        assert tick.successes > 0 and tick.rejections > 0
        np.testing.assert_allclose(tick.latencies, start.latencies, rtol=0, atol=1e-9)


def test_overwhelmed_the_rules_differ_and_each_is_reproducible() -> None:
    spec = make_spec("QueueServer", STRATEGIES, overload_threshold=6, overload_rule="per_tick", **QUEUE)
    again = make_spec("QueueServer", STRATEGIES, overload_threshold=6, overload_rule="per_tick", **QUEUE)
    old = make_spec("QueueServer", STRATEGIES, overload_threshold=6, overload_rule="at_start", **QUEUE)
    chain = spec.strategies[0].chain
    a, b, c = (run_metrics(s, chain, 40, 0) for s in (spec, again, old))
    assert a.latencies.tolist() == b.latencies.tolist() and a.requests == b.requests
    assert a.latencies.tolist() != c.latencies.tolist()


def test_ticks_count_in_the_events_estimate() -> None:
    """One unrecorded tick per overload_tick while a request is in progress: the estimate counts
    them only where the server can be overwhelmed under the per-tick rule."""
    def spec(**kw: Any) -> SimulationSpec:
        return make_spec("QueueServer", STRATEGIES, **{**QUEUE, "overload_threshold": 6, "overload_rule": "per_tick", **kw})

    # A busy span of at least one service time (4) over the tick: 4 ticks of 1, 400 of 0.01.
    assert resources.timer_events(spec(overload_tick=0.01), 40) == 100 * resources.timer_events(spec(), 40) == 400
    assert resources.timer_events(spec(overload_rule="at_start"), 40) == 0
    assert resources.timer_events(spec(overload_threshold=0), 40) == 0
    assert spec(overload_tick=0.01).control.timer.key == "overload_tick"


def test_a_tiny_overload_tick_is_refused_naming_it() -> None:
    """A busy Poisson server ticked every 1e-9: ~3e13 ticks, refused before any work."""
    from sim.vocabulary.errors import ConfigError

    spec = make_spec("QueueServer", [{"type": "NoBackoff"}], clients=[50], repeat=1, concurrency=2,
                     service_time=1.0, overload_threshold=5, horizon=30000.0, workload="poisson",
                     think_time=100.0, overload_tick=1e-9, overload_rule="per_tick")
    with pytest.raises(ConfigError) as info:
        resources.check_resources([spec], workers=2, memory=(8 << 30, 4 << 30))
    assert info.value.key == "overload_tick" and "(raise overload_tick, or pass --force" in str(info.value)


def test_a_rejection_with_no_delay_needs_no_turn() -> None:
    """reject_delay = 0: nothing to progress, so even overwhelmed (20 outstanding against 5) every
    rejection is heard at once, as under at_start (0 stretched is 0)."""
    from sim.runs.engine import record_run

    spec = make_spec("QueueServer", [{"type": "Constant", "constant": NEVER}], clients=[20], repeat=1,
                     network_mu=0.0, network_sigma=0.0, concurrency=1, service_time=5.0,
                     reject_delay=0.0, overload_threshold=THRESHOLD, overload_rule="per_tick", workload="burst",
                     horizon=100.0)
    rows = list(record_run(spec, spec.labels[0], 20, 0).history.rows())
    backs_off = [t for t, _, name, _ in rows if name == "client_backs_off"]
    assert backs_off == [0.0] * 19
