"""A recorded run's events, as parallel columns (what the app replays and the events CSV holds)."""

from __future__ import annotations

import numpy as np

from sim.core import events as ev


class History:
    """A run's events in order, as parallel columns (cheap to append, easy to index and slice)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.clients: list[int] = []
        self.packed: list[int] = []

    def __len__(self) -> int:
        return len(self.times)

    def append(self, t: float, c: int, packed: int) -> None:
        self.times.append(t)
        self.clients.append(c)
        self.packed.append(packed)

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
        return np.asarray(self.packed, dtype=np.int64) & ev.CODE_MASK

    def details(self) -> np.ndarray:
        return (np.asarray(self.packed, dtype=np.int64) >> ev.DETAIL_SHIFT) - 1
