"""A recorded run's path through the phase portrait's plane: (work at the server, calls in
backoff) after each event, counted from the events alone.

- work: each request the server takes (``server_accepts``, ``server_queues``) adds one; each
  that leaves it (``server_completes``, ``server_drops``) takes one away. Requests held at the
  door of a stopped server are not at it until the resume lets them in.
- orbit: each ``client_backs_off`` adds a call waiting to retry; each retry sent
  (``client_requests_write`` of attempt 2 or more) or refused before sending
  (``client_call_refused``) takes it away.

Computed once with numpy over the run's columns; reading the state at a cursor is an index.
``tests/test_phase.py`` holds the counts equal to the engine's own state at every event.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.core import events as ev
from sim.core.history import History


@dataclass(frozen=True)
class PhasePath:
    """Time, work and orbit after each event of a run (index i: after event i)."""

    times: np.ndarray
    work: np.ndarray
    orbit: np.ndarray

    def __len__(self) -> int:
        return int(self.times.size)

    def upto(self, index: int, points: int = 400) -> list[tuple[float, int, int]]:
        """At most ``points`` states, evenly spread over the events up to ``index`` (included,
        the last always): the trajectory to draw up to a replay cursor."""
        if index < 0 or not len(self):
            return []
        index = min(index, len(self) - 1)
        picks = np.unique(np.linspace(0, index, min(points, index + 1)).round().astype(np.int64))
        return [(float(self.times[i]), int(self.work[i]), int(self.orbit[i])) for i in picks]


def phase_path(history: History) -> PhasePath:
    """The run's (work, orbit) after each of its events (see the module docstring)."""
    codes = history.codes()
    details = history.details()
    into = (codes == ev.SERVER_ACCEPTS) | (codes == ev.SERVER_QUEUES)
    out_of = (codes == ev.SERVER_COMPLETES) | (codes == ev.SERVER_DROPS)
    work = np.cumsum(into.astype(np.int64) - out_of.astype(np.int64))
    backs_off = codes == ev.CLIENT_BACKS_OFF
    retried = ((codes == ev.CLIENT_REQUESTS_WRITE) & (details >= 2)) | (codes == ev.CLIENT_CALL_REFUSED)
    orbit = np.cumsum(backs_off.astype(np.int64) - retried.astype(np.int64))
    return PhasePath(np.asarray(history.times, dtype=np.float64), work, orbit)
