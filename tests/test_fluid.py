"""The fluid (mean-field) estimate (``sim.fluid``) and ``explore --method fluid | adaptive``.

Fast checks against theory where it exists (the interactive response-time law of a closed
loop, a queue's fluid limit), the two basins of a metastable server, the verdict, the reasons
a spec has no fluid form, determinism, and the command's files. The slow check compares the
fluid map of ``examples/metastability.toml`` with its simulated map.
"""

from __future__ import annotations

import csv
import math
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sim.commands import cli
from sim.settings.config import parse_config
from sim.exploration.methods import FLUID_NOTE, boundary_pairs
from sim.exploration.plan import load_document
from sim.fluid.cells import fluid_runs
from sim.fluid.express import fluid_case
from sim.fluid.verdict import fluid_recovery
from sim.models.workloads import Outage
from sim.settings.spec import SimulationSpec

ROOT = Path(__file__).resolve().parent.parent

# Study 003's server (examples/metastability.toml) on a shorter horizon: 1000 clients, a 2 s
# timeout, an outage 20 s in.
LATENCY = """
seed = 3
[[simulation]]
title = "Fluid"
clients = [1000]
repeat = 1
network_mu = 1.0
network_sigma = 0.2
work_to_duration = 0.0
control = "LatencyServer"
base_latency = 100.0
concurrency_limit = 30
factor = 1.05
k = 15.0
check_interval = 50.0
workload = "poisson"
think_time = 4000.0
horizon = 120000.0
timeout = 2000.0
outages = [{ start = 20000.0, duration = 60000.0 }]
backlog = "unbounded"  # the fluid model's accept queue (it has no bound)
abandoned = "drop"
strategies = [
  { type = "Constant", constant = 100.0, name = "constant" },
  { type = "FullJitteredExpo", base = 100.0, cap = 60000.0, name = "capped" },
]
"""

# One worker, open (Poisson) arrivals, no outage: a queue.
POOL = """
seed = 1
[[simulation]]
title = "Queue"
clients = [100]
repeat = 1
network_mu = 0.0
network_sigma = 0.0
work_to_duration = 0.0
control = "PoolServer"
workers = 1
service_time = 10.0
workload = "open"
think_time = 2000.0
horizon = 10000.0
timeout = 10000.0
strategies = [{ type = "Constant", constant = 100.0, name = "constant" }]
"""


def spec_of(text: str) -> SimulationSpec:
    return parse_config(tomllib.loads(text), "test.toml").simulations[0]


def test_a_closed_loop_without_trouble_obeys_the_response_time_law() -> None:
    """No outage, no timeout reached: throughput X = N / (Z + R) (the interactive response
    time law, N clients thinking Z on average, R the response time), and nothing retried."""
    spec = replace(spec_of(LATENCY), outages=())
    cells = [replace(spec, workload=replace(spec.workload, think_time=think)) for think in (4000.0, 20000.0)]
    for cell, run in zip(cells, fluid_runs([(cell, 0) for cell in cells])):
        think, values = cell.workload.think_time, run.values
        x = values["successes"] / cell.horizon
        # the first think times: the clients start thinking at 0 (exponential starts), so the
        # run's mean pace falls short of the steady one by about (Z + R)/horizon of it
        steady = 1000 / (think + values["p50"])
        assert x == pytest.approx(steady, rel=(think + values["p50"]) / cell.horizon + 0.005)
        assert values["amplification"] == pytest.approx(1.0, abs=1e-9)
        # below the concurrency limit (N·R/(Z+R) = 31 at Z = 4 s: just at it) every request
        # takes the base latency, rounded up to the 50 ms checks: 2.5 checks + 2 network legs
        assert values["p50"] == pytest.approx(125.0 + 2.0, abs=1e-9)


@pytest.mark.parametrize("service, rho", [(10.0, 0.5), (40.0, 2.0)])
def test_a_queue_serves_at_its_fluid_limit(service: float, rho: float) -> None:
    """A single-worker queue's fluid limit: throughput min(λ, 1/S), and below saturation the
    work at the server is λ·S (Little), in service, with no queue: a request waits S."""
    spec = spec_of(POOL)
    lam = 100 / 2000.0  # 100 open clients, one call every 2 s each: 0.05 per ms
    cell = replace(spec, control=replace(spec.control, service_time=service))
    assert lam * service == pytest.approx(rho)
    values = fluid_runs([(cell, 0)])[0].values
    assert values["goodput"] == pytest.approx(min(lam, 1 / service), rel=0.01)
    if rho < 1:
        case = fluid_case(cell, 0)
        assert values["p50"] == pytest.approx(service, abs=case.step)  # waited S, to a step
        assert values["timeouts"] == 0.0


def test_constant_retries_have_a_collapsed_state_that_capped_backoff_at_low_load_does_not() -> None:
    """Metastability: the same server recovers from a short outage and stays collapsed after a
    long one under constant retries at high load (a second, collapsed equilibrium: goodput
    near zero to the horizon), while capped exponential backoff at low load recovers even
    from the long one (its orbit drains)."""
    spec = spec_of(LATENCY)
    cells = {}
    for think in (4000.0, 20000.0):
        for duration in (1000.0, 60000.0):
            cells[think, duration] = replace(spec, workload=replace(spec.workload, think_time=think),
                                             outages=(Outage(20000.0, duration),))
    keys = [(k, s) for k in cells for s in (0, 1)]
    runs = {key: r.values for key, r in zip(keys, fluid_runs([(cells[k], s) for k, s in keys]))}
    assert runs[(4000.0, 1000.0), 0]["recovered"] == 1.0
    assert runs[(4000.0, 60000.0), 0]["recovered"] == 0.0
    assert runs[(20000.0, 60000.0), 1]["recovered"] == 1.0
    assert runs[(20000.0, 1000.0), 1]["recovered"] == 1.0
    # collapsed: almost nothing served after the outage (goodput over the run well under the
    # healthy run's share of the time before the outage)
    healthy = runs[(4000.0, 1000.0), 0]["goodput"]
    assert runs[(4000.0, 60000.0), 0]["goodput"] < healthy * 20000.0 / 120000.0 * 1.05


def test_the_verdict_reads_a_return_a_collapse_and_no_baseline() -> None:
    """A synthetic run: baseline 10 successes per 100 ms step, an outage from 10 s to 20 s,
    then back to 10 at 25 s (recovered, ~5 s after the end) or never (collapsed)."""
    step, steps = 100.0, 600
    t = (np.arange(steps) + 1) * step
    back = np.where((t < 10000) | (t >= 25000), 10.0, 0.0)
    lat = np.full(steps, 50.0)
    zero = np.zeros(steps)
    nan = np.full(steps, np.nan)
    outage = (Outage(10000.0, 10000.0),)
    recovered, when = fluid_recovery(back, lat, zero, nan, step, 0.0, 300.0, 60000.0, outage)
    assert recovered == 1.0 and 4900.0 <= when <= 5100.0
    dead = np.where(t < 10000, 10.0, 0.0)
    assert fluid_recovery(dead, lat, zero, nan, step, 0.0, 300.0, 60000.0, outage)[0] == 0.0
    # successes that come back but late (median latency over twice the baseline's) are not a return
    slow = np.where(t < 10000, 50.0, 500.0)
    assert fluid_recovery(back, slow, zero, nan, step, 0.0, 300.0, 60000.0, outage)[0] == 0.0
    early = (Outage(100.0, 1000.0),)
    assert math.isnan(fluid_recovery(back, lat, zero, nan, step, 0.0, 300.0, 60000.0, early)[0])


@pytest.mark.parametrize("change, reason", [
    (lambda s: replace(s, control=replace(s.control, latency_rule="at_start")), "at_start"),
    (lambda s: replace(s, timeout=None), "no client timeout"),
    (lambda s: replace(s, backlog=10), "backlog"),
])
def test_what_has_no_fluid_form_says_why(change, reason: str) -> None:
    case = fluid_case(change(spec_of(LATENCY)), 0)
    assert isinstance(case, str) and reason in case


def test_a_policy_other_than_a_retry_budget_has_no_fluid_form() -> None:
    text = LATENCY.replace('{ type = "Constant", constant = 100.0, name = "constant" },',
                           '{ type = "Constant", constant = 100.0, name = "constant", policies = ['
                           '{ type = "CircuitBreaker" }] },')
    case = fluid_case(spec_of(text), 0)
    assert isinstance(case, str) and "CircuitBreaker" in case


def test_fluid_runs_are_deterministic() -> None:
    spec = replace(spec_of(LATENCY), horizon=40000.0, outages=(Outage(20000.0, 5000.0),))
    pairs = [(spec, 0), (spec, 1)]
    assert [r.values for r in fluid_runs(pairs)] == [r.values for r in fluid_runs(pairs)]


def test_boundary_pairs_are_both_sides_of_a_change_along_either_axis() -> None:
    doc = load_document(ROOT / "examples" / "metastability.toml")
    plan = doc.explores[0]  # 12 outages × 8 think times, 3 strategies
    state = np.ones((len(plan.cells), 3))
    # strategy 1 collapses from the 5th outage length on at the first think time only
    for position, cell in enumerate(plan.cells):
        if cell.index[1] == 0 and cell.index[0] >= 4:
            state[position, 1] = 0.0
    pairs = boundary_pairs(plan, state)
    at = {(plan.cells[p].index, s) for p, s in pairs}
    # along the outage axis: (3, 0) | (4, 0); along think time: (i, 0) | (i, 1) for i >= 4
    assert ((3, 0), 1) in at and ((4, 0), 1) in at and ((4, 1), 1) in at and ((11, 1), 1) in at
    assert all(s == 1 for _, s in at) and ((2, 0), 1) not in at
    assert len(at) == 2 + 8 + 8 - 1  # (4, 0) is on both


# A small map: 50 clients, an outage of 1 or 5 s, one strategy with a fluid form and one without
# (its backoff starts from the think time).
SMALL = LATENCY.replace("clients = [1000]", "clients = [50]").replace(
    "horizon = 120000.0", "horizon = 20000.0").replace(
    'outages = [{ start = 20000.0, duration = 60000.0 }]', 'outages = [{ start = 8000.0, duration = 1000.0 }]').replace(
    "think_time = 4000.0", "think_time = 400.0").replace(
    '{ type = "FullJitteredExpo", base = 100.0, cap = 60000.0, name = "capped" },',
    '{ type = "ThinkTimeExpo", name = "think" },') + """
[simulation.explore]
axes = [{ key = "outages[0].duration", label = "outage", values = [1000.0, 5000.0] }]
"""


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_explore_method_fluid_writes_the_columns_and_simulates_what_it_cannot_express(tmp_path: Path,
                                                                                      capsys) -> None:
    config = tmp_path / "small.toml"
    config.write_text(SMALL)
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "sim"), "-q", "--no-cache", "-j", "1",
                     "--method", "simulate"]) == 0
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "fluid"), "-q", "--no-cache", "-j", "1",
                     "--method", "fluid"]) == 0
    err = capsys.readouterr().err
    assert "no fluid form, simulated instead: strategy ThinkTimeExpo" in err and "(2)" in err
    simulated = read_rows(tmp_path / "sim" / "Fluid_explore.csv")
    fluid = read_rows(tmp_path / "fluid" / "Fluid_explore.csv")
    assert list(fluid[0]) == [*simulated[0], "method"]
    assert [r["method"] for r in fluid] == ["fluid", "simulated", "fluid", "simulated"]
    for a, b in zip(simulated, fluid):
        if b["method"] == "simulated":  # the simulation's numbers, unchanged
            assert {k: v for k, v in b.items() if k != "method"} == a
        else:
            # one deterministic estimate, no simulated runs: never "1 of 1" (issue 34, item 5)
            assert b["repeats"] == "1" and b["runs"] == "" and b["recovered_runs"] == ""
            assert b["recovery_note"] == FLUID_NOTE


def test_explore_method_adaptive_simulates_the_boundary_and_reports(tmp_path: Path, capsys) -> None:
    config = tmp_path / "small.toml"
    config.write_text(SMALL)
    assert cli.main(["explore", str(config), "--out", str(tmp_path), "-q", "--no-cache", "-j", "1",
                     "--method", "adaptive"]) == 0
    err = capsys.readouterr().err
    assert "adaptive simulated" in err and "(cell, strategy) pairs" in err
    rows = read_rows(tmp_path / "Fluid_explore.csv")
    assert {r["method"] for r in rows} <= {"fluid", "simulated", "both", "both-disagree"}
    assert all(r["method"] == "simulated" for r in rows if r["strategy"] == "think")


def test_the_app_refuses_a_method_other_than_simulate(tmp_path: Path) -> None:
    from tui.main import _explore_app

    config = tmp_path / "small.toml"
    config.write_text(SMALL)
    assert _explore_app([str(config), "--method", "fluid"]) == 2


@pytest.mark.slow
@pytest.mark.parametrize("config", ["examples/metastability.toml", "bench/fluid_pool_map.toml"])
def test_the_fluid_map_agrees_with_the_simulation(config: str) -> None:
    """The shipped map (measured: 285 of 288 pairs agree) and a PoolServer map made for this
    (60 of 60), fluid and simulated (3 repetitions a cell; a cell recovered when most of its
    runs did): the same verdict in at least 90% of the (cell, strategy) pairs, and along every
    row (second axis) of every strategy the first collapse at most one grid step apart."""
    from sim.exploration.methods import recovered_state
    from sim.exploration.backends import LocalBackend
    from sim.exploration.cache import CellCache
    from sim.exploration.runner import run_explores

    plan = load_document(ROOT / config).explores[0]
    count = len(plan.base.strategies)
    simulated = run_explores([plan], LocalBackend(), CellCache(None))[0]
    runs = fluid_runs([(c.spec, s) for c in plan.cells for s in range(count)])
    fluid = np.array([r.values["recovered"] for r in runs]).reshape(len(plan.cells), count)
    sim = np.array([[recovered_state(cr.verdict(s)) for s in range(count)] for cr in simulated.cells])
    agree = float(np.mean(fluid == sim))
    assert agree >= 0.9, f"agreement {agree:.1%}"
    shape = plan.shape
    for s in range(count):
        f, m = fluid[:, s].reshape(shape), sim[:, s].reshape(shape)
        for j in range(shape[1]):
            for row in (f[:, j], m[:, j]):
                assert not np.isnan(row).any()
            first = [int(np.argmax(row == 0)) if (row == 0).any() else shape[0] for row in (f[:, j], m[:, j])]
            assert abs(first[0] - first[1]) <= 1, (plan.base.labels[s], plan.axes[1].values[j], first)


def test_adaptive_is_the_default_for_a_map_with_a_verdict_and_simulate_otherwise(tmp_path: Path) -> None:
    from sim.exploration.methods import default_method
    from sim.exploration.plan import load_document

    config = tmp_path / "small.toml"
    config.write_text(SMALL)
    assert default_method(load_document(config).explores) == "adaptive"  # SMALL has an outage
    root = Path(__file__).resolve().parent.parent
    # A FlakyServer's failure-rate map has no outage or incident: no boundary to refine.
    assert default_method(load_document(root / "examples" / "retry_budgets.toml").explores) == "simulate"


@pytest.mark.parametrize("levels", [1, 7, 48])
def test_the_delays_are_each_clients_own_uniforms_in_order(levels: int) -> None:
    # The stream the fluid's backoff tables are drawn from: per sampled client, in order, its
    # own 64·levels + 64 uniforms of the (seed, SEED_TAG) Generator, taken one per draw the
    # strategy asks for (drawn in one call: the same numbers as a client at a time).
    from itertools import islice

    from sim.fluid import delays
    from sim.models.strategies import FullJitteredExpo, NormalJitterExpo

    for strategy in (NormalJitterExpo(min_delay=100.0, factor=2.0, max_delay=60000.0, jitter=0.1),
                     FullJitteredExpo(base=100.0, cap=10000.0)):
        rng = np.random.default_rng([11, delays.SEED_TAG])
        expected = np.empty((delays.SAMPLES, levels))
        for i in range(delays.SAMPLES):
            row = iter(rng.random(64 * levels + 64).tolist())
            expected[i] = list(islice(strategy.delays(lambda: next(row)), levels))
        got = delays.sample_delays(strategy, 11, levels)
        assert got.tobytes() == expected.tobytes()
    assert np.unique(got[:, -1]).size > delays.SAMPLES // 2  # full jitter: the clients differ


@pytest.mark.parametrize("size", [1, 5, 11, 12, 13, 23, 256, 1000])
def test_a_levels_support_is_equal_shares_of_its_sorted_delays(size: int) -> None:
    from sim.fluid import delays

    values = np.random.default_rng(size).random(size) * 900.0
    groups = np.array_split(np.sort(values), min(delays.POINTS, size))
    at = np.array([max(0, int(np.rint(g.mean()))) for g in groups])
    uniq, where = np.unique(at, return_inverse=True)
    points, weights = delays._support(values)
    assert points.tobytes() == uniq.tobytes()
    assert weights.tobytes() == np.bincount(where, weights=[float(g.size) for g in groups]).tobytes()
    assert weights.sum() == size
