"""The phase pane's picture as Rich text: the portrait's arrows coloured by return probability,
the run's trail and current state over them, the axes and a legend line.

The glyphs, bands and the trajectory's cells come from ``sim.phase.glyphs``; this module only
chooses colours and lays the characters out.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from sim.analysis.phase_path import PhasePath, phase_path
from sim.export.palette import Palette
from sim.phase.glyphs import BANDS, GlyphCell, Trajectory, band, glyph_rows, trajectory
from sim.phase.grid import PhaseGrid
from sim.phase.portrait import Portrait

from .rundata import RunData

__all__ = ["PhasePath", "Portrait", "Trajectory", "portrait_text", "run_path", "run_trajectory",
           "state_line"]

CURRENT = "●"
# Each band's theme colour (a base colour of the palette).
BAND_COLOURS = {"returns": "success", "likely": "primary", "unlikely": "warning", "stays": "error"}
BAND_WORDS = {"returns": "≥0.9", "likely": "≥0.5", "unlikely": ">0.1", "stays": "≤0.1"}


def band_style(palette: Palette, probability: float) -> Style:
    return Style(color=palette.base[BAND_COLOURS[band(probability)]])


def phase_text(rows: list[list[GlyphCell]], grid: PhaseGrid, palette: Palette,
               path: Trajectory | None) -> Text:
    """The grid (top row: the largest orbit), two characters a cell, with the orbit's values on
    the left, the work's under it with the axes' names, and a legend line; the trail's cells reversed, the current state a ``●``."""
    trail = set(path.trail) if path is not None else set()
    width = max(len(str(grid.orbit_max)), 1)
    orbit_values = grid.orbit.tolist()[::-1]
    text = Text(no_wrap=True, overflow="crop")
    for r, row in enumerate(rows):
        label = str(orbit_values[r]) if r in (0, len(rows) - 1, len(rows) // 2) else ""
        text.append(f"{label:>{width}} ", style="dim")
        for c, cell in enumerate(row):
            style = band_style(palette, cell.probability)
            if path is not None and (c, r) == path.current:
                text.append(CURRENT, style=style + Style(bold=True, reverse=True))
            elif (c, r) in trail:
                text.append(cell.glyph, style=style + Style(reverse=True))
            else:
                text.append(cell.glyph, style=style)
            text.append(" ")
        text.append("\n")
    span = 2 * grid.size - 1
    low, high = "0", str(grid.work_max)
    text.append(" " * (width + 1) + low + high.rjust(span - len(low)), style="dim")
    text.append("  → work at the server, ↑ calls in backoff\n", style="dim")
    text.append("return ", style="dim")
    for name, _holds in BANDS:
        text.append("■", style=Style(color=palette.base[BAND_COLOURS[name]]))
        text.append(f"{BAND_WORDS[name]} ", style="dim")
    text.append(f"{CURRENT} now, reversed: its trail", style="dim")
    return text


def state_line(path: Trajectory | None) -> str:
    """The current state in words (in the pane's title)."""
    if path is None:
        return ""
    where = " (beyond the grid)" if path.off_grid else ""
    return f"now: work {path.work}, in backoff {path.orbit}{where}"


def run_path(data: RunData | None) -> PhasePath | None:
    """The run's (work, orbit) after each event; None without a run or for a tiered one (its
    portrait is not drawn)."""
    if data is None or data.tiers is not None:
        return None
    return phase_path(data.history)


def run_trajectory(portrait: Portrait | None, path: PhasePath | None, cursor: int) -> Trajectory | None:
    """The run's path on the portrait's grid up to ``cursor``."""
    if portrait is None or path is None:
        return None
    return trajectory(path, cursor, portrait.settings.grid)


def portrait_text(portrait: Portrait, path: Trajectory | None, palette: Palette) -> Text:
    """The whole picture of ``portrait`` with the run's path (``phase_text``)."""
    return phase_text(glyph_rows(portrait), portrait.settings.grid, palette, path)
