"""Calls in a run's events: which call each event belongs to, and each success's latency.

A run's events carry their call's id (``History.calls``: calls numbered from 0 as they start,
-1 for an event of no call), so a call's latency is the time from its first event to its
success, however many calls its client has in flight (open arrivals). That is the engine's
measure (``LatencySample``: from the call's start to the client hearing of its success), the one
the CLI's tables, the CSVs and the PNGs show.

An events file written before the ``call`` column existed carries no ids: they are then
*derived* (``derived_calls``), each client event given to its client's latest call start, which
is right while a client has one call at a time (a closed workload) and wrong under open traffic,
where a success may end an earlier call than the latest. ``pairing_note`` says so where it
matters.
"""

from __future__ import annotations

import numpy as np

from sim.core import events as ev
from sim.core.latency_sample import sampled

NO_CALL = -1
_CLIENT_CODES = np.array(sorted(ev.CLIENT_EVENTS), dtype=np.int64)
# Breaker transitions are the client's policy's, not a call's (the engine records them so too).
_CALL_CODES = np.array(sorted(ev.CLIENT_EVENTS - {ev.BREAKER_OPENS, ev.BREAKER_HALF_OPENS,
                                                  ev.BREAKER_CLOSES}), dtype=np.int64)

DERIVED_NOTE = ("the events file has no call column (written by an older version): each success is "
                "paired with its client's latest call start, which is wrong where a client has "
                "several calls in flight")


def call_starts(codes: np.ndarray, details: np.ndarray) -> np.ndarray:
    """Where each call begins: its first write (attempt 1; a contention control's writes carry
    no attempt number), or a first attempt an open breaker refused (``client_call_refused``)."""
    return (((codes == ev.CLIENT_REQUESTS_WRITE) & (details <= 1))
            | (codes == ev.CLIENT_CALL_REFUSED))


def derived_calls(clients: np.ndarray, codes: np.ndarray, details: np.ndarray) -> np.ndarray:
    """Call ids for events that carry none (an older events file): each client event of a call
    goes to its client's latest call start (``call_starts``), calls numbered as they start;
    ``NO_CALL`` for the rest and for a client's events before its first start."""
    n = codes.shape[0]
    calls = np.full(n, NO_CALL, dtype=np.int64)
    starts = call_starts(codes, details)
    ids = np.cumsum(starts) - 1  # each start's number, in event order
    of_call = np.isin(codes, _CALL_CODES) & (clients >= 0)
    rows = np.flatnonzero(of_call | starts)
    rows = rows[np.argsort(clients[rows], kind="stable")]  # by client, each in event order
    if not rows.size:
        return calls
    is_start = starts[rows]
    latest = np.maximum.accumulate(np.where(is_start, np.arange(rows.size), -1))
    ok = latest >= 0
    ok[ok] = clients[rows[latest[ok]]] == clients[rows[ok]]  # a start of the same client
    calls[rows[ok]] = ids[rows[latest[ok]]]
    return calls


def call_latencies(times: np.ndarray, codes: np.ndarray, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(time, latency)`` of each success, in event order: from its call's first event to the
    success (paired by call id)."""
    done = np.flatnonzero((codes == ev.CLIENT_SUCCEEDS) & (calls >= 0))
    if not done.size:
        return np.zeros(0), np.zeros(0)
    numbered = np.flatnonzero(calls >= 0)
    ids, first = np.unique(calls[numbered], return_index=True)  # a call's first event, in order
    start = times[numbered[first]]
    begun = start[np.searchsorted(ids, calls[done])]
    return times[done], times[done] - begun


def kept_latencies(times: np.ndarray, codes: np.ndarray, calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The successes' ``(time, latency)`` a run keeps (``sim.core.latency_sample``: every one up
    to ``LATENCY_SAMPLE``, then the same even share the engine keeps): what a replay's
    percentiles and recovery verdict read, so they are the run's own."""
    success_times, latencies = call_latencies(times, codes, calls)
    return sampled(success_times), sampled(latencies)


def overlapping(clients: np.ndarray, codes: np.ndarray, details: np.ndarray,
                calls: np.ndarray | None = None) -> bool:
    """Whether some client has several calls in flight at once (open arrivals): where the client
    alone does not say which call an event belongs to, and pairing a success with its client's
    latest call start (``derived_calls``) goes wrong. With ``calls``: an event of a client's
    call after an event of its later call. Without: two call starts of a client with no end
    between (only replying servers' writes say their attempt number)."""
    if calls is not None:
        rows = np.flatnonzero(calls >= 0)
        rows = rows[np.argsort(clients[rows], kind="stable")]  # by client, each in event order
        same = clients[rows[1:]] == clients[rows[:-1]]
        return bool(np.any(same & (calls[rows[1:]] < calls[rows[:-1]])))
    starts = (((codes == ev.CLIENT_REQUESTS_WRITE) & (details == 1))
              | (codes == ev.CLIENT_CALL_REFUSED))
    ends = (codes == ev.CLIENT_SUCCEEDS) | (codes == ev.CLIENT_GIVES_UP) | (codes == ev.CLIENT_RETRY_DENIED)
    rows = np.flatnonzero(starts | ends)
    rows = rows[np.argsort(clients[rows], kind="stable")]
    same = clients[rows[1:]] == clients[rows[:-1]]
    return bool(np.any(same & starts[rows[1:]] & starts[rows[:-1]]))


def pairing_note(clients: np.ndarray, codes: np.ndarray, details: np.ndarray, derived: bool) -> str:
    """Why a replay's latencies may be off: its calls were derived and calls overlap; else ""."""
    return DERIVED_NOTE if derived and overlapping(clients, codes, details) else ""
