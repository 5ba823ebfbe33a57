"""The two overload studies' findings, as properties over the range their sources imply, not at
one point.

- Study 004 (``examples/spike_queue.toml``): after a traffic spike against a queue service, no
  backoff (NB) and uniform random backoff (URB) leave most clients unserved, while exponential
  (EB) and random exponential backoff (REB) serve everyone with several times fewer requests;
  across network delay 0, 0.5 and 1 and spike fractions 0.18–0.22. Constant-5 sits on a tipping
  point (it flips with the network delay and the spike fraction): not asserted either way.
- Study 003 (``examples/server_outage.toml``): with the study's parameters and 1000 clients,
  exponential backoff with jitter recovers after outages of 5 s to 2 minutes (the study's real
  server came back from a ~2 minute pause), and constant 100 ms retries stay collapsed after
  outages of 10 s and more. With 10 or 30 clients concurrency never reaches the server's limit:
  neither strategy collapses, but the example's 15 s before the outage hold too few successes to
  tell a return to 80% from one to 90% (the verdict says so); 5 minutes of them do, and both
  recover every time. The recovery instant is dated from the events, within a few successes.

The fast tests take a few points of each range; the ``slow`` ones the whole range, several seeds.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sim.analysis.recovery import LATENCY_FACTOR, TOO_NOISY, baseline
from sim.runs.sweep import run_sweep
from sim.config import load_config
from sim.runs.engine import run_metrics
from sim.models.workloads import Outage
from sim.spec import SimulationSpec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example(name: str) -> SimulationSpec:
    (spec,) = load_config(EXAMPLES / name).simulations
    return spec


def strategy(spec: SimulationSpec, type_name: str):
    return next(s.strategy for s in spec.strategies if s.strategy.type_name == type_name)


# --- study 004 -----------------------------------------------------------------------------------

ROBUST = ("NoBackoff", "UniformRandom", "Expo", "FullJitteredExpo")


def spike_orderings_hold(network_mu: float, spike_fraction: float, repetitions: range) -> None:
    spec = example("spike_queue.toml")
    spec = replace(spec, network_mu=network_mu,
                   workload=replace(spec.workload, spike_fraction=spike_fraction))
    clients = spec.clients[0]
    for r in repetitions:
        runs = {name: run_metrics(spec, strategy(spec, name), clients, r) for name in ROBUST}
        where = (network_mu, spike_fraction, r)
        for name in ("NoBackoff", "UniformRandom"):  # most clients never get through
            assert runs[name].unfinished > clients / 2, (name, where)
        for name in ("Expo", "FullJitteredExpo"):  # everyone does, for a fraction of the requests
            assert runs[name].successes == clients and runs[name].unfinished == 0, (name, where)
            for other in ("NoBackoff", "UniformRandom"):
                # "several times fewer": at least 3x (the study's figure shows more)
                assert runs[name].requests * 3 < runs[other].requests, (name, other, where)


@pytest.mark.parametrize("network_mu, spike_fraction", [(0.0, 0.18), (1.0, 0.22)])
def test_spike_queue_orderings_at_the_corners(network_mu: float, spike_fraction: float) -> None:
    spike_orderings_hold(network_mu, spike_fraction, range(1))


@pytest.mark.slow
@pytest.mark.parametrize("network_mu", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("spike_fraction", [0.18, 0.2, 0.22])
def test_spike_queue_orderings_over_the_range(network_mu: float, spike_fraction: float) -> None:
    spike_orderings_hold(network_mu, spike_fraction, range(2))


# --- study 003 -----------------------------------------------------------------------------------

AFTER = 150_000.0  # time after the outage: expo's clients sleep up to ~110 s after a 2 min one


def outage_spec(seconds: float, seed: int | None = None, after: float = AFTER) -> SimulationSpec:
    spec = example("server_outage.toml")
    start = spec.outages[0].start
    return replace(spec, seed=spec.seed if seed is None else seed,
                   outages=(Outage(start, seconds * 1000.0),), horizon=start + seconds * 1000.0 + after)


def stays_collapsed(m, spec: SimulationSpec) -> bool:
    """Never recovered, and goodput over the last half after the outage under 20% of before."""
    outage, g = spec.outages[0], m.series["goodput"]
    before = g[int(outage.start / 2 / m.bucket):int(outage.start / m.bucket)].mean()
    tail = g[(int(outage.end / m.bucket) + len(g)) // 2:].mean()
    return m.recovery_time is not None and math.isnan(m.recovery_time) and tail < 0.2 * before


def test_backoff_recovers_after_outages_from_5_s_to_2_minutes() -> None:
    for seconds in (5, 15, 30, 60, 120):
        spec = outage_spec(seconds)
        m = run_metrics(spec, strategy(spec, "NormalJitterExpo"), 1000, 0)
        assert m.recovery_time is not None and 0 <= m.recovery_time < AFTER, seconds


def test_constant_retries_stay_collapsed_after_long_outages() -> None:
    for seconds in (15, 60):
        spec = outage_spec(seconds, after=60_000.0)
        assert stays_collapsed(run_metrics(spec, strategy(spec, "Constant"), 1000, 0), spec), seconds


@pytest.mark.slow
@pytest.mark.parametrize("seconds", [5, 15, 30, 60, 120])
def test_backoff_recovers_over_seeds(seconds: int) -> None:
    for seed in (3, 11, 29):
        spec = outage_spec(seconds, seed)
        for r in range(2):
            m = run_metrics(spec, strategy(spec, "NormalJitterExpo"), 1000, r)
            assert m.recovery_time is not None and 0 <= m.recovery_time < AFTER, (seed, r)


@pytest.mark.slow
@pytest.mark.parametrize("seconds", [10, 15, 30, 60, 120])
def test_constant_retries_stay_collapsed_over_seeds(seconds: int) -> None:
    for seed in (3, 11, 29):
        spec = outage_spec(seconds, seed, after=60_000.0)
        for r in range(2):
            assert stays_collapsed(run_metrics(spec, strategy(spec, "Constant"), 1000, r), spec), (seed, r)


@pytest.fixture(scope="module")
def shipped_outage():
    """The sweep of ``examples/server_outage.toml`` as shipped (two tests read it)."""
    return run_sweep(example("server_outage.toml"), workers=1)


def test_server_outage_example(shipped_outage) -> None:
    """As shipped (an 8 s outage, 1000 clients): constant retries never recover, backoff does in
    every repetition, with far fewer timeouts and requests."""
    result = shipped_outage
    spec = result.spec
    constant, expo = (spec.labels.index(s.label) for s in spec.strategies)
    for r in range(spec.repeat):
        stuck, recovered = result.open_run(constant, 0, r), result.open_run(expo, 0, r)
        assert stays_collapsed(stuck, spec)
        assert recovered.recovered and 0 <= recovered.recovery_time < spec.horizon - spec.outages[0].end
        assert stuck.timeouts > 5 * recovered.timeouts
        assert stuck.requests > 2 * recovered.requests
    assert result.recovery(constant, 0).never
    assert result.recovery(expo, 0).all_recovered


@pytest.mark.parametrize("clients", [10, 30])
def test_server_outage_example_with_few_clients_never_collapses(clients: int) -> None:
    """Below the concurrency limit collapse is impossible: no repetition reads as never. With 10
    clients the 15 s baseline holds ~15 successes, too few to tell 80% from 90% (the floors are
    130% and 34%: tests/test_recovery_metric.py): every repetition is undecided, and says why
    (the old verdict called these recovered whatever they came back to)."""
    spec = replace(example("server_outage.toml"), clients=(clients,))
    result = run_sweep(spec, workers=1)
    for s in range(len(spec.strategies)):
        runs = [result.open_run(s, 0, r) for r in range(spec.repeat)]
        assert not any(m.recovery_time is not None and math.isnan(m.recovery_time) for m in runs)
        assert all(m.recovery_note in ("", TOO_NOISY) for m in runs)
        if clients == 10:
            assert result.recovery(s, 0) is None and result.recovery_note(s, 0) == TOO_NOISY


def test_server_outage_example_with_few_clients_recovers_given_a_longer_baseline() -> None:
    """30 clients, the outage 5 minutes in: the baseline (2.5 min, ~450 successes) is long
    enough to decide a full return, and every repetition of both strategies recovered."""
    spec = example("server_outage.toml")
    start = 300_000.0
    spec = replace(spec, clients=(30,), outages=(Outage(start, 8000.0),), horizon=start + 8000.0 + AFTER)
    result = run_sweep(spec, workers=1)
    for s in range(len(spec.strategies)):
        summary = result.recovery(s, 0)
        assert summary.all_recovered and summary.runs == spec.repeat, (spec.labels[s], summary)


def test_server_outage_recovery_is_dated_from_the_events(shipped_outage) -> None:
    """As shipped (an 8 s outage, 1000 clients, 1.5 s buckets), backoff's recovery is dated at
    the return of timely successes (latency within 2x the baseline's median), not at a bucket
    edge: at or after the first timely success after the resume, within 100 ms of it (ten
    successes at the baseline's pace of ~100 a second; the burst held through the outage, served
    seconds late, does not count), and from then on they come at least at half the baseline's
    pace (over the next 500 ms: the pace the instant is dated against)."""
    result = shipped_outage
    spec = result.spec
    expo = next(i for i, s in enumerate(spec.strategies) if s.strategy.type_name == "NormalJitterExpo")
    end = spec.outages[0].end
    for r in range(spec.repeat):
        m = result.open_run(expo, 0, r)
        base = baseline(m.series["goodput"], m.bucket, spec.outages[0], m.latency_times, m.latencies)
        timely = m.latency_times[m.latencies <= LATENCY_FACTOR * base.latency]
        instant = end + m.recovery_time
        first = timely[timely >= end][0]
        assert first <= instant <= first + 100.0, (r, first - end, m.recovery_time)
        after = np.count_nonzero((timely >= instant) & (timely < instant + 500.0))
        assert after >= 0.5 * base.pace * 500.0, (r, after)
        assert m.recovery_time % m.bucket != 0.0
