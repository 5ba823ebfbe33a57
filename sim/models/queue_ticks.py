"""``QueueServer`` with ``overload_rule = "per_tick"``: study 004's overwhelmed service, tick by tick.

The study's service runs in discrete time steps; while overwhelmed (more than the threshold of
outstanding requests) "it will only process a subset of requests, with each request equally
likely to make forward progress". So here the server's clock is cut into ticks of
``overload_tick`` (a grid from t = 0 on the server's own clock, which stops in an outage). At each
tick, with N requests outstanding (in service, queued, being rejected), each request in progress
(in service or being rejected) goes on for the whole tick with probability
``p = min(1, threshold / N)``, independently, or stands still for it. A request that starts
between two ticks is drawn for the rest of that tick with the p of that moment (one with no work
to do, a ``reject_delay`` of 0, ends at once).

Below the threshold p = 1: every request runs without a pause and completes exactly
``service_time`` (or ``reject_delay``) after it starts, as under ``"at_start"``. Above it, a
request's mean progress per tick is ``threshold / N = 1 / slowdown``, the ``"at_start"`` rule's
slowdown; but it follows the load as it changes (a request started before the spike is held back
when the spike comes) and it is random (the study's "equally likely").

Each request in progress is a record ``[remaining, since, client, token, service, finishing]``:
``remaining`` work as of ``since`` (server clock; None: standing still this tick), whether it is
a service (else a rejection), and whether its end is already scheduled (it ends within the
tick it runs in, so nothing can stop it). A tick is one unrecorded event, only while some
request is in progress.
"""

from __future__ import annotations

from collections import deque
from heapq import heappush
from itertools import count
from typing import TYPE_CHECKING

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.core.streams import uniform01
from sim.models.controls import ServerHandlers
from sim.models.incidents import IncidentHooks, kept_slots, slot_speed

if TYPE_CHECKING:
    from sim.core.wiring import Wiring

# Work left at most this far past a tick's end (float error in remaining -= tick, e.g. a
# service_time of 0.3 cut into ticks of 0.1) still ends in that tick: 1e-9 of a tick is far
# below any time the outputs print (12 significant digits of times up to ~1e3 ticks).
_SLACK = 1e-9


def build_per_tick(wiring: Wiring, concurrency: int, service_time: float, queue_size: int,
                   reject_delay: float, threshold: int, tick: float) -> ServerHandlers:
    """The handlers of one run of a ``QueueServer`` whose overload acts per tick (threshold > 0)."""
    heap, seq, net, gate, near = wiring.heap, wiring.seq, wiring.net, wiring.gate, wiring.near
    rejected, succeeded, series = wiring.client_rejected, wiring.client_succeeded, wiring.series
    uniform = wiring.server_stream(uniform01)
    queue: deque[tuple[int, int]] = deque()
    active: dict[int, list] = {}  # request id -> record (see the module's docstring), oldest first
    ids = count().__next__
    in_service = 0
    rejecting = 0
    slots = concurrency  # the service slots kept (a capacity incident keeps fewer)
    work, reject_work = service_time, reject_delay  # as a slowdown incident stretches them
    ticking = False  # a tick is scheduled
    next_tick = 0.0  # server-clock time of the scheduled tick
    slack = tick * _SLACK
    accepts, rejects = ev.pack(ev.SERVER_ACCEPTS), ev.pack(ev.SERVER_REJECTS)
    queues_code, completes_code, shift = ev.SERVER_QUEUES, ev.SERVER_COMPLETES, ev.DETAIL_SHIFT
    accepted_series, rejected_series, inv = series.accepted, series.rejected, series.inverse_width

    def chance() -> float:
        """The probability that a request in progress goes on this tick."""
        outstanding = in_service + len(queue) + rejecting
        return threshold / outstanding if outstanding > threshold else 1.0

    def start(t: float, c: int, token: int, work: float, service: bool) -> None:
        # A request enters service or starts being rejected at t (the counts already include it).
        nonlocal ticking, next_tick
        now = t - gate.stopped_for if gate is not None else t
        if not ticking:
            ticking = True
            n = int(now / tick) + 1
            next_tick = n * tick
            heappush(heap, (t + (next_tick - now), seq(), on_tick, -1, n))
        rid = ids()
        record = [work, None, c, token, service, False]
        active[rid] = record
        if work > 0.0:  # nothing to do (reject_delay = 0) needs no turn: it ends at once
            p = chance()
            if p < 1.0 and uniform() >= p:
                return  # stands still until the next tick
        record[1] = now
        if work <= next_tick - now + slack:
            record[5] = True
            heappush(heap, (t + work, seq(), finish, c, rid))

    def on_tick(t: float, c: int, n: int) -> int:
        nonlocal ticking, next_tick
        now = n * tick
        p = chance()
        for rid, record in active.items():
            if record[5]:
                continue  # ends within the tick it ran in
            since = record[1]
            if since is not None:
                record[0] -= now - since
            if p < 1.0 and uniform() >= p:
                record[1] = None
                continue
            record[1] = now
            if record[0] <= tick + slack:
                record[5] = True
                heappush(heap, (t + max(record[0], 0.0), seq(), finish, record[2], rid))
        if active:
            next_tick = now + tick
            heappush(heap, (t + tick, seq(), on_tick, -1, n + 1))
        else:
            ticking = False
        return NO_EVENT

    def finish(t: float, c: int, rid: int) -> int:
        nonlocal in_service, rejecting
        _, _, _, token, service, _ = active.pop(rid)
        reply = succeeded if service else rejected  # on its way: ``Wiring.near`` (no outage moves it)
        heappush(near, (t + net[c](), seq(), reply, c, token))
        if not service:
            rejecting -= 1
            return NO_EVENT
        in_service -= 1
        if queue and in_service < slots:
            nc, ntoken = queue.popleft()
            in_service += 1
            start(t, nc, ntoken, work, True)
        return completes_code | ((in_service + 1) << shift)

    def receive_write(t: float, c: int, token: int) -> int:
        nonlocal in_service, rejecting
        if in_service < slots:
            in_service += 1
            accepted_series[int(t * inv)] += 1
            start(t, c, token, work, True)
            return accepts
        if len(queue) < queue_size:
            queue.append((c, token))
            accepted_series[int(t * inv)] += 1
            return queues_code | ((len(queue) + 1) << shift)
        rejecting += 1
        rejected_series[int(t * inv)] += 1
        start(t, c, token, reject_work, False)
        return rejects

    factor, speed = 1.0, 1.0  # a slowdown incident's, and the kept slots' (``slot_speed``)

    def set_capacity(t: float, fraction: float) -> None:
        # Slots regained take queued requests at once; slots lost empty as work finishes;
        # service that starts from now on takes 1 / speed as long.
        nonlocal slots, in_service, speed, work
        slots, speed = kept_slots(concurrency, fraction), slot_speed(concurrency, fraction)
        work = service_time * factor / speed
        while queue and in_service < slots:
            nc, ntoken = queue.popleft()
            in_service += 1
            start(t, nc, ntoken, work, True)

    def set_slowdown(t: float, level: float) -> None:
        # Work fixed when a request starts: those in progress keep what they have left.
        nonlocal work, reject_work, factor
        factor = level
        work, reject_work = service_time * factor / speed, reject_delay * factor

    if gate is not None:
        gate.freeze(on_tick)
        gate.freeze(finish)
    wiring.server_state = lambda: (in_service, len(queue))
    wiring.incident_hooks = IncidentHooks(set_capacity, set_slowdown)
    return ServerHandlers(receive_write)
