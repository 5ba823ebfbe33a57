"""The event log's filter: a short text → a boolean mask over the run's events (numpy, no loops).

Syntax, tokens separated by spaces or commas:
- client ids: ``7``, ``c7``, ranges ``10-19``;
- event types: a kind (``request``, ``backoff``, ``success``, ``failure``, ``give_up``,
  ``server``) or any part of an event name (``reject``, ``commits``, ``version``).
- tiers (a tiered run): ``t2`` (the events of tier 2 and its callers), ``t1`` (the clients').
Clients are OR-ed, types are OR-ed, tiers are OR-ed, and the groups AND-ed: ``3 5 reject``
shows the rejections of clients 3 and 5, ``t3 reject`` tier 3's rejections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from sim.core import events as ev
from sim.export.palette import CODE_KINDS, KIND_GIVE_UP

_CLIENT = re.compile(r"^c?(\d+)(?:-(\d+))?$")
_TIER = re.compile(r"^t(\d+)$")


class FilterError(ValueError):
    """A filter text that cannot be understood; the message says which token and why."""


@dataclass(frozen=True)
class LogFilter:
    """Which clients and which event codes to show (empty means "all")."""

    text: str = ""
    client_ranges: tuple[tuple[int, int], ...] = ()
    codes: frozenset[int] = frozenset()
    tiers: frozenset[int] = frozenset()

    @property
    def active(self) -> bool:
        return bool(self.client_ranges or self.codes or self.tiers)

    def mask(self, clients: np.ndarray, codes: np.ndarray,
             tiers: np.ndarray | None = None) -> np.ndarray | None:
        """Boolean mask of the events that pass, or None when everything passes; ``tiers``:
        each event's tier (a tiered run), else every event is tier 1's."""
        if not self.active:
            return None
        keep = np.ones(len(clients), dtype=bool)
        if self.client_ranges:
            top = max(int(clients.max()) if len(clients) else 0,
                      max(hi for _, hi in self.client_ranges)) + 1
            allowed = np.zeros(top, dtype=bool)
            for lo, hi in self.client_ranges:
                allowed[lo:hi + 1] = True
            # Server-only events (client -1, e.g. an outage) match no client id.
            keep &= allowed[np.maximum(clients, 0)] & (clients >= 0)
        if self.codes:
            allowed_codes = np.zeros(len(ev.EVENT_NAMES), dtype=bool)
            allowed_codes[list(self.codes)] = True
            keep &= allowed_codes[codes]
        if self.tiers:
            if tiers is None:
                keep &= 1 in self.tiers
            else:
                keep &= np.isin(tiers, list(self.tiers))
        return keep


def _codes_for(word: str) -> set[int]:
    word = word.lower().replace("-", "_")
    if word in ("giveup", "gives_up"):
        word = KIND_GIVE_UP
    by_kind = {code for code, kind in CODE_KINDS.items() if kind == word}
    if by_kind:
        return by_kind
    return {code for code, name in enumerate(ev.EVENT_NAMES) if word in name}


def parse_filter(text: str) -> LogFilter:
    """Parse a filter text; raise FilterError naming the token that is not understood."""
    ranges: list[tuple[int, int]] = []
    codes: set[int] = set()
    tiers: set[int] = set()
    for token in re.split(r"[\s,]+", text.strip()):
        if not token:
            continue
        match = _CLIENT.match(token.lower())
        if match:
            lo = int(match.group(1))
            hi = int(match.group(2)) if match.group(2) else lo
            if hi < lo:
                raise FilterError(f"client range {token!r} runs backwards: write {hi}-{lo}")
            ranges.append((lo, hi))
            continue
        tier = _TIER.match(token.lower())
        if tier:
            tiers.add(int(tier.group(1)))
            continue
        found = _codes_for(token)
        if not found:
            raise FilterError(f"{token!r} is neither a client id (7, 10-19) nor an event type "
                              "(request, backoff, success, failure, give_up, server, reject…)")
        codes |= found
    return LogFilter(text.strip(), tuple(ranges), frozenset(codes), frozenset(tiers))


def next_match(matching: np.ndarray, cursor: int, direction: int) -> int | None:
    """The first event of ``matching`` (sorted event indices) after ``cursor`` (``direction``
    1) or the last one before it (-1); None when there is none that way."""
    if direction > 0:
        at = int(np.searchsorted(matching, cursor, side="right"))
        return int(matching[at]) if at < len(matching) else None
    at = int(np.searchsorted(matching, cursor, side="left")) - 1
    return int(matching[at]) if at >= 0 else None
