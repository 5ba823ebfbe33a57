"""Free-text search over the event log's rows, and the jumps between rows that share an event
type or a client: numpy over the whole run, no loop over its events.

A row reads ``name detail``; the search matches either part, ignoring case. Details repeat
(a run of a million events has a few thousand distinct ``(type, detail)`` pairs), so each
distinct pair is formatted and tested once and the answer spread back over the events.
"""

from __future__ import annotations

import numpy as np

from sim.core import events as ev

# Events of the whole server (client -1) with no detail of their own say what they mean.
SERVER_NOTES: dict[int, str] = {ev.SERVER_PAUSES: "outage: the server stops",
                                ev.SERVER_RESUMES: "outage over: the server resumes"}


def detail_text(code: int, detail: int, client: int) -> str:
    """The detail column of an event's row."""
    text = ev.format_detail(code, detail)
    return text or (SERVER_NOTES.get(code, "") if client < 0 else "")


def search_mask(codes: np.ndarray, details: np.ndarray, clients: np.ndarray,
                text: str) -> np.ndarray:
    """True for the events whose name or detail contains ``text`` (any case)."""
    needle = text.strip().lower()
    if not needle or not len(codes):
        return np.zeros(len(codes), dtype=bool)
    server = (clients < 0).astype(np.int64)
    keys = np.stack([codes.astype(np.int64), details.astype(np.int64), server], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    hit = np.array([needle in ev.EVENT_NAMES[code].lower()
                    or needle in detail_text(int(code), int(detail), -int(srv)).lower()
                    for code, detail, srv in unique], dtype=bool)
    return hit[inverse.reshape(-1)]


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
