"""The two overload studies' findings, as properties over the range their sources imply, not at
one point.

- Study 004 (``examples/spike_queue.toml``: the per-tick overload rule, EB and REB capped): after a
  traffic spike against a queue service, no backoff (NB) and uniform random backoff (URB) leave
  most clients unserved, while exponential (EB) and random exponential backoff (REB) serve
  everyone with 13-24 times fewer requests; across network delay 0, 0.5 and 1 and spike fractions
  0.18-0.22, 20 runs per cell (seeds 1-4 x 5), with the collapse counts README's study notes
  quote: URB tips at delay 1 and fraction 0.18, constant-5 never collapses under the per-tick
  rule and tips under ``at_start``; and the two readings of EB/REB compared as README does.
- Study 003 (``examples/server_outage.toml``): with the study's parameters and 1000 clients,
  exponential backoff with jitter recovers after outages of 5 s to 2 minutes (the study's real
  server came back from a ~2 minute pause), and constant 100 ms retries stay collapsed after
  outages of 10 s and more. With 10 or 30 clients concurrency never reaches the server's limit:
  both strategies recover every time.

The fast tests take a few points of each range; the ``slow`` ones the whole range, several seeds.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sim.runs.sweep import run_sweep
from sim.config import load_config, parse_config
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

NB, CB, URB, EB, REB = "NB no backoff", "CB constant 5", "URB U(0,5)", "EB min(2^n,30)", "REB U(0,min(2^n,30))"
CELLS = [(mu, fraction) for mu in (0.0, 0.5, 1.0) for fraction in (0.18, 0.2, 0.22)]
SEEDS, REPETITIONS = (1, 2, 3, 4), 5  # 20 runs per cell
# The literal reading, max(2^attempts, 30), attempts = attempts made (1 before the first retry).
LITERAL = ({"type": "FlooredExpo", "base": 2.0, "floor": 30.0, "name": "EB max"},
           {"type": "FullJitteredFlooredExpo", "base": 2.0, "floor": 30.0, "name": "REB max"})


def spike_spec(network_mu: float, spike_fraction: float, seed: int | None = None,
               rule: str = "per_tick", literal: bool = False) -> SimulationSpec:
    spec = example("spike_queue.toml")
    spec = replace(spec, network_mu=network_mu, seed=spec.seed if seed is None else seed,
                   workload=replace(spec.workload, spike_fraction=spike_fraction),
                   control=replace(spec.control, overload_rule=rule))
    if literal:
        extra = parse_config({"simulation": [{**SPIKE_TABLE, "strategies": list(LITERAL)}]}).simulations[0]
        spec = replace(spec, strategies=spec.strategies + extra.strategies)
    return spec


SPIKE_TABLE = {"title": "literal", "clients": [800], "repeat": 1, "network_mu": 0.0, "network_sigma": 0.0,
               "control": "QueueServer", "concurrency": 5, "service_time": 5.0, "horizon": 3000.0}


def runs(spec: SimulationSpec, label: str) -> list:
    """The 20 runs of a cell: seeds 1-4, repetitions 0-4 each."""
    chain = spec.strategy(label).chain
    return [run_metrics(replace(spec, seed=seed), chain, 800, r) for seed in SEEDS for r in range(REPETITIONS)]


def collapsed(m) -> bool:
    """Clients still unserved at the horizon, 2000 ticks after the last first request: a server
    that is not overwhelmed serves 1 request per tick (5 slots of 5 ticks) against 0.64 new ones,
    so with backoffs of at most 30 ticks only one kept overwhelmed leaves anyone behind."""
    return m.unfinished > 0


def spike_orderings_hold(network_mu: float, spike_fraction: float, repetitions: range) -> None:
    spec = spike_spec(network_mu, spike_fraction)
    clients = spec.clients[0]
    for r in repetitions:
        out = {name: run_metrics(spec, spec.strategy(name).chain, clients, r) for name in (NB, URB, EB, REB)}
        where = (network_mu, spike_fraction, r)
        for name in (NB, URB):  # most clients never get through
            assert out[name].unfinished > clients / 2, (name, where)
        for name in (EB, REB):  # everyone does, for a fraction of the requests
            assert out[name].successes == clients and out[name].unfinished == 0, (name, where)
            for other in (NB, URB):
                # "several times fewer": at least 3x (the study's figure shows more)
                assert out[name].requests * 3 < out[other].requests, (name, other, where)


@pytest.mark.parametrize("network_mu, spike_fraction", [(0.0, 0.18), (1.0, 0.22)])
def test_spike_queue_orderings_at_the_corners(network_mu: float, spike_fraction: float) -> None:
    spike_orderings_hold(network_mu, spike_fraction, range(1))


def test_spike_queue_constant_5_serves_everyone_per_tick() -> None:
    """The example's cell, one run: constant-5 does not collapse under the per-tick rule (it
    does under at_start there, in 20 of 20 runs: the slow test below)."""
    spec = spike_spec(0.0, 0.2)
    m = run_metrics(spec, spec.strategy(CB).chain, 800, 0)
    assert m.unfinished == 0 and m.successes == 800


def test_literal_eb_leaves_spike_clients_asleep_not_collapsed() -> None:
    """max(2^attempts, 30) has no cap: the clients it leaves unserved at the horizon are spike
    clients that failed 11 tries in lockstep and sleep 2048 ticks (README's study notes)."""
    spec = spike_spec(0.0, 0.2, literal=True)
    m = run_metrics(spec, spec.strategy("EB max").chain, 800, 0)
    served = np.zeros(800, dtype=bool)
    served[m.latency_clients] = True
    assert 0 < m.unfinished == int((~served).sum())
    assert set(m.attempts_per_client[~served].tolist()) == {11}


# Collapsed runs of 20 per cell (network delay, spike fraction), as README's study notes quote.
URB_COLLAPSES = {cell: 20 for cell in CELLS} | {(1.0, 0.18): 16}
CB_AT_START_COLLAPSES = {(0.0, 0.18): 9, (0.0, 0.2): 20, (0.0, 0.22): 20, (0.5, 0.18): 0, (0.5, 0.2): 2,
                         (0.5, 0.22): 16, (1.0, 0.18): 0, (1.0, 0.2): 0, (1.0, 0.22): 0}


@pytest.mark.slow
@pytest.mark.parametrize("network_mu, spike_fraction", CELLS)
def test_spike_queue_collapses_over_20_runs(network_mu: float, spike_fraction: float) -> None:
    """README's figures per cell, under the example's rule: NB collapses in 20 of 20 (72-83% of
    the clients unserved), URB as URB_COLLAPSES (61-80% unserved, 18-65% in its tipping cell),
    constant-5, EB and REB in none; EB and REB's mean requests 13-24 times fewer than NB's and
    URB's (the README's range over the cells' means, rounded: each cell within 12.5-24.5)."""
    cell = (network_mu, spike_fraction)
    spec = spike_spec(*cell)
    out = {name: runs(spec, name) for name in (NB, URB, CB, EB, REB)}
    count = {name: sum(map(collapsed, ms)) for name, ms in out.items()}
    assert count == {NB: 20, URB: URB_COLLAPSES[cell], CB: 0, EB: 0, REB: 0}, cell
    unserved = {name: [m.unfinished / 800 for m in ms if collapsed(m)] for name, ms in out.items()}
    assert 0.715 <= min(unserved[NB]) and max(unserved[NB]) < 0.835
    low, high = (0.175, 0.655) if URB_COLLAPSES[cell] < 20 else (0.605, 0.805)
    assert low <= min(unserved[URB]) and max(unserved[URB]) < high
    mean = {name: np.mean([m.requests for m in ms]) for name, ms in out.items()}
    assert min(mean[NB], mean[URB]) / max(mean[EB], mean[REB]) >= 12.5
    assert max(mean[NB], mean[URB]) / min(mean[EB], mean[REB]) < 24.5


@pytest.mark.slow
@pytest.mark.parametrize("network_mu, spike_fraction", CELLS)
def test_spike_queue_constant_5_tips_under_at_start(network_mu: float, spike_fraction: float) -> None:
    """The old rule (slowdown fixed when a request starts): constant-5 collapses in the cells'
    counts README's table gives, and U(0,5) in all 20 where it tips under the per-tick rule."""
    spec = spike_spec(network_mu, spike_fraction, rule="at_start")
    assert sum(map(collapsed, runs(spec, CB))) == CB_AT_START_COLLAPSES[(network_mu, spike_fraction)]
    if (network_mu, spike_fraction) == (1.0, 0.18):
        assert sum(map(collapsed, runs(spec, URB))) == 20


def pooled(ms: list, q: float) -> float:
    return float(np.percentile(np.concatenate([m.latencies for m in ms]), q))


@pytest.mark.slow
def test_the_two_readings_of_eb_against_the_post() -> None:
    """README's comparison at delay 0, fraction 0.2 (20 runs): both readings give EB the better
    p75 and REB the better tail; only the capped one has EB send fewer requests (29% fewer; the
    literal EB within 2% of its REB) and serve everyone (the literal EB leaves 6-11%, asleep); at
    delay 1 the literal EB's p75 is the worse."""
    spec = spike_spec(0.0, 0.2, literal=True)
    out = {name: runs(spec, name) for name in (EB, REB, "EB max", "REB max")}
    for eb, reb in ((EB, REB), ("EB max", "REB max")):
        assert pooled(out[eb], 75) < pooled(out[reb], 75) and pooled(out[eb], 99) > pooled(out[reb], 99)
    requests = {name: np.mean([m.requests for m in ms]) for name, ms in out.items()}
    assert 0.69 < requests[EB] / requests[REB] < 0.73  # README: 3,784 vs 5,304
    assert abs(requests["EB max"] / requests["REB max"] - 1) < 0.02  # 2,431 vs 2,409
    assert all(m.unfinished == 0 for name in (EB, REB, "REB max") for m in out[name])
    assert all(0.055 <= m.unfinished / 800 < 0.115 for m in out["EB max"])
    far = spike_spec(1.0, 0.2, literal=True)
    assert pooled(runs(far, "EB max"), 75) > pooled(runs(far, "REB max"), 75)


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


def test_server_outage_example() -> None:
    """As shipped (an 8 s outage, 1000 clients): constant retries never recover, backoff does in
    every repetition, with far fewer timeouts and requests."""
    spec = example("server_outage.toml")
    result = run_sweep(spec, workers=1)
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
def test_server_outage_example_with_few_clients_always_recovers(clients: int) -> None:
    """Below the concurrency limit collapse is impossible: every repetition recovers, whatever
    the strategy (the old verdict said never for both)."""
    spec = replace(example("server_outage.toml"), clients=(clients,))
    result = run_sweep(spec, workers=1)
    for s in range(len(spec.strategies)):
        summary = result.recovery(s, 0)
        assert summary.all_recovered and summary.runs == spec.repeat, (spec.labels[s], summary)
        assert np.all(np.asarray(summary.times) < spec.horizon - spec.outages[0].end)
