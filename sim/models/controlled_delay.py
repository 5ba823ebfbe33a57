"""Facebook's controlled delay (Ben Maurer, "Fail at Scale", ACM Queue 13(8), 2015), a
``PoolServer`` defence: ``controlled_delay = { short, long, interval }``.

The paper's rule, set when a request joins the queue::

    onNewRequest(req, queue):
      if (queue.lastEmptyTime() < (now - N seconds)) {
         timeout = M ms
      } else {
         timeout = N seconds;
      }
      queue.enqueue(req, timeout)

(N = 100 ms, M = 5 ms there). A queue that has been empty within the last ``interval`` (N) is
absorbing a burst: its requests may wait ``long``; one that has not been empty for that long is
a standing queue, and its new requests may wait only ``short`` (M). A request that waited past
its own limit is dropped when a worker reaches it (``server_drops``, ``queue_timeout``) with an
error reply, at no cost to the server, as ``queue_timeout``'s. Unlike CoDel it acts under any
discipline (with ``discipline = "adaptive_lifo"`` it is the paper's whole scheme).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.vocabulary.errors import ParamError


@dataclass(frozen=True)
class ControlledDelay:
    """``controlled_delay = { short = 5.0, long = 100.0, interval = 100.0 }`` (the paper's M, N
    and N, in the config's time unit)."""

    short: float
    long: float
    interval: float

    def __post_init__(self) -> None:
        for key in ("short", "long", "interval"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ParamError(key, f"must be a time > 0, got {value!r}")
        if self.short > self.long:
            raise ParamError("short", f"must be at most long ({self.long:g}): the standing queue's "
                             f"limit is the shorter one, got {self.short:g}", "swap them (Fail at Scale: 5 and 100 ms)")

    def limit(self, now: float, last_empty: float) -> float:
        """How long a request joining the queue at ``now`` may wait, the queue last empty at
        ``last_empty`` (``now`` itself when it joins an empty queue)."""
        return self.short if last_empty < now - self.interval else self.long
