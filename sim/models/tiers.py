"""Services that call services (issue 21): a tier's calls to the tier below it.

A tier is a replying server with its own wiring (its own streams, on the run's heap and
sequence). The server above it, instead of replying when a request's own service ends, hands
that request to a ``TierCaller``: the caller makes one *call* to the tier below for it, with the
tier's retry strategy and policies (``sim.policies``: the same chains the clients use) and its
``timeout`` per attempt, while the request stays in service upstream (its worker is held). When
the call succeeds the upstream server completes the request and replies success; when it fails
for good (a limit ran out, a policy denied the retry) it completes it and replies a server
error (``sim.vocabulary.outcomes.SERVER_ERROR``, an HTTP 500), so the layer above may retry in turn.

Who calls: a *caller process* is one worker of the server above (its ``caller_processes``; one
process for a server that serves without workers). A call runs on the lowest-numbered free
process, which owns the call's policy state (``scope = "client"``: per worker; ``"shared"``: one
state for the whole tier), as a worker's client library instance would.

Process ids are global in the run: the processes calling tier k are numbered after the clients
and the processes of the tiers above (``base``), so an event of any tier is recorded with an id
that says which tier it belongs to (``TierLayout.tier_of``).

Deadlines (``propagate_deadline = true`` on the tier called): a call carries its upstream
request's deadline, which passes when the upstream caller stops waiting for that request (its
attempt timed out, or its own deadline passed): from then on the call is abandoned (its attempt
in flight too, which the tier below hears of as a timeout, and so on down), no further attempt
is made, and a request reaching the tier after its caller stopped waiting is dropped unserved.
Without it a tier knows nothing of its caller's timeout and keeps working and retrying.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappush
from itertools import count
from typing import TYPE_CHECKING

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.core.latency_sample import LatencySample
from sim.models.policy_events import PolicyEvents
from sim.vocabulary.outcomes import DENIED, REJECTED, SERVER_ERROR, TIMED_OUT, ChainFactory, GiveUp

if TYPE_CHECKING:
    from sim.core.wiring import Wiring

Handler = Callable[[float, int, int], int]
KIND_BITS = 3  # failure kinds (sim.vocabulary.outcomes) are below 8
KIND_MASK = (1 << KIND_BITS) - 1

# A call's fields (a list per call, by index: the hot path avoids attribute look-ups).
_TRIES, _FIRST, _OWN, _UP_CLIENT, _UP_TOKEN, _FINISH, _PROC, _POOLED, _TOKEN = range(9)


class _NoChain:
    """A chain of no links, for the ids ``PolicyEvents`` indexes that are not this tier's callers."""

    links: tuple = ()


def stopping_both(first: Handler | None, second: Handler | None) -> Handler | None:
    """One stopped-waiting entry point telling two listeners (either may be None)."""
    if first is None or second is None:
        return first or second

    def both(t: float, c: int, tok: int) -> int:
        first(t, c, tok)
        second(t, c, tok)
        return NO_EVENT
    return both


class TierCaller:
    """The calls of one tier's caller processes to the tier below (see the module docstring).

    ``wiring`` is the tier below's: its ``net`` and ``jitter`` are indexed by global process id
    (``base`` to ``base + processes - 1``). Building it sets the client entry points of that
    wiring (replies, ``still_waiting``); ``bind`` then gives it the tier's server entry points,
    and ``install`` makes the server above hand its served requests here.
    """

    def __init__(self, wiring: Wiring, chain: ChainFactory, timeout: float | None,
                 propagate: bool, base: int, processes: int) -> None:
        heap, seq, net, jitter = wiring.heap, wiring.seq, wiring.net, wiring.jitter
        self.base, self.processes = base, processes
        self.requests = 0  # attempts arriving at the tier (counted by ``entry``)
        self.attempts = 0  # attempts sent
        self.counts = counts = {"successes": 0, "rejections": 0, "timeouts": 0, "gave_up": 0,
                                "late": 0, "abandoned": 0, "dropped": 0}
        # Call latencies (first attempt to success), kept by the clients' rule (``sim.core.latency_sample``).
        self.latency_sample = LatencySample()
        self.latencies = self.latency_sample.latencies
        keep_latency = self.latency_sample.keep
        if chain.attempt_timeout is not None:
            timeout = chain.attempt_timeout if timeout is None else min(timeout, chain.attempt_timeout)
        self.propagate = propagate
        # Upstream requests whose call failed for good: the upstream reply is an error.
        self.failed: set[tuple[int, int]] = set()
        failed = self.failed
        # Upstream: set by ``install`` (whether the caller above still waits for a request).
        self.upstream_waiting: Callable[[int, int], bool] | None = None
        receive: list[Handler | None] = [None, None]  # (receive_write, stopped_waiting): ``bind``
        self._receive = receive
        calls: dict[int, list] = {}
        self._calls = calls
        by_upstream: dict[tuple[int, int], int] = {}  # only with ``propagate``
        waiting: dict[int, int] = {}  # attempt token -> call id
        self._waiting = waiting
        next_token = count(1).__next__
        next_call = count(1).__next__
        free = list(range(base + processes - 1, base - 1, -1))  # pop() gives the lowest id
        plain = chain.plain
        delays = chain.strategy.delays if plain else None
        new_chain = None if plain else chain.call_chains(jitter)
        idle: list[list] = ([[] for _ in range(base)] + [[new_chain(p)] for p in range(base, base + processes)]
                            if new_chain is not None else [])
        empty = _NoChain()  # the ids below ``base`` are not this tier's callers
        self.policy = policy = None if new_chain is None else PolicyEvents(
            [empty] * base + [i[0] for i in idle[base:]], heap, seq)
        current = [0] if policy is None else policy.current
        shift = ev.DETAIL_SHIFT
        write_code, succeeds_code, times_out_code = ev.CLIENT_REQUESTS_WRITE, ev.CLIENT_SUCCEEDS, ev.CLIENT_TIMES_OUT
        backs_off, gives_up = ev.pack(ev.CLIENT_BACKS_OFF), ev.CLIENT_GIVES_UP
        drops = ev.pack(ev.SERVER_DROPS, ev.DROP_REASON_INDEX["cancelled"])

        def end(t: float, cid: int, ok: bool) -> None:
            # The call is over: its process and chain are free, the upstream request completes.
            call = calls.pop(cid)
            p = call[_PROC]
            if not plain:
                idle[p].append(call[_OWN])
            if call[_POOLED]:
                free.append(p)
            key = (call[_UP_CLIENT], call[_UP_TOKEN])
            if propagate:
                by_upstream.pop(key, None)
            if not ok:
                failed.add(key)
            heappush(heap, (t, seq(), call[_FINISH], key[0], key[1]))

        def start(t: float, c_up: int, tok_up: int, finish: Handler) -> int:
            # The upstream request (c_up, tok_up) finished its own service: call the tier below.
            if propagate and not self.upstream_waiting(c_up, tok_up):
                counts["abandoned"] += 1  # past its deadline: no call, an error nobody hears
                failed.add((c_up, tok_up))
                heappush(heap, (t, seq(), finish, c_up, tok_up))
                return NO_EVENT
            cid = next_call()
            pooled = bool(free)
            p = free.pop() if pooled else base + cid % processes
            own = None
            if not plain:
                spare = idle[p]
                own = spare.pop() if spare else new_chain(p)
            calls[cid] = [0, t, own, c_up, tok_up, finish, p, pooled, 0]
            if propagate:
                by_upstream[(c_up, tok_up)] = cid
            heappush(heap, (t, seq(), send, p, cid))  # recorded on the calling process's lane
            return NO_EVENT

        def sends(t: float, p: int, cid: int) -> int:
            call = calls.get(cid)
            if call is None:
                return NO_EVENT  # abandoned while backing off
            tok = next_token()
            waiting[tok] = cid
            call[_TOKEN] = tok
            k = call[_TRIES] + 1
            call[_TRIES] = k
            self.attempts += 1
            heappush(heap, (t + net[p](), seq(), receive[0], p, tok))
            if timeout is not None:
                heappush(heap, (t + timeout, seq(), on_timeout, p, tok))
            return write_code | ((k + 1) << shift)

        def succeeded(t: float, p: int, tok: int) -> int:
            cid = waiting.pop(tok, None)
            if cid is None:
                counts["late"] += 1
                return NO_EVENT
            counts["successes"] += 1
            call = calls[cid]
            keep_latency(t - call[_FIRST], p, t)
            k = call[_TRIES]
            if not plain:
                current[0] = p
                call[_OWN].on_success(t, k, call[_FIRST])
            end(t, cid, True)
            return succeeds_code | ((k + 1) << shift)

        def failure_reply(kind: int) -> Handler:
            def failed_reply(t: float, p: int, tok: int) -> int:
                cid = waiting.pop(tok, None)
                if cid is None:
                    counts["late"] += 1
                    return NO_EVENT
                counts["rejections"] += 1
                return after_failure(t, p, cid << KIND_BITS | kind)
            return failed_reply

        def on_timeout(t: float, p: int, tok: int) -> int:
            cid = waiting.pop(tok, None)
            if cid is None:
                return NO_EVENT
            counts["timeouts"] += 1
            if receive[1] is not None:
                receive[1](t, p, tok)
            heappush(heap, (t, seq(), after_failure, p, cid << KIND_BITS | TIMED_OUT))
            return times_out_code | ((calls[cid][_TRIES] + 1) << shift)

        if plain:
            def after_failure(t: float, p: int, a: int) -> int:
                call = calls.get(a >> KIND_BITS)
                if call is None:
                    return NO_EVENT
                if call[_OWN] is None:
                    call[_OWN] = delays(jitter[p]).__next__  # a fresh sequence for the call
                heappush(heap, (t + call[_OWN](), seq(), send, p, a >> KIND_BITS))
                return backs_off

            send = sends
        else:
            def after_failure(t: float, p: int, a: int) -> int:
                cid, kind = a >> KIND_BITS, a & KIND_MASK
                call = calls.get(cid)
                if call is None:
                    return NO_EVENT
                k = call[_TRIES]
                current[0] = p
                verdict = call[_OWN].on_failure(t, kind, k, call[_FIRST])
                if verdict.__class__ is GiveUp:
                    counts["gave_up"] += 1
                    end(t, cid, False)
                    if verdict.denied:
                        return policy.denied(verdict.reason)
                    return gives_up | ((k + 1) << shift)
                heappush(heap, (t + verdict, seq(), send, p, cid))
                return policy.backs_off(p)

            def asked(t: float, p: int, a: int) -> int:
                cid = a if a >= 0 else ~a
                call = calls.get(cid)
                if call is None:
                    return NO_EVENT
                if a >= 0:  # not yet let through (~cid: held, then let through)
                    current[0] = p
                    hold = call[_OWN].on_attempt(t, call[_TRIES] + 1, call[_FIRST])
                    if hold.__class__ is GiveUp:
                        call[_TRIES] += 1
                        heappush(heap, (t, seq(), after_failure, p, cid << KIND_BITS | DENIED))
                        return policy.refused(hold.reason, call[_TRIES])
                    if hold:
                        heappush(heap, (t + hold, seq(), asked, p, ~cid))
                        return NO_EVENT
                return sends(t, p, cid)

            send = asked

        def upstream_stopped(t: float, c_up: int, tok_up: int) -> int:
            # The caller above stopped waiting for (c_up, tok_up): its deadline passed. The call
            # made for it is abandoned, with its attempt in flight (the tier below hears so).
            cid = by_upstream.pop((c_up, tok_up), None)
            if cid is None:
                return NO_EVENT
            call = calls[cid]
            tok = call[_TOKEN]
            if waiting.pop(tok, None) is not None and receive[1] is not None:
                receive[1](t, call[_PROC], tok)
            counts["abandoned"] += 1
            end(t, cid, False)
            return NO_EVENT

        def still_waiting(p: int, tok: int) -> bool:
            return tok in waiting

        def after(complete: Handler) -> Handler:
            def served(t: float, c: int, tok: int) -> int:
                return start(t, c, tok, complete)
            return served

        self.after = after
        self.upstream_stopped = upstream_stopped if propagate else None
        self.still_waiting = still_waiting
        wiring.client_succeeded = succeeded
        wiring.client_server_error = failure_reply(SERVER_ERROR)
        wiring.client_rejected = failure_reply(REJECTED)
        wiring.client_committed = None
        wiring.still_waiting = still_waiting
        if wiring.gate is not None:
            wiring.gate.still_waiting = still_waiting
            wiring.gate.connect_failed = on_timeout

        def entry(receive_write: Handler) -> Handler:
            # The tier's door: every arrival counts; with deadlines, one whose caller stopped
            # waiting is dropped unserved (no work, no calls below).
            def arrives(t: float, p: int, tok: int) -> int:
                self.requests += 1
                if propagate and tok not in waiting:
                    counts["dropped"] += 1
                    return drops
                return receive_write(t, p, tok)
            return arrives

        self._entry = entry

    def bind(self, receive_write: Handler, stopped_waiting: Handler | None) -> None:
        """The tier's entry point (its gate and incidents around it) and what it wants to hear
        when a caller stops waiting for an attempt."""
        self._receive[0] = self._entry(receive_write)
        self._receive[1] = stopped_waiting

    def install(self, upper: Wiring, upstream_waiting: Callable[[int, int], bool]) -> None:
        """Make the server above (built on ``upper`` after this) call the tier below when a
        request's service ends, and reply an error for a request whose call failed."""
        self.upstream_waiting = upstream_waiting
        ok, error, failed = upper.client_succeeded, upper.client_server_error, self.failed

        def replied(t: float, c: int, tok: int) -> int:
            if failed and (c, tok) in failed:
                failed.discard((c, tok))
                return error(t, c, tok)
            return ok(t, c, tok)

        upper.client_succeeded = replied
        upper.downstream = self

    @property
    def unfinished(self) -> int:
        """Calls still open (the run ended at its horizon)."""
        return len(self._calls)
