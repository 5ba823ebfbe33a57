"""Explore maps as coloured cell grids: one per strategy, side by side when they fit, else the
selected one.

Presentation only: the cells (state, glyph, text) come from ``sim.exploration.grid`` through a
``MapView`` the screen builds (``tui.view.map_view``). Every cell pairs its colour with a glyph
and its text (``✓3/3``, ``◐2/3``, ``✗0/3``, ``·…`` while running), so the map reads without
colour too. Columns are the
first axis's values, rows the second's with larger values on top (as in the PNG). A click on a
cell posts ``CellClicked``.
"""

from __future__ import annotations

import math

from rich.color import Color, blend_rgb
from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget

from ..theme import Palette
from ..view.map_view import MapCell, MapView

GAP = 3  # columns between two grids side by side
STATE_COLOURS = {"recovered": "success", "partial": "warning", "collapsed": "error"}


def compact_number(value: float | int) -> str:
    """An axis value or mean in at most 5 cells: ``950``, ``1.55k``, ``13.6k``, ``120k``, ``2.5M``."""
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    v = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


class MapGrid(Widget, can_focus=False):
    """The strategies' maps; ``show`` a ``MapView`` to draw it."""

    DEFAULT_CSS = """
    MapGrid {
        height: auto;
        width: auto;
        padding: 0 1;
    }
    """

    class CellClicked(Message):
        """A click on a cell: strategy index, and the cell's (column, row from the top)."""

        def __init__(self, strategy: int, column: int, row: int) -> None:
            super().__init__()
            self.strategy = strategy
            self.column = column
            self.row = row

    def __init__(self, palette: Palette, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.palette = palette
        self._view: MapView | None = None

    @property
    def view(self) -> MapView | None:
        return self._view

    def show(self, view: MapView, palette: Palette | None = None) -> None:
        self._view = view
        if palette is not None:
            self.palette = palette
        self.refresh(layout=True)

    # --- geometry -------------------------------------------------------------------------

    def _cell_width(self, view: MapView) -> int:
        texts = [len(c.glyph) + len(c.text) for grid in view.grids for row in grid for c in row]
        labels = [len(compact_number(x)) for x in view.x_values]
        return max([*texts, *labels, 3]) + 1

    def _label_width(self, view: MapView) -> int:
        return max([len(compact_number(y)) for y in view.y_values] + [1]) + 1

    def _grid_width(self, view: MapView) -> int:
        return self._label_width(view) + self._cell_width(view) * len(view.x_values)

    def shown(self, width: int | None = None) -> list[int]:
        """The strategies drawn at ``width``: all when they fit side by side, else the selected."""
        view = self._view
        if view is None:
            return []
        width = self.size.width if width is None else width
        n = len(view.labels)
        total = n * self._grid_width(view) + (n - 1) * GAP
        return list(range(n)) if n > 1 and total <= width else [view.selected]

    def get_content_width(self, container, viewport) -> int:
        view = self._view
        if view is None:
            return 0
        n = len(view.labels)
        wide = n * self._grid_width(view) + (n - 1) * GAP
        return wide if wide <= container.width - 2 else self._grid_width(view)

    def get_content_height(self, container, viewport, width: int) -> int:
        view = self._view
        if view is None:
            return 0
        return 2 + max(1, len(view.y_values))  # title, cells, x labels

    # --- drawing --------------------------------------------------------------------------

    def _cell_style(self, cell: MapCell, view: MapView, cursor: bool, selected: bool, s: int,
                    column: int, row: int) -> Style:
        base = self.palette.base
        meta = {"strategy": s, "column": column, "row": row}
        if cell.state in STATE_COLOURS:
            style = Style(color=base["background"], bgcolor=base[base_key(cell.state)], meta=meta)
        elif cell.state == "value" and view.value_limits and not math.isnan(cell.value):
            low, high = view.value_limits
            t = 0.5 if high <= low else (cell.value - low) / (high - low)
            panel, primary = Color.parse(base["panel"]), Color.parse(base["primary"])
            shade = blend_rgb(panel.get_truecolor(), primary.get_truecolor(), min(max(t, 0.0), 1.0))
            text = base["background"] if t > 0.5 else base["foreground"]
            style = Style(color=text, bgcolor=Color.from_triplet(shade), meta=meta)
        else:
            style = Style(color=base["foreground"], bgcolor=base["panel"], dim=True, meta=meta)
        if cursor:
            style += Style(reverse=selected, bold=True, underline=True)
        return style

    def _grid_lines(self, view: MapView, s: int, only: bool) -> list[Text]:
        width, label_width = self._cell_width(view), self._label_width(view)
        selected = s == view.selected
        title = Text(view.labels[s], style="bold underline" if selected else "bold")
        if only and len(view.labels) > 1:
            title.append(f"  ({s + 1} of {len(view.labels)}, s: next)", style="dim")
        title.truncate(self._grid_width(view), overflow="ellipsis")
        lines = [title]
        rows = view.grids[s]
        y_values = view.y_values or ("",)
        for r, row in enumerate(rows):
            y = y_values[r] if r < len(y_values) else ""
            line = Text((compact_number(y) if y != "" else "").rjust(label_width - 1) + " ", style="dim")
            for c, cell in enumerate(row):
                cursor = (c, r) == view.cursor
                content = f"{cell.glyph}{cell.text}".center(width - 1) + " "
                if content.startswith(" ") and cell.state != "value":
                    content = content[1:] + " "  # keep the glyph at the left edge's side
                line.append(content[:-1], style=self._cell_style(cell, view, cursor, selected, s, c, r))
                line.append(" ")
            lines.append(line)
        axis = Text(" " * label_width, style="dim")
        for x in view.x_values:
            axis.append(compact_number(x).center(width - 1) + " ", style="dim")
        lines.append(axis)
        return lines

    def render(self) -> Text:
        view = self._view
        if view is None:
            return Text("")
        shown = self.shown()
        grids = [self._grid_lines(view, s, len(shown) == 1) for s in shown]
        grid_width = self._grid_width(view)
        out = []
        for i in range(max(len(g) for g in grids)):
            line = Text()
            for j, grid in enumerate(grids):
                part = grid[i] if i < len(grid) else Text("")
                if j:
                    line.append(" " * GAP)
                line.append_text(part)
                if j < len(grids) - 1:
                    line.append(" " * max(0, grid_width - part.cell_len))
            out.append(line)
        return Text("\n").join(out)

    def on_click(self, event: events.Click) -> None:
        meta = event.style.meta
        if "strategy" in meta:
            self.post_message(self.CellClicked(meta["strategy"], meta["column"], meta["row"]))


def base_key(state: str) -> str:
    """The palette colour of a verdict state: success, warning or error."""
    return STATE_COLOURS[state]
