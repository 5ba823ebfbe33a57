"""The animated timeline: one lane per client (or per range of clients), a server lane, time
flowing left to right, one glyph per cell, and a cursor column at the current event.

Cells are computed with numpy once per run and size (``timeline_grid``; the worker that loads
a run bins it for the size the timeline will have): every event gets a (lane, column) and the
rank of its kind, and a cell shows its highest-ranked event (a give-up outranks a backoff), so a
thousand clients fit in twenty lanes. Events are sorted by time, so every column left of the
cursor's is complete; only the cursor's own column is recomputed as the cursor moves.

The user may pick which clients get lanes (``pick_clients``: a lane group expanded to its
clients is such a pick) and follow one client (``follow``): its lane's label gets a ▸ and the
cells of its attempts so far a highlight (``sim.analysis.client_trace``).
"""

from __future__ import annotations

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ...view.policy_labels import BREAKER_GLYPHS, REFUSED_GLYPH, PolicyLabels
from ...view.rundata import ClientTrace, RunData
from ...theme import event_styles, palette_for
from ...view.legend import (DENSITY_GLYPHS, INCIDENT_GLYPH, OUTAGE_GLYPH, WAIT_GLYPH, LegendEntry, fit_legend,
                            timeline_legend)
from ...view.marks import MARK_RANK, MARKS
from ...view.ticks import nice_ticks, time_scale
from ...view.timeline_grid import (DENSITY_LEVELS, Grid, build_grid, cached_grid, even_lanes,
                                   label_width, lane_members)
from ...view.zoom import TimeWindow

# What a cell can show (index = display code): nothing, a mark by rank, the server lane's
# outage shading (an empty cell of the server lane while the server is paused), a client
# waiting out a backoff, then in lanes of many clients a bar by events per cell, coloured by
# the cell's most telling mark (code ``DENSITY_BASE + (rank - 1) * DENSITY_LEVELS + level - 1``).
OUTAGE_CODE = len(MARKS) + 1
WAIT_CODE = OUTAGE_CODE + 1
DENSITY_BASE = WAIT_CODE + 1
GIVE_UP_RANK = MARK_RANK["give_up"]
# Last, the server lane's incident shading (an empty cell while an incident is under way).
INCIDENT_CODE = DENSITY_BASE + len(MARKS) * DENSITY_LEVELS
CELL_GLYPHS: tuple[str, ...] = (" ", *(mark.glyph for mark in MARKS), OUTAGE_GLYPH, WAIT_GLYPH,
                                *(DENSITY_GLYPHS[level] for _ in MARKS
                                  for level in range(DENSITY_LEVELS)), INCIDENT_GLYPH)
RANK_GLYPHS = CELL_GLYPHS[:OUTAGE_CODE + 1]  # nothing, the marks, the outage


def rows_for(height: int, legend: bool = True) -> tuple[int, bool]:
    """(rows for lanes, whether the legend fits) in a timeline ``height`` rows tall: the ruler
    and the server lane take a row each, and the legend (if wanted) one more when there are
    six rows."""
    legend = legend and height >= 6
    return height - 2 - int(legend), legend


FOLLOW_MARK = "▸"  # after the followed client's lane label


def geometry_for(n_clients: int, width: int, height: int, legend: bool = True,
                 ids: np.ndarray | None = None) -> tuple[int, int, int] | None:
    """(lanes, columns, label width) at a size, or None when it is too small to draw lanes;
    ``ids``: the clients picked (``n_clients`` of them) when not every client has a lane."""
    room, _ = rows_for(height, legend)
    if room < 1:
        return None
    lanes = even_lanes(n_clients, room)
    labels = label_width(n_clients, lanes, ids)
    columns = width - labels
    return (lanes, columns, labels) if columns >= 2 else None


class Timeline(Widget, can_focus=False):
    """Lanes of glyphs up to the cursor; rebuilt only when the run, the size or the zoom
    changes. A click seeks: it asks for the last event at or before the clicked column."""

    class Seek(Message):
        """The user clicked the timeline: go to event ``index``."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class Resized(Message):
        """The timeline's size changed, so its cells (and their counts) were binned anew: a view
        that shades several timelines on one scale recomputes that scale."""

    COMPONENT_CLASSES = {"timeline--cursor", "timeline--current", "timeline--label",
                         "timeline--ruler", "timeline--follow"}

    DEFAULT_CSS = """
    Timeline {
        height: 1fr;
        & > .timeline--cursor { background: $primary 25%; }
        & > .timeline--current { background: $accent 60%; text-style: bold; }
        & > .timeline--label { color: $foreground 60%; }
        & > .timeline--ruler { color: $foreground 60%; }
        & > .timeline--follow { background: $warning 45%; text-style: bold; }
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._data: RunData | None = None  # the clients' part of the run shown (``RunData.top``)
        self._run: RunData | None = None   # the run shown, every tier's events (cursors index it)
        self._cursor = 0  # -1: before the run's first event (a shared clock can be there)
        self._time: float | None = None
        self._grid: Grid | None = None
        # (cursor, lane ranks, lane counts, server rank) of the cursor's column
        self._partial: tuple[int, np.ndarray, np.ndarray, int] | None = None
        self._geometry_cache: tuple[tuple, tuple[int, int, int] | None] | None = None
        self._window = TimeWindow()  # the stretch of time shown (all of it unless zoomed)
        self._grid_key: tuple | None = None  # (lanes, columns, window bounds) of ``_grid``
        # Set by a view that stacks timelines on one time axis (see ``align``).
        self._span: float | None = None
        self._min_label = 0
        self._show_legend = True
        self._legend_codes: frozenset[int] | None = None  # explain these codes, not the run's
        self._density_bounds: tuple[int, ...] | None = None  # shared shading, not the run's
        # The run's policy state beside the lane labels (None: the run records none), and the
        # texts at the cursor they were last computed for: (cursor, lanes, lane texts, server).
        self._policy: PolicyLabels | None = None
        self._policy_texts: tuple[int, int, list[str], str] | None = None
        self._picked: np.ndarray | None = None  # the clients with lanes (None: every one)
        self._trace: ClientTrace | None = None  # the client followed, and its attempts

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.refresh())

    def on_resize(self) -> None:
        # The grid is binned for the widget's size, which layout settles after the view that
        # sized it has moved on: tell it, or a shared scale would depend on when layout ran.
        if self._data is not None:
            self.post_message(self.Resized())

    @property
    def grid(self) -> Grid | None:
        """The current binning (built on demand for the widget's size)."""
        geometry = self._geometry()
        if self._data is None or geometry is None:
            return None
        lanes, columns, _ = geometry
        window = self._window.bounds(self._data.total_time)
        grid = self._grid
        if window is None and self._span is not None:
            window = (0.0, self._span)  # one axis shared with other timelines
        picked = self._picked
        key = (lanes, columns, window, None if picked is None else picked.tobytes())
        if grid is None or self._grid_key != key:
            # The whole run's binning is kept with the run; a zoomed one or one of picked
            # clients only here (each would be another array the size of the run).
            grid = self._grid = (cached_grid(self._data, lanes, columns)
                                 if window is None and picked is None
                                 else build_grid(self._data, lanes, columns, window, picked))
            self._grid_key = key
            self._partial = None
        return grid

    @property
    def window(self) -> TimeWindow:
        return self._window

    @property
    def data(self) -> RunData | None:
        return self._data

    @property
    def cursor(self) -> int:
        """The last event shown (-1: none yet, on a shared clock before the run's first)."""
        return self._cursor

    # --- clients picked and followed ---------------------------------------------------------

    @property
    def picked(self) -> np.ndarray | None:
        """The clients with lanes, ascending (None: every client)."""
        return self._picked

    @property
    def trace(self) -> ClientTrace | None:
        """The client followed and its attempts in the shown run (None: nobody followed)."""
        return self._trace

    @property
    def n_shown(self) -> int:
        """How many clients have lanes."""
        if self._picked is not None:
            return len(self._picked)
        return self._data.n_clients if self._data is not None else 1

    def pick_clients(self, ids: np.ndarray | None) -> None:
        """Give lanes to these clients only (ids of the run's clients; None or all: every one)."""
        if ids is not None and self._data is not None:
            ids = np.unique(ids[(ids >= 0) & (ids < self._data.n_clients)]).astype(np.int64)
            if not len(ids) or len(ids) == self._data.n_clients:
                ids = None
        self._picked = ids
        self._grid = None
        self._partial = None
        self._geometry_cache = None
        self._policy_texts = None
        self.refresh(layout=True)

    def follow(self, client: int | None) -> None:
        """Highlight ``client``'s attempts and mark its lane (None: follow nobody)."""
        data = self._data
        if client is None or data is None or not 0 <= client < data.n_clients:
            self._trace = None
        else:
            self._trace = data.client_trace(client)
        self.refresh()

    def lane_of_client(self, client: int) -> int | None:
        """The lane that holds ``client`` at the current size (None: it has none)."""
        grid = self.grid
        if grid is None:
            return None
        place = client
        if self._picked is not None:
            found = np.flatnonzero(self._picked == client)
            if not len(found):
                return None
            place = int(found[0])
        return min(place // grid.per_lane, grid.lanes - 1)

    def lane_clients(self, lane: int) -> np.ndarray:
        """The ids of the clients in ``lane`` at the current size."""
        grid = self.grid
        if grid is None or self._data is None:
            return np.zeros(0, dtype=np.int64)
        return lane_members(self._data.n_clients, grid.lanes, lane, self._picked)

    def show(self, data: RunData | None, cursor: int = 0) -> None:
        """Show a run; a tiered one's clients' part (its tiers have lanes of their own,
        ``TierLanes``), its cursor mapped from the run's. Clients picked and followed stay so
        where the new run has them."""
        self._run = data
        data = data.top if data is not None else None
        self._data = data
        if self._picked is not None:
            self.pick_clients(self._picked)
        followed = self._trace.client if self._trace is not None else None
        self._trace = None
        self.follow(followed)
        self._grid = None
        self._partial = None
        policy = (PolicyLabels(data.policy_state()) if data is not None and any(data.policy_kinds)
                  else None)
        self._policy = policy if policy is not None and policy.present else None
        self._policy_texts = None
        self._time = None
        self.refresh(layout=True)
        self.set_cursor(cursor)

    def align(self, span: float | None, label_width: int = 0) -> None:
        """Share a time axis with other timelines: columns cover ``span`` (None: the run's own
        length) after lane labels at least ``label_width`` wide."""
        if (span, label_width) != (self._span, self._min_label):
            self._span, self._min_label = span, label_width
            self._grid = None
            self._partial = None
            self._geometry_cache = None
            self.refresh()

    def set_legend(self, shown: bool, codes: frozenset[int] | None = None) -> None:
        """Show the legend row or not (stacked timelines share one), explaining ``codes``
        (default: the run's own)."""
        if (shown, codes) != (self._show_legend, self._legend_codes):
            self._show_legend, self._legend_codes = shown, codes
            self._geometry_cache = None
            self.refresh(layout=True)

    def set_density_bounds(self, bounds: tuple[int, ...] | None) -> None:
        """Shade crowded lanes by these bounds (events per cell) rather than the run's own, so
        timelines side by side use one scale."""
        if bounds != self._density_bounds:
            self._density_bounds = bounds
            self.refresh()

    def set_cursor(self, cursor: int, time: float | None = None) -> None:
        """Show events up to ``cursor``; while playing, ``time`` (the playback clock, at or
        after the cursor's event) places the cursor column, so it moves between events too.
        Zoomed in, the shown stretch of time follows the cursor."""
        if self._run is not None:
            cursor = self._run.top_cursor(cursor)
        n = len(self._data) if self._data is not None else 0
        cursor = min(max(cursor, 0), max(n - 1, 0))
        if (cursor, time) != (self._cursor, self._time):
            self._cursor, self._time = cursor, time
            self._follow()
            self.refresh()

    def set_time(self, time: float) -> None:
        """Show every event at or before ``time`` and put the cursor column there (a clock
        shared with other timelines: it may fall before this run's first event or after its
        last)."""
        if self._data is None:
            return
        cursor = int(np.searchsorted(self._data.times, time, side="right")) - 1
        if (cursor, time) != (self._cursor, self._time):
            self._cursor, self._time = cursor, time
            self.refresh()

    def _follow(self) -> None:
        data = self._data
        if data is None or not len(data) or not self._window.zoomed:
            return
        t = self._time if self._time is not None else float(data.times[self._cursor])
        self._window = self._window.following(t, data.total_time)

    def zoom(self, steps: int, around: float) -> TimeWindow:
        """Zoom the time axis in (``steps`` > 0) or out around the time ``around``; 0 shows
        the whole run again. Returns the new window."""
        total = self._data.total_time if self._data is not None else 0.0
        self._window = self._window.zoomed_by(steps, around, total)
        self.refresh()
        return self._window

    def _cursor_columns(self, grid: Grid) -> tuple[int, int]:
        """(column of the cursor's event, column of the cursor line); the event's column is -1
        when the cursor is before the run's first event or left of a zoomed-in window (nothing
        shown has happened yet)."""
        event_col = (min(int(grid.column_of_event[self._cursor]), grid.columns - 1)
                     if self._cursor >= 0 else -1)
        if self._time is None:
            return event_col, max(event_col, 0)
        time_col = min(int((self._time - grid.start) * grid.columns / grid.span),
                       grid.columns - 1)
        return event_col, max(event_col, time_col, 0)

    def on_click(self, event: events.Click) -> None:
        grid, geometry = self.grid, self._geometry()
        offset = event.get_content_offset(self)
        if grid is None or geometry is None or offset is None or self._data is None:
            return
        column = offset.x - geometry[2]
        if 0 <= column < grid.columns:
            # Everything up to the clicked column: its last event, or the last one before it.
            index = max(int(grid.column_start[column + 1]) - 1, 0)
            tiers = self._run.tiers if self._run is not None else None
            if tiers is not None and len(tiers.top_index):  # the run's index of that event
                index = int(tiers.top_index[min(index, len(tiers.top_index) - 1)])
            self.post_message(self.Seek(index))

    # --- geometry ---------------------------------------------------------------------------

    def get_content_height(self, container, viewport, width: int) -> int:
        """A lane per client plus ruler, server lane and legend; when CSS caps the height, lanes
        merge into even ones (``even_lanes``) and the height shrinks to fit them exactly."""
        n = self.n_shown
        cap = self._height_cap()
        if cap is None or n + 2 + int(self._show_legend) <= cap:
            return n + 2 + int(self._show_legend)
        room, legend = rows_for(cap, self._show_legend)
        return (even_lanes(n, room) if room >= 1 else 0) + 2 + int(legend)

    def _height_cap(self) -> int | None:
        """Rows of content CSS allows (``max-height`` less border and padding), if capped."""
        parent, cap = self.parent, self.styles.max_height
        if parent is None or cap is None or not parent.size.height:
            return None
        return int(cap.resolve(parent.size, self.app.size)) - self.styles.gutter.height

    def _rows(self) -> tuple[int, bool]:
        """(lanes available, whether the legend fits) for the current height."""
        return rows_for(self.size.height, self._show_legend)

    def predicted_geometry(self, n_clients: int) -> tuple[int, int] | None:
        """(lanes, columns) a run of ``n_clients`` will get at the current layout, so the worker
        that loads it can bin it in advance: as many rows as lanes plus three, within the
        height CSS allows (``max-height`` of the container)."""
        parent = self.parent
        if parent is None or not self.size.width:
            return None
        styles = self.styles
        cap = styles.max_height
        limit = int(cap.resolve(parent.size, self.app.size)) if cap is not None else 10**6
        gutter = styles.gutter.height  # border and padding (the box includes them)
        height = max(4, min(n_clients + 3 + gutter, limit)) - gutter
        geometry = geometry_for(n_clients, self.size.width, height)
        return geometry[:2] if geometry is not None else None

    def _geometry(self) -> tuple[int, int, int] | None:
        """(lanes, columns, label width), or None when the widget is too small to draw lanes."""
        if self._data is None:
            return None
        key = (id(self._data), self.size, self._min_label,
               None if self._picked is None else self._picked.tobytes())
        if self._geometry_cache is not None and self._geometry_cache[0] == key:
            return self._geometry_cache[1]
        geometry = self._with_state(geometry_for(self.n_shown, self.size.width,
                                                 self.size.height, self._show_legend, self._picked))
        if geometry is not None and geometry[2] < self._min_label:
            lanes, columns, labels = geometry
            columns -= self._min_label - labels
            geometry = (lanes, columns, self._min_label) if columns >= 2 else None
        self._geometry_cache = (key, geometry)
        return geometry

    def _with_state(self, geometry: tuple[int, int, int] | None) -> tuple[int, int, int] | None:
        """The geometry with room for the policy state after the lane labels."""
        if geometry is None or self._policy is None:
            return geometry
        lanes, columns, labels = geometry
        extra = self._policy.width
        return (lanes, columns - extra, labels + extra) if columns - extra >= 2 else None

    def lane_label_width(self) -> int:
        """Cells the lane labels take at the current size (0 before a run is shown)."""
        geometry = None
        if self._data is not None:
            geometry = self._with_state(geometry_for(self.n_shown, self.size.width,
                                                     self.size.height, self._show_legend,
                                                     self._picked))
        return geometry[2] if geometry is not None else 0

    def policy_texts(self, grid: Grid) -> tuple[list[str], str]:
        """The policy state at the cursor beside each lane's label and the server's (blanks
        without policy state); computed once per cursor."""
        policy = self._policy
        if policy is None or self._picked is not None:  # its lanes are the clients in order
            return [""] * grid.lanes, ""
        cached = self._policy_texts
        if cached is None or cached[:2] != (self._cursor, grid.lanes):
            policy.advance(self._cursor)
            cached = self._policy_texts = (self._cursor, grid.lanes,
                                           policy.lane_texts(grid.lanes, grid.per_lane),
                                           policy.server_text())
        return cached[2], cached[3]

    def _partial_column(self, grid: Grid) -> tuple[int, np.ndarray, np.ndarray, int]:
        """Ranks and counts in the cursor's column counting only events up to the cursor."""
        if self._partial is not None and self._partial[0] == self._cursor:
            return self._partial
        assert self._data is not None
        k = self._cursor
        if k < 0:
            empty = np.zeros(grid.lanes, dtype=np.int64)
            self._partial = (k, empty.astype(np.int8), empty, 0)
            return self._partial
        column = int(grid.column_of_event[k])
        if not 0 <= column < grid.columns:  # the event is outside a zoomed-in window
            self._partial = (k, np.zeros(grid.lanes, dtype=np.int8),
                             np.zeros(grid.lanes, dtype=np.int64), 0)
            return self._partial
        start = int(grid.column_start[column])
        lanes = grid.lane_of_event[start:k + 1]
        ranks = self._data.ranks[start:k + 1]
        lane_ranks = np.zeros(grid.lanes, dtype=np.int8)
        on_lane = lanes >= 0
        np.maximum.at(lane_ranks, lanes[on_lane], ranks[on_lane])
        lane_counts = np.bincount(lanes[on_lane], minlength=grid.lanes)
        server = self._data.server_mask[start:k + 1]
        server_rank = int(ranks[server].max()) if server.any() else 0
        self._partial = (k, lane_ranks, lane_counts, server_rank)
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
            return self._legend(grid, width, base)
        return Strip.blank(width, base)

    def _ruler(self, grid: Grid, width: int, label_width: int, base: Style) -> Strip:
        """Round time ticks in the run's time unit (ms, or s for long runs), with a ▼ over the
        cursor's column; a label the ▼ would cut is left out."""
        style = base + self.get_component_rich_style("timeline--ruler")
        assert self._data is not None
        unit, scale = time_scale(grid.start + grid.span, self._data.time_unit)
        cells = [" "] * grid.columns
        count = 5 if grid.columns >= 40 else 3 if grid.columns >= 16 else 2
        _, cursor_col = self._cursor_columns(grid)
        for tick in nice_ticks((grid.start + grid.span) / scale, count, grid.start / scale):
            label = f"{tick:,g}"
            col = min(int((tick * scale - grid.start) * grid.columns / grid.span),
                      grid.columns - 1)
            start = max(0, min(col, grid.columns - len(label)))
            end = start + len(label)
            if start <= cursor_col < end or any(c != " " for c in cells[max(start - 1, 0):end + 1]):
                continue
            cells[start:end] = list(label)
        text = "".join(cells)
        cursor_style = base + Style(bold=True)
        segments = [Segment(unit[:label_width].ljust(label_width), style),
                    Segment(text[:cursor_col], style), Segment("▼", cursor_style),
                    Segment(text[cursor_col + 1:], style)]
        return Strip(segments).adjust_cell_length(width, base)

    def lane_codes(self, grid: Grid, lane: int | None) -> np.ndarray:
        """What each cell of a lane shows up to the cursor column (display codes, see
        ``CELL_GLYPHS``): a client lane (``lane`` index) or the server lane (``None``)."""
        assert self._data is not None
        event_col, cursor_col = self._cursor_columns(grid)
        _, lane_ranks, lane_counts, server_rank = self._partial_column(grid)
        end = cursor_col + 1
        if lane is None:
            row = grid.server[:end].astype(np.int16)
            if event_col >= 0:
                row[event_col] = server_rank
            row[event_col + 1:] = 0  # later columns: nothing has happened there yet
            # shade the server's pauses where it did nothing
            paused = grid.outage[:end] & (row == 0)
            paused[event_col + 1:] = False
            row[paused] = OUTAGE_CODE
            if grid.incident is not None:  # and its incidents, more lightly
                degraded = grid.incident[:end] & (row == 0)
                degraded[event_col + 1:] = False
                row[degraded] = INCIDENT_CODE
            return row
        row = grid.clients[lane, :end].astype(np.int16)
        if event_col >= 0:
            row[event_col] = lane_ranks[lane]
        row[event_col + 1:] = 0
        if grid.density:
            counts = grid.counts[lane, :end].copy()
            if event_col >= 0:
                counts[event_col] = lane_counts[lane]
            counts[event_col + 1:] = 0
            level = grid.density_level(counts, self._density_bounds)
            bars = (row > 0) & (row != GIVE_UP_RANK)  # a give-up keeps its glyph: rare, telling
            row[bars] = DENSITY_BASE + (row[bars] - 1) * DENSITY_LEVELS + level[bars] - 1
        # A wait that began before the cursor column is under way in each column it covers
        # (no event can fall between the cursor's event and the clock).
        row[(row == 0) & grid.waiting[lane, :end]] = WAIT_CODE
        return row

    def _lane(self, grid: Grid, lane: int | None, label_width: int, base: Style) -> Strip:
        """A client lane (``lane`` index) or the server lane (``None``) up to the cursor."""
        assert self._data is not None
        k = self._cursor
        event_col, cursor_col = self._cursor_columns(grid)
        row = self.lane_codes(grid, lane)
        if lane is None:
            label = "server"
            is_current = k >= 0 and bool(self._data.server_mask[k])
        else:
            label = grid.lane_labels[lane]
            is_current = k >= 0 and int(grid.lane_of_event[k]) == lane
        is_current = is_current and event_col == cursor_col
        styles = self._code_styles(base)
        label_style = base + self.get_component_rich_style("timeline--label")
        lane_texts, server_text = self.policy_texts(grid)
        state = server_text if lane is None else lane_texts[lane]
        followed = self._followed_columns(grid, lane, cursor_col)
        if followed is not None:
            label += FOLLOW_MARK
        segments = [Segment(label.ljust(label_width - len(state)), label_style)]
        if state:
            segments += self._state_segments(state, label_style, styles)
        follow = self.get_component_rich_style("timeline--follow")
        segments += self._runs(row[:cursor_col], styles,
                               None if followed is None else followed[:cursor_col], follow)
        cursor = self.get_component_rich_style(
            "timeline--current" if is_current else "timeline--cursor")
        code = int(row[cursor_col])
        # The glyph keeps its event colour; the cursor only changes the cell's background.
        segments.append(Segment(CELL_GLYPHS[code],
                                styles[code] + Style(bgcolor=cursor.bgcolor, bold=cursor.bold)))
        strip = Strip(segments)
        return strip.adjust_cell_length(label_width + grid.columns, base)

    @staticmethod
    def _state_segments(state: str, label_style: Style, styles: list[Style]) -> list[Segment]:
        """A lane's policy state: numbers in the label's colour, a breaker's glyph as the
        breaker mark, a refusal as the denied mark."""
        glyph_style = {BREAKER_GLYPHS[1]: styles[MARK_RANK["breaker"]],
                       BREAKER_GLYPHS[2]: styles[MARK_RANK["breaker"]],
                       REFUSED_GLYPH: styles[MARK_RANK["denied"]]}
        return [Segment(ch, glyph_style.get(ch, label_style)) for ch in state]

    def _followed_columns(self, grid: Grid, lane: int | None, cursor_col: int) -> np.ndarray | None:
        """bool per column up to the cursor's: the followed client's attempts so far, when
        ``lane`` is its lane (None otherwise)."""
        trace = self._trace
        if trace is None or lane is None or self.lane_of_client(trace.client) != lane:
            return None
        marked = np.zeros(cursor_col + 1, dtype=bool)
        columns = grid.column_of_event[trace.up_to(self._cursor)]
        marked[columns[(columns >= 0) & (columns <= cursor_col)]] = True
        return marked

    @staticmethod
    def _runs(row: np.ndarray, styles: list[Style], marked: np.ndarray | None = None,
              mark: Style | None = None) -> list[Segment]:
        """Segments for a row of display codes, one per run of equal codes (and equal
        ``marked``: those cells get the ``mark`` style over their own)."""
        if not len(row):
            return []
        keys = row.astype(np.int32) * 2 + (marked if marked is not None else 0)
        bounds = np.flatnonzero(np.diff(keys)) + 1
        starts = np.concatenate(([0], bounds))
        ends = np.concatenate((bounds, [len(row)]))
        return [Segment(CELL_GLYPHS[int(row[s])] * int(e - s),
                        styles[int(row[s])] + mark if mark is not None and marked is not None
                        and marked[s] else styles[int(row[s])])
                for s, e in zip(starts, ends)]

    def _code_styles(self, base: Style) -> list[Style]:
        """The style of each display code."""
        by_kind = event_styles(palette_for(self.app.theme))
        marks = [base + by_kind[mark.kind] for mark in MARKS]
        muted = base + self.get_component_rich_style("timeline--label")
        return [base, *marks, muted, base + by_kind["backoff"],
                *(style for style in marks for _ in range(DENSITY_LEVELS)), muted]

    def legend_entries(self, width: int) -> list[LegendEntry]:
        """The legend row's entries, fitted to ``width``."""
        if self._data is None:
            return []
        return fit_legend(timeline_legend(self._data, self.grid, self._legend_codes,
                                          self._density_bounds), width)

    def _legend(self, grid: Grid, width: int, base: Style) -> Strip:
        by_kind = event_styles(palette_for(self.app.theme))
        label_style = base + self.get_component_rich_style("timeline--label")
        segments: list[Segment] = []
        for entry in self.legend_entries(width):
            mark = MARKS[MARK_RANK[entry.mark] - 1] if entry.mark else None
            glyph_style = base + by_kind[mark.kind] if mark is not None else label_style
            if entry.mark == "backoff":  # the dot, then the wait's line
                segments.append(Segment(entry.glyph[0], glyph_style))
                segments.append(Segment(entry.glyph[1:] + " ", base + by_kind["backoff"]))
            else:
                segments.append(Segment(entry.glyph + " ", glyph_style))
            segments.append(Segment(f"{entry.label} ", label_style))
        return Strip(segments).adjust_cell_length(width, base)
