"""``<title>_explore.csv``: one row per cell × strategy.

Columns: the simulation, each axis's value, the strategy and client count, every metric's mean
and 95% CI half-width over the repetitions, and where a verdict exists the recovered runs, the
number of runs judged, the recovered fraction, the median recovery time of the runs that
recovered (``sim.analysis.recovery.RecoverySummary``, as in the sweep's ``_latency.csv``), and
``recovery_note``: why runs were not judged (too noisy to tell 80% from 90% of the baseline).
A map made with ``--method fluid`` or ``adaptive`` adds ``method``: which method produced the
row (``sim.exploration.methods``), and its ``repeats`` are the runs the row rests on (1 for a
fluid estimate). A fluid row's verdict is the estimate's, not runs: its ``recovered_runs`` and
``runs`` are empty (never a "1 of 1" for a cell nobody simulated), its ``recovered_fraction``
is 1 or 0, and its ``recovery_note`` says it is an estimate (``FLUID_NOTE``).
Numbers are ``repr`` floats (empty for NaN), as in the other CSVs, so equal results give
byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

from sim.exploration.methods import FLUID_NOTE
from sim.exploration.plan import ExplorePlan, own_column
from sim.exploration.runner import ExploreResult
from sim.exploration.summary import VERDICT_COLUMNS, has_verdict, metric_names, row_columns
from sim.export.atomic import atomic_write_text
from sim.export.csv_files import csv_text, format_float
from sim.export.names import safe_title

__all__ = ["VERDICT_COLUMNS", "explore_csv_text", "explore_header", "write_explore_csv"]


def _axis_columns(plan: ExplorePlan) -> list[int]:
    """The axes with a column of their own: all but a ``clients`` axis named ``clients``, whose
    values are the ``clients`` column's (one column, not the same name twice)."""
    return [i for i, a in enumerate(plan.axes) if own_column(a)]


def explore_header(result: ExploreResult) -> tuple[str, ...]:
    plan = result.plan
    simulation, *rest = row_columns(plan.base)
    method = ("method",) if result.methods is not None else ()
    return (simulation, *(plan.axes[i].name for i in _axis_columns(plan)), *rest, *method)


def _value(v: float | int) -> str:
    return str(v) if isinstance(v, int) else format_float(v)


def explore_csv_text(result: ExploreResult) -> str:
    plan = result.plan
    names = metric_names(plan.base)
    verdict = has_verdict(plan.base)
    axes = _axis_columns(plan)
    rows = []
    for position, (cell, cr) in enumerate(zip(plan.cells, result.cells)):
        for s, label in enumerate(cr.labels):
            runs = cr.runs(s) if hasattr(cr, "runs") else cell.spec.repeat
            row = [plan.title, *(_value(cell.values[i]) for i in axes), label, str(cr.clients), str(runs)]
            for name in names:
                e = cr.estimate(name, s)
                row += [format_float(e.mean), format_float(e.ci95)]
            if verdict:
                v = cr.verdict(s)
                if result.methods is not None and result.methods[position][s] == "fluid":
                    row += (["", "", format_float(v.fraction), format_float(v.median)] if v
                            else ["", "", "", ""]) + [FLUID_NOTE]
                else:
                    row += ([str(v.recovered), str(v.runs), format_float(v.fraction),
                             format_float(v.median)] if v else ["", "", "", ""]) + [cr.verdict_note(s)]
            if result.methods is not None:
                row.append(result.methods[position][s])
            rows.append(row)
    return csv_text(explore_header(result), rows)


def explore_csv_path(title: str, out_dir: str | Path) -> Path:
    return Path(out_dir) / f"{safe_title(title)}_explore.csv"


def write_explore_csv(result: ExploreResult, out_dir: str | Path) -> Path:
    return atomic_write_text(explore_csv_path(result.plan.title, out_dir), explore_csv_text(result))
