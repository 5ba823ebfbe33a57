"""The strategy comparison at one client count: means with 95% CIs, and which differences count.

Every strategy ran on the same seeds (common random numbers), so costs are compared pairwise:
the best mean cost is starred, and the others show their paired difference from it with its 95%
CI and as a percentage, marked "≈" when that CI includes zero (``sim.analysis.versus``, the CLI's cell
too). Each strategy carries the marker and colour of its line in the metrics chart. Laid out by
``StrategyTable``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from sim.runs.sweep import SweepResult
from sim.analysis.versus import BEST, TIED, TIED_MARK, ci_note, cost_versus_best
from sim.export.palette import Palette
from sim.report.policies import policy_rows

from ..plural import count
from .policy_columns import POLICY_KEYS, policy_header
from ..table_fit import column_width
from .charts import series_marker
from .strategy_table import StrategyTable

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


def comparison_rows(result: SweepResult, clients_index: int) -> list[StrategyRow]:
    """The rows for ``result`` at ``clients_index``, one per strategy in config order."""
    k = clients_index
    rows = []
    for s, label in enumerate(result.spec.labels):
        versus = cost_versus_best(result, s, k)
        rows.append(StrategyRow(
            label=label,
            work=result.summary("work", s, k).format(1),
            duration=result.summary("duration", s, k).format(1),
            cost=result.summary("cost", s, k).format(1),
            gave_up=f"{float(result.gave_up[s, k, :].mean()):,.1f}",
            versus_best=versus.text,
            best=versus.verdict == BEST,
            same_as_best=versus.verdict == TIED,
        ))
    return rows


class MetricsTable(StrategyTable):
    """Work, duration, cost and give-ups per strategy, with the paired comparison to the best."""

    REQUIRED = ("Strategy", "Cost", "Cost vs best")
    PRIORITY = ("Work", "Duration", "Gave up", *POLICY_KEYS)  # policy columns give way first

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

    @staticmethod
    def _cells(row: StrategyRow) -> dict[str, str]:
        return {"Strategy": f"● {row.label}", "Work": row.work, "Duration": row.duration,
                "Cost": row.cost, "Gave up": row.gave_up, "Cost vs best": row.versus_best}

    def _silent(self) -> list[str]:
        """Columns left out because every strategy's value is zero."""
        return ["Gave up"] if self.rows and all(r.gave_up == "0.0" for r in self.rows) else []

    def column_widths(self) -> dict[str, int]:
        silent = self._silent()
        cells = [self._cells(row) for row in self.rows]
        widths = {c: column_width(c, [r[c] for r in cells]) for c in COLUMNS if c not in silent}
        for k in self.policy_keys:
            widths[k] = column_width(self.header(k), [cells[k] for cells in self.policy_cells])
        return widths

    def caption(self, result: SweepResult, hidden: int) -> str:
        spec = result.spec
        runs = (f"{count(spec.repeat, 'run')} each · {ci_note(spec.repeat)}" if spec.repeat > 1
                else ci_note(1))
        notes = [f"{count(spec.clients[self._clients_index], 'client')} · {runs} · cost = "
                 f"{spec.work_to_duration:g} × work + duration ({spec.time_unit})"]
        if spec.repeat > 1:
            notes.append(f"{TIED_MARK}: not significantly worse")
        silent = self._silent()
        if silent:
            notes.append(f"always 0: {', '.join(silent).lower()}")
        if hidden:
            notes.append(f"{hidden} more columns: {self.more_hint}")
        return " · ".join(notes)

    def row_cells(self, index: int, columns: list[str], palette: Palette) -> list[Text]:
        row = self.rows[index]
        style = "bold" if row.best else ""
        cells = self._cells(row)
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
