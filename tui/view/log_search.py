"""Free-text search over the event log's rows, and the jumps between rows that share an event
type or a client: numpy over the whole run, no loop over its events.

A row reads ``name detail``; the search matches either part, ignoring case. Details repeat
(a run of a million events has a few thousand distinct details per event type), so each
distinct one is formatted and tested once and the answer spread back over the events.
"""

from __future__ import annotations

import numpy as np

from sim.core import events as ev

# Events of the whole server (client -1) with no detail of their own say what they mean.
SERVER_NOTES: dict[int, str] = {ev.SERVER_PAUSES: "outage: the server stops",
                                ev.SERVER_RESUMES: "outage over: the server resumes"}


def detail_text(code: int, detail: int, client: int) -> str:
    """The detail column of an event's row."""
    text = ev.shown_detail(code, detail)  # attempt=3 (retry 2): attempts and retries both
    return text or (SERVER_NOTES.get(code, "") if client < 0 else "")


def search_mask(codes: np.ndarray, details: np.ndarray, clients: np.ndarray,
                text: str) -> np.ndarray:
    """True for the events whose name or detail contains ``text`` (any case)."""
    needle = text.strip().lower()
    hit = np.zeros(len(codes), dtype=bool)
    if not needle or not len(codes):
        return hit
    for code in np.unique(codes).tolist():
        of_code = codes == code
        if needle in ev.EVENT_NAMES[code].lower():
            hit |= of_code
            continue
        values, inverse = np.unique(details[of_code], return_inverse=True)
        found = np.array([needle in ev.shown_detail(code, value).lower()
                          for value in values.tolist()], dtype=bool)
        hit[of_code] = found[inverse.reshape(-1)]
        note = SERVER_NOTES.get(code)
        if note is not None and needle in note.lower():  # the whole server's, with no detail
            hit |= of_code & (clients < 0) & (details == ev.NO_DETAIL)
    return hit


def spans(text: str, needle: str) -> list[tuple[int, int]]:
    """Where ``needle`` occurs in ``text`` (any case), as (start, end) pairs, left to right."""
    needle = needle.strip().lower()
    found: list[tuple[int, int]] = []
    if not needle:
        return found
    haystack = text.lower()
    at = haystack.find(needle)
    while at >= 0:
        found.append((at, at + len(needle)))
        at = haystack.find(needle, at + len(needle))
    return found


def next_alike(values: np.ndarray, rows: np.ndarray | None, index: int,
               direction: int) -> int | None:
    """The next (``direction`` 1) or previous (-1) event listed (``rows``: the event indices
    the filter passes, None all) whose value in ``values`` is ``values[index]``; None if none."""
    want = values[index]
    listed = np.arange(len(values)) if rows is None else rows
    at = int(np.searchsorted(listed, index, side="right" if direction > 0 else "left"))
    part = listed[at:] if direction > 0 else listed[:at][::-1]
    same = values[part] == want
    if not same.any():
        return None
    return int(part[int(np.argmax(same))])
