"""The event log: every event of the run, one line each, the current one highlighted and
marked, those ahead of the cursor greyed; it scrolls to keep the current event in view.

Focused (Tab or a click), it has a selection of its own that ↑/↓/PgUp/PgDn/Home/End move, and
Enter moves the playback cursor to the selected event; a click on a line does that at once.
A search (``log_search``) highlights what it matched; n/N move the selection between its
matches, and >/< and )/( to the next event of the selected row's type or client, as ``less``
moves its view, not the playback cursor.

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
from ...view.log_filter import LogFilter, next_match
from ...view.log_search import detail_text, next_alike, search_mask, spans
from ...view.marks import CODE_GLYPHS

TIME_WIDTH = 10
CLIENT_WIDTH = 6
NAME_WIDTH = max(len(name) for name in ev.EVENT_NAMES)
# Events of the whole server (client -1) have no client; their detail says what they mean
# (``log_search.SERVER_NOTES``).
WHOLE_SERVER = "—"


TIER_WIDTH = 5  # "  t2 ": a tiered run's rows say which tier (1: the clients and their server)
# A run whose clients have several calls in flight (open arrivals) shows each client event's
# call id after the client (``RunData.shows_calls``): which call a success ends.
CALL_WIDTH = 7


def header(time_unit: str = "ms", tiered: bool = False, calls: bool = False) -> str:
    """The log's column titles, the time column's in the run's unit (``time ms``, ``time tick``);
    a run's whose calls overlap have a call column after the client's, a tiered run's a tier
    column."""
    time = f"time {time_unit}"[:TIME_WIDTH]
    call = f" {'call':>{CALL_WIDTH}}" if calls else ""
    tier = f"{'tier':>{TIER_WIDTH}}" if tiered else ""
    return f"{time:>{TIME_WIDTH}} {'client':>{CLIENT_WIDTH}}{call}{tier}   {'event':<{NAME_WIDTH}} detail"


HEADER = header()


def time_cell(t: float) -> str:
    """An event's time in the ``TIME_WIDTH - 1`` cells after the mark's, with a blank before
    its digits: three decimals while they fit, fewer for longer times (``11999.42``,
    ``123456.8``), so the cursor's mark never runs into them (``▷11999.424`` did). The CSV and
    the detail keep every digit."""
    width = TIME_WIDTH - 1
    for decimals in (3, 2, 1, 0):
        text = f"{t:.{decimals}f}"
        if len(text) < width:
            break
    return f"{text:>{width}}"


SELECTED_MARK = "▶"  # in the selected line's first cell: the selection reads without colour
CURSOR_MARK = "▷"  # in the current event's first cell (the selection's mark wins)
AHEAD_MARGIN = 3  # lines kept in view below the current event, so what comes next shows


class EventLog(ScrollView, can_focus=True):
    """The events of a run (after the filter), following the cursor as it moves."""

    BINDINGS = bindings(LOG_KEYS)
    COMPONENT_CLASSES = {"event-log--current", "event-log--dim", "event-log--selected",
                         "event-log--ahead", "event-log--match"}

    DEFAULT_CSS = """
    EventLog {
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        & > .event-log--current { background: $accent 35%; text-style: bold; }
        & > .event-log--dim { color: $foreground 60%; }
        & > .event-log--selected { background: $primary 45%; }
        & > .event-log--ahead { color: $foreground 45%; }
        & > .event-log--match { background: $warning 60%; color: $text; text-style: bold; }
        &:focus { background-tint: $foreground 4%; }
    }
    """

    class Chosen(Message):
        """The user chose an event of the log (Enter on the selection, or a click)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class Jumped(Message):
        """n/N, >/<, )/(: the selection went to ``found`` (None: there was none that way)
        looking for ``what`` ("match", "codes", "clients") in ``direction`` (1 or -1)."""

        def __init__(self, what: str, direction: int, found: int | None) -> None:
            super().__init__()
            self.what = what
            self.direction = direction
            self.found = found

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
        self._search = ""  # the text searched for ("" no search)
        self._found: np.ndarray | None = None  # events the search matches (bool, whole run)
        self._hits = np.empty(0, dtype=np.intp)  # ...among those listed, in order

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
        """Lines listed: the events of the whole run that pass the filter."""
        if self._data is None or not len(self._data):
            return 0
        return len(self._data) if self._rows is None else len(self._rows)

    @property
    def upto_cursor(self) -> int:
        """Lines listed up to the cursor (the rest are ahead of it, greyed)."""
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
        """Show another run (the filter is kept and re-applied; the search's text is kept and
        highlighted, its matches unknown until ``set_search`` gives them)."""
        self._data = data
        self._cache.clear()
        self._apply_filter()
        self._found = None
        self._apply_search()
        self.set_cursor(cursor)

    @property
    def selected(self) -> int | None:
        """The event the selection is on (None when the log is not focused)."""
        return None if self._selected is None else self.event_index(self._selected)

    @property
    def cursor_line(self) -> int:
        """The line of the last event listed at or before the cursor (0 when none is)."""
        return max(self.upto_cursor - 1, 0)

    def set_cursor(self, cursor: int) -> None:
        """Move the current event to ``cursor`` and scroll so it (or, while the log is
        focused, the selected one) is in view."""
        n = len(self._data) if self._data is not None else 0
        # A selection on the current event follows the cursor.
        following = self._selected is not None and self._selected == self.cursor_line
        self._cursor = min(max(cursor, 0), max(n - 1, 0))
        count = self.line_count
        self.virtual_size = Size(self.scrollable_content_region.width, count)
        if self._selected is not None:
            self._selected = (self.cursor_line if following
                              else min(self._selected, max(count - 1, 0)))
        if self._selected is None:
            self._scroll_to_line(self.cursor_line, AHEAD_MARGIN)
        else:
            self._scroll_to_line(self._selected)
        self.refresh()

    def _scroll_to_line(self, line: int, below: int = 0) -> None:
        """Scroll the least that brings ``line`` into view, with ``below`` lines under it
        when the view is tall enough."""
        height = max(self.scrollable_content_region.height, 1)
        below = min(below, (height - 1) // 3)
        if line < self.scroll_y:
            self.scroll_to(y=max(line, 0), animate=False, immediate=True, force=True)
        elif line + below >= self.scroll_y + height:
            self.scroll_to(y=line + below - height + 1, animate=False, immediate=True, force=True)

    def set_filter(self, log_filter: LogFilter | None) -> None:
        """Show only the events that pass ``log_filter``; None (a filter that could not be
        understood) shows none, rather than leaving the last filter's rows under a new text."""
        self._invalid = log_filter is None
        if log_filter is not None:
            self._filter = log_filter
        self._cache.clear()
        self._apply_filter()
        self._apply_search()
        if self._selected is not None:  # other lines now: select the current event's
            self._selected = self.cursor_line
        self.set_cursor(self._cursor)

    # --- search -----------------------------------------------------------------------------

    @property
    def search(self) -> str:
        return self._search

    @property
    def hits(self) -> np.ndarray:
        """The events listed that the search matches, in order."""
        return self._hits

    @property
    def search_known(self) -> bool:
        """False while the search's matches in this run are not known yet."""
        return not self._search or self._found is not None

    def set_search(self, text: str, found: np.ndarray | None = None) -> None:
        """Highlight ``text`` in the rows (name or detail, any case); "" ends the search.
        ``found``: the events of the run it matches (``log_search.search_mask``, which the
        caller may compute off the UI thread); None: computed here."""
        self._search = text.strip()
        data = self._data
        if found is None and self._search and data is not None:
            found = search_mask(data.codes, data.details, data.clients, self._search)
        self._found = found if self._search else None
        self._apply_search()
        self._cache.clear()
        self.refresh()

    def _apply_search(self) -> None:
        if self._found is None:
            self._hits = np.empty(0, dtype=np.intp)
            return
        found = self._found if self._rows is None else self._found[self._rows]
        listed = np.flatnonzero(found)
        self._hits = listed if self._rows is None else self._rows[listed]

    def hit_number(self, index: int) -> int | None:
        """1 for the first match, ... when event ``index`` is a match; else None."""
        at = int(np.searchsorted(self._hits, index))
        return at + 1 if at < len(self._hits) and self._hits[at] == index else None

    def line_of(self, index: int) -> int:
        """The line of a listed event."""
        return index if self._rows is None else int(np.searchsorted(self._rows, index))

    def select_event(self, index: int) -> None:
        """Put the selection on a listed event (kept when the log then gets the focus)."""
        self._select(self.line_of(index))

    def _origin(self) -> int:
        """Where a jump starts: the selected event, else the current one."""
        selected = self.selected
        return self._cursor if selected is None else selected

    def find(self, direction: int, inclusive: bool = False) -> int | None:
        """Select the next (1) or previous (-1) match from the selection (or the cursor);
        ``inclusive``: the event there counts. Returns the event, None when there is none."""
        origin = self._origin()
        if inclusive and self.hit_number(origin) is not None:
            found: int | None = origin
        else:
            found = next_match(self._hits, origin, direction)
        if found is not None:
            self.select_event(found)
        return found

    def jump_alike(self, column: str, direction: int) -> int | None:
        """Select the next (1) or previous (-1) listed event with the selected row's event
        type (``column`` "codes") or client ("clients"); None when there is none."""
        if self._data is None or not len(self._data):
            return None
        found = next_alike(getattr(self._data, column), self._rows, self._origin(), direction)
        if found is not None:
            self.select_event(found)
        return found

    # --- focus, selection and clicks --------------------------------------------------------

    def on_focus(self) -> None:
        if self._selected is None:  # (a search may have selected its match already)
            self._select(self.cursor_line)

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

    def action_find(self, direction: int) -> None:
        self.post_message(self.Jumped("match", direction, self.find(direction)))

    def action_alike(self, column: str, direction: int) -> None:
        self.post_message(self.Jumped(column, direction, self.jump_alike(column, direction)))

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
        ahead = index > self._cursor
        key = (index, width, current, selected, ahead)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._render_event(index, width, base, current, selected, ahead)
            self._cache[key] = strip
        return strip

    def _empty_line(self, width: int, base: Style) -> Strip:
        """Why no event is listed: the filter is not valid, or nothing up to the cursor passes."""
        if self._invalid:
            text = "  (no events listed: the filter is not valid; see below)"
        else:
            text = f"  (no event of the run matches the filter: {self._filter.text})"
        dim = base + Style(color=self.get_component_rich_style("event-log--dim").color,
                           italic=True)
        return Strip([Segment(text, dim)]).adjust_cell_length(width, base)

    def _render_event(self, index: int, width: int, base: Style, current: bool,
                      selected: bool = False, ahead: bool = False) -> Strip:
        assert self._data is not None
        t, client, code, name, _ = self._data.row(index)
        detail = detail_text(code, int(self._data.details[index]), client)
        hosts = self._data.hosts
        if hosts is not None and hosts[index] >= 0:  # a fleet's: the host it happened at
            detail = f"{detail} host={int(hosts[index])}".lstrip()
        kind = CODE_KINDS[code]
        if selected:
            base = base + self.get_component_rich_style("event-log--selected")
        if current:
            base = base + self.get_component_rich_style("event-log--current")
        if ahead:  # not happened yet at the cursor: every column greyed, the glyph kept
            base = base + Style(color=self.get_component_rich_style("event-log--ahead").color)
        grey = self.get_component_rich_style("event-log--dim").color
        dim = base if ahead else base + Style(color=grey)
        colour = base if ahead else base + event_styles(palette_for(self.app.theme))[kind]
        mark = SELECTED_MARK if selected else CURSOR_MARK if current else " "
        time_text = f"{mark}{time_cell(t)} "
        segments = [
            Segment(time_text, dim),
            Segment(f"{client if client >= 0 else WHOLE_SERVER:>{CLIENT_WIDTH}} ", base),
        ]
        if self._data.shows_calls:
            call = int(self._data.calls[index])
            segments.append(Segment(f"{call if call >= 0 else '':>{CALL_WIDTH}} ", dim))
        if self._data.tiers is not None:
            segments.append(Segment(f"{f't{self._data.tier_at(index)}':>{TIER_WIDTH - 1}} ", dim))
        segments.append(Segment(f" {CODE_GLYPHS[code]} ", colour))
        segments += self._highlighted(f"{name:<{NAME_WIDTH}} ", colour)
        segments += self._highlighted(detail, base)
        return Strip(segments).adjust_cell_length(width, base).simplify()

    def _highlighted(self, text: str, style: Style) -> list[Segment]:
        """``text`` as segments, what the search matched in it highlighted."""
        found = spans(text, self._search) if self._search else []
        if not found:
            return [Segment(text, style)]
        match = style + self.get_component_rich_style("event-log--match")
        segments, at = [], 0
        for start, end in found:
            segments += [Segment(text[at:start], style), Segment(text[start:end], match)]
            at = end
        segments.append(Segment(text[at:], style))
        return [s for s in segments if s.text]
