"""The tiers' lane groups under the timeline (issue 21): a group per tier below the first, on
the timeline's time axis, folded to one lane (every event of the tier) or unfolded to the tier's
server lane and a few lanes of its callers (the workers of the tier above).

``k`` folds or unfolds every tier; a click on a tier's rows folds or unfolds that tier. The
cells are binned like the timeline's (``timeline_grid``: a cell shows its most telling event,
crowded lanes shade by count), with the timeline's columns and zoom read from it at each
frame, so the two always line up. Shown for tiered runs only.
"""

from __future__ import annotations

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.strip import Strip
from textual.widget import Widget

from ...theme import event_styles, palette_for
from ...view.marks import MARKS
from ...view.rundata import RunData, part_cursor
from ...view.tier_rows import TIER_LANES, TierGroup, TierRow, caller_labels, tier_rows
from ...view.timeline_grid import DENSITY_LEVELS, Grid, build_grid, even_lanes
from .timeline import (CELL_GLYPHS, DENSITY_BASE, GIVE_UP_RANK, INCIDENT_CODE, OUTAGE_CODE,
                       WAIT_CODE, Timeline)


class TierLanes(Widget, can_focus=False):
    """Each tier's lanes up to the cursor, aligned with ``timeline``'s columns."""

    COMPONENT_CLASSES = {"tier-lanes--label", "tier-lanes--cursor"}

    DEFAULT_CSS = """
    TierLanes {
        height: auto;
        max-height: 25%;
        & > .tier-lanes--label { color: $foreground 60%; }
        & > .tier-lanes--cursor { background: $primary 25%; }
    }
    """

    def __init__(self, timeline: Timeline, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._timeline = timeline
        self._run: RunData | None = None
        self._cursor = 0
        self._time: float | None = None
        self._unfolded: frozenset[int] = frozenset()
        self._grids: dict[tuple, Grid] = {}

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.refresh())

    # --- inputs -----------------------------------------------------------------------------

    @property
    def tiered(self) -> bool:
        return self._run is not None and self._run.tiers is not None

    @property
    def unfolded(self) -> frozenset[int]:
        return self._unfolded

    def show(self, run: RunData | None, cursor: int = 0) -> None:
        self._run = run
        self._grids = {}
        self.display = self.tiered
        self.refresh(layout=True)
        self.set_cursor(cursor)

    def set_cursor(self, cursor: int, time: float | None = None) -> None:
        self._cursor, self._time = cursor, time
        self.refresh()

    def toggle(self, tier: int | None = None) -> None:
        """Fold or unfold ``tier``'s group; None: unfold every tier, or fold them all when one
        is unfolded already."""
        if not self.tiered:
            return
        assert self._run is not None and self._run.tiers is not None
        every = frozenset(g.tier for g in self._run.tiers.groups)
        if tier is None:
            self._unfolded = frozenset() if self._unfolded else every
        else:
            self._unfolded = self._unfolded ^ {tier}
        self.refresh(layout=True)

    def label_width(self) -> int:
        """Cells the lane labels need (the timeline's are widened to match)."""
        if not self.tiered:
            return 0
        assert self._run is not None and self._run.tiers is not None
        texts = [f"▾ t{g.tier} srv" for g in self._run.tiers.groups]
        for group in self._run.tiers.groups:  # at every number of lanes the height may allow
            for lanes in range(1, TIER_LANES + 1):
                texts += caller_labels(group, even_lanes(max(len(group.ids), 1), lanes))
        return max(map(len, texts)) + 1

    # --- rows -------------------------------------------------------------------------------

    def _lanes(self, group: TierGroup) -> int:
        """Caller lanes of an unfolded tier: up to ``TIER_LANES``, fewer when the rows CSS
        allows (``max-height``) would not hold every unfolded tier's."""
        room = TIER_LANES
        cap = self._height_cap()
        if cap is not None and self._run is not None and self._run.tiers is not None:
            heads = len(self._run.tiers.groups)
            room = min(room, max(1, (cap - heads) // max(len(self._unfolded), 1)))
        return even_lanes(max(len(group.ids), 1), room)

    def _height_cap(self) -> int | None:
        """Rows CSS allows (``max-height`` less border and padding), if capped."""
        parent, cap = self.parent, self.styles.max_height
        if parent is None or cap is None or not parent.size.height:
            return None
        return int(cap.resolve(parent.size, self.app.size)) - self.styles.gutter.height

    def rows(self) -> list[TierRow]:
        if not self.tiered:
            return []
        assert self._run is not None
        lanes = {g.tier: self._lanes(g) for g in self._run.tiers.groups}  # type: ignore[union-attr]
        return tier_rows(self._run.tiers, self._unfolded, lanes)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self.rows())

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        rows = self.rows()
        if offset is not None and 0 <= offset.y < len(rows):
            self.toggle(rows[offset.y].group.tier)

    def _frame(self) -> tuple[int, Grid] | None:
        """(label width, the timeline's grid): where the columns are and what time they cover."""
        grid = self._timeline.grid
        if grid is None:
            return None
        return self._timeline.content_size.width - grid.columns, grid

    def _grid(self, row: TierRow, frame: Grid) -> Grid:
        lanes = 1 if row.folded else self._lanes(row.group)
        window = (frame.start, frame.start + frame.span)
        key = (row.group.tier, lanes, frame.columns, window)
        grid = self._grids.get(key)
        if grid is None:
            if len(self._grids) > 16:
                self._grids.clear()
            grid = self._grids[key] = build_grid(row.group.run, lanes, frame.columns, window)
        return grid

    def row_codes(self, row: TierRow, grid: Grid) -> tuple[np.ndarray, int]:
        """What each cell of ``row`` shows up to the cursor (display codes, ``CELL_GLYPHS``),
        and the cursor's column."""
        group = row.group
        k = part_cursor(group.index, self._cursor)
        columns = grid.columns
        event_col = min(int(grid.column_of_event[k]), columns - 1) if k >= 0 else -1
        cursor_col = max(event_col, 0)
        if self._time is not None:
            cursor_col = max(cursor_col, min(int((self._time - grid.start) * columns / grid.span),
                                             columns - 1))
        end = cursor_col + 1
        data = group.run
        head = row.lane is None and not row.folded
        lane = 0 if row.lane is None else row.lane
        row_codes = (grid.server if head else grid.clients[lane])[:end].astype(np.int16)
        counts = None if head else grid.counts[lane, :end].copy()
        if event_col >= 0:
            first = int(grid.column_start[event_col])
            ranks = data.ranks[first:k + 1]
            on = data.server_mask[first:k + 1] if head else grid.lane_of_event[first:k + 1] == lane
            row_codes[event_col] = int(ranks[on].max()) if on.any() else 0
            if counts is not None:
                counts[event_col] = int(on.sum())
        row_codes[event_col + 1:] = 0
        if counts is not None and grid.density:
            counts[event_col + 1:] = 0
            level = grid.density_level(counts)
            bars = (row_codes > 0) & (row_codes != GIVE_UP_RANK)
            row_codes[bars] = DENSITY_BASE + (row_codes[bars] - 1) * DENSITY_LEVELS + level[bars] - 1
        if counts is not None:
            waiting = grid.waiting[lane, :end].copy()
            waiting[event_col + 1:] = False
            row_codes[(row_codes == 0) & waiting] = WAIT_CODE
        if row.lane is None:  # the tier's pauses and incidents shade its head row
            quiet = row_codes == 0
            quiet[event_col + 1:] = False
            row_codes[quiet & grid.outage[:end]] = OUTAGE_CODE
            if grid.incident is not None:
                row_codes[quiet & grid.incident[:end] & (row_codes == 0)] = INCIDENT_CODE
        return row_codes, cursor_col

    # --- rendering --------------------------------------------------------------------------

    def _styles(self, base: Style) -> list[Style]:
        by_kind = event_styles(palette_for(self.app.theme))
        marks = [base + by_kind[mark.kind] for mark in MARKS]
        muted = base + self.get_component_rich_style("tier-lanes--label")
        return [base, *marks, muted, base + by_kind["backoff"],
                *(style for style in marks for _ in range(DENSITY_LEVELS)), muted]

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        rows = self.rows()
        frame = self._frame()
        if y >= len(rows) or frame is None:
            return Strip.blank(width, base)
        label_width, timeline_grid = frame
        row = rows[y]
        grid = self._grid(row, timeline_grid)
        labels = caller_labels(row.group, grid.lanes) if row.lane is not None else ()
        codes, cursor_col = self.row_codes(row, grid)
        styles = self._styles(base)
        label_style = base + self.get_component_rich_style("tier-lanes--label")
        segments = [Segment(row.label(labels)[:label_width - 1].ljust(label_width), label_style)]
        body = codes[:cursor_col]
        if len(body):
            bounds = np.flatnonzero(np.diff(body)) + 1
            starts = np.concatenate(([0], bounds))
            ends = np.concatenate((bounds, [len(body)]))
            segments += [Segment(CELL_GLYPHS[int(body[s])] * int(e - s), styles[int(body[s])])
                         for s, e in zip(starts, ends)]
        cursor = self.get_component_rich_style("tier-lanes--cursor")
        code = int(codes[cursor_col])
        segments.append(Segment(CELL_GLYPHS[code], styles[code] + Style(bgcolor=cursor.bgcolor)))
        return Strip(segments).adjust_cell_length(width, base)
