"""The event log: every event up to the cursor, one line each, the current one highlighted.

Focused (Tab or a click), it has a selection of its own that ↑/↓/PgUp/PgDn/Home/End move, and
Enter moves the playback cursor to the selected event; a click on a line does that at once.

Built on Textual's line API like toolong: a ``ScrollView`` whose ``virtual_size`` is the number
of lines, ``render_line`` that builds only the visible lines, and an LRU cache of rendered strips.
A filter is a numpy mask turned into the indices of the events that pass, so a step or a filter
over a million events costs a ``searchsorted``, not a loop.
"""

from __future__ import annotations

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from sim.core import events as ev

from ...keys import LOG_KEYS, bindings
from ...view.rundata import RunData
from ...theme import CODE_KINDS, event_styles, palette_for
from ...view.log_filter import LogFilter
from ...view.marks import CODE_GLYPHS

TIME_WIDTH = 10
CLIENT_WIDTH = 6
NAME_WIDTH = max(len(name) for name in ev.EVENT_NAMES)
# Events of the whole server (client -1) have no client; their detail says what they mean.
WHOLE_SERVER = "—"
SERVER_NOTES: dict[int, str] = {ev.SERVER_PAUSES: "outage: the server stops",
                                ev.SERVER_RESUMES: "outage over: the server resumes"}


TIER_WIDTH = 5  # "  t2 ": a tiered run's rows say which tier (1: the clients and their server)


def header(time_unit: str = "ms", tiered: bool = False) -> str:
    """The log's column titles, the time column's in the run's unit (``time ms``, ``time tick``);
    a tiered run's have a tier column after the client's."""
    time = f"time {time_unit}"[:TIME_WIDTH]
    tier = f"{'tier':>{TIER_WIDTH}}" if tiered else ""
    return f"{time:>{TIME_WIDTH}} {'client':>{CLIENT_WIDTH}}{tier}   {'event':<{NAME_WIDTH}} detail"


HEADER = header()


SELECTED_MARK = "▶"  # in the selected line's first cell: the selection reads without colour


class EventLog(ScrollView, can_focus=True):
    """Events ``0..cursor`` of a run (after the filter), following the cursor as it moves."""

    BINDINGS = bindings(LOG_KEYS)
    COMPONENT_CLASSES = {"event-log--current", "event-log--dim", "event-log--selected"}

    DEFAULT_CSS = """
    EventLog {
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        & > .event-log--current { background: $accent 35%; text-style: bold; }
        & > .event-log--dim { color: $foreground 60%; }
        & > .event-log--selected { background: $primary 45%; }
        &:focus { background-tint: $foreground 4%; }
    }
    """

    class Chosen(Message):
        """The user chose an event of the log (Enter on the selection, or a click)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._data: RunData | None = None
        self._cursor = 0
        self._filter = LogFilter()
        self._rows: np.ndarray | None = None  # indices of the events that pass; None = all
        self._invalid = False  # the filter typed is not valid: nothing passes
        self._cache: LRUCache[tuple, Strip] = LRUCache(1024)
        self._selected: int | None = None  # line of the selection (while focused)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._restyle())

    # --- inputs -----------------------------------------------------------------------------

    @property
    def data(self) -> RunData | None:
        return self._data

    @property
    def cursor(self) -> int:
        return self._cursor

    @property
    def log_filter(self) -> LogFilter:
        return self._filter

    @property
    def line_count(self) -> int:
        """Lines shown: the events up to the cursor that pass the filter."""
        if self._data is None or not len(self._data):
            return 0
        if self._rows is None:
            return self._cursor + 1
        return int(np.searchsorted(self._rows, self._cursor, side="right"))

    @property
    def filtered_total(self) -> int:
        """Events of the whole run that pass the filter."""
        if self._data is None:
            return 0
        return len(self._data) if self._rows is None else len(self._rows)

    @property
    def filter_valid(self) -> bool:
        """False while the filter typed cannot be understood (the log then shows nothing)."""
        return not self._invalid

    @property
    def matching(self) -> np.ndarray | None:
        """Indices of the events of the whole run that pass the filter; None: every event."""
        return self._rows

    def show(self, data: RunData | None, cursor: int = 0) -> None:
        """Show another run (the filter is kept and re-applied)."""
        self._data = data
        self._cache.clear()
        self._apply_filter()
        self.set_cursor(cursor)

    @property
    def selected(self) -> int | None:
        """The event the selection is on (None when the log is not focused)."""
        return None if self._selected is None else self.event_index(self._selected)

    def set_cursor(self, cursor: int) -> None:
        """Show events up to ``cursor`` and scroll so the current event (or, while the log is
        focused, the selected one) is in view."""
        n = len(self._data) if self._data is not None else 0
        # A selection on the last line (the current event) follows the cursor, like a tail.
        at_end = self._selected is not None and self._selected >= self.line_count - 1
        self._cursor = min(max(cursor, 0), max(n - 1, 0))
        count = self.line_count
        self.virtual_size = Size(self.scrollable_content_region.width, count)
        if self._selected is not None:
            self._selected = max(count - 1, 0) if at_end else min(self._selected, max(count - 1, 0))
        self._scroll_to_line(count - 1 if self._selected is None else self._selected)
        self.refresh()

    def _scroll_to_line(self, line: int) -> None:
        """Scroll the least that brings ``line`` into view."""
        height = max(self.scrollable_content_region.height, 1)
        if line < self.scroll_y:
            self.scroll_to(y=max(line, 0), animate=False, immediate=True, force=True)
        elif line >= self.scroll_y + height:
            self.scroll_to(y=line - height + 1, animate=False, immediate=True, force=True)

    def set_filter(self, log_filter: LogFilter | None) -> None:
        """Show only the events that pass ``log_filter``; None (a filter that could not be
        understood) shows none, rather than leaving the last filter's rows under a new text."""
        self._invalid = log_filter is None
        if log_filter is not None:
            self._filter = log_filter
        self._cache.clear()
        self._apply_filter()
        if self._selected is not None:  # other lines now: select the current event's
            self._selected = self.line_count - 1
        self.set_cursor(self._cursor)

    # --- focus, selection and clicks --------------------------------------------------------

    def on_focus(self) -> None:
        self._select(self.line_count - 1)

    def on_blur(self) -> None:
        self._selected = None
        self.refresh()

    def _select(self, line: int) -> None:
        self._selected = min(max(line, 0), max(self.line_count - 1, 0))
        self._scroll_to_line(self._selected)
        self.refresh()

    def action_select(self, lines: int) -> None:
        self._select((self._selected or 0) + lines)

    def action_select_page(self, pages: int) -> None:
        self._select((self._selected or 0) + pages * max(self.scrollable_content_region.height, 1))

    def action_select_first(self) -> None:
        self._select(0)

    def action_select_last(self) -> None:
        self._select(self.line_count - 1)

    def action_choose(self) -> None:
        index = self.selected
        if index is not None:
            self.post_message(self.Chosen(index))

    def action_leave(self) -> None:
        self.screen.set_focus(None)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        line = int(self.scroll_offset.y) + offset.y
        index = self.event_index(line)
        if index is not None:
            self._select(line)
            self.post_message(self.Chosen(index))

    def _apply_filter(self) -> None:
        data = self._data
        if self._invalid:
            self._rows = np.empty(0, dtype=np.intp)
            return
        mask = (None if data is None else
                self._filter.mask(data.clients, data.codes,
                                  data.tiers.tier if data.tiers is not None else None))
        self._rows = None if mask is None else np.flatnonzero(mask)

    def _restyle(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_resize(self) -> None:
        self._cache.clear()
        self.set_cursor(self._cursor)

    # --- rendering --------------------------------------------------------------------------

    def event_index(self, line: int) -> int | None:
        """The event shown on ``line`` (0 = first line of the log), None past the end."""
        if line < 0 or line >= self.line_count:
            return None
        return line if self._rows is None else int(self._rows[line])

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        line = int(self.scroll_offset.y) + y
        index = self.event_index(line)
        if index is None:
            if line == 0 and self._data is not None and len(self._data):
                return self._empty_line(width, base)
            return Strip.blank(width, base)
        current = index == self._cursor
        selected = line == self._selected
        key = (index, width, current, selected)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_event(index, width, base, current, selected)
            self._cache[key] = strip
        return strip

    def _empty_line(self, width: int, base: Style) -> Strip:
        """Why no event is listed: the filter is not valid, or nothing up to the cursor passes."""
        if self._invalid:
            text = "  (no events listed: the filter is not valid; see below)"
        else:
            text = f"  (no event up to the cursor matches the filter: {self._filter.text})"
        dim = base + Style(color=self.get_component_rich_style("event-log--dim").color,
                           italic=True)
        return Strip([Segment(text, dim)]).adjust_cell_length(width, base)

    def _render_event(self, index: int, width: int, base: Style, current: bool,
                      selected: bool = False) -> Strip:
        assert self._data is not None
        t, client, code, name, detail = self._data.row(index)
        kind = CODE_KINDS[code]
        if client < 0:
            detail = detail or SERVER_NOTES.get(code, "")
        if selected:
            base = base + self.get_component_rich_style("event-log--selected")
        if current:
            base = base + self.get_component_rich_style("event-log--current")
        dim = base + Style(color=self.get_component_rich_style("event-log--dim").color)
        colour = base + event_styles(palette_for(self.app.theme))[kind]
        time_text = f"{t:>{TIME_WIDTH}.3f} "
        if selected and time_text[0] == " ":  # (times of 100 s and more fill the column)
            time_text = SELECTED_MARK + time_text[1:]
        segments = [
            Segment(time_text, dim),
            Segment(f"{client if client >= 0 else WHOLE_SERVER:>{CLIENT_WIDTH}} ", base),
        ]
        if self._data.tiers is not None:
            segments.append(Segment(f"{f't{self._data.tier_at(index)}':>{TIER_WIDTH - 1}} ", dim))
        segments += [
            Segment(f" {CODE_GLYPHS[code]} {name:<{NAME_WIDTH}} ", colour),
            Segment(detail, base),
        ]
        return Strip(segments).adjust_cell_length(width, base).simplify()
