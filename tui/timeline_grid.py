"""The timeline's binning: every event of a run into a (lane, column) cell at one size.

A cell shows its highest-ranked event (a give-up outranks a backoff), so a thousand clients fit
in twenty lanes. Pure numpy, no Textual: the worker that loads a run bins it for the timeline's
size at that moment, so a run of a million events reaches the screen ready to draw; a resize
bins again on the UI thread (tens of ms for a million events).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .rundata import KINDS, RunData


@dataclass(frozen=True, eq=False)
class Grid:
    """A run binned into lanes × columns at one widget size."""

    lanes: int
    columns: int
    span: float                 # simulated time covered by the columns
    lane_of_event: np.ndarray   # lane of each event's client
    column_of_event: np.ndarray
    column_start: np.ndarray    # index of the first event of each column (length columns + 1)
    clients: np.ndarray         # rank of each client-lane cell, [lanes, columns]
    server: np.ndarray          # rank of each server-lane cell, [columns]
    lane_labels: tuple[str, ...]
    outage: np.ndarray          # bool per column: the server is paused during part of it
    start: float = 0.0          # simulated time at the left edge (later than 0 when zoomed in)


def lane_labels(n_clients: int, lanes: int) -> tuple[str, ...]:
    """``c7`` for a lane of one client, ``c10-19`` for a lane holding a range of clients."""
    lane = np.arange(n_clients) * lanes // n_clients
    labels = []
    for i in range(lanes):
        members = np.flatnonzero(lane == i)
        lo, hi = int(members[0]), int(members[-1])
        labels.append(f"c{lo}" if lo == hi else f"c{lo}-{hi}")
    return tuple(labels)


def _highest(counts: np.ndarray, levels: int) -> np.ndarray:
    """Per cell, the highest rank with a non-zero count (counts laid out cell-major, rank-minor)."""
    present = counts.reshape(-1, levels) > 0
    return (present * np.arange(levels, dtype=np.int8)).max(axis=1).astype(np.int8)


def build_grid(data: RunData, lanes: int, columns: int,
               window: tuple[float, float] | None = None) -> Grid:
    """Bin every event into its cell; each cell keeps the highest rank that falls in it.

    ``window`` (start, end) bins only that stretch of time (the timeline zoomed in): events
    before it get column -1 and events after it column ``columns``, in no cell.
    One ``bincount`` over (cell, rank) pairs: linear in the events, no Python loop over them.
    """
    start, end = window if window is not None else (0.0, data.total_time)
    span = end - start if end > start else 1.0
    # int32 and in-place arithmetic: a million events make several arrays of this size, and
    # fresh large allocations cost page faults on the UI thread.
    if window is None:
        column = np.multiply(data.times, columns / span).astype(np.int32)
        np.minimum(column, columns - 1, out=column)
        shown = slice(None)
    else:
        # Times are sorted: the window's events are one slice.
        first = int(np.searchsorted(data.times, start, side="left"))
        last = int(np.searchsorted(data.times, end, side="right"))
        column = np.full(len(data.times), columns, dtype=np.int32)
        column[:first] = -1
        inside = np.multiply(data.times[first:last] - start, columns / span).astype(np.int32)
        column[first:last] = np.minimum(inside, columns - 1)
        shown = slice(first, last)
    # Events of the server alone (client -1, e.g. an outage) get lane -1: server lane only.
    lane = data.clients * np.int32(lanes)
    lane //= np.int32(data.n_clients)
    np.minimum(lane, lanes - 1, out=lane)
    lane[data.clients < 0] = -1
    levels = len(KINDS) + 1
    lane_in, column_in, ranks = lane[shown], column[shown], data.ranks[shown]
    on_lane = lane_in >= 0
    flat = lane_in * np.int32(columns * levels)
    flat += column_in * np.int32(levels)
    flat += ranks
    cells = np.bincount(flat[on_lane] if not on_lane.all() else flat,
                        minlength=lanes * columns * levels)
    client_cells = _highest(cells, levels)
    server = data.server_mask[shown]
    flat = column_in[server] * np.int32(levels) + ranks[server]
    server_cells = _highest(np.bincount(flat, minlength=columns * levels), levels)
    client_cells = client_cells.reshape(lanes, columns)
    column_start = np.searchsorted(column, np.arange(columns + 1), side="left")
    outage = np.zeros(columns, dtype=bool)
    for pause, resume in data.outages:
        if window is not None and (resume < start or pause > start + span):
            continue
        first = min(max(int((pause - start) * columns / span), 0), columns - 1)
        last = min(int(math.ceil((resume - start) * columns / span)), columns)
        outage[first:max(last, first + 1)] = True
    return Grid(lanes, columns, span, lane, column, column_start, client_cells, server_cells,
                lane_labels(data.n_clients, lanes), outage, start)


def cached_grid(data: RunData, lanes: int, columns: int) -> Grid:
    """``build_grid`` kept with the run, so each size is binned once per run."""
    key = (lanes, columns)
    grid = data.grids.get(key)
    if grid is None:
        grid = data.grids[key] = build_grid(data, lanes, columns)
    return grid


def label_width(n_clients: int, lanes: int) -> int:
    """Cells for the lane labels column (the longest label, or "server", plus a space)."""
    return max(len(s) for s in (*lane_labels(n_clients, lanes), "server")) + 1
