"""Running a map: each cell is the sweep of its spec, common random numbers across cells, the
cache computes only new cells, results do not depend on workers or the cache, cancel is clean,
and the CSV has one row per cell and strategy."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from support import sim_table

from sim.analysis.recovery import TOO_NOISY
from sim.runs.sweep import SweepCancelled, run_sweep
from sim.exploration.backends import LocalBackend
from sim.exploration.cache import CellCache, cell_key
from sim.exploration.plan import parse_document
from sim.exploration.runner import run_explores
from sim.exploration.summary import BASE_METRICS, OPEN_METRICS
from sim.exploration.table import VERDICT_COLUMNS, explore_csv_text

STRATEGIES = [{"type": "Constant", "constant": 0.5, "name": "constant"},
              {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0, "name": "jitter"}]
OPEN = dict(base_latency=100.0, concurrency_limit=10, factor=1.05, k=15.0, workload="poisson",
            think_time=500.0, horizon=20000.0, timeout=1000.0, network_mu=1.0, network_sigma=0.2,
            outages=[{"start": 12000.0, "duration": 500.0}], clients=[15], repeat=2)
OPEN_STRATEGIES = [{"type": "Constant", "constant": 100.0, "name": "constant"},
                   {"type": "NormalJitterExpo", "min_delay": 100.0, "factor": 2.718, "max_delay": 30000.0,
                    "name": "expo"}]


def lock_doc(values: list[float], **explore):
    table = sim_table("LockingServer", STRATEGIES, title="Lock", clients=[6], repeat=3)
    table["explore"] = {"axes": [{"key": "strategies[1].base", "values": values}], **explore}
    return parse_document({"seed": 5, "simulation": [table]}, "lock.toml")


def open_doc(durations: list[float], think_times: list[float] | None = None):
    table = sim_table("LatencyServer", OPEN_STRATEGIES, title="Open", **OPEN)
    axes = [{"key": "outages[0].duration", "values": durations}]
    if think_times:
        axes.append({"key": "think_time", "values": think_times})
    table["explore"] = {"axes": axes}
    return parse_document({"seed": 2, "simulation": [table]}, "open.toml")


class Spy(LocalBackend):
    """A local backend that records the specs it was asked to run."""

    def __init__(self, workers: int | None = 1) -> None:
        super().__init__(workers)
        self.ran: list = []

    def run(self, specs, **kwargs):
        self.ran += list(specs)
        return super().run(specs, **kwargs)


def run(doc, backend=None, cache=None):
    return run_explores(doc.explores, backend or LocalBackend(1), cache or CellCache(None))[0]


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_each_cell_is_the_sweep_of_its_spec() -> None:
    doc = open_doc([300.0, 900.0])
    result = run(doc)
    for cell, cr in zip(result.plan.cells, result.cells):
        sweep = run_sweep(cell.spec, workers=1)
        for s in range(len(cell.spec.strategies)):
            assert np.array_equal(cr.values["work"][s], sweep.work[s, 0])
            assert np.array_equal(cr.values["duration"][s], sweep.duration[s, 0])
            assert np.array_equal(cr.values["successes"][s],
                                  [sweep.open_run(s, 0, r).successes for r in range(cell.spec.repeat)])
            times = [sweep.open_run(s, 0, r).recovery_time for r in range(cell.spec.repeat)]
            verdict = cr.verdict(s)
            assert (0 if verdict is None else verdict.recovered) == sum(
                t is not None and not np.isnan(t) for t in times)
            # The same aggregate as the sweep's tables and _latency.csv: runs, times, median,
            # undecided runs and why.
            assert verdict == sweep.recovery(s, 0)
            assert cr.verdict_note(s) == sweep.recovery_note(s, 0)


def test_cells_share_random_numbers_so_an_unchanged_strategy_gives_identical_runs() -> None:
    # The axis changes only the second strategy; the seed key (seed, title, clients, repetition,
    # purpose) is the same in every cell, so the first strategy's runs are identical.
    result = run(lock_doc([1.0, 10.0, 100.0]))
    first = [cr.values["work"][0] for cr in result.cells]
    durations = [cr.values["duration"][0] for cr in result.cells]
    assert all(np.array_equal(first[0], w) for w in first)
    assert all(np.array_equal(durations[0], d) for d in durations)
    assert not all(np.array_equal(result.cells[0].values["duration"][1], cr.values["duration"][1])
                   for cr in result.cells[1:])


def test_csv_has_one_row_per_cell_and_strategy_with_every_metric() -> None:
    result = run(open_doc([300.0, 900.0], [400.0, 800.0]))
    text = explore_csv_text(result)
    header = text.splitlines()[0].split(",")
    assert header[:3] == ["simulation", "outages[0].duration", "think_time"]
    for name in BASE_METRICS + OPEN_METRICS:
        assert f"{name}_mean" in header and f"{name}_ci95" in header
    assert tuple(header[-5:]) == VERDICT_COLUMNS
    table = rows(text)
    assert len(table) == 4 * 2
    assert [(r["outages[0].duration"], r["think_time"], r["strategy"]) for r in table][:3] == [
        ("300.0", "400.0", "constant"), ("300.0", "400.0", "expo"), ("300.0", "800.0", "constant")]
    for r, cr in zip(table[::2], result.cells):
        # 15 clients at ~2 calls a second, 6 s of baseline: ~180 successes, on the edge of
        # what tells a full return from one to 80% (sim.analysis.recovery): at seed 2 one run of
        # each cell is judged, the other is undecided and the note says so.
        v = cr.verdict(0)
        judged = 0 if v is None else v.runs
        assert r["runs"] == ("" if v is None else str(judged))
        if judged:
            assert float(r["recovered_fraction"]) == int(r["recovered_runs"]) / judged
        assert r["recovery_note"] == cr.verdict_note(0)
        assert r["recovery_note"] == ("" if judged == 2 else f"{TOO_NOISY} ({2 - judged} of 2 runs)"
                                      if judged else TOO_NOISY)
        assert float(r["work_mean"]) == float(np.mean(cr.values["work"][0]))
    assert any(r["runs"] for r in table) and any(r["recovery_note"] for r in table)


def test_every_column_name_is_unique_and_a_clients_axis_is_the_clients_column() -> None:
    # A clients axis named clients (its key, or that label) is written once, as the clients
    # column; an axis with a label of its own keeps its column.
    for axis in ({"key": "clients", "values": [2, 4]}, {"key": "clients", "values": [2, 4], "label": "clients"}):
        table = sim_table("LockingServer", STRATEGIES, title="Lock", clients=[6], repeat=2)
        table["explore"] = {"axes": [axis, {"key": "write_mu", "values": [1.0, 2.0], "label": "write"}]}
        text = explore_csv_text(run(parse_document({"simulation": [table]}, "lock.toml")))
        header = text.splitlines()[0].split(",")
        assert len(header) == len(set(header)) and header[:4] == ["simulation", "write", "strategy", "clients"]
        assert [r["clients"] for r in rows(text)][::4] == ["2", "4"]


def test_contention_csv_has_no_verdict_columns() -> None:
    text = explore_csv_text(run(lock_doc([1.0, 10.0])))
    header = text.splitlines()[0].split(",")
    assert not set(VERDICT_COLUMNS) & set(header)
    assert "p99_mean" not in header


def test_results_do_not_depend_on_workers_or_the_cache(tmp_path: Path) -> None:
    doc = open_doc([300.0, 900.0], [400.0, 800.0])
    one = explore_csv_text(run(doc, LocalBackend(1)))
    two = explore_csv_text(run(doc, LocalBackend(2)))
    cache = CellCache(tmp_path)
    first = explore_csv_text(run(doc, LocalBackend(2), cache))
    again = explore_csv_text(run(doc, LocalBackend(2), cache))
    assert one == two == first == again
    assert cache.hits == 4


def test_one_more_axis_value_computes_only_the_new_cell(tmp_path: Path) -> None:
    cache = CellCache(tmp_path)
    spy = Spy()
    run(lock_doc([1.0, 10.0]), spy, cache)
    assert len(spy.ran) == 2
    spy = Spy()
    result = run(lock_doc([1.0, 10.0, 100.0]), spy, cache)
    assert [s.strategies[1].strategy.base for s in spy.ran] == [100.0]
    assert len(result.cells) == 3


def test_the_cache_key_changes_with_any_field_and_a_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    plan = lock_doc([1.0, 10.0]).explores[0]
    a, b = plan.cells[0].spec, plan.cells[1].spec
    assert cell_key(a) != cell_key(b)
    cache = CellCache(tmp_path)
    run(lock_doc([1.0]), Spy(), cache)
    entry = next(tmp_path.glob("*.json"))
    entry.write_text("{not json", "utf-8")
    spy = Spy()
    run(lock_doc([1.0]), spy, cache)
    assert len(spy.ran) == 1


def test_a_cache_entry_that_does_not_verify_is_computed_again(tmp_path: Path) -> None:
    import json

    fresh = explore_csv_text(run(lock_doc([1.0])))
    cache = CellCache(tmp_path)
    run(lock_doc([1.0]), Spy(), cache)
    entry = next(tmp_path.glob("*.json"))
    stored = entry.read_text("utf-8")
    good = json.loads(stored)
    # The same shape, absurd numbers: with the old checksum, then without one (format 1, bare).
    absurd = json.loads(json.dumps(good))
    absurd["cell"]["values"] = {k: [[1e300] * len(row) for row in v] for k, v in good["cell"]["values"].items()}
    for text in (json.dumps(absurd), json.dumps(absurd["cell"])):
        entry.write_text(text, "utf-8")
        spy = Spy()
        result = run(lock_doc([1.0]), spy, CellCache(tmp_path))
        assert len(spy.ran) == 1 and "1e+300" not in explore_csv_text(result)
        assert explore_csv_text(result) == fresh
        assert entry.read_text("utf-8") == stored  # stored again, and it verifies
    spy = Spy()
    assert explore_csv_text(run(lock_doc([1.0]), spy, CellCache(tmp_path))) == fresh
    assert spy.ran == []


def test_cancel_stops_and_keeps_finished_cells(tmp_path: Path) -> None:
    doc = lock_doc([1.0, 2.0, 4.0, 8.0])
    cache = CellCache(tmp_path)
    finished = []

    def should_stop() -> bool:
        return len(list(tmp_path.glob("*.json"))) >= 1

    with pytest.raises(SweepCancelled):
        run_explores(doc.explores, LocalBackend(1), cache, should_stop=should_stop)
    finished = list(tmp_path.glob("*.json"))
    assert 1 <= len(finished) < 4
    spy = Spy()
    run(doc, spy, cache)
    assert len(spy.ran) == 4 - len(finished)


def test_the_code_version_counts_the_simulator_and_not_the_file_writers() -> None:
    from pathlib import Path as P

    from sim.exploration.cache import _counts

    for counted in ("engine.py", "open_metrics.py", "core/loop.py", "models/servers.py",
                    "exploration/summary.py", "exploration/verdict.py", "exploration/backends.py"):
        assert _counts(P(counted)), counted
    for ignored in ("export/plots.py", "exploration/figure.py", "exploration/report.py",
                    "exploration/command.py", "exploration/methods.py", "fluid/model.py"):
        assert not _counts(P(ignored)), ignored
