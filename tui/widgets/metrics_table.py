"""The strategy comparison at one client count: means with 95% CIs, and which differences count.

Every strategy ran on the same seeds (common random numbers), so costs are compared pairwise:
the best mean cost is starred, a strategy whose paired difference from it has a 95% CI that
includes zero is "≈ best", and the others show that difference with its CI. Each strategy
carries the marker and colour of its line in the metrics chart. On a narrow pane the least
telling columns give way (the caption names them) instead of being cut off at the right.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from sim.stats import paired_difference, significantly_different
from sim.sweep import SweepResult

from ..table_fit import column_width, fit_columns
from ..theme import palette_for
from .charts import series_marker

BEST_MARK = "★ best"
SAME_MARK = "≈ best"
PLACEHOLDER = "running sweep…"
COLUMNS: tuple[str, ...] = ("Strategy", "Work", "Duration", "Cost", "Gave up", "Cost vs best")
REQUIRED: tuple[str, ...] = ("Strategy", "Cost", "Cost vs best")
# The others, most wanted first, shown as far as the width allows.
PRIORITY: tuple[str, ...] = ("Work", "Duration", "Gave up")


@dataclass(frozen=True)
class StrategyRow:
    """One table row, as text."""

    label: str
    work: str
    duration: str
    cost: str
    gave_up: str
    versus_best: str
    best: bool
    same_as_best: bool


def _signed(mean: float, ci95: float) -> str:
    if math.isnan(ci95):
        return f"{mean:+,.1f}"
    return f"{mean:+,.1f} ± {ci95:,.1f}"


def comparison_rows(result: SweepResult, clients_index: int) -> list[StrategyRow]:
    """The rows for ``result`` at ``clients_index``, one per strategy in config order."""
    k = clients_index
    best = result.best_by_cost(k)
    cost = result.cost
    rows = []
    for s, label in enumerate(result.spec.labels):
        same = False
        if s == best:
            versus = BEST_MARK
        elif not significantly_different(cost[s, k, :], cost[best, k, :]):
            versus, same = SAME_MARK, True
        else:
            d = paired_difference(cost[s, k, :], cost[best, k, :])
            versus = _signed(d.mean, d.ci95)
        rows.append(StrategyRow(
            label=label,
            work=result.summary("work", s, k).format(1),
            duration=result.summary("duration", s, k).format(1),
            cost=result.summary("cost", s, k).format(1),
            gave_up=f"{float(result.gave_up[s, k, :].mean()):,.1f}",
            versus_best=versus,
            best=s == best,
            same_as_best=same,
        ))
    return rows


class MetricsTable(Vertical):
    """A caption line over a ``DataTable`` with one row per strategy (row key = strategy index)."""

    DEFAULT_CSS = """
    MetricsTable {
        height: auto;
    }
    MetricsTable > #caption {
        color: $text-muted;
        padding: 0 1;
    }
    MetricsTable > DataTable {
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
        self.rows: list[StrategyRow] = []
        # How to see the columns a narrow pane hides (the screen knows which view is on).
        self.more_hint = "press a"

    def compose(self) -> ComposeResult:
        yield Static(PLACEHOLDER, id="caption")
        yield DataTable(cursor_type="row", zebra_stripes=True)

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

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
        self.rows = comparison_rows(result, clients_index) if result is not None else []
        if self.is_mounted:
            self._fill()

    def highlight(self, strategy_index: int) -> None:
        """Put the row cursor on a strategy (kept across later ``show`` calls)."""
        self._highlighted = strategy_index
        if self.is_mounted and 0 <= strategy_index < self.table.row_count:
            self.table.move_cursor(row=strategy_index)

    def _cells(self, row: StrategyRow) -> dict[str, str]:
        return {"Strategy": f"● {row.label}", "Work": row.work, "Duration": row.duration,
                "Cost": row.cost, "Gave up": row.gave_up, "Cost vs best": row.versus_best}

    def _silent(self) -> list[str]:
        """Columns left out because every strategy's value is zero."""
        return ["Gave up"] if self.rows and all(r.gave_up == "0.0" for r in self.rows) else []

    def _shown_columns(self) -> list[str]:
        """The columns that fit the widget's width (every one before the first layout)."""
        silent = self._silent()
        cells = [self._cells(row) for row in self.rows]
        widths = {c: column_width(c, [r[c] for r in cells]) for c in COLUMNS if c not in silent}
        width = self.size.width
        if width <= 0:
            return list(widths)
        return fit_columns(widths, REQUIRED, PRIORITY, width - 1)  # room for a scrollbar

    def _fill(self) -> None:
        table = self.table
        table.clear(columns=True)
        caption = self.query_one("#caption", Static)
        result = self._result
        self._columns = columns = self._shown_columns()
        for column in columns:
            table.add_column(column, key=column)
        if result is None:
            caption.update(PLACEHOLDER)
            return
        clients = result.spec.clients[self._clients_index]
        notes = [f"{clients} clients · {result.spec.repeat} runs each · mean ± 95% CI · "
                 f"cost = {result.spec.work_to_duration:g} × work + duration · "
                 f"{SAME_MARK}: not significantly worse"]
        silent = self._silent()
        if silent:
            notes.append(f"always 0: {', '.join(silent).lower()}")
        hidden = [c for c in COLUMNS if c not in columns and c not in silent]
        if hidden:
            notes.append(f"{len(hidden)} more columns: {self.more_hint}")
        caption.update(" · ".join(notes))
        palette = palette_for(self.app.theme)
        for s, row in enumerate(self.rows):
            style = "bold" if row.best else ""
            cells = self._cells(row)
            line = []
            for column in columns:
                if column == "Strategy":
                    line.append(Text.assemble((f"{series_marker(s)} ", palette.series_color(s)),
                                              (row.label, style)))
                else:
                    line.append(Text(cells[column], style=style, justify="right"))
            table.add_row(*line, key=str(s))
        if 0 <= self._highlighted < table.row_count:
            table.move_cursor(row=self._highlighted)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        index = int(event.row_key.value) if event.row_key.value is not None else event.cursor_row
        self._highlighted = index
        self.post_message(self.StrategySelected(index))
