"""The strategy comparison at one client count: means with 95% CIs, and which differences count.

Every strategy ran on the same seeds (common random numbers), so costs are compared pairwise:
the best mean cost is starred, a strategy whose paired difference from it has a 95% CI that
includes zero is "≈ best", and the others show that difference with its CI.
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

BEST_MARK = "★ best"
SAME_MARK = "≈ best"
PLACEHOLDER = "running sweep…"
COLUMNS: tuple[str, ...] = ("Strategy", "Work", "Duration", "Cost", "Gave up", "Cost vs best")


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
        self.rows: list[StrategyRow] = []

    def compose(self) -> ComposeResult:
        yield Static(PLACEHOLDER, id="caption")
        table: DataTable = DataTable(cursor_type="row", zebra_stripes=True)
        for column in COLUMNS:
            table.add_column(column, key=column)
        yield table

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    def on_mount(self) -> None:
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

    def _fill(self) -> None:
        table = self.table
        table.clear()
        caption = self.query_one("#caption", Static)
        result = self._result
        if result is None:
            caption.update(PLACEHOLDER)
            return
        clients = result.spec.clients[self._clients_index]
        caption.update(f"{clients} clients · {result.spec.repeat} runs each · mean ± 95% CI · "
                       f"cost = {result.spec.work_to_duration:g} × work + duration · "
                       f"{SAME_MARK}: no significant paired difference")
        for s, row in enumerate(self.rows):
            style = "bold" if row.best else ""
            cells = [Text(row.label, style=style)]
            cells += [Text(v, style=style, justify="right")
                      for v in (row.work, row.duration, row.cost, row.gave_up)]
            cells.append(Text(row.versus_best, style=style, justify="right"))
            table.add_row(*cells, key=str(s))
        if 0 <= self._highlighted < table.row_count:
            table.move_cursor(row=self._highlighted)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        index = int(event.row_key.value) if event.row_key.value is not None else event.cursor_row
        self._highlighted = index
        self.post_message(self.StrategySelected(index))
