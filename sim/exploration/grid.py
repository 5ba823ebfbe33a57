"""A map as data for any view: per strategy, its cells with a value, a short text and a state
that a glyph shows as well as a colour, and where the map tips from recovery to collapse.

The app's explore view, the PNG's cell labels, the command's boundary lines and the tests all
read the map through this module, so they agree on what a cell says. Cells may still be
running (``None``): they read as pending, or as missing once the map stopped without them (the
app's ``x``: nothing is computing them).

States of a cell with a verdict (the recovered fraction of the runs judged): ``recovered`` at least
``RECOVERED`` (0.9), ``collapsed`` at most ``COLLAPSED`` (0.1), ``partial`` in between (the
thresholds of a sharp boundary in the explore issue: "from >= 0.9 to <= 0.1 between neighbouring
cells"); ``none`` when no run could be judged, or fewer than were too noisy to tell. Without a
verdict a cell shows its metric (``value``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.analysis.recovery import RecoverySummary
from sim.exploration.axes import format_value
from sim.exploration.plan import ExplorePlan
from sim.exploration.summary import CellResult

RECOVERED = 0.9  # recovered fraction at or above which a cell reads as recovered
COLLAPSED = 0.1  # at or below which it reads as collapsed
BOUNDARY = 0.5  # the line the PNG draws: recovered in at least half the runs, or not

GLYPHS = {"recovered": "✓", "partial": "◐", "collapsed": "✗", "none": "—", "pending": "·",
          "missing": "·", "value": " "}
STATE_WORDS = {"recovered": f"recovered (≥ {RECOVERED:.0%} of runs)",
               "partial": "partly recovered", "collapsed": f"collapsed (≤ {COLLAPSED:.0%} recovered)",
               "none": "not judged (no baseline, or too noisy to tell 80% from 90%)",
               "pending": "running", "missing": "not computed", "value": ""}


@dataclass(frozen=True)
class MapCell:
    """One cell of one strategy's map, as every view shows it."""

    position: int  # index into ``plan.cells``
    index: tuple[int, ...]  # position on each axis
    values: tuple[float | int, ...]  # the axes' values there
    state: str  # a key of GLYPHS
    value: float  # recovered fraction (verdict maps) or the metric's mean; nan: none yet
    text: str  # "2/3", "1,234", "n/a", "…" (running), "" (not computed)
    verdict: RecoverySummary | None

    @property
    def glyph(self) -> str:
        return GLYPHS[self.state]


def fraction_state(fraction: float) -> str:
    """``recovered``, ``partial``, ``collapsed``, or ``none`` for nan (nothing judged)."""
    if math.isnan(fraction):
        return "none"
    if fraction >= RECOVERED:
        return "recovered"
    if fraction <= COLLAPSED:
        return "collapsed"
    return "partial"


def verdict_state(verdict: RecoverySummary | None) -> str:
    """The state of a cell's verdict: ``none`` when nothing was judged, or fewer runs than were
    too noisy to tell (one never of three runs, the others undecided, is no collapse)."""
    if verdict is None or verdict.runs < verdict.undecided:
        return "none"
    return fraction_state(verdict.fraction)


FLUID = "fluid"  # a cell's method (``ExploreResult.methods``) when it is the fluid estimate
FLUID_MARK = "≈"  # before a fluid estimate's mean: an estimate, not a mean of runs
FLUID_NOTE = ("fluid ✓ / fluid ✗: the fluid (mean-field) estimate recovers / collapses (no runs "
              "simulated); ≈: a fluid estimate's value; n/m: n of m simulated runs recovered")


def fluid_text(verdict: RecoverySummary | None) -> str:
    """A fluid estimate's verdict: ``fluid ✓`` or ``fluid ✗`` (one deterministic run, which a
    ``1/1`` would pass off as a simulated repetition), ``—`` when it judged nothing."""
    if verdict is None or verdict_state(verdict) == "none":
        return "—"
    return f"fluid {GLYPHS['recovered'] if verdict.fraction >= BOUNDARY else GLYPHS['collapsed']}"


def is_fluid(methods: Sequence[tuple[str, ...]] | None, position: int, s: int) -> bool:
    """Whether strategy ``s``'s row of cell ``position`` is a fluid estimate."""
    return bool(methods) and methods[position][s] == FLUID


def map_cells(plan: ExplorePlan, cells: Sequence[CellResult | None], s: int,
              metric: str | None = None, running: bool = True,
              methods: Sequence[tuple[str, ...]] | None = None) -> list[MapCell]:
    """Strategy ``s``'s cells in plan order; ``metric`` defaults to the plan's. A cell not
    known yet is ``pending`` while the map runs, ``missing`` once it stopped (``running``);
    a fluid estimate (``methods``) reads as one (``fluid_text``, ``FLUID_MARK``)."""
    metric = metric or plan.metric
    out = []
    for position, (cell, result) in enumerate(zip(plan.cells, cells)):
        verdict = None
        fluid = is_fluid(methods, position, s)
        if result is None:
            state, value, text = ("pending", math.nan, "…") if running else ("missing", math.nan, "")
        elif metric == "recovered":
            verdict = result.verdict(s)
            state = verdict_state(verdict)
            value = math.nan if state == "none" else verdict.fraction
            text = fluid_text(verdict) if fluid else (f"{verdict.recovered}/{verdict.runs}" if verdict else "—")
        else:
            verdict = result.verdict(s)
            value = result.estimate(metric, s).mean
            state, text = "value", ("n/a" if math.isnan(value) else
                                    (FLUID_MARK if fluid else "") + format_value(value))
        out.append(MapCell(position, cell.index, cell.values, state, value, text, verdict))
    return out


def grid_rows(plan: ExplorePlan, cells: Sequence[CellResult | None], s: int,
              metric: str | None = None, running: bool = True) -> list[list[MapCell]]:
    """Strategy ``s``'s cells as rows to draw top to bottom: columns are the first axis's
    values in order; rows the second axis's from the last value down (as the PNG puts them:
    larger values up). A one-axis map is one row."""
    flat = map_cells(plan, cells, s, metric, running)
    if len(plan.axes) == 1:
        return [flat]
    columns, rows = plan.shape
    by_index = {c.index: c for c in flat}
    return [[by_index[(i, j)] for i in range(columns)] for j in reversed(range(rows))]


def fraction_grid(plan: ExplorePlan, cells: Sequence[CellResult | None], s: int) -> np.ndarray:
    """Recovered fraction per cell of strategy ``s`` (nan: no verdict or pending), shaped like
    the plan's grid ([first axis, second axis])."""
    values = [c.value for c in map_cells(plan, cells, s, "recovered")]
    return np.array(values, dtype=np.float64).reshape(plan.shape)


@dataclass(frozen=True)
class Edge:
    """A sharp step between neighbouring cells along the first axis: recovered (≥ 0.9) on one
    side, collapsed (≤ 0.1) on the other. ``falls``: recovered before, collapsed after."""

    row: int  # index on the second axis (0 for a one-axis map)
    before: int  # index on the first axis of the cell before the step
    falls: bool


def sharp_edges(fractions: np.ndarray) -> list[Edge]:
    """Every sharp step along the first axis of a ``fraction_grid`` (1 or 2 dimensions)."""
    grid = fractions.reshape(fractions.shape[0], -1)
    edges = []
    for row in range(grid.shape[1]):
        line = grid[:, row]
        for i in range(line.size - 1):
            a, b = line[i], line[i + 1]
            if a >= RECOVERED and b <= COLLAPSED:
                edges.append(Edge(row, i, True))
            elif a <= COLLAPSED and b >= RECOVERED:
                edges.append(Edge(row, i, False))
    return edges


def tolerated(fractions: np.ndarray) -> list[int | None]:
    """Per row (second-axis value): the index along the first axis of the last cell of the
    leading run of cells recovered in at least half the runs (the PNG's boundary); None when
    the first cell already falls short; the last index when no cell does. For an outage axis:
    the longest outage the system rides out, every shorter one too."""
    grid = fractions.reshape(fractions.shape[0], -1)
    out: list[int | None] = []
    for row in range(grid.shape[1]):
        line = grid[:, row]
        below = np.flatnonzero(~(line >= BOUNDARY))  # nan counts as falling short
        out.append(int(below[0]) - 1 if below.size else line.size - 1)
        if out[-1] < 0:
            out[-1] = None
    return out


def row_story(plan: ExplorePlan, fractions_row: np.ndarray) -> str:
    """One row along the first axis as runs of states: ``✓ 1,000–1,545 · ✗ 2,388–8,812 · ◐
    13,618 · ✓ 21,043–120,000``."""
    values = plan.axes[0].values
    parts: list[tuple[str, int, int]] = []
    for i, f in enumerate(np.asarray(fractions_row, dtype=np.float64).tolist()):
        state = fraction_state(f)
        if parts and parts[-1][0] == state and state != "partial":
            parts[-1] = (state, parts[-1][1], i)
        else:
            parts.append((state, i, i))
    words = []
    for state, a, b in parts:
        span = format_value(values[a]) if a == b else f"{format_value(values[a])}–{format_value(values[b])}"
        words.append(f"{GLYPHS[state]} {span}")
    return " · ".join(words)

