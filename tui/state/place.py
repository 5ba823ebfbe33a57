"""Where the user is in a run, kept across runs: a simulated time, and which of the events at
exactly that time.

Switching strategy, repetition, client count or simulation shows the new run at the same
place: its last event at or before that time. The place is set by the user's moves (steps,
seeks, playback) and not by the switch itself, so going to a shorter run and back returns to
the same event rather than to the shorter run's end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Place:
    """A simulated ``time``; ``among`` picks the event among those at exactly that time (0 =
    the first), None the last one at or before it (the playback clock's place)."""

    time: float
    among: int | None = None

    @classmethod
    def of_event(cls, times: np.ndarray, index: int) -> Place:
        """The place of event ``index``."""
        t = float(times[index])
        return cls(t, index - int(np.searchsorted(times, t, side="left")))

    def index_in(self, times: np.ndarray) -> int:
        """The event of a run (``times`` sorted) at this place: the ``among``-th event at
        exactly ``time`` when there are that many, else the last one at or before it (the
        first event when ``time`` precedes them all)."""
        first = int(np.searchsorted(times, self.time, side="left"))
        last = int(np.searchsorted(times, self.time, side="right")) - 1
        if self.among is not None and last >= first:
            return min(first + self.among, last)
        return max(last, 0)
