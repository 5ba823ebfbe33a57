"""The event log's pane: a title that counts the events listed, the column header, the log,
the filter box with the reason a filter is not applied, and the search box with, once searched,
a status line (which match is selected, or that there is none, as ``less`` says it).

It owns the filter's life (typed → applied as it parses, or nothing listed and the reason shown
on lines of its own; closed on a filter that does not parse → the last one that did), the
search's (Enter → the rows matched highlighted, the first match from the cursor selected, the
log focused so n/N go on), and the jumps over the events the filter matches, so the screen only
wires keys to it.
"""

from __future__ import annotations

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.markup import escape
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from ...view.rundata import RunData
from ...view.log_filter import FilterError, next_match, parse_filter
from ...view.log_search import search_mask
from ...view.ticks import DEFAULT_TIME_UNIT
from .event_log import HEADER, EventLog, header
from .filter_input import FilterInput

SEARCH_PLACEHOLDER = "search the rows' event names and details (reject, version=3); Enter finds"
ALIKE_WORDS = {"codes": "event of that type", "clients": "event of that client"}


def log_title(shown: int, upto: int, total: int, matching: int, text: str, valid: bool) -> str:
    """The event log's title: how many events are listed, out of how many.

    ``shown`` of the ``upto`` events up to the cursor pass the filter (the rest of the
    ``matching`` listed are ahead of the cursor), out of the run's ``total``; a filter that
    matches nothing says "0 of N".
    """
    if not valid:
        return "no events listed: the filter typed is not valid"
    if not text:
        return f"event {shown:,} of {total:,}"
    return (f"{shown:,} of {upto:,} events match · {matching:,} of {total:,} in the run · "
            f"filter: {text}")


def search_status(text: str, number: int | None, hits: int, missed: str = "") -> str:
    """The search's status line: ``/text: match 3 of 40`` and ``missed``, why the selection
    did not move, when it did not."""
    if not hits:
        return f"/{text}: no match among the events listed"
    where = f"match {number:,} of {hits:,}" if number is not None else f"{hits:,} matches"
    tail = missed or "n/N next/previous, Enter goes there"
    return f"/{text}: {where} · {tail}"


class LogPane(Vertical):
    """The log with its header, filter box and filter error (ids: log, filter, filter-error)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._error = ""  # why the filter typed is not applied ("" when it is)

    def compose(self) -> ComposeResult:
        yield Static(HEADER, id="log-header")
        yield EventLog(id="log")
        yield FilterInput(id="filter")
        yield Static("", id="filter-error", markup=False)
        yield FilterInput(placeholder=SEARCH_PLACEHOLDER, id="search")
        yield Static("", id="search-status", markup=False)

    @property
    def log(self) -> EventLog:
        return self.query_one(EventLog)

    def show(self, data: RunData | None, cursor: int) -> None:
        self.log.show(data, cursor)
        if self.log.search and data is not None:  # the new run's matches
            self._search(data, self.log.search, select=False)
            self._show_search_status()
        # the time column's title names the run's unit (time ms, time tick)
        self.query_one("#log-header", Static).update(
            header(data.time_unit if data is not None else DEFAULT_TIME_UNIT,
                   data is not None and data.tiers is not None,
                   data is not None and data.shows_calls))
        self.update_title()

    def set_cursor(self, cursor: int) -> None:
        self.log.set_cursor(cursor)
        self.update_title()

    def update_title(self) -> None:
        log = self.log
        data = log.data
        detail = log_title(log.upto_cursor, log.cursor + 1 if data else 0, len(data) if data else 0,
                           log.filtered_total, log.log_filter.text, log.filter_valid)
        self.border_title = f"Event log · {escape(detail)}"

    # --- the filter -------------------------------------------------------------------------

    def open_filter(self) -> None:
        self.add_class("-filtering")
        self.query_one("#filter", FilterInput).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        try:
            log_filter = parse_filter(event.value)
        except FilterError as exc:
            # Nothing is listed under a filter that is not applied, and the reason gets lines
            # of its own (it wraps), not the pane's one-line title.
            self._error = str(exc)
            self.log.set_filter(None)
            self.query_one("#filter-error", Static).update(f"Not applied: {exc}")
        else:
            self._error = ""
            self.log.set_filter(log_filter)
        self._filter_applied()

    def _filter_applied(self) -> None:
        self.query_one("#filter", FilterInput).set_class(bool(self._error), "-invalid")
        self.set_class(bool(self._error), "-filter-invalid")
        self.update_title()
        self._show_search_status()  # the matches listed changed
        self.screen.refresh_bindings()  # f/F: offered with a filter only

    @on(FilterInput.Closed, "#filter")
    def _filter_closed(self, event: FilterInput.Closed) -> None:
        event.stop()
        if self._error:
            # Closed on a filter that does not parse: go back to the last one that did.
            box = self.query_one("#filter", FilterInput)
            kept = self.log.log_filter.text
            self.notify(f"Filter {box.value.strip()!r} not applied: {self._error}. "
                        f"Kept: {kept or 'no filter'}.", severity="warning", markup=False,
                        timeout=6)
            box.value = kept
            self.log.set_filter(parse_filter(kept))
            self._error = ""
            self._filter_applied()
        self.remove_class("-filtering")
        self.screen.set_focus(None)

    # --- free-text search ---------------------------------------------------------------------

    def open_search(self) -> None:
        box = self.query_one("#search", FilterInput)
        box.value = self.log.search
        self.add_class("-searching")
        box.focus()

    @on(FilterInput.Closed, "#search")
    def _search_closed(self, event: FilterInput.Closed) -> None:
        """Enter searches (from the cursor, as ``less`` from the top of its page) and gives the
        log the focus so n/N go on; Escape keeps the last search."""
        event.stop()
        self.remove_class("-searching")
        log = self.log
        text = event.box.value.strip()
        if not event.submitted or not text or log.data is None:
            if event.submitted:
                log.set_search("")
                self._show_search_status()
            self.screen.set_focus(None)
            return
        self._search(log.data, text, select=True)
        self._set_status(f"/{text}: searching…")
        log.focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="log-search")
    def _search(self, data: RunData, text: str, select: bool) -> None:
        """The run's matches, off the UI thread (half a second over a million events with
        many distinct details), then shown: ``select``, the first from the cursor."""
        found = search_mask(data.codes, data.details, data.clients, text)
        if not get_current_worker().is_cancelled:  # (a newer search replaced this one)
            self.app.call_from_thread(self._searched, data, text, found, select)

    def _searched(self, data: RunData, text: str, found: np.ndarray, select: bool) -> None:
        log = self.log
        if log.data is not data:  # another run came meanwhile (it searches for itself)
            return
        log.set_search(text, found)
        if select and log.find(1, inclusive=True) is None:  # none from here on: the last before
            log.find(-1)
        self._show_search_status()

    @on(EventLog.Jumped)
    def _jumped(self, event: EventLog.Jumped) -> None:
        event.stop()
        where = "after" if event.direction > 0 else "before"
        if event.found is not None:
            self._show_search_status()
        elif event.what == "match":
            self._show_search_status(f"no match {where} this event")
        else:
            self._show_search_status(f"no {ALIKE_WORDS[event.what]} {where} this one is listed")

    def _show_search_status(self, missed: str = "") -> None:
        """The status line under the log: the search's, or a jump that found nothing."""
        log = self.log
        if log.search and not log.search_known:
            text = f"/{log.search}: searching…"
        elif log.search:
            selected = log.selected
            number = None if selected is None else log.hit_number(selected)
            text = search_status(log.search, number, len(log.hits), missed)
        else:
            text = missed
        self._set_status(text)

    def _set_status(self, text: str) -> None:
        self.query_one("#search-status", Static).update(text)
        self.set_class(bool(text), "-search-status")

    # --- jumps over the filter's events ------------------------------------------------------

    @property
    def can_find(self) -> bool:
        """True when a valid filter is set: there are events to jump between."""
        return self.log.matching is not None

    def find(self, direction: int) -> int | None:
        """The next (1) or previous (-1) event from the cursor that the filter matches; None
        (and a notification saying why) when there is none."""
        log = self.log
        if log.data is None or log.matching is None:
            self.explain_find()
            return None
        found = next_match(log.matching, log.cursor, direction)
        if found is None:
            where = "after" if direction > 0 else "before"
            self.notify(f"No event {where} the cursor matches the filter "
                        f"{log.log_filter.text!r}.", timeout=3)
        return found

    def explain_find(self) -> None:
        if not self.log.filter_valid:
            self.notify("The filter typed is not valid: fix it (&) to find its events.",
                        severity="warning", timeout=4)
        else:
            self.notify("Set a filter first (&, e.g. give_up or 3 reject): f and F then jump "
                        "to the next and previous event it matches.", timeout=5)
