"""The strategy comparison of an overload simulation at one client count: requests, outcomes,
latency percentiles, goodput and recovery after an outage.

The numbers and marks are ``sim.report.latency``'s (the CLI's latency table): counts are means over
repetitions, latencies pooled over them, ★ marks the fewest requests and the lowest p50 among
strategies that recovered every time and served about as many as the best served; recovery
reads ``3/3 · 1,600 ms`` (repetitions recovered, median time in the simulation's time unit),
``1/3 recovered`` or ``✗ never (0/3)`` (glyph and text, not colour alone), and a strategy that
never recovered gets the same mark before its name. Laid out by ``StrategyTable``, as the
contention table is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.text import Text

from sim.analysis.recovery import RecoverySummary
from sim.runs.sweep import SweepResult
from sim.export.palette import Palette
from sim.report.policies import policy_rows
from sim.report.latency import (
    BEST,
    NARROW_DROP_ORDER,
    NEVER_MARK,
    SERVED_SHARE,
    best_rows,
    format_value,
    silent_columns,
    strategy_values,
)
from sim.units import DEFAULT_TIME_UNIT

from ..plural import count
from .policy_columns import POLICY_KEYS, policy_header
from ..table_fit import column_width
from .strategy_table import StrategyTable

NEVER_GLYPH = NEVER_MARK.split()[0]  # ✗
# (column key, header)
COLUMNS: tuple[tuple[str, str], ...] = (
    ("strategy", "Strategy"), ("requests", "Requests"), ("successes", "Successes"),
    ("timeouts", "Timeouts"), ("gave up", "Gave up"), ("unfinished", "Unfinished"),
    ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("max", "max"),
    ("goodput", "Goodput"), ("recovery", "Recovery"),
)
HEADERS = dict(COLUMNS)
MARKED = ("requests", "p50")


@dataclass(frozen=True)
class LatencyRow:
    """One strategy's cells as text, and its marks."""

    label: str
    cells: dict[str, str]
    best: frozenset[str]  # the columns in which this strategy has the ★
    never_recovered: bool


def format_goodput(value: float) -> str:
    """Successes per time unit (the header names the unit), as the CLI table and the CSV."""
    return format_value("goodput", value)


def format_time(value: float, time_unit: str = DEFAULT_TIME_UNIT) -> str:
    return f"{value:,.0f} {time_unit}" if value >= 1000 else f"{value:,.1f} {time_unit}"


def format_recovery(summary: RecoverySummary | None, time_unit: str = DEFAULT_TIME_UNIT) -> str:
    """``3/3 · 1,600 ms`` (all recovered, median), ``1/3 recovered``, ``✗ never (0/3)``, ``—``."""
    if summary is None:
        return "—"
    if summary.never:
        return f"{NEVER_GLYPH} {summary.text()}"
    if not summary.all_recovered:
        return summary.text()
    return f"{summary.recovered}/{summary.runs} · {format_time(summary.median, time_unit)}"


def latency_rows(result: SweepResult, clients_index: int) -> tuple[list[LatencyRow], list[str]]:
    """The rows at ``clients_index``, and the optional columns that are zero in every run."""
    spec = result.spec
    sections = [strategy_values(result, k) for k in range(len(spec.clients))]
    silent = silent_columns(sections)
    section = sections[clients_index]
    best = best_rows(section)
    rows = []
    for s, values in enumerate(section):
        cells = {"strategy": spec.labels[s]}
        for key, _ in COLUMNS[1:]:
            value = values[key]
            if key == "recovery":
                cells[key] = format_recovery(value, spec.time_unit)
            elif key == "goodput":
                cells[key] = format_goodput(value)
            else:
                cells[key] = format_value(key, value) + (f" {BEST}" if best.get(key) == s else "")
        recovery = values["recovery"]
        rows.append(LatencyRow(spec.labels[s], cells,
                               frozenset(k for k in MARKED if best.get(k) == s),
                               recovery is not None and recovery.never))
    return rows, silent


class LatencyTable(StrategyTable):
    """Requests, outcomes, latency percentiles, goodput and recovery per strategy."""

    CAPTION_ID = "latency-caption"
    REQUIRED = ("strategy", "requests", "p50", "recovery")
    # The CLI's drop order, most telling first; a simulation's policy columns give way first.
    PRIORITY = (*reversed(NARROW_DROP_ORDER), *POLICY_KEYS)

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.rows: list[LatencyRow] = []
        self.silent: list[str] = []
        self.policy_keys: list[str] = []
        self.policy_cells: list[dict[str, str]] = []

    def set_rows(self, result: SweepResult | None, clients_index: int) -> None:
        self.rows, self.silent = latency_rows(result, clients_index) if result else ([], [])
        self.policy_keys, self.policy_cells = policy_rows(result, clients_index)

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def header(self, key: str) -> str:
        if key == "goodput" and self._result is not None:
            return f"{HEADERS[key]}/{self._result.spec.time_unit}"
        return HEADERS.get(key) or policy_header(key)

    @staticmethod
    def _label(row: LatencyRow) -> str:
        return f"{NEVER_GLYPH} {row.label}" if row.never_recovered else f"  {row.label}"

    def column_widths(self) -> dict[str, int]:
        keys = [k for k, _ in COLUMNS if k not in self.silent]
        if self._result is not None and not self._result.spec.outages:
            keys.remove("recovery")
        widths = {k: column_width(self.header(k), [self._label(r) if k == "strategy" else r.cells[k]
                                                   for r in self.rows]) for k in keys}
        for k in self.policy_keys:
            widths[k] = column_width(self.header(k), [cells[k] for cells in self.policy_cells])
        return widths

    def caption(self, result: SweepResult, hidden: int) -> str:
        """Short: what the numbers are and what the marks mean (the help screen says more)."""
        spec = result.spec
        notes = [f"{count(spec.clients[self._clients_index], 'client')} · "
                 f"{count(spec.repeat, 'run')} each · "
                 f"latency in {spec.time_unit} · {BEST} fewest requests, lowest p50 "
                 f"(≥ {SERVED_SHARE:.0%} served)"]
        if any(row.never_recovered for row in self.rows):
            notes.append(f"{NEVER_GLYPH} never recovered")
        if self.silent:
            notes.append(f"always 0: {', '.join(self.silent)}")
        if hidden:
            notes.append(f"{hidden} more columns: {self.more_hint}")
        return " · ".join(notes)

    def row_cells(self, index: int, columns: list[str], palette: Palette) -> list[Text]:
        row = self.rows[index]
        error = f"bold {palette.base['error']}"
        accent = f"bold {palette.base['accent']}"
        line = []
        for key in columns:
            if key == "strategy":
                line.append(Text(self._label(row), style=error if row.never_recovered else ""))
            elif key in self.policy_keys:
                line.append(Text(self.policy_cells[index][key], justify="right"))
            elif key == "recovery" and row.never_recovered:
                line.append(Text(row.cells[key], style=error, justify="right"))
            else:
                style = accent if key in row.best else ""
                line.append(Text(row.cells[key], style=style, justify="right"))
        return line
