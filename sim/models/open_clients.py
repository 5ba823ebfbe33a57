"""Clients whose calls overlap: open arrivals (``workload = "open"``).

Each client starts a call at every arrival of its own Poisson stream, whatever became of its
earlier calls, so it may have many in flight; the server sees arrivals that do not slow down
when it does (Schroeder, Wierman, Harchol-Balter, "Open Versus Closed: A Cautionary Tale",
NSDI 2006). Everything else is as in ``sim.models.clients`` (read it first): attempts carry a
token, a stale reply or timeout is ignored, a timeout is one event and the decision after it the
next, the strategy alone draws inline (``ChainFactory.plain``) or a chain is asked.

What is whose:

- **The call's own** (a *slot*, reused once the call ends): its id (what its events are
  recorded with, ``History.calls``), its attempt number, start and backoff sequence (or its chain, ``ChainSpec.call_chains``: its own
  strategy sequence and per-call bookkeeping, on the client's policy state; a client's chains
  are reused by its later calls, as ``Clients`` reuses a client's one chain).
- **The client's**: its network and jitter streams, its policies' state (a token bucket or
  breaker is one client library's, shared by its calls in flight), its attempt count, and the
  client id every event is recorded with.

Heap items keep the engine's shape ``(time, seq, handler, client, arg)``: ``client`` is the
client; ``arg`` says the slot. A token is the attempt's number in the run (small ints, fast);
``waiting`` maps the token of each attempt still waited for to its call's slot.
An attempt's failure kind travels as ``slot << KIND_BITS | kind``; a held send as ``~slot``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from itertools import count
from heapq import heappush
from typing import TYPE_CHECKING

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.core.latency_sample import LatencySample
from sim.vocabulary.errors import ParamError
from sim.models.clients import Clients
from sim.models.policy_events import PolicyEvents
from sim.models.workloads import Workload
from sim.vocabulary.outcomes import DENIED, REJECTED, SERVER_ERROR, TIMED_OUT, ChainFactory, GiveUp

if TYPE_CHECKING:
    from sim.core.wiring import Wiring
    from sim.models.initial import InitialState
    from sim.models.controls import Control

KIND_BITS = 3  # failure kinds (sim.vocabulary.outcomes) are below 8
KIND_MASK = (1 << KIND_BITS) - 1


class OpenClients(Clients):
    """The clients of one run with open arrivals; the same outputs as ``Clients`` (``counts``,
    latencies, ``attempts`` per client, series counters), and ``unfinished`` counts the calls
    still open at the horizon, however many per client."""

    def __init__(self, wiring: Wiring, chain: ChainFactory, control: Control, workload: Workload,
                 timeout: float | None, start_times: list[float],
                 gaps: list[Callable[[], float]] | None, initial: InitialState | None = None,
                 residuals: Sequence[float] = (), ages: Sequence[float] = ()) -> None:
        if not control.CAPS.replies or not control.CAPS.keeps_series or gaps is None:
            raise ParamError("workload", f"{workload.NAME!r} needs a server that replies and keeps series; "
                             f"{control.type_name} lets clients assume success",
                             'use workload = "burst" or "spike" with a contention control')
        n = len(wiring.net)
        heap, seq, net, jitter, series = wiring.heap, wiring.seq, wiring.net, wiring.jitter, wiring.series
        # A rate profile lays each next arrival out on its clock (sim.models.rate_profile).
        clock = workload.clock(n) if getattr(workload, "rate_profile", ()) else None
        near = wiring.near
        self.attempts = attempts = [0] * n
        self.counts = counts = {"successes": 0, "rejections": 0, "timeouts": 0, "gave_up": 0, "late": 0}
        self._refused = refused = [0]
        self._attempts_count_refused = False
        self._active = None
        receive: list[Callable | None] = [None, None, None]
        self._receive = receive
        # Per slot (one call in flight each); ``free`` holds the slots of ended calls.
        tries: list[int] = []
        # The attempts waited for: token -> slot. An attempt leaves it when it ends (replied or
        # timed out), so a stale reply or timeout finds no entry.
        waiting: dict[int, int] = {}
        next_token = count(1).__next__
        first: list[float] = []
        own: list = []  # the call's backoff sequence (plain) or chain
        call_of: list[int] = []  # the call's id (``History.calls``: calls numbered as they start)
        next_call_id = count().__next__
        cell = wiring.call  # where a handler tells the engine its event's call (``Wiring.call``)
        free: list[int] = []
        self._slots, self._free = tries, free
        inv = series.inverse_width
        offered, retries, timed_out, goodput = series.offered, series.retries, series.timed_out, series.goodput
        if chain.attempt_timeout is not None:
            timeout = chain.attempt_timeout if timeout is None else min(timeout, chain.attempt_timeout)
        # Every attempt's timeout, in the order sent, which (one timeout for the run) is the order
        # they fall due: only the oldest has a heap item, so an attempt answered in time costs
        # the heap nothing (most of them, with many calls in flight).
        due: deque[tuple[float, int, int]] = deque()
        self.latency_sample = sample = LatencySample()  # ``sim.core.latency_sample``: the one rule
        keep_latency = sample.keep
        shift = ev.DETAIL_SHIFT
        write_code, succeeds_code, times_out_code = ev.CLIENT_REQUESTS_WRITE, ev.CLIENT_SUCCEEDS, ev.CLIENT_TIMES_OUT
        first_write = ev.pack(write_code, 1)
        backs_off, gives_up = ev.pack(ev.CLIENT_BACKS_OFF), ev.CLIENT_GIVES_UP
        plain = chain.plain
        delays = chain.strategy.delays if plain else None
        new_chain = None if plain else chain.call_chains(jitter)
        # Each client's chains not in use: a call takes one (a new one when all are busy) and
        # gives it back when it ends. A chain resets its call's state at the first attempt,
        # as the one chain of a client of ``Clients`` does from call to call.
        idle: list[list] = [[new_chain(c)] for c in range(n)] if new_chain is not None else []
        # PolicyEvents finds each client's breakers and token holders through its first chain
        # (the same objects in every chain of the client's calls).
        self.policy = policy = None if new_chain is None else PolicyEvents([i[0] for i in idle], heap, seq)
        current = [0] if policy is None else policy.current

        # ``backoff_from = "send"`` (sim.models.clients): each slot's last attempt's send time.
        from_send = wiring.backoff_from_send
        sent_at: list[float] = []

        def new_slot() -> int:
            # A slot for a call when every earlier one is still in flight (the slots only grow).
            sent_at.append(0.0)
            tries.append(0)
            first.append(0.0)
            own.append(None)
            call_of.append(-1)
            return len(tries) - 1

        def plain_call(t: float, c: int, a: int) -> int:
            # An arrival: the client's next one is due whatever becomes of this call. Its first
            # attempt is sent at once (``sends``, inline: the common case); the call's backoff
            # sequence is made at its first failure (making it draws nothing).
            heappush(heap, (t + gaps[c]() if clock is None else clock.after(t, gaps[c]()), seq(), plain_call, c, 0))
            s = free.pop() if free else new_slot()
            first[s] = sent_at[s] = t  # its first attempt goes now (inline, below)
            call_of[s] = cell[0] = next_call_id()
            offered[int(t * inv)] += 1
            tries[s] = 1
            tok = next_token()
            waiting[tok] = s
            attempts[c] += 1
            heappush(near, (t + net[c](), seq(), receive[0], c, tok))
            if timeout is not None:
                if not due:  # the only timeout due: it gets the heap item (see ``on_timeout``)
                    heappush(heap, (t + timeout, seq(), on_timeout, c, tok))
                due.append((t + timeout, c, tok))
            return first_write

        def chain_call(t: float, c: int, a: int) -> int:
            # An arrival with a chain: the call takes one of its client's idle chains, which
            # decides its first attempt (``asked``).
            heappush(heap, (t + gaps[c]() if clock is None else clock.after(t, gaps[c]()), seq(), chain_call, c, 0))
            s = free.pop() if free else new_slot()
            first[s] = t
            call_of[s] = next_call_id()
            offered[int(t * inv)] += 1
            tries[s] = 0
            spare = idle[c]
            own[s] = spare.pop() if spare else new_chain(c)
            return send(t, c, s)

        new_call = plain_call if plain else chain_call

        def attempt_of(c: int, tok: int) -> tuple[int, int]:
            s = waiting.get(tok)  # the call's slot (one call in flight each); None: given up on
            return (s, tries[s]) if s is not None else (-1, 0)
        wiring.attempt_of = attempt_of

        def call_id_of(c: int, tok: int) -> int:
            s = waiting.get(tok)
            return call_of[s] if s is not None else -1
        wiring.call_id_of = call_id_of
        if not plain:
            def chain_of(c: int, tok: int) -> object:
                s = waiting.get(tok)  # the call's chain (hedges ask its policies); None: given up on
                return own[s] if s is not None else None
            wiring.chain_of = chain_of

        def sends(t: float, c: int, s: int) -> int:
            if from_send:
                sent_at[s] = t
            tok = next_token()
            waiting[tok] = s
            k = tries[s] + 1
            tries[s] = k
            attempts[c] += 1
            if k > 1:
                retries[int(t * inv)] += 1
            heappush(near, (t + net[c](), seq(), receive[0], c, tok))
            if timeout is not None:
                if not due:
                    heappush(heap, (t + timeout, seq(), on_timeout, c, tok))
                due.append((t + timeout, c, tok))
            cell[0] = call_of[s]
            return write_code | ((k + 1) << shift)

        def call_ends(c: int, s: int) -> None:
            if not plain:
                idle[c].append(own[s])
            own[s] = None
            free.append(s)

        def succeeded(t: float, c: int, tok: int) -> int:
            s = waiting.pop(tok, None)
            if s is None:
                counts["late"] += 1
                return NO_EVENT
            counts["successes"] += 1
            keep_latency(t - first[s], c, t)
            goodput[int(t * inv)] += 1
            k = tries[s]
            cell[0] = call_of[s]
            if plain:
                # The slot's backoff sequence, if any, stays until a later call's first failure
                # replaces it (``after_failure``): nothing reads it before.
                free.append(s)
            else:
                current[0] = c
                own[s].on_success(t, k, first[s])
                call_ends(c, s)
            return succeeds_code | ((k + 1) << shift)

        def failure_reply(kind: int) -> Callable[[float, int, int], int]:
            def failed(t: float, c: int, tok: int) -> int:
                s = waiting.pop(tok, None)
                if s is None:
                    counts["late"] += 1
                    return NO_EVENT
                counts["rejections"] += 1
                return after_failure(t, c, s << KIND_BITS | kind)
            return failed

        def on_timeout(t: float, c: int, tok: int) -> int:
            # The oldest attempt still in ``due`` is due now; then the next attempt still waiting
            # (those replied meanwhile are passed over: no heap item each) gets the heap's item.
            due.popleft()
            while due:
                nxt = due[0]
                if nxt[2] in waiting:
                    heappush(heap, (nxt[0], seq(), on_timeout, nxt[1], nxt[2]))
                    break
                due.popleft()
            s = waiting.pop(tok, None)
            if s is None:
                return NO_EVENT
            counts["timeouts"] += 1
            timed_out[int(t * inv)] += 1
            if receive[2] is not None:
                receive[2](t, c, tok)
            heappush(near, (t, seq(), after_failure, c, s << KIND_BITS | TIMED_OUT))
            cell[0] = call_of[s]
            return times_out_code | ((tries[s] + 1) << shift)

        if plain:
            def after_failure(t: float, c: int, a: int) -> int:
                s = a >> KIND_BITS
                if tries[s] == 1:
                    own[s] = delays(jitter[c]).__next__  # a fresh sequence for the call
                delay = own[s]()
                heappush(heap, (max(t, sent_at[s] + delay) if from_send else t + delay, seq(), send, c, s))
                cell[0] = call_of[s]
                return backs_off

            send = sends
        else:
            def after_failure(t: float, c: int, a: int) -> int:
                s, kind = a >> KIND_BITS, a & KIND_MASK
                k = tries[s]
                current[0] = c
                verdict = own[s].on_failure(t, kind, k, first[s])
                cell[0] = call_of[s]
                if verdict.__class__ is GiveUp:
                    counts["gave_up"] += 1
                    call_ends(c, s)
                    if verdict.denied:
                        return policy.denied(verdict.reason)
                    return gives_up | ((k + 1) << shift)
                heappush(heap, (max(t, sent_at[s] + verdict) if from_send else t + verdict,
                                seq(), send, c, s))
                return policy.backs_off(c)

            def asked(t: float, c: int, a: int) -> int:
                if a >= 0:  # not yet let through (~slot: held, then let through)
                    s = a
                    current[0] = c
                    hold = own[s].on_attempt(t, tries[s] + 1, first[s])
                    if hold.__class__ is GiveUp:
                        tries[s] += 1
                        refused[0] += 1
                        sent_at[s] = t  # refused now: a backoff from the send counts from here
                        heappush(near, (t, seq(), after_failure, c, s << KIND_BITS | DENIED))
                        cell[0] = call_of[s]
                        return policy.refused(hold.reason, tries[s])
                    if hold:
                        heappush(heap, (t + hold, seq(), asked, c, ~s))
                        return NO_EVENT
                    return sends(t, c, s)
                return sends(t, c, ~a)

            send = asked

        def still_waiting(c: int, tok: int) -> bool:
            return tok in waiting

        wiring.client_succeeded = succeeded
        wiring.client_server_error = failure_reply(SERVER_ERROR)
        wiring.client_rejected = failure_reply(REJECTED)
        wiring.client_committed = None
        wiring.still_waiting = still_waiting
        if wiring.gate is not None:
            wiring.gate.still_waiting = still_waiting
        self._waiting = waiting
        for c, t0 in enumerate(start_times):
            heappush(heap, (t0, seq(), new_call, c, 0))
        if initial is None:
            return

        # A state to start from (``InitialState``, a phase portrait's): its orbit's calls in
        # backoff and its work's requests at the server, spread over the clients in turn, every
        # call on its ``attempt``-th attempt; the clients' own arrivals go on as usual.
        attempt = initial.attempt

        def deliver(t: float, c: int, tok: int) -> int:
            return receive[0](t, c, tok)

        def seeded_call(c: int) -> int:
            s = free.pop() if free else new_slot()
            call_of[s] = next_call_id()
            tries[s] = attempt
            if plain:
                if attempt > 1:  # the sequence after ``attempt - 1`` failures
                    own[s] = delays(jitter[c]).__next__
                    for _ in range(attempt - 1):
                        own[s]()
            else:
                spare = idle[c]
                own[s] = spare.pop() if spare else new_chain(c)
            return s

        for i in range(initial.orbit):
            c = i % n
            s = seeded_call(c)
            residual = residuals[i] if i < len(residuals) else 0.5
            if plain:
                own[s] = own[s] if attempt > 1 else delays(jitter[c]).__next__
                heappush(heap, (own[s]() * residual, seq(), send, c, s))
                continue
            current[0] = c
            verdict = own[s].on_failure(0.0, TIMED_OUT, attempt, 0.0)
            if verdict.__class__ is GiveUp:
                call_ends(c, s)
            else:
                heappush(heap, (verdict * residual, seq(), send, c, ~s))  # let through: not asked again
        timeouts = []
        room = initial.work if initial.held is None else initial.held
        for i in range(initial.work):
            c = i % n
            s = seeded_call(c)
            age = ages[i] if i < len(ages) else 0.0
            first[s] = -age
            tok = next_token()
            waiting[tok] = s
            attempts[c] += 1
            arrives = 0.0 if i < room else initial.arrival(age, timeout)  # else at the door
            if arrives is not None:
                heappush(heap, (arrives, seq(), deliver, c, tok))
            if timeout is not None:
                timeouts.append((max(0.0, timeout - age), c, tok))
        timeouts.sort()  # ``due`` is in the order the timeouts fall due
        if timeouts:
            heappush(heap, (timeouts[0][0], seq(), on_timeout, timeouts[0][1], timeouts[0][2]))
            due.extend(timeouts)

    @property
    def in_backoff(self) -> int:
        """Calls open and not waiting for an attempt's reply: backing off (or held by a policy),
        the retry orbit of a phase portrait."""
        return len(self._slots) - len(self._free) - len(self._waiting)

    @property
    def unfinished(self) -> int:
        """Calls still open at the horizon (a client may have several)."""
        return len(self._slots) - len(self._free)
