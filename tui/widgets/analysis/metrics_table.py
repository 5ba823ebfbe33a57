"""The strategy comparison at one client count: means with 95% CIs, and which differences count.

The rows and caption are ``tui.view.comparison_rows``'s (the paired comparison of
``sim.analysis.versus``, the CLI's cell too). Each strategy carries the marker and colour of its
line in the metrics chart. Laid out by ``StrategyTable``.
"""

from __future__ import annotations

from rich.text import Text

from sim import SweepResult

from ...theme import Palette
from ...view.comparison_rows import (COLUMNS, StrategyRow, comparison_caption, comparison_rows, silent_columns,
                                     sort_value)
from ...view.policy_columns import POLICY_KEYS, POLICY_METRICS, policy_header, policy_rows
from ...view.table_fit import column_width
from .charts import series_marker
from .strategy_table import StrategyTable


class MetricsTable(StrategyTable):
    """Work, duration, cost and give-ups per strategy, with the paired comparison to the best."""

    REQUIRED = ("Strategy", "Cost", "Cost vs best")
    PRIORITY = ("Work", "Duration", "Gave up", "Success", *POLICY_KEYS)  # policy columns give way first

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.rows: list[StrategyRow] = []
        self.policy_keys: list[str] = []
        self.policy_cells: list[dict[str, str]] = []

    def set_rows(self, result: SweepResult | None, clients_index: int) -> None:
        self.rows = comparison_rows(result, clients_index) if result is not None else []
        self.policy_keys, self.policy_cells = policy_rows(result, clients_index)

    def header(self, key: str) -> str:
        return policy_header(key) if key in self.policy_keys else key

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def sort_value(self, index: int, key: str) -> float | str | None:
        result = self._result
        if result is None:
            return None
        if key in POLICY_METRICS:
            return result.summary(POLICY_METRICS[key], index, self._clients_index).mean
        return sort_value(result, index, self._clients_index, key)

    def column_widths(self) -> dict[str, int]:
        silent = silent_columns(self.rows)
        cells = [row.cells() for row in self.rows]
        widths = {c: column_width(c, [r[c] for r in cells]) for c in COLUMNS if c not in silent}
        for k in self.policy_keys:
            widths[k] = column_width(self.header(k), [cells[k] for cells in self.policy_cells])
        return widths

    def caption(self, result: SweepResult, hidden: int) -> str:
        return comparison_caption(result, self._clients_index, self.rows, hidden, self.more_hint)

    def row_cells(self, index: int, columns: list[str], palette: Palette) -> list[Text]:
        row = self.rows[index]
        style = "bold" if row.best else ""
        cells = row.cells()
        line = []
        for column in columns:
            if column == "Strategy":
                line.append(Text.assemble((f"{series_marker(index)} ", palette.series_color(index)),
                                          (row.label, style)))
            elif column in self.policy_keys:
                line.append(Text(self.policy_cells[index][column], justify="right"))
            else:
                line.append(Text(cells[column], style=style, justify="right"))
        return line
