"""The strategy comparison of an overload simulation at one client count: requests, outcomes,
latency percentiles, goodput and recovery after an outage.

The rows, marks and caption are ``tui.view.latency_rows``'s (the CLI's latency table's
numbers); a strategy that never recovered gets the ``✗`` mark before its name and the error
colour. Laid out by ``StrategyTable``, as the contention table is.
"""

from __future__ import annotations

from rich.text import Text

from sim import SweepResult

from ...theme import Palette
from ...view.latency_rows import (
    COLUMNS,
    HEADERS,
    NEVER_GLYPH,
    COLUMN_PRIORITY,
    LatencyRow,
    latency_caption,
    latency_rows,
)
from ...view.latency_rows import goodput_rate, sort_values
from ...view.policy_columns import POLICY_METRICS, policy_header, policy_rows
from ...view.table_fit import column_width
from .strategy_table import StrategyTable


class LatencyTable(StrategyTable):
    """Requests, outcomes, latency percentiles, goodput and recovery per strategy."""

    CAPTION_ID = "latency-caption"
    REQUIRED = ("strategy", "requests", "p50", "recovery")
    PRIORITY = COLUMN_PRIORITY

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.rows: list[LatencyRow] = []
        self.silent: list[str] = []
        self.policy_keys: list[str] = []
        self.policy_cells: list[dict[str, str]] = []
        self.values: list[dict[str, float | str | None]] = []  # what the sort compares

    def set_rows(self, result: SweepResult | None, clients_index: int) -> None:
        self.rows, self.silent = latency_rows(result, clients_index) if result else ([], [])
        self.values = sort_values(result, clients_index) if result else []
        self.policy_keys, self.policy_cells = policy_rows(result, clients_index)

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def sort_value(self, index: int, key: str) -> float | str | None:
        if key in POLICY_METRICS and self._result is not None:
            return self._result.summary(POLICY_METRICS[key], index, self._clients_index).mean
        return self.values[index].get(key)

    def header(self, key: str) -> str:
        if key == "goodput" and self._result is not None:
            return f"{HEADERS[key]}/{goodput_rate(self._result)[1]}"  # per s, as run's table
        return HEADERS.get(key) or policy_header(key)

    @staticmethod
    def _label(row: LatencyRow) -> str:
        return f"{NEVER_GLYPH} {row.label}" if row.never_recovered else f"  {row.label}"

    def column_widths(self) -> dict[str, int]:
        keys = [k for k, _ in COLUMNS if k not in self.silent]
        if self._result is not None and not self._result.spec.disruptions:
            keys.remove("recovery")
        if self._result is None or not self._result.spec.hedges:
            keys.remove("hedges")  # a column only where a strategy hedges
        widths = {k: column_width(self.header(k), [self._label(r) if k == "strategy" else r.cells[k]
                                                   for r in self.rows]) for k in keys}
        for k in self.policy_keys:
            widths[k] = column_width(self.header(k), [cells[k] for cells in self.policy_cells])
        return widths

    def caption(self, result: SweepResult, hidden: int) -> str:
        return latency_caption(result, self._clients_index, self.rows, self.silent, hidden,
                               self.more_hint)

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
