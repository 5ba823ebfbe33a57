"""The strategy comparison of an overload simulation at one client count: requests, outcomes,
latency percentiles, goodput and recovery after an outage.

The numbers and marks are ``sim.open_report``'s (the CLI's latency table): counts are means over
repetitions, latencies pooled over them, ★ marks the fewest requests and the lowest p50 among
strategies that recovered, and a run that never recovered says ``✗ never`` (glyph and text, not
colour alone) and gets the same mark before its name. Laid out like ``MetricsTable``: a caption
over a ``DataTable``, one row per strategy, the least telling columns giving way on narrow panes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from sim.open_report import (BEST, NARROW_DROP_ORDER, NEVER_MARK, best_rows, format_value,
                             silent_columns, strategy_values)
from sim.sweep import SweepResult

from ..table_fit import column_width, fit_columns
from ..theme import palette_for

PLACEHOLDER = "running sweep…"
NEVER_GLYPH = NEVER_MARK.split()[0]  # ✗
# (column key, header)
COLUMNS: tuple[tuple[str, str], ...] = (
    ("strategy", "Strategy"), ("requests", "Requests"), ("successes", "Successes"),
    ("timeouts", "Timeouts"), ("gave up", "Gave up"), ("unfinished", "Unfinished"),
    ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("max", "max"),
    ("goodput", "Goodput/s"), ("recovery", "Recovery"),
)
HEADERS = dict(COLUMNS)
REQUIRED = ("strategy", "requests", "p50", "recovery")
# The CLI's drop order, reversed: the most telling optional column first.
PRIORITY = tuple(reversed(NARROW_DROP_ORDER))
MARKED = ("requests", "p50")


@dataclass(frozen=True)
class LatencyRow:
    """One strategy's cells as text, and its marks."""

    label: str
    cells: dict[str, str]
    best: frozenset[str]  # the columns in which this strategy has the ★
    never_recovered: bool


def format_goodput(value: float) -> str:
    """Successes per second (times are in ms)."""
    return "—" if math.isnan(value) else f"{value * 1000:.3g}"


def format_recovery(value: float | None) -> str:
    if value is None:
        return "—"
    if math.isnan(value):
        return NEVER_MARK
    return f"{value:,.0f} ms" if value >= 1000 else f"{value:,.1f} ms"


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
                cells[key] = format_recovery(value)
            elif key == "goodput":
                cells[key] = format_goodput(value)
            else:
                cells[key] = format_value(key, value) + (f" {BEST}" if best.get(key) == s else "")
        recovery = values["recovery"]
        rows.append(LatencyRow(spec.labels[s], cells,
                               frozenset(k for k in MARKED if best.get(k) == s),
                               recovery is not None and math.isnan(recovery)))
    return rows, silent


class LatencyTable(Vertical):
    """A caption line over a ``DataTable`` with one row per strategy (row key = strategy index)."""

    DEFAULT_CSS = """
    LatencyTable {
        height: auto;
    }
    LatencyTable > #latency-caption {
        color: $text-muted;
        padding: 0 1;
    }
    LatencyTable > DataTable {
        height: auto;
    }
    """

    class StrategySelected(Message):
        """The user chose a strategy's row (Enter or click)."""

        def __init__(self, strategy_index: int) -> None:
            super().__init__()
            self.strategy_index = strategy_index

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._result: SweepResult | None = None
        self._clients_index = 0
        self._highlighted = 0
        self._columns: list[str] = []
        self.rows: list[LatencyRow] = []
        self.silent: list[str] = []
        # How to see the columns a narrow pane hides (the screen knows which view is on).
        self.more_hint = "press a"

    def compose(self) -> ComposeResult:
        yield Static(PLACEHOLDER, id="latency-caption", markup=False)
        yield DataTable(cursor_type="row", zebra_stripes=True)

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    @property
    def columns(self) -> list[str]:
        """The column keys shown now."""
        return list(self._columns)

    def on_mount(self) -> None:
        self._fill()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._fill())

    def set_more_hint(self, hint: str) -> None:
        """Say how to see hidden columns (``press a``, or a wider terminal)."""
        if hint != self.more_hint:
            self.more_hint = hint
            if self.is_mounted:
                self._fill()

    def on_resize(self) -> None:
        if self._shown_columns() != self._columns:
            self._fill()

    def show(self, result: SweepResult | None, clients_index: int) -> None:
        """Show ``result`` at client-count index ``clients_index``; None shows the placeholder."""
        self._result = result
        self._clients_index = clients_index
        if result is not None:
            self.rows, self.silent = latency_rows(result, clients_index)
        else:
            self.rows, self.silent = [], []
        if self.is_mounted:
            self._fill()

    def highlight(self, strategy_index: int) -> None:
        """Put the row cursor on a strategy (kept across later ``show`` calls)."""
        self._highlighted = strategy_index
        if self.is_mounted and 0 <= strategy_index < self.table.row_count:
            self.table.move_cursor(row=strategy_index)

    def _label(self, row: LatencyRow) -> str:
        return f"{NEVER_GLYPH} {row.label}" if row.never_recovered else f"  {row.label}"

    def _shown_columns(self) -> list[str]:
        keys = [k for k, _ in COLUMNS if k not in self.silent]
        if self._result is not None and not self._result.spec.outages:
            keys.remove("recovery")
        widths = {k: column_width(HEADERS[k], [self._label(r) if k == "strategy" else r.cells[k]
                                               for r in self.rows]) for k in keys}
        width = self.size.width
        if width <= 0:
            return keys
        return fit_columns(widths, [k for k in REQUIRED if k in widths], PRIORITY, width - 1)

    def _fill(self) -> None:
        table = self.table
        table.clear(columns=True)
        caption = self.query_one("#latency-caption", Static)
        self._columns = columns = self._shown_columns()
        for key in columns:
            table.add_column(HEADERS[key], key=key)
        result = self._result
        if result is None:
            caption.update(PLACEHOLDER)
            return
        caption.update(self._caption(result, columns))
        palette = palette_for(self.app.theme)
        error = f"bold {palette.base['error']}"
        accent = f"bold {palette.base['accent']}"
        for s, row in enumerate(self.rows):
            line = []
            for key in columns:
                if key == "strategy":
                    line.append(Text(self._label(row), style=error if row.never_recovered else ""))
                elif key == "recovery" and row.never_recovered:
                    line.append(Text(row.cells[key], style=error, justify="right"))
                else:
                    style = accent if key in row.best else ""
                    line.append(Text(row.cells[key], style=style, justify="right"))
            table.add_row(*line, key=str(s))
        if 0 <= self._highlighted < table.row_count:
            table.move_cursor(row=self._highlighted)

    def _caption(self, result: SweepResult, columns: list[str]) -> str:
        """Short: what the numbers are and what the marks mean (the help screen says more)."""
        spec = result.spec
        notes = [f"{spec.clients[self._clients_index]} clients · {spec.repeat} runs each · "
                 f"latency in ms · {BEST} fewest requests, lowest p50"]
        if any(row.never_recovered for row in self.rows):
            notes.append(f"{NEVER_GLYPH} never recovered")
        if self.silent:
            notes.append(f"always 0: {', '.join(self.silent)}")
        hidden = [k for k, _ in COLUMNS if k not in columns and k not in self.silent
                  and k != "recovery"]
        if hidden:
            notes.append(f"{len(hidden)} more columns: {self.more_hint}")
        return " · ".join(notes)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        index = int(event.row_key.value) if event.row_key.value is not None else event.cursor_row
        self._highlighted = index
        self.post_message(self.StrategySelected(index))
