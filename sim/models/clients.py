"""The one client model: every control and every workload, built from parts chosen by declared data.

A client makes calls: one per start time of the workload (``Workload.start_times``; a burst is
every client at 0), and with a workload that repeats (``Workload.REPEATS``) another after each one
ends. A call is attempts until one succeeds or the client gives up. Every client hears the outcome
of each attempt: accepted or committed, rejected, aborted, a server error, timed out
(``sim.vocabulary.outcomes``).

What differs between runs is chosen once, when the run is built, never per event:

- **How an attempt travels** (the server's ``Capabilities.replies``). A server that replies
  answers each attempt with a message: the attempt carries a token, a reply or timeout whose
  token is stale (the client has moved on) is ignored, so abandoned work the server still
  finishes is wasted, as in study 003; a timeout is one event (``client_times_out``) and the
  decision that follows is the next, at the same instant, so every heap item stays one recorded
  event. A contention control does not reply on success: a rejection or abort arrives as a
  message (``client_rejected``, its arg the failure kind) and a success is heard from the control
  at that instant (``client_committed``, no event); attempts carry no token and no timeout.
- **A version read first** (the control's ``READS_VERSION``, read-then-write OCC).
- **Series counters** (offered, retries, timed out, goodput) where the run keeps series, which is
  where the server replies (``Capabilities.keeps_series``).
- **The decision after a failure** (``ChainFactory.plain``): the strategy alone draws the next
  delay inline; otherwise each client asks its policy chain before each attempt and after each
  outcome (``sim.policies.seam``).
- **What follows a call** (``Workload.REPEATS``): the next after a think time, or nothing.

The packed events are those each path always recorded: a write to a contention control carries no
attempt number, one to a replying server carries it, so histories stay byte-identical.

Every call has an id, the run's calls numbered from 0 as they start; a handler that returns an
event of a call (an attempt, a backoff, a timeout, the success, give-up or denial) puts its id
in ``Wiring.call`` for the engine to record beside it (``History.calls``). A call's latency, from
its start to its success, is kept by the one sampling rule (``sim.core.latency_sample``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from heapq import heappush
from itertools import count
from typing import TYPE_CHECKING

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.core.latency_sample import LatencySample
from sim.core.streams import PURPOSE_STATE
from sim.vocabulary.errors import ParamError, UserError
from sim.vocabulary.outcomes import DENIED, REJECTED, SERVER_ERROR, TIMED_OUT, ChainFactory, GiveUp
from sim.models.policy_events import PolicyEvents
from sim.models.workloads import Workload

if TYPE_CHECKING:
    import numpy as np

    from sim.models.initial import InitialState

    from sim.core.wiring import Wiring
    from sim.models.controls import Capabilities, Control

# The arg of an attempt the chain already let through (after a hold or a backoff): not asked again.
HELD = -2


# Where a retry's backoff counts from (``backoff_from``), the default first: the failure's reply,
# or the failed attempt's send (the retry at max(reply, send + backoff): study 004's clients, whose
# "retry after 5 ticks" is 5 ticks after the try, the 1-tick rejection inside them).
BACKOFF_FROM = ("reply", "send")


def client_events(caps: Capabilities) -> frozenset[int]:
    """Every event code the clients of a server with these capabilities can record."""
    common = {ev.CLIENT_REQUESTS_WRITE, ev.CLIENT_BACKS_OFF, ev.CLIENT_GIVES_UP} | PolicyEvents.EVENTS
    if caps.replies:
        return frozenset(common | {ev.CLIENT_TIMES_OUT, ev.CLIENT_SUCCEEDS, ev.CLIENT_HEDGES})  # hedges: replying servers
    return frozenset(common | {ev.CLIENT_REQUESTS_VERSION})  # read-then-write reads first


def workload_problem(caps: Capabilities, workload: Workload) -> str | None:
    """Why this server cannot run this workload, or None. A workload that repeats sends requests
    until a horizon and is measured by its series (goodput, latencies): only a server that keeps
    series (``Capabilities.keeps_series``) has both."""
    if workload.REPEATS and not caps.keeps_series:
        return (f"{workload.NAME!r} repeats calls until a horizon and is measured by per-bucket "
                "series, which only servers that reply keep")
    return None


class Clients:
    """The clients of one run, any control and any workload (see the module docstring).

    Building it puts every client's first call on the heap; ``bind`` then gives it the server's
    entry points. ``attempts`` holds each client's attempts (``work`` is those sent); ``counts``
    the outcomes heard where the server replies (without replies only ``gave_up`` is counted: a
    success or a rejection is then the control's own event).
    """

    # The ``Series`` counters these clients fill where the run keeps series (the server fills its
    # own, ``Capabilities.series``).
    SERIES: tuple[str, ...] = ("offered", "retries", "timed_out", "goodput")

    def __init__(self, wiring: Wiring, chain: ChainFactory, control: Control, workload: Workload,
                 timeout: float | None, start_times: list[float],
                 gaps: list[Callable[[], float]] | None, initial: InitialState | None = None,
                 residuals: Sequence[float] = (), ages: Sequence[float] = ()) -> None:
        caps = control.CAPS
        problem = workload_problem(caps, workload)
        if problem is not None:
            raise ParamError("workload", f"{problem}; {control.type_name} lets clients assume success",
                             'use workload = "burst" or "spike" with a contention control')
        n = len(wiring.net)
        heap, seq, net, jitter = wiring.heap, wiring.seq, wiring.net, wiring.jitter
        # A client's messages on their way and its decisions due at once go to the small heap of
        # items due soon (``Wiring.near``): no outage moves a client's steps.
        near = wiring.near
        replies = caps.replies
        self.attempts = attempts = [0] * n
        # The current call's attempt number (refused ones included) and when it began. Without
        # replies a client makes one call, so its attempts so far are that number.
        tries = [0] * n if replies else attempts
        first = [0.0] * n
        # Each client's current call's id (``History.calls``: calls numbered as they start),
        # and the cell through which a handler tells the engine the call of its event.
        call_of = [-1] * n
        next_call_id = count().__next__
        cell = wiring.call
        self.counts = counts = {"successes": 0, "rejections": 0, "timeouts": 0, "gave_up": 0, "late": 0}
        self._refused = refused = [0]  # attempts a chain refused before sending (not work)
        self._active: list[bool] | None = None
        receive: list[Callable] = [None, None, None]  # (receive_write, receive_read, stopped_waiting), set by bind()
        self._receive = receive
        shift = ev.DETAIL_SHIFT
        backs_off, gives_up = ev.pack(ev.CLIENT_BACKS_OFF), ev.CLIENT_GIVES_UP
        plain = chain.plain
        # A strategy whose delays start from the call's think time (study 003's Go client):
        # each client's last think time, its first start time at first (a Poisson start is a gap).
        from_think = getattr(chain.strategy, "FROM_THINK_TIME", False)
        if from_think and not workload.REPEATS:
            raise ParamError("workload", f"{chain.strategy.type_name} starts its backoff from the "
                             f"client's last think time, and workload {workload.NAME!r} has none",
                             'use workload = "poisson"')
        last_think = list(start_times) if from_think else None
        thinks = None if last_think is None else [partial(last_think.__getitem__, c) for c in range(n)]
        chains = None if plain else chain.build(jitter) if thinks is None else chain.build(jitter, thinks)
        self.policy = policy = None if chains is None else PolicyEvents(chains, heap, seq)
        current = [0] if policy is None else policy.current
        delays = chain.strategy.delays if plain and not from_think else None
        think_delays = chain.strategy.think_delays if plain and from_think else None
        backoff: list[Callable[[], float]] = [float] * n  # the current call's delays (plain)

        # --- what follows a call: the next one after a think time (workloads that repeat) ------
        surge = getattr(workload, "surge", None)

        def think_then_call(t: float, c: int) -> None:
            gap = gaps[c]()
            if surge is not None and surge[0] <= t < surge[1]:
                gap /= surge[2]
            if last_think is not None:
                last_think[c] = gap
            heappush(heap, (t + gap, seq(), new_call, c, 0))

        def no_next_call(t: float, c: int) -> None:
            return None

        logged = workload.logged_calls(n)  # a trace: each client's next logged start, None after its last

        def next_logged(t: float, c: int) -> None:
            # A call logged while the client was busy starts now; a later one at its time.
            due = logged[c]()
            if due is not None:
                heappush(heap, (due if due > t else t, seq(), new_call, c, 0))

        next_call = ((think_then_call if logged is None else next_logged) if workload.REPEATS
                     else no_next_call)

        # --- how an attempt travels, and the outcomes the client hears -------------------------
        if replies:
            self._active = active = [False] * n
            token = [0] * n
            waiting = [False] * n
            series = wiring.series  # a server that replies keeps series (Capabilities.keeps_series)
            inv = series.inverse_width
            offered, retries, timed_out, goodput = series.offered, series.retries, series.timed_out, series.goodput
            if chain.attempt_timeout is not None:
                timeout = chain.attempt_timeout if timeout is None else min(timeout, chain.attempt_timeout)
            # The latencies kept (``sim.core.latency_sample``: the one rule), with each one's
            # client and arrival time.
            self.latency_sample = sample = LatencySample()
            keep_latency = sample.keep
            write_code, succeeds_code, times_out_code = ev.CLIENT_REQUESTS_WRITE, ev.CLIENT_SUCCEEDS, ev.CLIENT_TIMES_OUT

            def new_call(t: float, c: int, a: int) -> int:
                active[c] = True
                first[c] = t
                call_of[c] = next_call_id()
                tries[c] = 0
                if plain:  # a fresh sequence: the reset after success
                    backoff[c] = (delays(jitter[c]) if think_delays is None
                                  else think_delays(jitter[c], last_think[c])).__next__
                offered[int(t * inv)] += 1
                return send(t, c, a)

            def sends(t: float, c: int, a: int) -> int:
                tok = token[c] + 1
                token[c] = tok
                waiting[c] = True
                k = tries[c] + 1
                tries[c] = k
                attempts[c] += 1
                if k > 1:
                    retries[int(t * inv)] += 1
                heappush(near, (t + net[c](), seq(), receive[0], c, tok))  # on its way: ``Wiring.near``
                if timeout is not None:
                    due_at = t + timeout
                    s = seq()
                    if not due:  # the only timeout due: it gets the heap item (see ``timeout_due``)
                        heappush(heap, (due_at, s, timeout_due, c, tok))
                    due.append((due_at, s, c, tok))
                cell[0] = call_of[c]
                return write_code | ((k + 1) << shift)

            def call_ends(t: float, c: int) -> None:
                active[c] = False
                next_call(t, c)

            def succeeded(t: float, c: int, tok: int) -> int:
                if tok != token[c] or not waiting[c]:
                    counts["late"] += 1
                    return NO_EVENT
                waiting[c] = False
                active[c] = False
                counts["successes"] += 1
                keep_latency(t - first[c], c, t)
                goodput[int(t * inv)] += 1
                if heard is not None:
                    heard(t, c)
                cell[0] = call_of[c]
                next_call(t, c)
                return succeeds_code | ((tries[c] + 1) << shift)

            def failure_reply(kind: int) -> Callable[[float, int, int], int]:
                # A failure reply of ``kind``: a rejection (throttling) or a server error; both
                # count in ``rejections`` (the server answered no).
                def failed(t: float, c: int, tok: int) -> int:
                    if tok != token[c] or not waiting[c]:
                        counts["late"] += 1
                        return NO_EVENT
                    waiting[c] = False
                    counts["rejections"] += 1
                    return after_failure(t, c, kind)
                return failed

            rejected = failure_reply(REJECTED)

            # Every attempt's timeout, in the order sent, which (one timeout for the run) is the
            # order they fall due: only the oldest has a heap item, with the key it was given when
            # its attempt was sent, so the heap's order is the one it would be with an item each;
            # an attempt answered in time costs the heap nothing (a stale item's push, pop and
            # handler were ~20% of server_outage's events). ``wiring.unscheduled`` counts the
            # keys taken by timeouts that never reach the heap, which the engine's count of
            # events leaves out as it leaves out the stale timeouts they were.
            due: deque[tuple[float, int, int, int]] = deque()
            skipped = 0

            def timeout_due(t: float, c: int, tok: int) -> int:
                nonlocal skipped
                due.popleft()
                while due:
                    nxt = due[0]
                    c2, tok2 = nxt[2], nxt[3]
                    if waiting[c2] and token[c2] == tok2:
                        heappush(heap, (nxt[0], nxt[1], timeout_due, c2, tok2))
                        break
                    due.popleft()
                    skipped += 1
                return on_timeout(t, c, tok)

            wiring.unscheduled = lambda: skipped + max(len(due) - 1, 0)

            def on_timeout(t: float, c: int, tok: int) -> int:
                if tok != token[c] or not waiting[c]:
                    return NO_EVENT
                waiting[c] = False
                counts["timeouts"] += 1
                timed_out[int(t * inv)] += 1
                if receive[2] is not None:  # a server that cancels abandoned work hears of it
                    receive[2](t, c, tok)
                heappush(near, (t, seq(), after_failure, c, TIMED_OUT))
                cell[0] = call_of[c]
                return times_out_code | ((tries[c] + 1) << shift)

            def deliver(t: float, c: int, tok: int) -> int:
                # A request already at the server when the run starts (``InitialState``).
                return receive[0](t, c, tok)

            def fresh_backoff(c: int, failed: int) -> None:
                # A fresh sequence of delays, ``failed`` of them already used (plain strategies).
                backoff[c] = (delays(jitter[c]) if think_delays is None
                              else think_delays(jitter[c], last_think[c])).__next__
                for _ in range(failed):
                    backoff[c]()

            def seed_at_server(c: int, live: bool, attempt: int, age: float = 0.0,
                               arrives: float | None = 0.0) -> None:
                # A live request is the client's current attempt (number ``attempt`` of its call,
                # sent ``age`` before t = 0: its timeout falls due that much sooner, and it reaches
                # the server at ``arrives``, None: never); an orphan one (token 0, never a live
                # token) is abandoned work the server still holds, whose reply nobody waits for.
                tok = 0
                if live:
                    active[c] = waiting[c] = True
                    call_of[c] = next_call_id()
                    tok = token[c] = token[c] + 1
                    tries[c] = attempt
                    attempts[c] += 1
                    if plain:
                        fresh_backoff(c, attempt - 1)
                    if timeout is not None:
                        heappush(heap, (max(0.0, timeout - age), seq(), on_timeout, c, tok))
                if arrives is not None:  # None: at the door with no retransmit before its timeout
                    heappush(heap, (arrives, seq(), deliver, c, tok))

            def seed_in_orbit(c: int, residual: float, attempt: int) -> None:
                # A client whose attempt number ``attempt`` failed just before t = 0, ``residual``
                # (a fraction in [0, 1)) of the backoff after it left to wait.
                active[c] = True
                call_of[c] = next_call_id()
                tries[c] = attempt
                if plain:
                    fresh_backoff(c, attempt - 1)
                    heappush(heap, (backoff[c]() * residual, seq(), send, c, 0))
                    return
                verdict = chains[c].on_failure(0.0, TIMED_OUT, attempt, 0.0)
                if verdict.__class__ is GiveUp:
                    active[c] = False
                    next_call(0.0, c)
                else:
                    heappush(heap, (verdict * residual, seq(), send, c, HELD))

            self._seed_at_server, self._seed_in_orbit = seed_at_server, seed_in_orbit
            wiring.attempt_of = lambda c, tok: (c, tries[c])  # one call at a time: the client is the call
            wiring.call_id_of = lambda c, tok: call_of[c]
            if chains is not None:
                wiring.chain_of = lambda c, tok: chains[c]  # hedges ask the client's policies
            self._waiting = waiting
            wiring.client_succeeded = succeeded
            wiring.client_server_error = failure_reply(SERVER_ERROR)
            wiring.still_waiting = lambda c, tok: waiting[c] and token[c] == tok
            if wiring.gate is not None:
                # Whether a client still waits for an attempt: a held request whose client does
                # not is abandoned (served or dropped at the resume), a SYN stops being retransmitted.
                wiring.gate.still_waiting = wiring.still_waiting
                # A connect() that fails after the SYN's last retransmit (a full accept queue) is
                # heard as the attempt timing out (ETIMEDOUT).
                wiring.gate.connect_failed = on_timeout
        else:
            requests_write = ev.pack(ev.CLIENT_REQUESTS_WRITE)
            requests_version = ev.pack(ev.CLIENT_REQUESTS_VERSION)

            def new_call(t: float, c: int, a: int) -> int:
                first[c] = t
                call_of[c] = next_call_id()
                if plain:
                    backoff[c] = delays(jitter[c]).__next__
                return send(t, c, a)

            def write(t: float, c: int, version: int) -> int:
                # Sends the write; `version` is what the client read (read-then-write OCC) or 0.
                attempts[c] += 1
                heappush(heap, (t + net[c](), seq(), receive[0], c, version))
                cell[0] = call_of[c]
                return requests_write

            def read(t: float, c: int, a: int) -> int:
                heappush(heap, (t + net[c](), seq(), receive[1], c, 0))
                cell[0] = call_of[c]
                return requests_version

            sends = read if control.READS_VERSION else write

            def call_ends(t: float, c: int) -> None:
                return None

            wiring.client_version_reply = write

        # --- backoff counted from the send (``backoff_from = "send"``) ---------------------------
        from_send = wiring.backoff_from_send
        sent_at = [0.0] * n  # when each client's last attempt was sent (or refused)
        if from_send:
            sends_now = sends

            def sends(t: float, c: int, a: int) -> int:  # noqa: F811 - the same, noting the time
                sent_at[c] = t
                return sends_now(t, c, a)

        # --- the decision after a failure, and before each attempt with a chain -----------------
        if plain and from_send:
            def after_failure(t: float, c: int, kind: int) -> int:
                # The retry a backoff after the send, but never before the failure is heard.
                at = sent_at[c] + backoff[c]()
                if at > t:
                    heappush(heap, (at, seq(), send, c, 0))
                else:  # due at once: the heap of items due soon, as a retry without backoff
                    heappush(near, (t, seq(), send, c, 0))
                cell[0] = call_of[c]
                return backs_off

            send = sends
            heard = None
        elif plain:
            def after_failure(t: float, c: int, kind: int) -> int:
                delay = backoff[c]()
                heappush(heap if delay else near, (t + delay, seq(), send, c, 0))
                cell[0] = call_of[c]
                return backs_off

            send = sends
            heard = None
        else:
            def after_failure(t: float, c: int, kind: int) -> int:
                # `kind`: how the attempt failed (sim.vocabulary.outcomes), heard by the chain.
                k = tries[c]
                current[0] = c
                verdict = chains[c].on_failure(t, kind, k, first[c])
                cell[0] = call_of[c]
                if verdict.__class__ is GiveUp:
                    counts["gave_up"] += 1
                    call_ends(t, c)
                    if verdict.denied:
                        return policy.denied(verdict.reason)
                    return gives_up | ((k + 1) << shift)
                heappush(heap, (max(t, sent_at[c] + verdict) if from_send else t + verdict, seq(), send, c, 0))
                return policy.backs_off(c)

            def asked(t: float, c: int, a: int) -> int:
                # Before each attempt: the chain may hold it (a rate limiter) or refuse it.
                if a != HELD:
                    current[0] = c
                    hold = chains[c].on_attempt(t, tries[c] + 1, first[c])
                    if hold.__class__ is GiveUp:
                        # Refused before sending (an open breaker): an attempt of the call's count,
                        # but no request, so no work and no load on the server. Recorded, then heard
                        # as a failure of kind DENIED at the same instant.
                        tries[c] += 1
                        refused[0] += 1
                        sent_at[c] = t  # refused now: a backoff from the send counts from here
                        heappush(heap, (t, seq(), after_failure, c, DENIED))
                        cell[0] = call_of[c]
                        return policy.refused(hold.reason, tries[c])
                    if hold:
                        heappush(heap, (t + hold, seq(), asked, c, HELD))
                        return NO_EVENT
                return sends(t, c, 0)

            def heard(t: float, c: int) -> None:
                # A success (accepted or committed), heard by the chain.
                current[0] = c
                chains[c].on_success(t, tries[c], first[c])

            send = asked

        # A replying server answers with a token; a contention control says the failure's kind,
        # and a success is heard from it at once, by a chain if any listens.
        wiring.client_rejected = rejected if replies else after_failure
        wiring.client_committed = None if replies else heard
        if wiring.ahead and plain and not replies:
            # A run that keeps no history (``run_metrics``, ``Wiring.ahead``): what a contention
            # control's client does when a failure or a version read arrives touches only its
            # own state and streams (its attempts, its rows of the network and jitter streams,
            # which nothing else draws while its one message is on its way), so it is done when
            # the server sends the message, at the message's arrival time, instead of as items of
            # its own: a failed attempt against the sample's LockingServer is one item, not three.
            # Only the next request's seq changes (taken earlier), which would change the order
            # only on an exact tie of its time with another item's (``engine.ahead_is_exact``).
            taken, reads = wiring.taken_ahead, control.READS_VERSION

            def failure_ahead(t: float, c: int, kind: int) -> None:
                # The failure heard at t (backs off: an event), the next attempt sent after the
                # delay (an event), as ``after_failure`` then ``send`` (``read`` or ``write``)
                # would: its request arrives a network delay later.
                sent = t + backoff[c]()
                if reads:
                    heappush(heap, (sent + net[c](), seq(), receive[1], c, 0))
                else:
                    attempts[c] += 1
                    heappush(heap, (sent + net[c](), seq(), receive[0], c, 0))
                taken[0] += 2

            def version_ahead(t: float, c: int, version: int) -> None:
                # The version heard and the write sent (one event), as ``write`` would.
                attempts[c] += 1
                heappush(heap, (t + net[c](), seq(), receive[0], c, version))
                taken[0] += 1

            wiring.client_rejected_at, wiring.client_version_at = failure_ahead, version_ahead
        self._attempts_count_refused = not replies  # ``tries`` is ``attempts`` (see ``work``)
        self._timeout = timeout
        if initial is None:
            for c, t0 in enumerate(start_times):
                heappush(heap, (t0, seq(), new_call, c, 0))
        else:
            self._start_in(initial, residuals, start_times, replies, new_call, heap, seq, ages)

    def _start_in(self, initial: InitialState, residuals: Sequence[float], start_times: list[float],
                  replies: bool, new_call: Callable, heap: list, seq: Callable[[], int],
                  ages: Sequence[float] = ()) -> None:
        """Put the run in ``initial`` at t = 0: its orbit's clients in backoff, its work at the
        server (live requests of the next clients, then orphans), and the other clients thinking
        until their usual first start."""
        if not replies:
            raise UserError("a run can start from a state only against a server that replies")
        n = len(start_times)
        orbit = min(initial.orbit, n)
        live = initial.live(n)
        for c in range(orbit):
            self._seed_in_orbit(c, residuals[c], initial.attempt)
        if initial.held is None:
            for i in range(initial.work):
                self._seed_at_server((orbit + i) if i < live else i % n, i < live, initial.attempt,
                                     ages[i] if i < len(ages) else 0.0)
        else:
            # As an outage leaves them: the accept queue holds the oldest requests, the orphans
            # (their clients timed out) first, then live ones; the other live ones are at the door.
            orphans = initial.work - live
            for i in range(orphans):
                self._seed_at_server(i % n, False, initial.attempt)
            room = max(0, initial.held - orphans)
            for i in range(live):
                age = ages[i] if i < len(ages) else 0.0
                arrives = 0.0 if i < room else initial.arrival(age, self._timeout)  # else at the door
                self._seed_at_server(orbit + i, True, initial.attempt, age, arrives)
        for c in range(orbit + live, n):
            heappush(heap, (start_times[c], seq(), new_call, c, 0))

    @property
    def latencies(self) -> list[float]:
        """The latencies kept (``sim.core.latency_sample``), where the server replies."""
        return self.latency_sample.latencies

    @property
    def latency_clients(self) -> list[int]:
        return self.latency_sample.clients

    @property
    def latency_times(self) -> list[float]:
        """When each kept latency's success arrived."""
        return self.latency_sample.times

    @property
    def in_backoff(self) -> int:
        """Clients in a call and not waiting for an attempt's reply: backing off (or held by a
        policy) -- the retry orbit of a phase portrait. 0 without replies."""
        if self._active is None:
            return 0
        # A waiting client is always in a call, so those in a call less those waiting.
        return self._active.count(True) - self._waiting.count(True)

    def bind(self, receive_write: Callable, receive_read: Callable | None,
             stopped_waiting: Callable | None = None) -> None:
        """The server's entry points (built after the clients, which it answers), and what it
        wants to hear when a client stops waiting for an attempt (``ServerHandlers``)."""
        self._receive[0] = receive_write
        self._receive[1] = receive_read
        self._receive[2] = stopped_waiting

    def release(self) -> None:
        """Let go of the server's entry points once the run is over. The clients' closures and
        the server's call each other through them, a reference cycle that only the garbage
        collector frees; without it reference counting frees a contention run at once (the
        collector's pass over each run's structure was ~4% of the sample's sweep)."""
        self._receive[:] = [None] * len(self._receive)

    @property
    def work(self) -> int:
        """Attempts sent; without replies ``attempts`` also counts those a chain refused."""
        return sum(self.attempts) - (self._refused[0] if self._attempts_count_refused else 0)

    @property
    def calls(self) -> int:
        """Calls started, for runs without series (every client makes one: nothing cuts them)."""
        return len(self.attempts)

    @property
    def gave_up(self) -> int:
        return self.counts["gave_up"]

    @property
    def unfinished(self) -> int:
        """Calls still open (the run ended at its horizon); 0 without replies."""
        return 0 if self._active is None else sum(self._active)

    @property
    def retries_denied(self) -> int:
        return 0 if self.policy is None else self.policy.retries_denied

    @property
    def calls_refused(self) -> int:
        return 0 if self.policy is None else self.policy.calls_refused

    def breaker_open_time(self, end: float) -> float:
        return 0.0 if self.policy is None else self.policy.open_time(end)


def start_clients(wiring: Wiring, chain: ChainFactory, control: Control, workload: Workload,
                  timeout: float | None, stream: Callable[[], np.random.Generator],
                  model: type[Clients] | None = None, initial: InitialState | None = None) -> Clients:
    """The run's clients, their first calls at the workload's start times, drawn from the run's
    workload stream (``stream()``; not made for a workload that draws nothing), then each
    client's think times where the workload repeats. ``model``: another client model (the
    engine passes ``OpenClients`` where calls overlap, ``Workload.CONCURRENT``). ``initial``: a
    state to start from (``InitialState``) instead of every client at its first start."""
    n = len(wiring.net)
    rng = stream() if workload.DRAWS else None
    if initial is None:
        return (model or Clients)(wiring, chain, control, workload, timeout, workload.start_times(rng, n),
                       workload.gaps(rng, n))
    state = wiring._rng(PURPOSE_STATE)
    if model is not None:  # calls overlap (``OpenClients``): the state's calls are not the clients
        residuals = state.random(initial.orbit).tolist()
        ages = (state.random(initial.work) * float(initial.age)).tolist() if initial.age > 0 else []
        return model(wiring, chain, control, workload, timeout, workload.start_times(rng, n),
                     workload.gaps(rng, n), initial, residuals, ages)
    residuals = state.random(min(initial.orbit, n)).tolist()
    # The live requests' ages, drawn after the residuals: a state without ages draws as before.
    ages = (state.random(initial.live(n)) * float(initial.age)).tolist() if initial.age > 0 else []
    return Clients(wiring, chain, control, workload, timeout, workload.start_times(rng, n),
                   workload.gaps(rng, n), initial, residuals, ages)
