"""Clients: the contention clients (a burst, no reply on success) and the clients of servers that
reply (latencies, timeouts, retries per request, open workloads).

Each attempt carries a token; a reply or timeout whose token is stale (the client has moved on) is
ignored, so abandoned work the server still finishes is wasted, as in study 003. A timeout is one
event (``client_times_out``) and the decision that follows (back off or give up) is the next, at the
same instant, so every heap item stays exactly one recorded event.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from heapq import heappush
from typing import TYPE_CHECKING

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.core.streams import ClientStreams
from sim.outcomes import DENIED, REJECTED, SERVER_ERROR, TIMED_OUT, ChainFactory, GiveUp
from sim.models.policy_events import PolicyEvents
from sim.models.workloads import Poisson, Workload

if TYPE_CHECKING:
    from sim.core.wiring import Wiring

# Latencies kept per run: beyond this many, every other one is dropped and the sampling interval
# doubles, so a run of any length keeps between 2**19 and 2**20 of them (evenly spread over the
# run) in 16 MB at most. Percentiles of longer runs are then estimates from that sample.
LATENCY_SAMPLE = 1 << 20
# The arg of an attempt the chain already let through (after a hold or a backoff): not asked again.
HELD = -2


class ContentionClients:
    """Clients of the contention controls (no reply on success): request, back off or give up.

    Every client hears each attempt's outcome: a rejection or abort arrives as a message
    (``client_rejected``, its arg the failure kind of ``sim.outcomes``); a success (accepted and
    committed) is heard from the control at that instant (``client_committed``, no event). With the
    strategy alone (``chain.plain``) the inline path draws the next delay itself and nobody needs
    the success (``client_committed`` stays None); otherwise each client asks its policy chain.
    Work is ``sum(attempts)``, so the hot path only bumps one list slot per request.
    """

    # Every event code these clients record (``client_requests_version`` with read-then-write).
    EVENTS = frozenset({ev.CLIENT_REQUESTS_WRITE, ev.CLIENT_REQUESTS_VERSION, ev.CLIENT_BACKS_OFF,
                        ev.CLIENT_GIVES_UP}) | PolicyEvents.EVENTS
    SERIES: tuple[str, ...] = ()  # keeps no series

    def __init__(self, wiring: Wiring, chain: ChainFactory, reads_version: bool) -> None:
        self.gave_up = 0
        n = len(wiring.net)
        heap, seq, net = wiring.heap, wiring.seq, wiring.net
        self.attempts = attempts = [0] * n
        # When each client first acted; every client starts at 0 in a burst.
        self.first_request = first = [0.0] * n
        receive: list[Callable] = [None, None]  # (receive_write, receive_read), set by bind()
        requests_write = ev.pack(ev.CLIENT_REQUESTS_WRITE)
        requests_version = ev.pack(ev.CLIENT_REQUESTS_VERSION)
        backs_off = ev.pack(ev.CLIENT_BACKS_OFF)
        gives_up, shift = ev.CLIENT_GIVES_UP, ev.DETAIL_SHIFT
        clients = self

        def write(t: float, c: int, version: int) -> int:
            # Sends the write; `version` is what the client read (read-then-write OCC) or 0.
            attempts[c] += 1
            heappush(heap, (t + net[c](), seq(), receive[0], c, version))
            return requests_write

        def read(t: float, c: int, a: int) -> int:
            heappush(heap, (t + net[c](), seq(), receive[1], c, 0))
            return requests_version

        send = read if reads_version else write
        start = send

        self.policy: PolicyEvents | None = None
        if chain.plain:
            backoffs = [chain.strategy.delays(u).__next__ for u in wiring.jitter]

            def rejected(t: float, c: int, kind: int) -> int:
                heappush(heap, (t + backoffs[c](), seq(), start, c, 0))
                return backs_off

            wiring.client_committed = None
        else:
            chains = chain.build(wiring.jitter)
            self.policy = policy = PolicyEvents(chains, heap, seq)
            current = policy.current
            refused = [0] * n  # attempts refused before sending: in the call's count, not work

            def rejected(t: float, c: int, kind: int) -> int:
                n_attempts = attempts[c] + refused[c]
                current[0] = c
                verdict = chains[c].on_failure(t, kind, n_attempts, first[c])
                if verdict.__class__ is GiveUp:
                    clients.gave_up += 1
                    if verdict.denied:
                        return policy.denied(verdict.reason)
                    return gives_up | ((n_attempts + 1) << shift)
                heappush(heap, (t + verdict, seq(), start, c, 0))
                return policy.backs_off(c)

            def asked(t: float, c: int, a: int) -> int:
                # Before each attempt: the chain may hold it (a rate limiter) or refuse it.
                if a != HELD:
                    current[0] = c
                    hold = chains[c].on_attempt(t, attempts[c] + refused[c] + 1, first[c])
                    if hold.__class__ is GiveUp:
                        # Refused before sending (an open breaker): recorded, then heard as a
                        # failure of kind DENIED at the same instant; no write, so no work.
                        refused[c] += 1
                        heappush(heap, (t, seq(), rejected, c, DENIED))
                        return policy.refused(hold.reason, attempts[c] + refused[c])
                    if hold:
                        heappush(heap, (t + hold, seq(), asked, c, HELD))
                        return NO_EVENT
                return send(t, c, 0)

            def committed(t: float, c: int) -> None:
                current[0] = c
                chains[c].on_success(t, attempts[c] + refused[c], first[c])

            start = asked
            wiring.client_committed = committed

        self.start = start
        self._receive = receive
        wiring.client_rejected = rejected
        wiring.client_version_reply = write

    @property
    def work(self) -> int:
        return sum(self.attempts)

    @property
    def retries_denied(self) -> int:
        return 0 if self.policy is None else self.policy.retries_denied

    @property
    def calls_refused(self) -> int:
        return 0 if self.policy is None else self.policy.calls_refused

    def breaker_open_time(self, end: float) -> float:
        return 0.0 if self.policy is None else self.policy.open_time(end)

    def bind(self, receive_write: Callable, receive_read: Callable | None) -> None:
        self._receive[0] = receive_write
        self._receive[1] = receive_read


class OpenClients:
    """Client-side handlers for replying servers, any workload.

    Every attempt ends in a success, a rejection or a timeout, which the client hears. With the
    strategy alone (``chain.plain``) the inline path draws delays itself; otherwise the client asks
    its policy chain before each attempt and after each outcome (``sim.policies.seam``).
    """

    EVENTS = frozenset({ev.CLIENT_REQUESTS_WRITE, ev.CLIENT_BACKS_OFF, ev.CLIENT_GIVES_UP,
                        ev.CLIENT_TIMES_OUT, ev.CLIENT_SUCCEEDS}) | PolicyEvents.EVENTS
    # The ``Series`` counters these clients fill (the server fills its own, ``Capabilities.series``).
    SERIES: tuple[str, ...] = ("offered", "retries", "timed_out", "goodput")

    def __init__(self, wiring: Wiring, chain: ChainFactory, workload: Workload, timeout: float | None,
                 start_times: list[float], gaps: list[Callable[[], float]] | None) -> None:
        n = len(wiring.net)
        heap, seq, net, jitter, series = wiring.heap, wiring.seq, wiring.net, wiring.jitter, wiring.series
        inv = series.inverse_width
        offered, retries, timed_out_series, goodput = series.offered, series.retries, series.timed_out, series.goodput
        self.token = token = [0] * n
        self.waiting = waiting = [False] * n
        self.active = active = [False] * n
        self.attempts = attempts_total = [0] * n
        req_first = [0.0] * n
        req_attempts = [0] * n
        backoff: list[Callable[[], float]] = [float] * n  # replaced per request
        self.latencies: list[float] = []
        self.latency_clients: list[int] = []
        self.latency_times: list[float] = []  # when each success arrived
        self.counts = counts = {"successes": 0, "rejections": 0, "timeouts": 0, "gave_up": 0, "late": 0}
        latencies, latency_clients, latency_times = self.latencies, self.latency_clients, self.latency_times
        stride, since_kept = 1, 0  # keep one latency in ``stride`` once the sample is full
        plain = chain.plain
        chains = None if plain else chain.build(wiring.jitter)
        self.policy = policy = None if chains is None else PolicyEvents(chains, heap, seq)
        current = [0] if policy is None else policy.current
        if chain.attempt_timeout is not None:
            timeout = chain.attempt_timeout if timeout is None else min(timeout, chain.attempt_timeout)
        repeats = workload.REPEATS
        receive: list[Callable] = [None]
        delays = chain.strategy.delays if plain else None
        shift = ev.DETAIL_SHIFT
        write_code, succeeds_code, times_out_code = ev.CLIENT_REQUESTS_WRITE, ev.CLIENT_SUCCEEDS, ev.CLIENT_TIMES_OUT
        backs_off, gives_up_code = ev.pack(ev.CLIENT_BACKS_OFF), ev.CLIENT_GIVES_UP

        def asked(t: float, c: int, a: int) -> int:
            # Before each attempt: the chain may hold it (a rate limiter) or refuse it.
            if a != HELD:
                current[0] = c
                hold = chains[c].on_attempt(t, req_attempts[c] + 1, req_first[c])
                if hold.__class__ is GiveUp:
                    # Refused before sending (an open breaker): an attempt of the call's count,
                    # but no request, so no work and no load on the server. Recorded, then heard
                    # as a failure of kind DENIED at the same instant.
                    req_attempts[c] += 1
                    heappush(heap, (t, seq(), after_failure, c, DENIED))
                    return policy.refused(hold.reason, req_attempts[c])
                if hold:
                    heappush(heap, (t + hold, seq(), asked, c, HELD))
                    return NO_EVENT
            return attempt(t, c, a)

        def attempt(t: float, c: int, a: int) -> int:
            tok = token[c] + 1
            token[c] = tok
            waiting[c] = True
            k = req_attempts[c] + 1
            req_attempts[c] = k
            attempts_total[c] += 1
            if k > 1:
                retries[int(t * inv)] += 1
            heappush(heap, (t + net[c](), seq(), receive[0], c, tok))
            if timeout is not None:
                heappush(heap, (t + timeout, seq(), on_timeout, c, tok))
            return write_code | ((k + 1) << shift)

        def new_request(t: float, c: int, a: int) -> int:
            active[c] = True
            req_first[c] = t
            req_attempts[c] = 0
            if plain:
                backoff[c] = delays(jitter[c]).__next__  # a fresh sequence: the reset after success
            offered[int(t * inv)] += 1
            return send(t, c, a)

        surge = getattr(workload, "surge", None)

        def next_request(t: float, c: int) -> None:
            if repeats:
                gap = gaps[c]()
                if surge is not None and surge[0] <= t < surge[1]:
                    gap /= surge[2]
                heappush(heap, (t + gap, seq(), new_request, c, 0))

        def after_failure(t: float, c: int, kind: int) -> int:
            # `kind`: how the attempt failed (sim.outcomes), heard by the chain.
            k = req_attempts[c]
            if plain:
                heappush(heap, (t + backoff[c](), seq(), attempt, c, 0))
                return backs_off
            current[0] = c
            verdict = chains[c].on_failure(t, kind, k, req_first[c])
            if verdict.__class__ is GiveUp:
                counts["gave_up"] += 1
                active[c] = False
                next_request(t, c)
                if verdict.denied:
                    return policy.denied(verdict.reason)
                return gives_up_code | ((k + 1) << shift)
            heappush(heap, (t + verdict, seq(), send, c, 0))
            return policy.backs_off(c)

        def succeeded(t: float, c: int, tok: int) -> int:
            nonlocal stride, since_kept
            if tok != token[c] or not waiting[c]:
                counts["late"] += 1
                return NO_EVENT
            waiting[c] = False
            active[c] = False
            counts["successes"] += 1
            since_kept += 1
            if since_kept >= stride:
                since_kept = 0
                latencies.append(t - req_first[c])
                latency_clients.append(c)
                latency_times.append(t)
                if len(latencies) > LATENCY_SAMPLE:
                    del latencies[1::2], latency_clients[1::2], latency_times[1::2]
                    stride *= 2
            goodput[int(t * inv)] += 1
            if not plain:
                current[0] = c
                chains[c].on_success(t, req_attempts[c], req_first[c])
            next_request(t, c)
            return succeeds_code | ((req_attempts[c] + 1) << shift)

        def failure_reply(kind: int) -> Callable[[float, int, int], int]:
            # A failure reply of ``kind``: a rejection (throttling) or a server error; both count
            # in ``rejections`` (the server answered no).
            def failed(t: float, c: int, tok: int) -> int:
                if tok != token[c] or not waiting[c]:
                    counts["late"] += 1
                    return NO_EVENT
                waiting[c] = False
                counts["rejections"] += 1
                return after_failure(t, c, kind)
            return failed

        rejected = failure_reply(REJECTED)

        def on_timeout(t: float, c: int, tok: int) -> int:
            if tok != token[c] or not waiting[c]:
                return NO_EVENT
            waiting[c] = False
            counts["timeouts"] += 1
            timed_out_series[int(t * inv)] += 1
            heappush(heap, (t, seq(), after_failure, c, TIMED_OUT))
            return times_out_code | ((req_attempts[c] + 1) << shift)

        send = attempt if plain else asked
        self._receive = receive
        self.start = new_request
        wiring.client_rejected = rejected
        wiring.client_server_error = failure_reply(SERVER_ERROR)
        wiring.client_succeeded = succeeded
        if wiring.gate is not None:
            # A request held through an outage is served only if its client still waits for it.
            wiring.gate.still_waiting = lambda c, tok: waiting[c] and token[c] == tok
        for c, t0 in enumerate(start_times):
            heappush(heap, (t0, seq(), new_request, c, 0))

    def bind(self, receive_write: Callable, receive_read: Callable | None) -> None:
        self._receive[0] = receive_write

    @property
    def work(self) -> int:
        return sum(self.attempts)

    @property
    def gave_up(self) -> int:
        return self.counts["gave_up"]

    @property
    def unfinished(self) -> int:
        return sum(self.active)

    @property
    def retries_denied(self) -> int:
        return 0 if self.policy is None else self.policy.retries_denied

    @property
    def calls_refused(self) -> int:
        return 0 if self.policy is None else self.policy.calls_refused

    def breaker_open_time(self, end: float) -> float:
        return 0.0 if self.policy is None else self.policy.open_time(end)


def gap_functions(workload: Workload, rng, clients: int) -> list[Callable[[], float]] | None:
    """Per-client think-time streams for workloads that repeat."""
    if not isinstance(workload, Poisson):
        return None
    return ClientStreams(rng, clients, workload.gap_draw()).next_functions()
