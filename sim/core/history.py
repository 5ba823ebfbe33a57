"""A recorded run's events, as parallel columns (what the app replays and the events CSV holds)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sim.core import events as ev


# The call of an event that belongs to no call: a server's event, a breaker's transition, a
# tier's caller (``History.calls``).
NO_CALL = -1


class History:
    """A run's events in order, as parallel columns (cheap to append, easy to index and slice).

    ``calls`` holds each event's call id: the calls of a run are numbered from 0 in the order
    they start, and every client event of a call (its attempts, backoffs, timeouts, its success,
    give-up or denial) carries its number, so one call can be followed when a client has
    several in flight (open arrivals); ``NO_CALL`` elsewhere. None for a history read from an
    events file written before the column existed (``has_calls``)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.clients: list[int] = []
        self.packed: list[int] = []
        self.calls: list[int] | None = []
        # (horizon, bucket width) of a run that keeps series, where its events file says them
        # (``read_events_csv``): a replay then counts the run's own buckets. None otherwise.
        self.clock: tuple[float, float] | None = None

    def __len__(self) -> int:
        return len(self.times)

    @property
    def has_calls(self) -> bool:
        """Whether the events carry their call ids (False: an old events file's, or columns set
        without them)."""
        return self.calls is not None and len(self.calls) == len(self.times)

    def append(self, t: float, c: int, packed: int, call: int = NO_CALL) -> None:
        self.times.append(t)
        self.clients.append(c)
        self.packed.append(packed)
        if self.calls is not None:
            self.calls.append(call)

    def call_column(self) -> np.ndarray | None:
        """Each event's call id as int64, or None when the history has none (``has_calls``)."""
        return np.asarray(self.calls, dtype=np.int64) if self.has_calls else None

    def event(self, i: int) -> tuple[float, int, int, int]:
        """``(time, client, code, detail)`` of the i-th event."""
        code, detail = ev.unpack(self.packed[i])
        return self.times[i], self.clients[i], code, detail

    def rows(self) -> list[tuple[float, int, str, str]]:
        """``(time, client_id, event_type, event_detail)`` rows, as the reference prints them."""
        out = []
        for t, c, p in zip(self.times, self.clients, self.packed):
            code, detail = ev.unpack(p)
            out.append((t, c, ev.EVENT_NAMES[code], ev.format_detail(code, detail)))
        return out

    def codes(self) -> np.ndarray:
        """Each event's code (``sim.core.events``), as int64."""
        return unpack_codes(self.packed)

    def details(self) -> np.ndarray:
        """Each event's detail, ``NO_DETAIL`` where it has none, as int64."""
        return unpack_details(self.packed)

    @classmethod
    def from_columns(cls, times: np.ndarray, clients: np.ndarray, codes: np.ndarray,
                     details: np.ndarray, calls: np.ndarray | None = None) -> History:
        """A history holding these columns (the inverse of ``codes`` and ``details``); without
        ``calls``, one whose events carry no call ids."""
        history = cls()
        history.times = np.asarray(times, dtype=np.float64).tolist()
        history.clients = np.asarray(clients, dtype=np.int64).tolist()
        history.packed = pack_columns(codes, details).tolist()
        history.calls = None if calls is None else np.asarray(calls, dtype=np.int64).tolist()
        return history


def unpack_codes(packed: Sequence[int] | np.ndarray) -> np.ndarray:
    """The codes of packed events, all at once (``events.unpack`` over a column)."""
    return np.asarray(packed, dtype=np.int64) & ev.CODE_MASK


def unpack_details(packed: Sequence[int] | np.ndarray) -> np.ndarray:
    """The details of packed events, all at once (``NO_DETAIL`` where there is none)."""
    return ((np.asarray(packed, dtype=np.int64) >> ev.DETAIL_SHIFT) & ev.DETAIL_MASK) - 1


def unpack_hosts(packed: Sequence[int] | np.ndarray) -> np.ndarray:
    """The fleet host of packed events, all at once (``NO_HOST`` where there is none)."""
    return (np.asarray(packed, dtype=np.int64) >> ev.HOST_SHIFT) - 1


def pack_columns(codes: np.ndarray, details: np.ndarray) -> np.ndarray:
    """Codes and details packed as the engine records them (``events.pack`` over columns)."""
    return np.asarray(codes, dtype=np.int64) | ((np.asarray(details, dtype=np.int64) + 1) << ev.DETAIL_SHIFT)
