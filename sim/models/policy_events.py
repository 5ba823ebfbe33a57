"""What a client model records of its policy chains: denied retries and circuit breakers.

A retry a policy refuses is the event ``client_retry_denied`` with the policy's reason (instead of
``client_gives_up``, which stays for limits running out: attempts, elapsed time, deadlines). An
attempt an open breaker refuses before sending is a denied retry too when it is a retry; a
refused *first* attempt is no retry: it is ``client_call_refused`` and counts in ``calls_refused``
(the call fails fast, as Polly's ``BrokenCircuitException`` or resilience4j's
``CallNotPermittedException``; the chain then decides whether the call tries again). A
breaker link (any link with a ``listener`` attribute, see ``sim.policies.circuit_breaker``)
reports each transition; the transition becomes its own event at that instant (``breaker_opens``,
``breaker_half_opens``, ``breaker_closes``), on the lane of the client whose attempt caused it
(for a breaker shared by all clients, the client whose chain was being asked). The time breakers
spend away from closed is summed for the run's ``breaker_open_time``. A retry granted by a chain
that holds tokens (a token bucket, gRPC's throttle, a retry quota) records the whole tokens left
after it as the detail of its ``client_backs_off`` (``tokens=3``): the budget's state in the log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from heapq import heappush
from typing import Any

from sim.core import events as ev

STATE_EVENTS = {"open": ev.BREAKER_OPENS, "half_open": ev.BREAKER_HALF_OPENS, "closed": ev.BREAKER_CLOSES}
_FALLBACK = ev.DENY_REASON_INDEX["policy"]


class PolicyEvents:
    """Counts denied retries and turns breaker transitions into events; ``current[0]`` is the
    client whose chain is being asked (set by the client model before each chain call)."""

    # Every event code it records (on either client model).
    EVENTS = frozenset({ev.CLIENT_RETRY_DENIED, ev.CLIENT_CALL_REFUSED, *STATE_EVENTS.values()})

    def __init__(self, chains: Sequence[Any], heap: list, seq: Callable[[], int]) -> None:
        self.retries_denied = 0
        self.calls_refused = 0
        self.current = [0]
        self._heap, self._seq = heap, seq
        self._left_closed: dict[int, float] = {}  # breaker id → when it left the closed state
        self._open_time = 0.0
        self._codes: dict[str, int] = {}
        seen: dict[int, int] = {}
        for c, chain in enumerate(chains):
            for link in chain.links:
                if hasattr(link, "listener"):
                    seen[id(link)] = -1 if id(link) in seen else c
        self.breakers = len(seen)
        # Per client, what reads its chain's tokens (the first link that holds any), or None.
        self._tokens: list[Callable[[], float] | None] = [_token_reader(chain) for chain in chains]
        self._backs_off = ev.pack(ev.CLIENT_BACKS_OFF)
        for chain in chains:
            for link in chain.links:
                if hasattr(link, "listener") and link.listener is None:
                    link.listener = self._listener(id(link), seen[id(link)])

    def _listener(self, key: int, client: int) -> Callable[[float, str], None]:
        current = self.current

        def listener(t: float, state: str) -> None:
            if state == "closed":
                left = self._left_closed.pop(key, None)
                if left is not None:
                    self._open_time += t - left
            elif key not in self._left_closed:
                self._left_closed[key] = t
            c = current[0] if client < 0 else client
            heappush(self._heap, (t, self._seq(), self._event, c, STATE_EVENTS[state]))
        return listener

    @staticmethod
    def _event(t: float, c: int, code: int) -> int:
        return ev.pack(code)

    def backs_off(self, c: int) -> int:
        """Client ``c``'s packed ``client_backs_off``, with its tokens left when it has any."""
        read = self._tokens[c]
        if read is None:
            return self._backs_off
        return ev.pack(ev.CLIENT_BACKS_OFF, max(0, int(read())))

    def denied(self, reason: str) -> int:
        """Count a denied retry; its packed ``client_retry_denied`` event."""
        self.retries_denied += 1
        return ev.pack(ev.CLIENT_RETRY_DENIED, ev.DENY_REASON_INDEX.get(reason, _FALLBACK))

    def refused(self, reason: str, attempt: int) -> int:
        """Count attempt number ``attempt`` refused before sending (an open breaker): a call
        refused when it is the call's first, else a denied retry; its packed event."""
        if attempt > 1:
            return self.denied(reason)
        self.calls_refused += 1
        return ev.pack(ev.CLIENT_CALL_REFUSED, ev.DENY_REASON_INDEX.get(reason, _FALLBACK))

    def open_time(self, end: float) -> float:
        """Mean time per breaker spent open or half-open up to ``end`` (0 without breakers)."""
        if not self.breakers:
            return 0.0
        still = sum(end - left for left in self._left_closed.values() if left < end)
        return (self._open_time + still) / self.breakers


def _token_reader(chain: Any) -> Callable[[], float] | None:
    """A function giving the tokens of the chain's first link that holds some (``tokens``, or a
    quota's ``available``), or None."""
    for link in chain.links:
        if hasattr(link, "tokens"):
            return lambda link=link: link.tokens
        quota = getattr(link, "quota", None)
        if quota is not None and hasattr(quota, "available"):
            return lambda quota=quota: quota.available
    return None
