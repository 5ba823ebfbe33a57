"""The latency table's content (an overload simulation's strategies at one client count): its
columns, each strategy's cells as text with its marks, and the caption.

The numbers and marks are ``sim.report.latency``'s (the CLI's latency table): counts are means over
repetitions, latencies pooled over them, ★ follows ``sim.analysis.best``'s one rule, which the
caption quotes (fewest requests and lowest p50 among strategies that served about as many as
the best served and recovered every time); recovery
reads ``3/3 · 1,600 ms`` (repetitions recovered, median time in the simulation's time unit),
``1/3 recovered`` or ``✗ never (0/3)`` (glyph and text, not colour alone), or ``—`` when no
repetition could be told (the caption says why: a baseline too noisy to tell 80% from 90%).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.analysis.best import BEST, MARKED, best_rows, star_rule
from sim.analysis.load import offered_load
from sim.analysis.recovery import NEVER_GLYPH, RecoverySummary
from sim.report.latency import NARROW_DROP_ORDER, format_value, silent_columns, strategy_values
from sim.runs.sweep import SweepResult
from sim.vocabulary.units import DEFAULT_TIME_UNIT, goodput_unit

from .plural import count
from .policy_columns import POLICY_KEYS
from .success_cells import SUCCESS_HEADER, success_cell

# (column key, header)
COLUMNS: tuple[tuple[str, str], ...] = (
    ("strategy", "Strategy"), ("requests", "Requests"), ("hedges", "Hedges"), ("successes", "Successes"),
    ("timeouts", "Timeouts"), ("gave up", "Gave up"), ("unfinished", "Unfinished"),
    ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("max", "max"), ("mean", "mean"),
    ("goodput", "Goodput"), ("success", SUCCESS_HEADER), ("recovery", "Recovery"),
)
HEADERS = dict(COLUMNS)
# The optional columns, most wanted first: the CLI's drop order reversed; a simulation's policy
# columns give way first.
COLUMN_PRIORITY: tuple[str, ...] = (*reversed(NARROW_DROP_ORDER), "success", *POLICY_KEYS)


@dataclass(frozen=True)
class LatencyRow:
    """One strategy's cells as text, and its marks."""

    label: str
    cells: dict[str, str]
    best: frozenset[str]  # the columns in which this strategy has the ★
    never_recovered: bool
    recovery_note: str = ""  # why repetitions were not judged (the caption says it)


def format_goodput(value: float) -> str:
    """Successes per time unit (the header names the unit), as the CLI table and the CSV."""
    return format_value("goodput", value)


def format_time(value: float, time_unit: str = DEFAULT_TIME_UNIT) -> str:
    return f"{value:,.0f} {time_unit}" if value >= 1000 else f"{value:,.1f} {time_unit}"


def format_recovery(summary: RecoverySummary | None, time_unit: str = DEFAULT_TIME_UNIT) -> str:
    """``3/3 · 1,600 ms`` (all recovered, median), ``1/3 recovered``, ``✗ never (0/3)``, ``—``;
    ``, 2 undecided`` after it when some repetitions were too noisy to tell."""
    if summary is None:
        return "—"
    return summary.text(lambda v: format_time(v, time_unit), compact=True, glyph=True)


def format_run_recovery(recovery: float | None, time_unit: str = DEFAULT_TIME_UNIT) -> str | None:
    """One run's verdict (``recovery_time``) as the tables give a strategy's, a run being a
    summary of one: ``1/1 recovered, median 7,792 ms``, ``✗ never (0/1)``; None: not judged."""
    one = RecoverySummary.of([recovery])
    return None if one is None else one.text(lambda v: format_time(v, time_unit), glyph=True)


def goodput_rate(result: SweepResult) -> tuple[float, str]:
    """The factor and unit the goodput column reads in: per second below 1 per ms, as ``run``'s
    latency table (``sim.vocabulary.units.goodput_unit``, over every client count's rows as there)."""
    values = [row["goodput"] for k in range(len(result.spec.clients))
              for row in strategy_values(result, k)]
    return goodput_unit(result.spec.time_unit, values)


def latency_rows(result: SweepResult, clients_index: int) -> tuple[list[LatencyRow], list[str]]:
    """The rows at ``clients_index``, and the optional columns that are zero in every run."""
    spec = result.spec
    sections = [strategy_values(result, k) for k in range(len(spec.clients))]
    rate, _ = goodput_unit(spec.time_unit, [row["goodput"] for section in sections for row in section])
    silent = silent_columns(sections)
    section = sections[clients_index]
    best = best_rows(section)
    rows = []
    for s, values in enumerate(section):
        cells = {"strategy": spec.labels[s]}
        for key, _ in COLUMNS[1:]:
            value = values.get(key)
            if key == "hedges" and key not in values:
                continue  # no strategy of the simulation hedges: no column (``LatencyTable.column_widths``)
            if key == "success":  # the app's own column: a mean, as the counts (no CI)
                cells[key] = success_cell(result, s, clients_index, ci=False)
            elif key == "recovery":
                cells[key] = format_recovery(value, spec.time_unit)
            elif key == "goodput":
                cells[key] = format_goodput(value * rate)
            else:
                cells[key] = format_value(key, value) + (f" {BEST}" if best.get(key) == s else "")
        recovery = values["recovery"]
        rows.append(LatencyRow(spec.labels[s], cells,
                               frozenset(k for k in MARKED if best.get(k) == s),
                               recovery is not None and recovery.never,
                               result.recovery_note(s, clients_index)))
    return rows, silent


def sort_values(result: SweepResult, clients_index: int) -> list[dict[str, float | str | None]]:
    """Per strategy, the value behind each cell as the table's sort compares it: the means and
    pooled latencies, the name, the success rate, and for recovery the median time (a strategy
    that did not recover in every repetition after every one that did; None: not judged)."""
    spec = result.spec
    rows = []
    for s, values in enumerate(strategy_values(result, clients_index)):
        row: dict[str, float | str | None] = {key: values.get(key) for key, _ in COLUMNS[1:]}
        recovery = values["recovery"]
        row["recovery"] = (None if recovery is None else
                           recovery.median if recovery.all_recovered else math.inf)
        row["success"] = result.summary("success_rate", s, clients_index).mean
        row["strategy"] = spec.labels[s]
        rows.append(row)
    return rows


def latency_caption(result: SweepResult, clients_index: int, rows: list[LatencyRow],
                    silent: list[str], hidden: int, more_hint: str) -> str:
    """Short: what the numbers are and what the marks mean (the help screen says more); how to
    see the ``hidden`` columns."""
    spec = result.spec
    load = offered_load(spec, spec.clients[clients_index]).short_text()
    notes = [f"{count(spec.clients[clients_index], 'client')} · "
             + (f"{load} · " if load else "") +
             f"{count(spec.repeat, 'run')} each · "
             f"latency in {spec.time_unit} · {star_rule(bool(spec.disruptions), spec.hedges)}"]
    if any(row.never_recovered for row in rows):
        notes.append(f"{NEVER_GLYPH} never recovered")
    reasons = dict.fromkeys(row.recovery_note for row in rows if row.recovery_note)
    if reasons:
        notes.append(f"— {'; '.join(reasons)}")
    if silent:
        notes.append(f"always 0: {', '.join(silent)}")
    if hidden:
        notes.append(f"{count(hidden, 'more column')}: {more_hint}")
    return " · ".join(notes)
