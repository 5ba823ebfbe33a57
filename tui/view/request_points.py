"""A run's write requests (``sim.analysis.replay.RequestPoints``) reduced to a plot's dots.

The requests chart draws at most one point per dot it can show; reducing is cheap because the
points were extracted once, in the worker that recorded the run. Nothing here imports Textual.
"""

from __future__ import annotations

import numpy as np

from sim.analysis.replay import RequestPoints


def reduce_points(points: RequestPoints, columns: int, rows: int,
                  max_points: int) -> tuple[np.ndarray, np.ndarray, str]:
    """At most one point per dot of the plot, as (times, clients, plotext marker).

    When every client has a row of its own, one bold dot per cell and client; otherwise the
    finest of braille dots (2×4 per cell), half blocks (2×2) and whole cells that stays
    within ``max_points``: plotext's cost grows with points, and points closer than a dot
    could never be told apart anyway.
    """
    times, clients, n_clients = points.times, points.clients, points.n_clients
    if times.size == 0:
        return times, clients, "dot"
    span = max(points.end_time, float(times.max()), 1e-9)
    if n_clients <= rows:  # a row per client: bin time only, by cell
        nx = max(1, columns)
        xb = np.minimum((times / span * nx).astype(np.int64), nx - 1)
        _, first = np.unique(xb * n_clients + clients, return_index=True)
        first.sort()
        return times[first], clients[first], "dot"
    # Braille bins first; each coarser level halves a bin side, so it is computed from the
    # (far fewer) distinct finer bins rather than from every request again.
    nx, ny = max(1, columns * 2), max(1, rows * 4)
    xb = np.minimum((times / span * nx).astype(np.int64), nx - 1)
    yb = clients * ny // max(n_clients, 1)
    _, first = np.unique(xb * ny + yb, return_index=True)
    xb, yb = xb[first], yb[first]
    for marker, fx, fy in (("braille", 1, 1), ("hd", 1, 2), ("sd", 2, 4)):
        _, keep = np.unique((xb // fx) * ny + yb // fy, return_index=True)
        if keep.size <= max_points or marker == "sd":
            chosen = np.sort(first[keep])
            return times[chosen], clients[chosen], marker
    raise AssertionError("unreachable: the last level always returns")
