"""The terminal tables mark the best strategy and those statistically tied with it."""

from __future__ import annotations

import numpy as np
from rich.console import Console
from support import make_spec

from sim.runs.sweep import SweepResult
from sim.analysis.versus import BEST_MARK
from sim.runs.engine import record_run
from sim.report.tables import history_table, metrics_table, versus_best

STRATEGIES = [{"type": "Constant", "constant": 0.5, "name": "cheap"},
              {"type": "Constant", "constant": 0.6, "name": "tied"},
              {"type": "Constant", "constant": 0.7, "name": "costly"}]


def _result() -> SweepResult:
    """A hand-made sweep: at one client count, 'cheap' is best, 'tied' is within noise of it
    (its paired differences straddle zero) and 'costly' is clearly worse."""
    spec = make_spec("LockingServer", STRATEGIES, clients=[4], repeat=4, work_to_duration=1.0)
    result = SweepResult.empty(spec)
    result.work[:] = 10
    result.duration[0, 0] = [100.0, 110.0, 90.0, 105.0]
    result.duration[1, 0] = [101.0, 108.0, 93.0, 104.0]
    result.duration[2, 0] = [150.0, 160.0, 140.0, 155.0]
    return result


def _render(renderable) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_best_tied_and_worse_are_marked() -> None:
    result = _result()
    assert result.best_by_cost(0) == 0
    assert versus_best(result, 0, 0) == BEST_MARK
    # tied: paired differences 1, -2, 3, -1: mean 0.25, sd 2.217, CI 3.1824·2.217/2 = 3.53;
    # 0.25 of the best mean cost 111.25 is 0.22%
    assert versus_best(result, 1, 0) == "≈ +0.2 ± 3.5 (+0.2%)"
    # costly: 50 more in every repetition (CI 0), 50/111.25 = 45% more
    assert versus_best(result, 2, 0) == "+50.0 ± 0.0 (+45%)"
    lines = {line.split("│")[2].strip(): line for line in _render(metrics_table(result)).splitlines()
             if line.count("│") > 3}
    assert BEST_MARK in lines["cheap"]
    assert "≈ +0.2 ± 3.5 (+0.2%)" in lines["tied"]
    assert "+50.0 ± 0.0 (+45%)" in lines["costly"]
    assert "111.2 ± 13.6" in lines["cheap"]  # cost: 10 work + mean duration, with its 95% CI


def test_history_table_shows_every_event_with_two_decimals() -> None:
    spec = make_spec("ReadWriteOCCServer", clients=[3], repeat=1)
    run = record_run(spec, spec.labels[0], 3, 0)
    text = _render(history_table(run.history, title="example"))
    body = [line for line in text.splitlines() if line.startswith("│")]
    assert len(body) == len(run.history)
    t, c, name, detail = run.history.rows()[-1]
    cells = [cell.strip() for cell in body[-1].split("│")[1:5]]
    assert cells == [f"{t:.2f}", str(c), name, detail]
    assert np.all(np.diff(run.history.times) >= 0)
