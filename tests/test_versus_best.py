"""The "vs best" comparison: one verdict and one text for the CLI, the app and the metrics CSV;
with one repetition there is no CI and no significance ("n/a"), never "significant"."""

from __future__ import annotations

import csv
import io

import numpy as np
from support import make_spec

from sim.runs.sweep import SweepResult
from sim.analysis.versus import BEST, NOT_AVAILABLE, TIED, WORSE, cost_versus_best, versus_best
from sim.export.csv_files import METRICS_HEADER, metrics_csv_text


def _result(durations: list[list[float]]) -> SweepResult:
    spec = make_spec(strategies=[{"type": "Constant", "constant": c} for c in (0.5, 1.0, 2.0)],
                     clients=[3], repeat=len(durations[0]))
    result = SweepResult.empty(spec)
    result.work[:] = 10
    result.duration[:, 0, :] = np.asarray(durations)
    return result


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_verdicts() -> None:
    best = np.array([10.0, 11.0, 12.0])
    assert versus_best(best, best, True).verdict == BEST
    assert versus_best(best + 5, best, False).verdict == WORSE
    assert versus_best(best + np.array([1.0, -1.0, 0.5]), best, False).verdict == TIED
    one = versus_best(np.array([12.0]), np.array([10.0]), False)
    assert one.verdict == NOT_AVAILABLE and one.text == "+2.0 ± n/a (+20%)"


def test_metrics_csv_says_how_each_strategy_compares() -> None:
    result = _result([[12.0, 13.0, 14.0], [10.0, 11.0, 12.0], [10.5, 10.5, 12.5]])
    rows = _rows(metrics_csv_text(result))
    assert tuple(rows[0]) == METRICS_HEADER
    assert [r["vs_best"] for r in rows] == ["worse", "best", "tied"]
    # worse: 2 more in every repetition (CI 0), 2 of the best mean cost 21 is 9.52%
    assert rows[0]["cost_vs_best_mean"] == "2.0" and rows[0]["cost_vs_best_ci95"] == "0.0"
    assert abs(float(rows[0]["cost_vs_best_percent"]) - 200 / 21) < 1e-9
    for s, row in enumerate(rows):
        assert float(row["cost_vs_best_mean"]) == float(f"{cost_versus_best(result, s, 0).difference.mean:.12g}")


def test_one_repetition_has_no_ci_and_no_significance_in_the_csv() -> None:
    rows = _rows(metrics_csv_text(_result([[12.0], [10.0], [10.0]])))
    assert [r["vs_best"] for r in rows] == [NOT_AVAILABLE, BEST, NOT_AVAILABLE]
    for row in rows:
        assert row["work_ci95"] == row["duration_ci95"] == row["cost_ci95"] == "n/a"
        assert row["cost_vs_best_ci95"] == "n/a"
    assert rows[0]["cost_vs_best_mean"] == "2.0" and rows[0]["cost_vs_best_percent"] == "10.0"
    assert TIED not in {r["vs_best"] for r in rows}


def test_the_apps_marks_are_the_clis_verdicts() -> None:
    """The app's ★ / ≈ rows and the CLI's table and CSV all come from ``cost_versus_best``."""
    from sim.report.tables import metrics_table
    from tui.view.comparison_rows import comparison_rows

    result = _result([[12.0, 13.0, 14.0], [10.0, 11.0, 12.0], [10.5, 10.5, 12.5]])
    verdicts = [r["vs_best"] for r in _rows(metrics_csv_text(result))]
    rows = comparison_rows(result, 0)
    assert [r.best for r in rows] == [v == "best" for v in verdicts]
    assert [r.same_as_best for r in rows] == [v == "tied" for v in verdicts]
    table = metrics_table(result)
    assert [row.style for row in table.rows] == ["bold" if v == "best" else None for v in verdicts]
