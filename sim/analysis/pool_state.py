"""A worker pool's state at any event of a recorded run, counted back from its events.

``PoolServer`` (``sim.models.pool``) records what it does to each request, and most of its
events carry its state: ``server_accepts`` the workers busy after it, ``server_queues`` the
queue's length after it, ``server_completes`` the workers busy after the freed worker took the
next request. The rest is counted:

- the queue is the last ``server_queues``' length (an accept means an empty queue: a free
  worker is only ever idle while nothing waits), less each request that left it since: a
  completion whose worker took a queued request (its busy count did not fall), and each drop of
  a queued request (``queue_timeout`` and ``codel`` always; ``cancelled`` unless it came the
  instant the request arrived, as one does when no event of any kind precedes it at that time);
- a client's leaving (``cancel = "immediate"``) takes its request from the queue, or from a
  worker when nothing is queued (with a queue, a freed worker takes the next request at once,
  so the counts are the same either way), except while an outage has the server paused: then
  the events do not tell which, and it counts as leaving the queue until the resume settles it
  (the requests held, busy plus queued, stay exact);
- a capacity incident's regained workers take queued requests without an event of their own:
  with the pool's size known they are counted at the incident's event, else at the next
  completion;
- drops so far are counted by reason (``ev.DROP_REASONS``).

An events file does not say how many workers the pool has: ``PoolCapacity`` (from the spec:
``workers``, fewer during a capacity incident, as ``kept_slots`` keeps them) says it for a
simulated run, and is None for a replay.

Everything is computed once, with numpy over the run's columns; reading the state at a cursor is
a binary search (seeking across a million events costs the same as one step).
``tests/test_pool_state.py`` holds the counts equal to the engine's own samples of the pool.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.core import events as ev
from sim.models.incidents import kept_slots
from sim.models.pool import PoolServer
from sim.settings.spec import SimulationSpec

_STATE_CODES = (ev.SERVER_ACCEPTS, ev.SERVER_QUEUES, ev.SERVER_COMPLETES, ev.SERVER_DROPS)
_ALWAYS_QUEUED = (ev.DROP_REASON_INDEX["queue_timeout"], ev.DROP_REASON_INDEX["codel"])
_CANCELLED = ev.DROP_REASON_INDEX["cancelled"]
_CAPACITY = ev.INCIDENT_KINDS.index("capacity")


@dataclass(frozen=True)
class PoolCapacity:
    """How many workers a pool has: ``workers``, or a capacity incident's kept share of them in
    its window (``start <= t < end``)."""

    workers: int
    windows: tuple[tuple[float, float, int], ...] = ()  # (start, end, workers kept)

    def at(self, t: float) -> int:
        for start, end, kept in self.windows:
            if start <= t < end:
                return kept
        return self.workers


def pool_capacity(spec: SimulationSpec) -> PoolCapacity | None:
    """The pool's workers over time from its spec; None unless the server is a ``PoolServer``."""
    if not isinstance(spec.control, PoolServer):
        return None
    workers = int(spec.control.workers)
    windows = tuple((i.start, i.start + i.duration, kept_slots(workers, i.capacity))
                    for i in spec.degradations if i.capacity is not None)
    return PoolCapacity(workers, windows)


def records_pool(codes: np.ndarray, details: np.ndarray) -> bool:
    """Does a run hold a pool's state: requests it dropped, or queued ones beside accepts that
    count the busy workers (``PoolServer``; other servers' accepts carry no count, or never
    queue)?"""
    if bool((codes == ev.SERVER_DROPS).any()):
        return True
    accepts = codes == ev.SERVER_ACCEPTS
    return bool((codes == ev.SERVER_QUEUES).any()) and bool((details[accepts] >= 0).any())


@dataclass(frozen=True)
class PoolSnapshot:
    """The pool at one event: workers busy (of ``workers``; None when unknown), the queue's
    length, and the requests dropped so far by reason (``ev.DROP_REASONS``' order)."""

    busy: int
    queued: int
    workers: int | None
    full_workers: int | None  # the pool's size outside incidents (None when unknown)
    drops: tuple[int, ...]

    @property
    def dropped(self) -> int:
        return sum(self.drops)

    def drops_by_reason(self) -> dict[str, int]:
        return dict(zip(ev.DROP_REASONS, self.drops))


def _count(code: np.ndarray, detail: np.ndarray, dropped: np.ndarray, served: np.ndarray,
           resized: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(busy, queued) after each pool event, the queue unclipped: ``dropped`` 1 where a drop took
    a queued request, ``served`` 1 where it took one in service, ``resized`` the busy count a
    capacity change left (-1 at other events)."""
    positions = np.arange(code.size)
    completes = code == ev.SERVER_COMPLETES
    changed = resized >= 0
    counted = (code == ev.SERVER_ACCEPTS) | completes | changed
    value = np.where(changed, resized, detail)
    last_count = np.maximum.accumulate(np.where(counted, positions, -1))
    anchored = np.maximum(last_count, 0)
    freed = np.cumsum(served)
    busy = np.where(last_count >= 0, value[anchored] - (freed - freed[anchored]), -freed)
    busy_before = np.concatenate(([0], busy[:-1]))
    # What left the queue at each event: a dropped request; the requests a completion's freed
    # worker (or a capacity change's workers) took, as far as the busy count did not fall.
    left = dropped.copy()
    left[completes] += detail[completes] - busy_before[completes] + 1
    left[changed] += resized[changed] - busy_before[changed]
    # The queue: the last anchor's length (a queueing's count; 0 after an accept), less what
    # left since.
    anchors = (code == ev.SERVER_QUEUES) | (code == ev.SERVER_ACCEPTS)
    length = np.where(code == ev.SERVER_QUEUES, detail, 0)
    gone = np.cumsum(left)
    last_anchor = np.maximum.accumulate(np.where(anchors, positions, -1))
    anchored = np.maximum(last_anchor, 0)
    queued = np.where(last_anchor >= 0, length[anchored] - (gone - gone[anchored]), -gone)
    return busy, queued


class PoolState:
    """A run's pool state at every event (see the module docstring); ``at(cursor)`` reads it."""

    def __init__(self, times: np.ndarray, codes: np.ndarray, details: np.ndarray,
                 capacity: PoolCapacity | None = None) -> None:
        self.times = times
        self.capacity = capacity
        codes = np.asarray(codes)
        details = np.asarray(details, dtype=np.int64)
        state = np.isin(codes, _STATE_CODES)
        resizes = (np.isin(codes, (ev.SERVER_INCIDENT_STARTS, ev.SERVER_INCIDENT_ENDS))
                   & (details == _CAPACITY))
        if capacity is not None:
            state |= resizes  # free workers take queued requests then, without an event
        index = np.flatnonzero(state)
        self.index = index
        code, detail = codes[index], details[index]
        drops = code == ev.SERVER_DROPS
        dropped = drops & np.isin(detail, _ALWAYS_QUEUED)
        cancelled = np.flatnonzero(drops & (detail == _CANCELLED))
        if cancelled.size:
            # The event before a drop, drops aside: at the same instant for a drop at dequeue
            # (a completion, an incident, a resume, one more drop's cause) or when the client
            # left (its timeout); none at that instant when the drop is the request's arrival.
            not_drop = np.where(codes != ev.SERVER_DROPS, np.arange(codes.size), -1)
            cause = np.maximum.accumulate(not_drop)[index[cancelled]]
            dropped[cancelled] = (cause >= 0) & (times[np.maximum(cause, 0)] == times[index[cancelled]])
        resized = np.full(index.size, -1, dtype=np.int64)
        none = np.zeros(index.size, dtype=np.int64)
        busy, queued = _count(code, detail, dropped.astype(np.int64), none, resized)
        # A client's leaving (``cancel = "immediate"``) takes its request from the queue or from
        # a worker: from a worker when nothing is queued (otherwise either way leaves the counts
        # the same once the freed worker took the next request).
        served = dropped & (drops & (detail == _CANCELLED)) & (np.concatenate(([0], queued[:-1])) <= 0)
        dropped &= ~served
        dropped, served = dropped.astype(np.int64), served.astype(np.int64)
        busy, queued = _count(code, detail, dropped, served, resized)
        # Each capacity change in turn (a few per run): the workers it leaves free take queued
        # requests at once.
        for j in np.flatnonzero(resizes[index]).tolist():
            busy_before = max(0, int(busy[j - 1])) if j else 0
            queued_before = max(0, int(queued[j - 1])) if j else 0
            workers = capacity.at(float(times[index[j]]))
            resized[j] = busy_before + max(0, min(queued_before, workers - busy_before))
            busy, queued = _count(code, detail, dropped, served, resized)
        self.busy, self.queued = np.maximum(busy, 0), np.maximum(queued, 0)
        # Drops so far by reason: each reason's drop positions, to count with a binary search.
        self._drops = [index[drops & (detail == r)] for r in range(len(ev.DROP_REASONS))]

    def at(self, cursor: int) -> PoolSnapshot:
        """The pool after event ``cursor`` (before any pool event: idle, nothing dropped)."""
        i = int(np.searchsorted(self.index, cursor, side="right")) - 1
        busy, queued = (int(self.busy[i]), int(self.queued[i])) if i >= 0 else (0, 0)
        drops = tuple(int(np.searchsorted(d, cursor, side="right")) for d in self._drops)
        workers = full = None
        if self.capacity is not None:
            t = float(self.times[cursor]) if 0 <= cursor < len(self.times) else 0.0
            workers, full = self.capacity.at(t), self.capacity.workers
        return PoolSnapshot(busy, queued, workers, full, drops)
