"""``[simulation.explore]`` and ``[simulation.tune]`` tables: what they accept, the grid they
make, and one-line errors naming the file, the simulation and the key for every mistake."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from support import section, sim_table, toml_text

from sim.settings.config import load_config
from sim.vocabulary.errors import ConfigError
from sim.exploration.plan import load_document

OPEN = dict(control="LatencyServer", base_latency=100.0, concurrency_limit=30, factor=1.05, k=15.0,
            workload="poisson", think_time=1000.0, horizon=30000.0, timeout=2000.0,
            outages=[{"start": 10000.0, "duration": 3000.0}], clients=[20], title="Map")
STRATEGIES = [{"type": "Constant", "constant": 100.0, "name": "constant"},
              {"type": "FullJitteredExpo", "base": 50.0, "cap": 5000.0, "name": "jitter"}]


def write_config(tmp_path: Path, explore: dict[str, Any] | None = None, tune: dict[str, Any] | None = None,
                 **kw: Any) -> Path:
    fields = {**OPEN, **kw}
    table = sim_table(fields.pop("control"), STRATEGIES, **fields)
    text = toml_text(table)
    for name, sub in (("explore", explore), ("tune", tune)):
        if sub is not None:
            text += section(name, sub)
    path = tmp_path / "map.toml"
    path.write_text(text, "utf-8")
    return path


def error_line(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_document(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message and "'Map'" in message
    return message


def test_a_config_with_explore_and_tune_tables_still_runs_as_a_plain_config(tmp_path: Path) -> None:
    path = write_config(tmp_path, explore={"axes": [{"key": "think_time", "values": [500, 1000]}]},
                        tune={"strategy": "jitter", "params": {"base": [1, 100]}})
    config = load_config(path)
    assert config.simulations[0].title == "Map"


def test_two_axes_make_the_product_grid_in_order(tmp_path: Path) -> None:
    path = write_config(tmp_path, explore={"axes": [
        {"key": "outages[0].duration", "values": [1000, 2000, 4000]},
        {"key": "think_time", "values": [500, 1000]}]})
    plan = load_document(path).explores[0]
    assert plan.shape == (3, 2)
    assert [c.index for c in plan.cells] == [(i, j) for i in range(3) for j in range(2)]
    for cell in plan.cells:
        assert cell.spec.outages[0].duration == cell.values[0]
        assert cell.spec.workload.think_time == cell.values[1]
        assert cell.spec.title == "Map"  # the title is part of the seed key: common random numbers


def test_log_range_is_geometric_with_exact_ends(tmp_path: Path) -> None:
    path = write_config(tmp_path, explore={"axes": [
        {"key": "outages[0].duration", "from": 1000, "to": 16000, "steps": 5, "scale": "log"}]})
    values = load_document(path).explores[0].axes[0].values
    assert values[0] == 1000.0 and values[-1] == 16000.0
    ratios = [b / a for a, b in zip(values, values[1:])]
    # 16 = 2^4 over four steps: each ratio is 2, to the 6 significant digits values are kept to
    assert all(math.isclose(r, 2.0, rel_tol=1e-5) for r in ratios)


def test_linear_range_on_an_integer_key_rounds_to_whole_numbers(tmp_path: Path) -> None:
    path = write_config(tmp_path, explore={"axes": [{"key": "concurrency_limit", "from": 10, "to": 20, "steps": 4}]})
    axis = load_document(path).explores[0].axes[0]
    assert axis.values == (10, 13, 17, 20)  # round(10 + i * 10/3)
    assert all(isinstance(v, int) for v in axis.values)


def test_also_adds_panels_beside_the_metric(tmp_path: Path) -> None:
    from sim.exploration.figure import explore_figure
    from sim.exploration.runner import ExploreResult
    from sim.exploration.summary import CellResult

    plan = load_document(write_config(tmp_path, explore={
        "axes": [{"key": "think_time", "values": [1000, 2000]}], "metric": "amplification",
        "also": ["success_rate", "p99"]})).explores[0]
    assert plan.also == ("success_rate", "p99")
    # A figure needs only the cells' values: amplification, success rate, p99 and the verdict.
    values = {name: [[1.0, 1.0], [1.0, 1.0]] for name in ("amplification", "success_rate", "p99",
                                                           "recovered", "recovery_time", "undecided")}
    cells = [CellResult.from_json({"labels": list(plan.base.labels), "clients": 20, "values": values})] * 2
    fig = explore_figure(ExploreResult(plan, cells))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["attempts (and hedges) per offered request", "successful requests per offered request",
                      "99th percentile latency", "fraction of runs that recovered after the outages"]


def test_default_metric_is_the_verdict_with_an_outage(tmp_path: Path) -> None:
    plan = load_document(write_config(tmp_path, explore={"axes": [{"key": "think_time", "values": [1000]}]})).explores[0]
    assert plan.metric == "recovered"


@pytest.mark.parametrize("explore, fragment", [
    ({"axes": []}, "key 'explore.axes': must be a list of one or two axes"),
    ({"axes": [{"key": "think_time", "values": [1]}] * 3}, "one or two axes"),
    ({"axes": [{"key": "thinktime", "values": [1]}]}, "key 'explore.axes[0].key': 'thinktime' is not a key"),
    ({"axes": [{"key": "think_time"}]}, "give either values = [...] or from, to and steps"),
    ({"axes": [{"key": "think_time", "values": [1], "from": 1}]}, "give either values"),
    ({"axes": [{"key": "think_time", "from": 1, "to": 10}]}, "key 'explore.axes[0].steps': is missing"),
    ({"axes": [{"key": "think_time", "from": 0, "to": 10, "steps": 3, "scale": "log"}]}, "must be > 0 on a log scale"),
    ({"axes": [{"key": "think_time", "from": 1, "to": 10, "steps": 3, "scale": "cubic"}]}, "scale"),
    ({"axes": [{"key": "think_time", "values": [1, 1]}]}, "repeated values"),
    ({"axes": [{"key": "concurrency_limit", "from": 1, "to": 3, "steps": 5}]}, "repeated values"),
    ({"axes": [{"key": "think_time", "values": ["a"]}]}, "must be a number"),
    ({"axes": [{"key": "think_time", "values": [1], "colour": 1}]}, "'explore.axes[0].colour': is not an axis key"),
    ({"axes": [{"key": "think_time", "values": [1]}, {"key": "workload.think_time", "values": [2]}]}, "already an axis"),
    ({"axes": [{"key": "think_time", "values": [1000, -5]}]},
     "the cell think_time = -5 is invalid: think_time: must be > 0"),
    ({"axes": [{"key": "outages[0].start", "values": [1000, 40000]}]},
     "the cell outages[0].start = 40000 is invalid: outages[0].start: is at or after the horizon"),
    ({"axes": [{"key": "think_time", "values": [1]}], "metric": "happiness"}, "unknown metric 'happiness'"),
    ({"axes": [{"key": "think_time", "values": [1]}], "colour": "red"}, "'explore.colour': is not an explore key"),
    ({"axes": [{"key": "think_time", "values": [1]}], "also": ["joy"]}, "key 'explore.also': unknown metric 'joy'"),
    ({"axes": [{"key": "think_time", "values": [1]}], "also": "p99"}, "must be a list of metric names"),
    ({"axes": [{"key": "think_time", "values": [1]}, {"key": "timeout", "values": [1]}], "also": ["p99"]},
     "a two-axis map shows one metric"),
    ({"axes": [{"key": "think_time", "values": [1], "label": "strategy"}]},
     "key 'explore.axes[0].label': explore.axes[0] (think_time) is named 'strategy', which is already a "
     "column of _explore.csv"),
    ({"axes": [{"key": "think_time", "values": [1], "label": "p99_mean"}]}, "is named 'p99_mean', which is already"),
    ({"axes": [{"key": "think_time", "values": [1], "label": "load"}, {"key": "timeout", "values": [1], "label": "load"}]},
     "key 'explore.axes[1].label': 'load' names both explore.axes[0] (think_time) and explore.axes[1] (timeout)"),
    ({"axes": [{"key": "think_time", "values": [1]}, {"key": "timeout", "values": [1], "label": "think_time"}]},
     "'think_time' names both explore.axes[0] (think_time) and explore.axes[1] (timeout)"),
    ({"axes": [{"key": "think_time", "from": 1, "to": 10, "steps": 10**9}]},
     "key 'explore.axes[0].steps': would make 1,000,000,000 cells, more than the limit of 100,000 cells per map"),
    ({"axes": [{"key": "think_time", "from": 1, "to": 10, "steps": 2**63 - 1}]},
     "would make 9,223,372,036,854,775,807 cells, more than the limit of 100,000"),
    ({"axes": [{"key": "think_time", "from": 1, "to": 1000, "steps": 1000},
               {"key": "timeout", "from": 1, "to": 1000, "steps": 1000}]},
     "key 'explore.axes': the axes' 1,000 × 1,000 values would make 1,000,000 cells, more than the limit"),
])
def test_explore_mistakes_are_one_line(tmp_path: Path, explore: dict, fragment: str) -> None:
    assert fragment in error_line(write_config(tmp_path, explore=explore))


def test_a_values_list_longer_than_the_cell_limit_is_refused_before_any_cell_is_built(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    from sim.exploration import axes, plan

    monkeypatch.setattr(axes, "MAX_CELLS", 3)
    monkeypatch.setattr(plan, "MAX_CELLS", 3)
    monkeypatch.setattr(plan, "cell_spec", lambda *a: pytest.fail("no cell may be built"))
    path = write_config(tmp_path, explore={"axes": [{"key": "think_time", "values": [1, 2, 3, 4]}]})
    assert "key 'explore.axes[0].values': has 4 values: would make 4 cells, more than the limit of 3" in error_line(path)
    path = write_config(tmp_path, explore={"axes": [{"key": "think_time", "values": [1, 2]},
                                                    {"key": "timeout", "values": [1, 2]}]})
    assert "the axes' 2 × 2 values would make 4 cells" in error_line(path)


def test_several_client_counts_need_a_clients_axis(tmp_path: Path) -> None:
    path = write_config(tmp_path, explore={"axes": [{"key": "think_time", "values": [1000]}]}, clients=[10, 20])
    assert "explore runs one client count per cell" in error_line(path)
    path = write_config(tmp_path, explore={"axes": [{"key": "clients", "values": [10, 30]}]}, clients=[10, 20])
    plan = load_document(path).explores[0]
    assert [c.spec.clients for c in plan.cells] == [(10,), (30,)]


def test_tune_table_resolves_the_strategy_by_label_or_index(tmp_path: Path) -> None:
    doc = load_document(write_config(tmp_path, tune={
        "strategy": "jitter", "params": {"base": [1, 100], "cap": {"low": 100, "high": 10000, "log": True}},
        "constraints": ["p99 <= 500", "gave_up == 0"], "objective": "p99"}))
    plan = doc.tunes[0]
    assert plan.strategy == 1 and plan.label == "jitter"
    assert [p.path.text for p in plan.params] == ["strategies[1].base", "strategies[1].cap"]
    assert plan.params[1].log
    assert [str(c) for c in plan.constraints] == ["p99 <= 500", "gave_up == 0"]
    assert plan.seed == doc.simulations[0].seed  # default: the simulation's seed
    index = load_document(write_config(tmp_path, tune={"strategy": 1, "params": {"base": [1, 100]}})).tunes[0]
    assert index.strategy == 1


@pytest.mark.parametrize("tune, fragment", [
    ({"strategy": "nobody", "params": {"base": [1, 2]}}, "key 'tune.strategy': no strategy 'nobody'"),
    ({"strategy": 1}, "key 'tune.params': must name at least one parameter"),
    ({"strategy": 1, "params": {"bass": [1, 2]}}, "key 'tune.params.bass': 'bass' is not a key of strategies[1] (FullJitteredExpo)"),
    ({"strategy": 1, "params": {"base": [2, 1]}}, "needs low < high"),
    ({"strategy": 1, "params": {"base": [-5, 1]}}, "bound -5 is invalid"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "objective": "fun"}, "key 'tune.objective': unknown metric 'fun'"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "constraints": ["p99 is small"]}, "cannot read 'p99 is small'"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "constraints": ["speed < 3"]}, "unknown metric 'speed'"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "constraints": ["gave_up == 0", "p99 <= nan"]},
     "key 'tune.constraints[1]': 'p99 <= nan': the bound must be a finite number, got 'nan'"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "constraints": ["work < -inf"]},
     "'work < -inf': the bound must be a finite number"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "constraints": ["work < 1e999"]},
     "'work < 1e999': the bound must be a finite number"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "sampler": "grid"}, "unknown sampler 'grid'"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "sampler": "cmaes"}, "CMA-ES needs at least two parameters"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "trials": 0}, "key 'tune.trials': must be a whole number >= 1"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "pareto": ["work"]}, "must be two different metrics"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "budget": 3}, "key 'tune.budget': is not a tune key"),
    ({"strategy": 1, "params": {"base": [1, 2]}, "seed": 2**64},
     "key 'tune.seed': must be a whole number from 0 to 18446744073709551615"),
])
def test_tune_mistakes_are_one_line(tmp_path: Path, tune: dict, fragment: str) -> None:
    assert fragment in error_line(write_config(tmp_path, tune=tune))


def test_the_metastability_example_loads_as_a_12_by_8_map() -> None:
    # The size: outage length (12 values, log) × base load (8 values), three strategies.
    doc = load_document(Path(__file__).parent.parent / "examples" / "metastability.toml")
    plan = doc.explores[0]
    assert plan.shape == (12, 8)
    assert plan.axes[0].values[0] == 1000.0 and plan.axes[0].values[-1] == 120000.0
    assert len(plan.base.strategies) == 3 and plan.base.repeat == 3 and plan.base.clients == (1000,)


# --- resource limits: every cell is held to them, as a simulation of `backoff-sim run` is ---------

def _lock_map(axis: dict, **table) -> "Config":
    from support import sim_table
    from sim.exploration.plan import parse_document

    block = sim_table("LockingServer", [{"type": "Constant", "constant": 1.0}], title="Big",
                      clients=[1000], repeat=1, **table)
    block["explore"] = {"axes": [axis]}
    return parse_document({"simulation": [block]}, "big.toml")


ROOMY = (10**13, 10**13)  # (total, available) memory: only the events limit can refuse


def test_a_cell_beyond_the_limits_is_refused_in_one_line_naming_it() -> None:
    from sim.vocabulary.errors import ConfigError
    from sim.exploration.checks import check_cells

    # 10^9 clients need ~6 TB for their state alone (sim.runs.resources.BYTES_PER_CLIENT): more than a
    # 16 GB machine has, so refused even with --force; the first such cell is named.
    doc = _lock_map({"key": "clients", "values": [10, 10**9, 2 * 10**9]})
    with pytest.raises(ConfigError) as info:
        check_cells(doc.explores, workers=2, force=True, memory=(16 * 10**9, 16 * 10**9))
    line = str(info.value)
    assert "\n" not in line and "the cell clients 1,000,000,000 (and 1 more cells)" in line
    assert "simulation 'Big'" in line and "more than this machine's" in line


def test_the_maps_cells_together_stay_under_the_events_limit_unless_forced() -> None:
    from sim.vocabulary.errors import ConfigError
    from sim.exploration.checks import check_cells
    from sim.runs.resources import EVENTS_LIMIT, estimate

    # Each cell alone is under the limit, the two together are over it.
    doc = _lock_map({"key": "repeat", "values": [1_000_000, 1_100_000]})
    (plan,) = doc.explores
    events = [estimate(c.spec, 2).events for c in plan.cells]
    assert max(events) < EVENTS_LIMIT < sum(events)
    with pytest.raises(ConfigError, match="the map's 2 cells would simulate at least"):
        check_cells(doc.explores, workers=2, memory=ROOMY)
    check_cells(doc.explores, workers=2, force=True, memory=ROOMY)


def test_force_turns_the_run_budget_off_in_every_cell_and_keeps_the_cache_keys() -> None:
    from sim.exploration.cache import cell_key

    doc = _lock_map({"key": "repeat", "values": [1, 2]})
    forced = doc.with_soft_limits(False)
    assert all(c.spec.soft_limits for c in doc.explores[0].cells)
    assert not any(c.spec.soft_limits for c in forced.explores[0].cells)
    assert not forced.explores[0].base.soft_limits and not forced.simulations[0].soft_limits
    # Whether runs beyond their estimate are stopped is no part of a cell's result.
    assert [cell_key(c.spec) for c in doc.explores[0].cells] == [
        cell_key(c.spec) for c in forced.explores[0].cells]


def test_the_explore_command_refuses_an_oversized_map_before_any_work(tmp_path: Path, capsys) -> None:
    from sim.commands import cli

    path = tmp_path / "big.toml"
    path.write_text(toml_text(sim_table(title="Big", clients=[10], repeat=1, network_mu=1.0, network_sigma=0.0,
                                        write_mu=1.0, write_sigma=0.0,
                                        strategies=[{"type": "Constant", "constant": 1.0}]))
                    + section("explore", {"axes": [{"key": "clients", "values": [10, 1000000000000]}]}), "utf-8")
    assert cli.main(["explore", str(path), "--out", str(tmp_path / "out"), "-j", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the cell clients 1,000,000,000,000" in err
    assert not (tmp_path / "out" / "Big_explore.csv").exists()
