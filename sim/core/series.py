"""Per-bucket counters of a run against a replying server, filled by the handlers as events happen."""

from __future__ import annotations

import math

import numpy as np

from sim.core import events as ev

SERIES_NAMES = ("offered", "retries", "accepted", "rejected", "timed_out", "in_service", "queued", "goodput")
# Counters only some server kinds fill (they name them in ``Capabilities.series``): a run keeps,
# and its timeseries file shows, only those its server declares, so other kinds' files keep
# their columns. ``server_drops``: requests the server dropped unserved (``server_drops`` events).
SERVER_SERIES = ("server_drops",)


def extra_series(declared: tuple[str, ...]) -> tuple[str, ...]:
    """The ``SERVER_SERIES`` among a server kind's declared counters, in their fixed order."""
    return tuple(name for name in SERVER_SERIES if name in declared)


class Series:
    """Per-bucket counters filled by the handlers as events happen (no history needed):
    every ``SERIES_NAMES`` counter, and the ``extra`` ones a server kind declares."""

    def __init__(self, horizon: float, width: float, extra: tuple[str, ...] = ()) -> None:
        self.width = width
        self.inverse_width = 1.0 / width
        self.buckets = max(1, math.ceil(horizon / width - 1e-9))
        self.names = SERIES_NAMES + tuple(extra)
        size = self.buckets + 1  # an event exactly at the horizon lands in the spare slot
        for name in self.names:
            setattr(self, name, [0] * size)

    def arrays(self) -> dict[str, list[int]]:
        return {name: getattr(self, name)[:self.buckets] for name in self.names}


# The counters events record exactly; in_service/queued are the server's state at bucket ends,
# which events give only as "held" (accepted or queued, not yet completed).
FLOW_NAMES = ("offered", "retries", "accepted", "rejected", "timed_out", "goodput")


def count_series(times: np.ndarray, codes: np.ndarray, details: np.ndarray, width: float,
                 buckets: int) -> dict[str, np.ndarray]:
    """The series counted back from a run's events (a replayed events file has no series):
    the flows as the handlers count them (bucket ``int(t / width)``, events past the last bucket
    in it), ``in_service`` as the requests held at each bucket's end, ``queued`` zero."""
    index = np.minimum((times * (1.0 / width)).astype(np.int64), buckets - 1)  # as the handlers

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(index[mask], minlength=buckets).astype(np.int64)

    writes = codes == ev.CLIENT_REQUESTS_WRITE
    entered = (codes == ev.SERVER_ACCEPTS) | (codes == ev.SERVER_QUEUES)
    held = np.cumsum(count(entered) - count(codes == ev.SERVER_COMPLETES))
    return {
        # A call starts with its first write, or with a first attempt an open breaker refused.
        "offered": count((writes & (details <= 1)) | (codes == ev.CLIENT_CALL_REFUSED)),
        "retries": count(writes & (details > 1)),
        "accepted": count(entered),
        "rejected": count(codes == ev.SERVER_REJECTS),
        "timed_out": count(codes == ev.CLIENT_TIMES_OUT),
        "in_service": np.maximum(held, 0),
        "queued": np.zeros(buckets, dtype=np.int64),
        "goodput": count(codes == ev.CLIENT_SUCCEEDS),
    }
