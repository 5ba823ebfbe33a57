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

from .rundata import RunData
from .marks import MARKS

# A lane of this many clients or more shows how many events each cell holds (shading) rather
# than the one most telling glyph: with hundreds of clients a row, nearly every cell holds a
# rejection, and a wall of ✗ says nothing about where the load is.
DENSITY_CLIENTS = 5
DENSITY_LEVELS = 4  # ▂ ▄ ▆ █


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
    counts: np.ndarray          # events in each client-lane cell, [lanes, columns]
    waiting: np.ndarray         # bool [lanes, columns]: a client of the lane is backing off
    # over the cell, since an earlier column (the backoff itself shows in its own column)
    start: float = 0.0          # simulated time at the left edge (later than 0 when zoomed in)
    per_lane: int = 1           # clients per lane (the last lane may hold fewer)
    # Upper bounds of the shading levels but the last (events per cell), when lanes show density.
    density_bounds: tuple[int, ...] = ()
    # bool per column: an incident (sim.models.incidents) is under way during part of it; None: none.
    incident: np.ndarray | None = None

    @property
    def density(self) -> bool:
        """True when the client lanes show shading by count instead of glyphs."""
        return self.per_lane >= DENSITY_CLIENTS

    def density_level(self, counts: np.ndarray,
                      bounds: tuple[int, ...] | None = None) -> np.ndarray:
        """Shading level 1..``DENSITY_LEVELS`` of each count (0 for none), by this grid's
        bounds or ``bounds`` (shared by timelines compared side by side)."""
        bounds = self.density_bounds if bounds is None else bounds
        levels = np.searchsorted(np.asarray(bounds), counts, side="left") + 1
        return np.where(counts > 0, levels, 0)


def even_lanes(n_clients: int, room: int) -> int:
    """How many lanes ``n_clients`` take in ``room`` rows when every lane holds the same number
    of clients (the last one the rest): 11 clients in 9 rows make 6 lanes of 2 (the last of 1),
    not a mix of lanes of 1 and 2 clients."""
    per = math.ceil(n_clients / max(room, 1))
    return math.ceil(n_clients / per)


def clients_per_lane(n_clients: int, lanes: int) -> int:
    return math.ceil(n_clients / max(lanes, 1))


def lane_labels(n_clients: int, lanes: int, ids: np.ndarray | None = None) -> tuple[str, ...]:
    """``c7`` for a lane of one client, ``c10-19`` for a lane holding a range of clients; with
    ``ids`` (the clients picked, ``n_clients`` of them) the lane's first and last picked ids."""
    per = clients_per_lane(n_clients, lanes)
    labels = []
    for i in range(lanes):
        lo, hi = i * per, min((i + 1) * per, n_clients) - 1
        if ids is not None:
            lo, hi = int(ids[lo]), int(ids[hi])
        labels.append(f"c{lo}" if lo >= hi else f"c{lo}-{hi}")
    return tuple(labels)


def client_slots(n_clients: int, ids: np.ndarray | None) -> np.ndarray | None:
    """Each client's place among the picked ``ids`` (-1: not picked), one more entry for the
    server's id -1; None when every client is shown."""
    if ids is None:
        return None
    slots = np.full(n_clients + 1, -1, dtype=np.int32)
    slots[ids] = np.arange(len(ids), dtype=np.int32)
    return slots


def lane_members(n_clients: int, lanes: int, lane: int, ids: np.ndarray | None = None) -> np.ndarray:
    """The client ids in ``lane`` (of ``lanes``, over the ``ids`` picked or every client)."""
    n = len(ids) if ids is not None else n_clients
    per = clients_per_lane(n, lanes)
    places = np.arange(lane * per, min((lane + 1) * per, n))
    return ids[places] if ids is not None else places


def _highest(counts: np.ndarray, levels: int) -> np.ndarray:
    """Per cell, the highest rank with a non-zero count (counts laid out cell-major, rank-minor)."""
    present = counts.reshape(-1, levels) > 0
    return (present * np.arange(levels, dtype=np.int8)).max(axis=1).astype(np.int8)


def density_bounds(counts: np.ndarray) -> tuple[int, ...]:
    """Shading thresholds from the non-empty cells' counts: their quartiles, so each shade
    covers about a quarter of the busy cells whatever the run's scale; strictly increasing, so
    every shade stands for some count (few distinct counts: 1, 2, 3)."""
    busy = counts[counts > 0]
    if not busy.size:
        return (1, 2, 3)
    bounds = [int(b) for b in np.quantile(busy, [0.25, 0.5, 0.75], method="lower")]
    for i, bound in enumerate(bounds):
        bounds[i] = max(bound, bounds[i - 1] + 1 if i else 1)
    return tuple(bounds)


def _waiting(data: RunData, per: int, lanes: int, columns: int, start: float,
             span: float, slots: np.ndarray | None = None) -> np.ndarray:
    """Cells over which a client of the lane waits out a backoff, after the backoff's own
    column and up to the retry's (a difference array per lane, summed along time); a wait
    that began before the window covers it from its first column."""
    starts, ends, clients = data.waits
    if not starts.size:
        return np.zeros((lanes, columns), dtype=bool)
    scale = columns / span
    first = np.floor((starts - start) * scale).astype(np.int64) + 1
    first[starts < start] = 0
    last = np.minimum(np.floor((ends - start) * scale).astype(np.int64), columns - 1)  # inclusive
    # A wait within its backoff's column shows as the backoff alone; one outside the window
    # not at all.
    keep = (first <= last) & (first <= columns - 1) & (last >= 0)
    place = clients.astype(np.int64)
    if slots is not None:  # only the picked clients' waits, at their places
        place = slots[place]
        keep &= place >= 0
    lane = np.minimum(place[keep] // per, lanes - 1) * (columns + 1)
    size = lanes * (columns + 1)
    steps = (np.bincount(lane + first[keep], minlength=size)
             - np.bincount(lane + last[keep] + 1, minlength=size))
    return np.cumsum(steps.reshape(lanes, columns + 1), axis=1)[:, :columns] > 0


def build_grid(data: RunData, lanes: int, columns: int,
               window: tuple[float, float] | None = None, ids: np.ndarray | None = None) -> Grid:
    """Bin every event into its cell; each cell keeps the highest rank that falls in it.

    ``window`` (start, end) bins only that stretch of time (the timeline zoomed in): events
    before it get column -1 and events after it column ``columns``, in no cell.
    ``lanes`` is rounded down to even lanes (``even_lanes``). One ``bincount`` over (cell, rank)
    pairs: linear in the events, no Python loop over them. ``ids`` (ascending): only these
    clients get lanes, in that order; the others' events show on the server lane alone.
    """
    n_shown = len(ids) if ids is not None else data.n_clients
    slots = client_slots(data.n_clients, ids)
    per = clients_per_lane(n_shown, lanes)
    lanes = math.ceil(n_shown / per)
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
    if slots is None:
        lane = data.clients // np.int32(per)
        np.minimum(lane, lanes - 1, out=lane)
        lane[data.clients < 0] = -1
    else:
        place = slots[data.clients]  # the server's -1 reads the last entry: -1
        lane = np.where(place >= 0, np.minimum(place // np.int32(per), lanes - 1), -1).astype(np.int32)
    levels = len(MARKS) + 1
    lane_in, column_in, ranks = lane[shown], column[shown], data.ranks[shown]
    on_lane = lane_in >= 0
    flat = lane_in * np.int32(columns * levels)
    flat += column_in * np.int32(levels)
    flat += ranks
    cells = np.bincount(flat[on_lane] if not on_lane.all() else flat,
                        minlength=lanes * columns * levels)
    client_cells = _highest(cells, levels)
    counts = cells.reshape(lanes, columns, levels).sum(axis=2)
    server = data.server_mask[shown]
    flat = column_in[server] * np.int32(levels) + ranks[server]
    server_cells = _highest(np.bincount(flat, minlength=columns * levels), levels)
    client_cells = client_cells.reshape(lanes, columns)
    column_start = np.searchsorted(column, np.arange(columns + 1), side="left")
    outage = _window_columns(data.outages, columns, start, span, window is not None)
    incident = (_window_columns([(s, e) for s, e, _ in data.incidents], columns, start, span, window is not None)
                if data.incidents else None)
    bounds = density_bounds(counts) if per >= DENSITY_CLIENTS else ()
    return Grid(lanes, columns, span, lane, column, column_start, client_cells, server_cells,
                lane_labels(n_shown, lanes, ids), outage, counts,
                _waiting(data, per, lanes, columns, start, span, slots), start, per, bounds,
                incident)


def _window_columns(windows, columns: int, start: float, span: float, zoomed: bool) -> np.ndarray:
    """bool per column: one of ``windows`` (``(start, end)``) covers part of it."""
    marked = np.zeros(columns, dtype=bool)
    for begin, end in windows:
        if zoomed and (end < start or begin > start + span):
            continue
        first = min(max(int((begin - start) * columns / span), 0), columns - 1)
        last = min(int(math.ceil((end - start) * columns / span)), columns)
        marked[first:max(last, first + 1)] = True
    return marked


def cached_grid(data: RunData, lanes: int, columns: int) -> Grid:
    """``build_grid`` kept with the run, so each size is binned once per run."""
    key = (lanes, columns)
    grid = data.grids.get(key)
    if grid is None:
        grid = data.grids[key] = build_grid(data, lanes, columns)
    return grid


def label_width(n_clients: int, lanes: int, ids: np.ndarray | None = None) -> int:
    """Cells for the lane labels column (the longest label, or "server", plus a space, where a
    followed client's lane puts its mark)."""
    return max(len(s) for s in (*lane_labels(n_clients, lanes, ids), "server")) + 1
