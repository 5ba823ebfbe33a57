"""The map as every view reads it (``sim.exploration.grid``): a cell's state, glyph and text from its
verdict, rows drawn with the larger second-axis values on top, pending cells, and the sharp
steps and tolerated values the boundary findings are stated with."""

from __future__ import annotations

import math

import numpy as np

from sim.exploration.grid import (COLLAPSED, RECOVERED, Edge, fraction_grid, grid_rows, map_cells,
                              row_story, sharp_edges, tolerated, verdict_state)
from sim.exploration.plan import parse_document
from sim.exploration.report import boundary_lines
from sim.exploration.runner import ExploreResult
from sim.exploration.summary import CellResult
from sim.analysis.recovery import RecoverySummary

from support import sim_table

NAN = math.nan
OPEN = dict(base_latency=100.0, concurrency_limit=10, factor=1.05, k=15.0, workload="poisson",
            think_time=500.0, horizon=6000.0, timeout=1000.0, network_mu=1.0, network_sigma=0.2,
            outages=[{"start": 2000.0, "duration": 500.0}], clients=[15], repeat=3)
STRATEGIES = [{"type": "Constant", "constant": 100.0, "name": "constant"}]


def plan(durations: list[float], think_times: list[float] | None = None, metric: str | None = None):
    table = sim_table("LatencyServer", STRATEGIES, title="Open", **OPEN)
    axes = [{"key": "outages[0].duration", "values": durations}]
    if think_times:
        axes.append({"key": "think_time", "values": think_times})
    table["explore"] = {"axes": axes, **({"metric": metric} if metric else {})}
    return parse_document({"simulation": [table]}, "open.toml").explores[0]


def cell(recovered: list[float], times: list[float], goodput: float = 1.0) -> CellResult:
    """A one-strategy cell with these per-run verdict values (as ``run_values`` stores them)."""
    n = len(recovered)
    values = {"recovered": np.array([recovered], dtype=np.float64),
              "recovery_time": np.array([times], dtype=np.float64),
              "undecided": np.zeros((1, n)), "goodput": np.full((1, n), goodput)}
    return CellResult(("constant",), 15, values)


def test_state_thresholds_are_the_issues_sharp_boundary_levels() -> None:
    # 9 of 10 recovered is at the 0.9 level, 1 of 10 at the 0.1 level: both count as sharp.
    assert verdict_state(RecoverySummary(10, (1.0,) * 9)) == "recovered"
    assert verdict_state(RecoverySummary(10, (1.0,) * 8)) == "partial"
    assert verdict_state(RecoverySummary(10, (1.0,))) == "collapsed"
    assert verdict_state(RecoverySummary(10, (1.0,) * 2)) == "partial"
    assert verdict_state(None) == "none"
    assert (RECOVERED, COLLAPSED) == (0.9, 0.1)


def test_cells_read_glyph_text_and_fraction_from_their_runs() -> None:
    p = plan([100.0, 200.0, 300.0, 400.0])
    cells = [cell([1, 1, 1], [50, 70, 60]), cell([1, 0, 1], [80, NAN, 90]),
             cell([0, 0, 0], [NAN] * 3), None]
    got = map_cells(p, cells, 0)
    assert [(c.glyph, c.text, c.state) for c in got] == [
        ("✓", "3/3", "recovered"), ("◐", "2/3", "partial"), ("✗", "0/3", "collapsed"),
        ("·", "…", "pending")]
    assert got[0].verdict.median == 60 and got[1].verdict.median == 85
    assert got[1].value == 2 / 3 and math.isnan(got[3].value)
    # A run with nothing to judge (no baseline) is left out of the count, not read as never.
    judged = map_cells(p, [cell([1, NAN, 0], [40, NAN, NAN])] * 4, 0)[0]
    assert (judged.text, judged.verdict.runs) == ("1/2", 2)


def test_a_metric_map_shows_the_mean_and_no_state_glyph() -> None:
    p = plan([100.0, 200.0], metric="goodput")
    got = map_cells(p, [cell([1, 1, 1], [1, 1, 1], goodput=1234.5), None], 0)
    assert (got[0].state, got[0].text, got[0].value) == ("value", "1,234", 1234.5)
    assert got[1].state == "pending"


def test_rows_put_the_larger_second_axis_values_on_top() -> None:
    p = plan([100.0, 200.0, 300.0], [10.0, 20.0])
    cells = [cell([1, 1, 1], [1, 1, 1]) for _ in p.cells]
    rows = grid_rows(p, cells, 0)
    assert [[c.values for c in row] for row in rows] == [
        [(100.0, 20.0), (200.0, 20.0), (300.0, 20.0)], [(100.0, 10.0), (200.0, 10.0), (300.0, 10.0)]]
    assert [c.position for c in rows[1]] == [0, 2, 4]  # plan order: first axis outer


def test_sharp_edges_need_both_levels_on_neighbouring_cells() -> None:
    f = np.array([[1.0, 1.0], [1.0, 2 / 3], [0.0, 0.0], [0.0, 1.0]])  # [first axis, second axis]
    # Row 0 goes 1, 1, 0, 0: one step down. Row 1 goes 1, 2/3, 0, 1: a partial cell on the way
    # down (no sharp step there), then a sharp step back up.
    assert sharp_edges(f) == [Edge(0, 1, True), Edge(1, 2, False)]
    assert tolerated(f) == [1, 1]  # 2/3 is recovered in at least half the runs
    assert tolerated(np.array([[0.0], [1.0]])) == [None]
    assert tolerated(np.array([[1.0], [1.0]])) == [1]
    assert tolerated(np.array([[1.0], [NAN]])) == [0]


def test_row_story_and_boundary_lines_name_the_runs_of_states() -> None:
    p = plan([100.0, 200.0, 300.0, 400.0, 500.0], [10.0, 20.0])
    recovered = {0: [1, 1, 1], 1: [1, 1, 1], 2: [0, 0, 0], 3: [1, 1, 0], 4: [1, 1, 1]}
    cells = []
    for c in p.cells:  # both rows alike but the second recovers everywhere
        r = recovered[c.index[0]] if c.index[1] == 0 else [1, 1, 1]
        cells.append(cell(r, [1.0 if x else NAN for x in r]))
    f = fraction_grid(p, cells, 0)
    assert row_story(p, f[:, 0]) == "✓ 100–200 · ✗ 300 · ◐ 400 · ✓ 500"
    assert boundary_lines(ExploreResult(p, cells), 0) == [
        "think_time 10: ✓ 100–200 · ✗ 300 · ◐ 400 · ✓ 500", "think_time 20: ✓ 100–500"]


def test_undecided_runs_keep_their_reason_in_a_cell() -> None:
    """A cell keeps, per run, whether it was too noisy to judge and why (the index of the
    reason + 1), so its verdict counts them and its note says why, as _latency.csv does."""
    from sim.analysis.open_metrics import OpenRunMetrics
    from sim.analysis.recovery import TOO_NOISY, TOO_SHORT
    from sim.exploration.verdict import cell_note, cell_verdict, run_verdict

    runs = [OpenRunMetrics(0, 0.0, 0.0, 0, 0, recovery_time=t, recovery_note=note)
            for t, note in ((5.0, ""), (NAN, ""), (None, TOO_NOISY), (None, TOO_SHORT), (None, ""))]
    values = [run_verdict(m) for m in runs]
    assert [v[2] for v in values] == [0.0, 0.0, 1.0, 2.0, 0.0]
    recovered, times, undecided = (np.array(column) for column in zip(*values))
    verdict = cell_verdict(recovered, times, undecided)
    assert (verdict.recovered, verdict.runs, verdict.undecided) == (1, 2, 2)
    assert cell_note(undecided) == f"{TOO_NOISY} (1 of 5 runs); {TOO_SHORT} (1 of 5 runs)"
    assert cell_note(np.zeros(3)) == ""


def test_a_cell_mostly_too_noisy_to_tell_has_no_state() -> None:
    """One run judged (never) and two undecided is no collapse: the cell reads — (nan in the
    fraction grid), its text still says what was judged; two judged of three keep their state."""
    one = RecoverySummary(1, (), undecided=2)
    assert verdict_state(one) == "none"
    assert verdict_state(RecoverySummary(2, (), undecided=1)) == "collapsed"
    values = {"recovered": np.array([[0.0, NAN, NAN]]), "recovery_time": np.full((1, 3), NAN),
              "undecided": np.array([[0.0, 1.0, 1.0]]), "goodput": np.ones((1, 3))}
    p = plan([300.0])
    (c,) = map_cells(p, [CellResult(("constant",), 15, values)], 0)
    assert (c.state, c.glyph, c.text) == ("none", "—", "0/1") and math.isnan(c.value)
