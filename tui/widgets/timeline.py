"""The animated timeline: one lane per client (or per range of clients), a server lane, time
flowing left to right, one glyph per cell, and a cursor column at the current event.

Cells are computed with numpy once per run and size: every event gets a (lane, column) and the
rank of its kind, and a cell shows its highest-ranked event (a give-up outranks a backoff), so a
thousand clients fit in twenty lanes. Events are sorted by time, so every column left of the
cursor's is complete; only the cursor's own column is recomputed as the cursor moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from ..rundata import KINDS, RunData
from ..theme import EVENT_GLYPHS, event_styles, palette_for

# Glyph of each rank (index = rank; 0 = no event).
RANK_GLYPHS: tuple[str, ...] = (" ", *(EVENT_GLYPHS[kind] for kind in KINDS))
LEGEND_LABELS: dict[str, str] = {"request": "request", "backoff": "backoff", "success": "accept",
                                 "failure": "reject", "give_up": "give up", "server": "server"}
# Narrower legends, tried in turn when the full one does not fit.
SHORTER_LABELS: tuple[dict[str, str], ...] = (
    {**LEGEND_LABELS, "request": "req"},
    {"request": "req", "backoff": "wait", "success": "ok", "failure": "rej", "give_up": "quit",
     "server": "srv"},
)
LEGEND_ORDER = ("request", "backoff", "success", "failure", "give_up", "server")


@dataclass(frozen=True, eq=False)
class Grid:
    """A run binned into lanes × columns at one widget size."""

    lanes: int
    columns: int
    span: float                 # simulated time covered by the columns
    lane_of_event: np.ndarray   # lane of each event's client
    column_of_event: np.ndarray
    column_start: np.ndarray    # index of the first event of each column (length columns + 1)
    clients: np.ndarray         # rank of each client-lane cell, [lanes, columns]
    server: np.ndarray          # rank of each server-lane cell, [columns]
    lane_labels: tuple[str, ...]


def lane_labels(n_clients: int, lanes: int) -> tuple[str, ...]:
    """``c7`` for a lane of one client, ``c10-19`` for a lane holding a range of clients."""
    lane = np.arange(n_clients) * lanes // n_clients
    labels = []
    for i in range(lanes):
        members = np.flatnonzero(lane == i)
        lo, hi = int(members[0]), int(members[-1])
        labels.append(f"c{lo}" if lo == hi else f"c{lo}-{hi}")
    return tuple(labels)


def _highest(counts: np.ndarray, levels: int) -> np.ndarray:
    """Per cell, the highest rank with a non-zero count (counts laid out cell-major, rank-minor)."""
    present = counts.reshape(-1, levels) > 0
    return (present * np.arange(levels, dtype=np.int8)).max(axis=1).astype(np.int8)


def build_grid(data: RunData, lanes: int, columns: int) -> Grid:
    """Bin every event into its cell; each cell keeps the highest rank that falls in it.

    One ``bincount`` over (cell, rank) pairs: linear in the events, no Python loop over them.
    """
    span = data.total_time if data.total_time > 0 else 1.0
    column = np.minimum((data.times * (columns / span)).astype(np.int64), columns - 1)
    # Events of the server alone (client -1, e.g. an outage) get lane -1: server lane only.
    lane = np.minimum((data.clients.astype(np.int64) * lanes) // data.n_clients, lanes - 1)
    lane[data.clients < 0] = -1
    ranks = data.ranks.astype(np.int64)
    levels = len(KINDS) + 1
    on_lane = lane >= 0
    flat = (lane[on_lane] * columns + column[on_lane]) * levels + ranks[on_lane]
    client_cells = _highest(np.bincount(flat, minlength=lanes * columns * levels), levels)
    server = data.server_mask
    flat = column[server] * levels + ranks[server]
    server_cells = _highest(np.bincount(flat, minlength=columns * levels), levels)
    client_cells = client_cells.reshape(lanes, columns)
    column_start = np.searchsorted(column, np.arange(columns + 1), side="left")
    return Grid(lanes, columns, span, lane, column, column_start, client_cells, server_cells,
                lane_labels(data.n_clients, lanes))


class Timeline(Widget, can_focus=False):
    """Lanes of glyphs up to the cursor; rebuilt only when the run or the size changes."""

    COMPONENT_CLASSES = {"timeline--cursor", "timeline--current", "timeline--label",
                         "timeline--ruler"}

    DEFAULT_CSS = """
    Timeline {
        height: 1fr;
        & > .timeline--cursor { background: $primary 25%; }
        & > .timeline--current { background: $accent 60%; text-style: bold; }
        & > .timeline--label { color: $foreground 60%; }
        & > .timeline--ruler { color: $foreground 60%; }
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._data: RunData | None = None
        self._cursor = 0
        self._time: float | None = None
        self._grid: Grid | None = None
        self._partial: tuple[int, np.ndarray, int] | None = None  # (cursor, lane ranks, server rank)
        self._geometry_cache: tuple[tuple, tuple[int, int, int] | None] | None = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.refresh())

    @property
    def grid(self) -> Grid | None:
        """The current binning (built on demand for the widget's size)."""
        geometry = self._geometry()
        if self._data is None or geometry is None:
            return None
        lanes, columns, _ = geometry
        grid = self._grid
        if grid is None or grid.lanes != lanes or grid.columns != columns:
            grid = self._grid = build_grid(self._data, lanes, columns)
            self._partial = None
        return grid

    def show(self, data: RunData | None, cursor: int = 0) -> None:
        self._data = data
        self._grid = None
        self._partial = None
        self._time = None
        self.refresh(layout=True)
        self.set_cursor(cursor)

    def set_cursor(self, cursor: int, time: float | None = None) -> None:
        """Show events up to ``cursor``; while playing, ``time`` (the playback clock, at or
        after the cursor's event) places the cursor column, so it moves between events too."""
        n = len(self._data) if self._data is not None else 0
        cursor = min(max(cursor, 0), max(n - 1, 0))
        if (cursor, time) != (self._cursor, self._time):
            self._cursor, self._time = cursor, time
            self.refresh()

    def _cursor_columns(self, grid: Grid) -> tuple[int, int]:
        """(column of the cursor's event, column of the cursor line)."""
        event_col = int(grid.column_of_event[self._cursor])
        if self._time is None:
            return event_col, event_col
        time_col = min(int(self._time * grid.columns / grid.span), grid.columns - 1)
        return event_col, max(event_col, time_col)

    # --- geometry ---------------------------------------------------------------------------

    def get_content_height(self, container, viewport, width: int) -> int:
        """A lane per client plus ruler, server lane and legend (CSS caps it; lanes then merge)."""
        return (self._data.n_clients if self._data is not None else 1) + 3

    def _rows(self) -> tuple[int, bool]:
        """(lanes available, whether the legend fits) for the current height."""
        height = self.size.height
        legend = height >= 6
        # ruler + lanes + server lane (+ legend)
        return height - 2 - int(legend), legend

    def _geometry(self) -> tuple[int, int, int] | None:
        """(lanes, columns, label width), or None when the widget is too small to draw lanes."""
        if self._data is None:
            return None
        key = (id(self._data), self.size)
        if self._geometry_cache is not None and self._geometry_cache[0] == key:
            return self._geometry_cache[1]
        room, _ = self._rows()
        geometry = None
        if room >= 1:
            lanes = min(self._data.n_clients, room)
            labels = lane_labels(self._data.n_clients, lanes)
            label_width = max(len(s) for s in (*labels, "server")) + 1
            columns = self.size.width - label_width
            geometry = (lanes, columns, label_width) if columns >= 2 else None
        self._geometry_cache = (key, geometry)
        return geometry

    def _partial_column(self, grid: Grid) -> tuple[int, np.ndarray, int]:
        """Ranks in the cursor's column counting only events up to the cursor."""
        if self._partial is not None and self._partial[0] == self._cursor:
            return self._partial
        assert self._data is not None
        k = self._cursor
        column = int(grid.column_of_event[k])
        start = int(grid.column_start[column])
        lanes = grid.lane_of_event[start:k + 1]
        ranks = self._data.ranks[start:k + 1]
        lane_ranks = np.zeros(grid.lanes, dtype=np.int8)
        on_lane = lanes >= 0
        np.maximum.at(lane_ranks, lanes[on_lane], ranks[on_lane])
        server = self._data.server_mask[start:k + 1]
        server_rank = int(ranks[server].max()) if server.any() else 0
        self._partial = (k, lane_ranks, server_rank)
        return self._partial

    # --- rendering --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        grid = self.grid
        if grid is None or self._data is None:
            message = "loading…" if self._data is None else "(too small for the timeline)"
            text = message if y == 0 else ""
            return Strip([Segment(text, base)]).adjust_cell_length(width, base)
        _, _, label_width = self._geometry() or (0, 0, 0)
        _, legend = self._rows()
        if y == 0:
            return self._ruler(grid, width, label_width, base)
        if 1 <= y <= grid.lanes:
            return self._lane(grid, y - 1, label_width, base)
        if y == grid.lanes + 1:
            return self._lane(grid, None, label_width, base)
        if legend and y == grid.lanes + 2:
            return self._legend(width, base)
        return Strip.blank(width, base)

    def _ruler(self, grid: Grid, width: int, label_width: int, base: Style) -> Strip:
        """Time ticks in ms, with a ▼ over the cursor's column."""
        style = base + self.get_component_rich_style("timeline--ruler")
        unit, scale = ("s", 1000.0) if grid.span >= 10_000 else ("ms", 1.0)
        cells = [" "] * grid.columns
        ticks = 4 if grid.columns >= 40 else 2 if grid.columns >= 16 else 1
        for i in range(ticks + 1):
            col = round(i * (grid.columns - 1) / ticks)
            label = f"{grid.span * (col + 1) / grid.columns / scale:.4g}" if i else "0"
            start = min(col, grid.columns - len(label)) if i else 0
            if start < 0 or any(c != " " for c in cells[max(start - 1, 0):start + len(label) + 1]):
                continue
            cells[start:start + len(label)] = list(label)
        _, cursor_col = self._cursor_columns(grid)
        cells[cursor_col] = "▼"
        text = "".join(cells)
        cursor_style = base + Style(bold=True)
        segments = [Segment(unit.ljust(label_width), style),
                    Segment(text[:cursor_col], style), Segment("▼", cursor_style),
                    Segment(text[cursor_col + 1:], style)]
        return Strip(segments).adjust_cell_length(width, base)

    def _lane(self, grid: Grid, lane: int | None, label_width: int, base: Style) -> Strip:
        """A client lane (``lane`` index) or the server lane (``None``) up to the cursor."""
        assert self._data is not None
        k = self._cursor
        event_col, cursor_col = self._cursor_columns(grid)
        _, lane_ranks, server_rank = self._partial_column(grid)
        if lane is None:
            row = grid.server[:cursor_col + 1].copy()
            row[event_col] = server_rank
            label = "server"
            is_current = bool(self._data.server_mask[k])
        else:
            row = grid.clients[lane, :cursor_col + 1].copy()
            row[event_col] = lane_ranks[lane]
            label = grid.lane_labels[lane]
            is_current = int(grid.lane_of_event[k]) == lane
        row[event_col + 1:] = 0  # later columns: nothing has happened there yet
        is_current = is_current and event_col == cursor_col
        styles = self._rank_styles(base)
        label_style = base + self.get_component_rich_style("timeline--label")
        segments = [Segment(label.ljust(label_width), label_style)]
        segments += self._runs(row[:cursor_col], styles)
        cursor = self.get_component_rich_style(
            "timeline--current" if is_current else "timeline--cursor")
        rank = int(row[cursor_col])
        # The glyph keeps its event colour; the cursor only changes the cell's background.
        segments.append(Segment(RANK_GLYPHS[rank],
                                styles[rank] + Style(bgcolor=cursor.bgcolor, bold=cursor.bold)))
        strip = Strip(segments)
        return strip.adjust_cell_length(label_width + grid.columns, base)

    @staticmethod
    def _runs(row: np.ndarray, styles: list[Style]) -> list[Segment]:
        """Segments for a row of ranks, one per run of equal ranks."""
        if not len(row):
            return []
        bounds = np.flatnonzero(np.diff(row)) + 1
        starts = np.concatenate(([0], bounds))
        ends = np.concatenate((bounds, [len(row)]))
        return [Segment(RANK_GLYPHS[int(row[s])] * int(e - s), styles[int(row[s])])
                for s, e in zip(starts, ends)]

    def _rank_styles(self, base: Style) -> list[Style]:
        by_kind = event_styles(palette_for(self.app.theme))
        return [base, *(base + by_kind[kind] for kind in KINDS)]

    def _legend(self, width: int, base: Style) -> Strip:
        by_kind = event_styles(palette_for(self.app.theme))
        label_style = base + self.get_component_rich_style("timeline--label")
        labels = LEGEND_LABELS
        for shorter in SHORTER_LABELS:
            if sum(len(label) + 3 for label in labels.values()) - 1 <= width:
                break
            labels = shorter
        segments: list[Segment] = []
        for kind in LEGEND_ORDER:
            segments.append(Segment(f"{EVENT_GLYPHS[kind]} ", base + by_kind[kind]))
            segments.append(Segment(f"{labels[kind]} ", label_style))
        return Strip(segments).adjust_cell_length(width, base)
