"""A run's write requests as plot points (time, client), and their reduction to a plot's dots.

Built once per run in the worker that records it (``RunData``), so the requests chart only has
to reduce and draw; nothing here imports Textual.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.core import events as ev
from sim.core.history import History


@dataclass(frozen=True)
class RequestPoints:
    """A run's ``client_requests_write`` events as arrays: time (x) and client id (y)."""

    times: np.ndarray
    clients: np.ndarray
    n_clients: int
    end_time: float

    @classmethod
    def from_columns(cls, times: np.ndarray, clients: np.ndarray, codes: np.ndarray,
                     n_clients: int | None = None) -> RequestPoints:
        """From a run's columns (``RunData`` has them converted already)."""
        mask = codes == ev.CLIENT_REQUESTS_WRITE
        if n_clients is None:
            n_clients = int(clients.max()) + 1 if clients.size else 0
        end_time = float(times[-1]) if times.size else 0.0
        return cls(times[mask], clients[mask].astype(np.int64), n_clients, end_time)

    @classmethod
    def from_history(cls, history: History) -> RequestPoints:
        return cls.from_columns(np.asarray(history.times, dtype=np.float64),
                                np.asarray(history.clients, dtype=np.int64), history.codes())

    def reduce(self, columns: int, rows: int, max_points: int) -> tuple[np.ndarray, np.ndarray, str]:
        """At most one point per dot of the plot, as (times, clients, plotext marker).

        When every client has a row of its own, one bold dot per cell and client; otherwise the
        finest of braille dots (2×4 per cell), half blocks (2×2) and whole cells that stays
        within ``max_points``: plotext's cost grows with points, and points closer than a dot
        could never be told apart anyway.
        """
        if self.times.size == 0:
            return self.times, self.clients, "dot"
        span = max(self.end_time, float(self.times.max()), 1e-9)
        if self.n_clients <= rows:  # a row per client: bin time only, by cell
            nx = max(1, columns)
            xb = np.minimum((self.times / span * nx).astype(np.int64), nx - 1)
            _, first = np.unique(xb * self.n_clients + self.clients, return_index=True)
            first.sort()
            return self.times[first], self.clients[first], "dot"
        # Braille bins first; each coarser level halves a bin side, so it is computed from the
        # (far fewer) distinct finer bins rather than from every request again.
        nx, ny = max(1, columns * 2), max(1, rows * 4)
        xb = np.minimum((self.times / span * nx).astype(np.int64), nx - 1)
        yb = self.clients * ny // max(self.n_clients, 1)
        _, first = np.unique(xb * ny + yb, return_index=True)
        xb, yb = xb[first], yb[first]
        for marker, fx, fy in (("braille", 1, 1), ("hd", 1, 2), ("sd", 2, 4)):
            _, keep = np.unique((xb // fx) * ny + yb // fy, return_index=True)
            if keep.size <= max_points or marker == "sd":
                chosen = np.sort(first[keep])
                return self.times[chosen], self.clients[chosen], marker
        raise AssertionError("unreachable: the last level always returns")
