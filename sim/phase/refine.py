"""Fine cells near the boundary, coarse far away: which of a portrait's cells must run to the limit.

A cell's runs cost most after the drift's horizon: they go on until they return or the limit
passes. A portrait first runs a coarse grid in full (every other index on each axis, and the
last), then each other cell: in full where the coarse cells around it disagree (the boundary
passes near), and only to the drift's horizon where they agree, its return probability then
theirs.

Why agreeing corners decide: more work at the server, or more clients about to retry, is never
better for returning (each adds load and nothing takes load away), so the return probability
falls along each axis; a cell inside the rectangle of four coarse cells lies between its lower
left corner's probability and its upper right one's. When every corner returned in all its runs
(or in none), so does the cell -- up to the runs' own noise, which a cell's own runs have too.
The coarse runs and the choice depend on the cells' places alone, so the portrait is the same
whatever the worker count.

The fluid estimate (``sim.fluid``) cannot place these cells: it integrates a config from its
start, not from a state, and has no form for the accept queue's bound or a backoff that starts
from the think time (``examples/server_outage.toml`` has both), so the coarse runs place them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

MIN_SIZE = 5  # smaller grids run every cell in full: a coarse grid would be nearly all of them


def coarse_indices(size: int) -> list[int]:
    """The coarse grid's indices along one axis: every other one and the last."""
    return sorted(set(range(0, size, 2)) | {size - 1})


def refines(size: int) -> bool:
    return size >= MIN_SIZE


def bracket(index: int, coarse: list[int]) -> tuple[int, int]:
    """The coarse indices just below (or at) and just above (or at) ``index``."""
    lo = coarse[bisect_right(coarse, index) - 1]
    hi = coarse[min(bisect_left(coarse, index), len(coarse) - 1)]
    return lo, hi


def inferred(size: int, probability: dict[tuple[int, int], float]) -> dict[tuple[int, int], float]:
    """For each cell not on the coarse grid, (work index, orbit index) -> its corners' common
    return probability (0 or 1), for the cells whose coarse corners all agree on it; the others
    (absent) run in full. ``probability``: the coarse cells' return probabilities."""
    coarse = coarse_indices(size)
    on = set(coarse)
    out: dict[tuple[int, int], float] = {}
    for j in range(size):
        for i in range(size):
            if i in on and j in on:
                continue
            (i0, i1), (j0, j1) = bracket(i, coarse), bracket(j, coarse)
            corners = {probability[(a, b)] for a in (i0, i1) for b in (j0, j1)}
            if len(corners) == 1 and next(iter(corners)) in (0.0, 1.0):
                out[(i, j)] = next(iter(corners))
    return out
