"""The metrics table's content (strategies at one client count): means with 95% CIs, and which
differences count, as text, with the caption.

Every strategy ran on the same seeds (common random numbers), so costs are compared pairwise:
the best mean cost is starred, and the others show their paired difference from it with its 95%
CI and as a percentage, marked "≈" when that CI includes zero (``sim.analysis.versus``, the
CLI's cell too).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.analysis.versus import BEST, TIED, TIED_MARK, ci_note, cost_versus_best
from sim.runs.sweep import SweepResult

from .plural import count
from .success_cells import SUCCESS_HEADER, success_cell

COLUMNS: tuple[str, ...] = ("Strategy", "Work", "Duration", "Cost", "Gave up", SUCCESS_HEADER,
                            "Cost vs best")


@dataclass(frozen=True)
class StrategyRow:
    """One table row, as text."""

    label: str
    work: str
    duration: str
    cost: str
    gave_up: str
    success: str  # share of calls that succeeded (``success_cells``)
    versus_best: str
    best: bool
    same_as_best: bool

    def cells(self) -> dict[str, str]:
        """The row's text by column (the strategy's name after its chart marker's place)."""
        return {"Strategy": f"● {self.label}", "Work": self.work, "Duration": self.duration,
                "Cost": self.cost, "Gave up": self.gave_up, SUCCESS_HEADER: self.success,
                "Cost vs best": self.versus_best}


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
            success=success_cell(result, s, k),
            versus_best=versus.text,
            best=versus.verdict == BEST,
            same_as_best=versus.verdict == TIED,
        ))
    return rows


# The sweep metric behind each numeric column (``SweepResult.metric``).
METRICS = {"Work": "work", "Duration": "duration", "Cost": "cost", "Gave up": "gave_up",
           SUCCESS_HEADER: "success_rate"}


def sort_value(result: SweepResult, s: int, k: int, column: str) -> float | str:
    """Strategy ``s``'s value in ``column`` as the table's sort compares it: the mean behind the
    cell (the paired difference from the best for "Cost vs best"), the name for "Strategy"."""
    if column == "Strategy":
        return result.spec.labels[s]
    if column == "Cost vs best":
        return cost_versus_best(result, s, k).difference.mean
    return result.summary(METRICS[column], s, k).mean


def silent_columns(rows: list[StrategyRow]) -> list[str]:
    """Columns left out because every strategy's value is zero."""
    return ["Gave up"] if rows and all(r.gave_up == "0.0" for r in rows) else []


def comparison_caption(result: SweepResult, clients_index: int, rows: list[StrategyRow],
                       hidden: int, more_hint: str) -> str:
    """Clients, runs and the CI's meaning, the cost formula, the marks, the silent columns and
    how to see the ``hidden`` ones."""
    spec = result.spec
    runs = (f"{count(spec.repeat, 'run')} each · {ci_note(spec.repeat)}" if spec.repeat > 1
            else ci_note(1))
    # The formula without spaces inside, so the caption never wraps in the middle of it.
    notes = [f"{count(spec.clients[clients_index], 'client')} · {runs} · cost = "
             f"{spec.work_to_duration:g}×work+duration ({spec.time_unit})"]
    if spec.repeat > 1:
        notes.append(f"{TIED_MARK}: not significantly worse")
    silent = silent_columns(rows)
    if silent:
        notes.append(f"always 0: {', '.join(silent).lower()}")
    if hidden:
        notes.append(f"{count(hidden, 'more column')}: {more_hint}")
    return " · ".join(notes)
