"""A phase portrait as a terminal draws it: one arrow glyph per cell from its drift, a band of
its return probability for the colour, and a recorded run's path mapped onto the grid's cells.

The app's phase pane only presents these; ``backoff-sim phase`` draws the same portrait as a PNG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.analysis.phase_path import PhasePath
from sim.phase.grid import PhaseGrid
from sim.phase.portrait import PhaseSettings, Portrait

# The app's portrait: a small grid and few runs per cell, so it is there in seconds.
APP_SETTINGS = PhaseSettings(size=10, runs=2)

# Counter-clockwise from "more work" (right), an eighth of a turn each: orbit grows upwards.
ARROWS = ("→", "↗", "↑", "↖", "←", "↙", "↓", "↘")
STILL = "·"
# A drift that moves the state less than this many cells over the horizon is drawn still.
STILL_CELLS = 0.1

# Return-probability bands, best first: (name, whether a probability is in it), the pane's
# legend says: ≥ 0.9, ≥ 0.5, > 0.1, ≤ 0.1.
BANDS = (("returns", lambda p: p >= 0.9), ("likely", lambda p: p >= 0.5),
         ("unlikely", lambda p: p > 0.1), ("stays", lambda p: True))


def arrow(d_work: float, d_orbit: float, steps: tuple[float, float], horizon: float) -> str:
    """The glyph of a drift (per time unit): its direction to the nearest eighth of a turn,
    measured in cells (so a square cell's diagonal is 45°), or ``STILL`` when the state moves
    less than ``STILL_CELLS`` cells over ``horizon`` (or the drift is unknown)."""
    dx = d_work * horizon / (steps[0] or 1.0)
    dy = d_orbit * horizon / (steps[1] or 1.0)
    if not (math.isfinite(dx) and math.isfinite(dy)) or math.hypot(dx, dy) < STILL_CELLS:
        return STILL
    return ARROWS[round(math.atan2(dy, dx) / (math.pi / 4)) % 8]


def band(probability: float) -> str:
    """The name of the first band (``BANDS``) a return probability falls in."""
    return next(name for name, holds in BANDS if holds(probability))


@dataclass(frozen=True)
class GlyphCell:
    glyph: str
    probability: float


def glyph_rows(portrait: Portrait) -> list[list[GlyphCell]]:
    """The portrait's cells as rows of glyphs, the top row the largest orbit (as drawn)."""
    r = portrait.settings
    n, steps = r.size, r.grid.steps
    rows = [[GlyphCell(arrow(c.drift_work.mean, c.drift_orbit.mean, steps, r.horizon),
                       c.return_probability) for c in portrait.cells[i * n:(i + 1) * n]]
            for i in range(n)]
    return rows[::-1]


def grid_cell(grid: PhaseGrid, work: int, orbit: int) -> tuple[int, int]:
    """The (column, row from the top) of the cell nearest a state, clamped to the grid."""
    sw, so = grid.steps
    column = min(max(round(work / sw) if sw else 0, 0), grid.size - 1)
    row = min(max(round(orbit / so) if so else 0, 0), grid.size - 1)
    return column, grid.size - 1 - row


@dataclass(frozen=True)
class Trajectory:
    """A run's path on the grid up to a cursor: the cells it passed through (in order, without
    repeats and without the current one) and the current state and its cell."""

    trail: tuple[tuple[int, int], ...]
    current: tuple[int, int]
    work: int
    orbit: int
    off_grid: bool  # the current state lies beyond the grid (drawn on its edge)


def trajectory(path: PhasePath, index: int, grid: PhaseGrid, points: int = 400) -> Trajectory | None:
    """``path`` up to event ``index`` on ``grid`` (None before the first event)."""
    states = path.upto(index, points)
    if not states:
        return None
    cells: list[tuple[int, int]] = []
    for _time, work, orbit in states:
        cell = grid_cell(grid, work, orbit)
        if not cells or cells[-1] != cell:
            cells.append(cell)
    current = cells[-1]
    seen: dict[tuple[int, int], None] = {}
    for cell in cells[:-1]:
        if cell != current:
            seen.setdefault(cell, None)
    _time, work, orbit = states[-1]
    return Trajectory(tuple(seen), current, work, orbit,
                      work > grid.work_max or orbit > grid.orbit_max)
