"""Overload servers that reply to every request: a bounded queue and a latency-collapse server.

Unlike the contention controls, these servers send a success reply, so clients can measure latency,
time out, and (in open workloads) go on to their next request. Both register in ``CONTROLS``.

Handlers follow the engine's protocol (see ``controls``); a handler that returns ``NO_EVENT`` did
internal bookkeeping only (e.g. a rejection leaving after ``reject_delay``), which is not recorded.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from heapq import heappush
from typing import TYPE_CHECKING, ClassVar

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.vocabulary.errors import ParamError
from sim.models.controls import Capabilities, Control, ServerHandlers, Timer, register
from sim.models.incidents import KINDS, IncidentHooks, kept_slots, slot_speed
from sim.models.queue_ticks import build_per_tick
from sim.vocabulary.params import above, at_least

if TYPE_CHECKING:
    from sim.core.wiring import Wiring

_MAX_LATENCY_EXPONENT = 700.0  # exp(700) ~ 1e304: latencies saturate instead of overflowing


OVERLOAD_RULES = ("at_start", "per_tick")  # the default first


@register
@dataclass(frozen=True, kw_only=True)
class QueueServer(Control):
    """Study 004's service: ``concurrency`` in service for ``service_time`` each, ``queue_size``
    waiting, the rest rejected after ``reject_delay``. Above ``overload_threshold`` outstanding
    requests (in service + queued + being rejected) it is overwhelmed, and useful throughput
    falls in proportion (outstanding / threshold):

    - ``overload_rule = "at_start"`` (the default): a request's time is fixed when it starts,
      stretched by outstanding / threshold at that moment (later load does not touch it). With
      the study's clients (``backoff_from = "send"``) it reproduces study 004's findings over
      spikes of 15-25%: constant backoff kept overwhelmed like no backoff (docs/study-notes.md);
    - ``"per_tick"`` (the study's words read literally, "each request equally likely to make
      forward progress"): every ``overload_tick`` each request in progress goes on with
      probability threshold / outstanding at that moment, or stands still
      (``sim.models.queue_ticks``). It has no memory of the peak; with the study's clients it
      keeps constant backoff overwhelmed too (17 of 20 runs at 15%), with clients that count
      their backoff from the reply constant backoff drains the spike.

    Incidents: capacity is its ``concurrency`` slots (``kept_slots``: requests in service beyond
    them finish, and no new one starts until fewer are busy; where the fraction of them is not
    whole, each kept slot serves more slowly, ``slot_speed``; the queue and the overload
    threshold stay as they are); a slowdown stretches the work of each service and rejection that starts in
    the window.
    """

    CAPS: ClassVar[Capabilities] = Capabilities(
        replies=True, keeps_series=True, latencies=True,
        events=frozenset({ev.SERVER_ACCEPTS, ev.SERVER_QUEUES, ev.SERVER_REJECTS, ev.SERVER_COMPLETES}),
        series=("accepted", "rejected"), state_sample=True)
    INCIDENTS: ClassVar[frozenset[str]] = frozenset(KINDS)
    CALLS_TIERS: ClassVar[bool] = True
    concurrency: int
    service_time: float
    queue_size: int = 0
    reject_delay: float = 0.0
    overload_threshold: int = 0  # 0: never overwhelmed
    overload_rule: str = "at_start"
    overload_tick: float = 1.0

    def validate(self) -> None:
        at_least(self, 1, "concurrency")
        above(self, 0, "service_time", "overload_tick")
        at_least(self, 0, "queue_size", "reject_delay", "overload_threshold")
        if self.overload_rule not in OVERLOAD_RULES:
            raise ParamError("overload_rule", f"must be one of {', '.join(map(repr, OVERLOAD_RULES))}, "
                             f"got {self.overload_rule!r}")

    def tier_problem(self, calls_below: bool) -> str | None:
        if calls_below and self.ticks:
            return 'QueueServer cannot call a tier below it under overload_rule = "per_tick" (use "at_start")'
        return super().tier_problem(calls_below)

    @property
    def caller_processes(self) -> int:
        """Each service slot calls the tier below for the request it serves."""
        return int(self.concurrency)

    @property
    def ticks(self) -> bool:
        """Whether runs go tick by tick: the per-tick rule on a server that can be overwhelmed
        (never overwhelmed, both rules are the same and the ticks would be wasted)."""
        return self.overload_rule == "per_tick" and self.overload_threshold > 0

    @property
    def timer(self) -> Timer | None:
        """``"per_tick"``: one tick every ``overload_tick`` while a request is in progress."""
        if not self.ticks:
            return None
        return Timer(float(self.overload_tick), float(self.service_time), "overload_tick")

    def build(self, wiring: Wiring) -> ServerHandlers:
        if self.ticks:
            return build_per_tick(wiring, int(self.concurrency), float(self.service_time),
                                  int(self.queue_size), float(self.reject_delay),
                                  int(self.overload_threshold), float(self.overload_tick))
        heap, seq, net, near = wiring.heap, wiring.seq, wiring.net, wiring.near  # near: replies
        rejected, succeeded, gate, series = wiring.client_rejected, wiring.client_succeeded, wiring.gate, wiring.series
        concurrency, service_time = int(self.concurrency), float(self.service_time)
        queue_size, reject_delay = int(self.queue_size), float(self.reject_delay)
        threshold = int(self.overload_threshold)
        queue: deque[tuple[int, int]] = deque()
        in_service = 0
        rejecting = 0
        slots = concurrency  # the service slots kept (a capacity incident keeps fewer)
        work, reject_work = service_time, reject_delay  # as a slowdown incident stretches them
        accepts, rejects = ev.pack(ev.SERVER_ACCEPTS), ev.pack(ev.SERVER_REJECTS)
        queues_code, completes_code, shift = ev.SERVER_QUEUES, ev.SERVER_COMPLETES, ev.DETAIL_SHIFT
        accepted_series, rejected_series, inv = series.accepted, series.rejected, series.inverse_width

        def slowdown() -> float:
            outstanding = in_service + len(queue) + rejecting
            return outstanding / threshold if threshold and outstanding > threshold else 1.0

        def receive_write(t: float, c: int, token: int) -> int:
            nonlocal in_service, rejecting
            if in_service < slots:
                in_service += 1
                accepted_series[int(t * inv)] += 1
                heappush(heap, (t + work * slowdown(), seq(), served, c, token))
                return accepts
            if len(queue) < queue_size:
                queue.append((c, token))
                accepted_series[int(t * inv)] += 1
                return queues_code | ((len(queue) + 1) << shift)
            rejecting += 1
            rejected_series[int(t * inv)] += 1
            heappush(heap, (t + reject_work * slowdown(), seq(), send_rejection, c, token))
            return rejects

        def send_rejection(t: float, c: int, token: int) -> int:
            nonlocal rejecting
            rejecting -= 1
            heappush(near, (t + net[c](), seq(), rejected, c, token))
            return NO_EVENT

        def complete(t: float, c: int, token: int) -> int:
            nonlocal in_service
            in_service -= 1
            heappush(near, (t + net[c](), seq(), succeeded, c, token))
            if queue and in_service < slots:
                nc, ntoken = queue.popleft()
                in_service += 1
                heappush(heap, (t + work * slowdown(), seq(), served, nc, ntoken))
            return completes_code | ((in_service + 1) << shift)

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
                heappush(heap, (t + work * slowdown(), seq(), served, nc, ntoken))

        def set_slowdown(t: float, level: float) -> None:
            nonlocal work, reject_work, factor
            factor = level
            work, reject_work = service_time * factor / speed, reject_delay * factor

        served = wiring.after_service(complete)  # complete, or the call to a tier below first
        if gate is not None:
            gate.freeze(send_rejection)
            gate.freeze(served)
            gate.freeze(complete)
        wiring.server_state = lambda: (in_service, len(queue))
        wiring.incident_hooks = IncidentHooks(set_capacity, set_slowdown)
        return ServerHandlers(receive_write)


LATENCY_RULES = ("current", "at_start")


@register
@dataclass(frozen=True, kw_only=True)
class LatencyServer(Control):
    """Study 003's server (its ``server.go``): serves every request concurrently; latency is
    ``base_latency`` up to ``concurrency_limit`` in progress and ``base_latency · factor^((c − limit)/k)``
    above it. It never rejects; clients give up through their timeout, and a request whose client
    gave up still occupies the server until it completes.

    ``latency_rule = "current"`` (the study's): every ``check_interval`` (on a grid from t = 0, only
    while requests are in progress) the server completes, oldest first, the requests whose elapsed
    time exceeds the latency at the concurrency of that moment; so a request started at low load
    is held back when the load grows. Elapsed time is wall time: an outage counts for requests in
    service, and a check falls at each resume. ``"at_start"``: a request's latency is fixed by the
    concurrency when it starts (it completes at that time, or at the resume if that falls inside
    an outage).

    Incidents: capacity is its ``concurrency_limit``, the concurrency up to which it serves at
    its base latency (the resources study 003's server has: half of them, and latency grows
    from half the concurrency on), kept as ``concurrency_limit · capacity`` without rounding (the
    law is continuous in it); a slowdown multiplies the latency. Under ``"current"`` both act on
    the requests in flight at the next check, as a change of load does; under ``"at_start"`` on
    requests that start in the window.
    """

    CAPS: ClassVar[Capabilities] = Capabilities(
        replies=True, keeps_series=True, latencies=True,
        events=frozenset({ev.SERVER_ACCEPTS, ev.SERVER_COMPLETES}),
        series=("accepted",), state_sample=True)
    INCIDENTS: ClassVar[frozenset[str]] = frozenset(KINDS)
    CALLS_TIERS: ClassVar[bool] = True
    base_latency: float
    concurrency_limit: int
    factor: float
    k: float
    check_interval: float = 50.0
    latency_rule: str = "current"

    def validate(self) -> None:
        above(self, 0, "base_latency", "k", "check_interval")
        at_least(self, 1, "concurrency_limit", "factor")
        if self.latency_rule not in LATENCY_RULES:
            raise ParamError("latency_rule", f"must be one of {', '.join(map(repr, LATENCY_RULES))}, "
                             f"got {self.latency_rule!r}")

    @property
    def timer(self) -> Timer | None:
        """``"current"``: a check every ``check_interval`` while a request is in service, each
        request at least ``base_latency``; ``"at_start"`` schedules no checks."""
        if self.latency_rule != "current":
            return None
        return Timer(float(self.check_interval), float(self.base_latency), "check_interval")

    def latency(self, concurrency: int) -> float:
        """Service latency with ``concurrency`` requests in progress (the one in question included)."""
        return self.law()(concurrency)

    def law(self, capacity: float = 1.0, slowdown: float = 1.0) -> Callable[[int], float]:
        """The latency at each concurrency, with the limit at ``capacity`` of its own and every
        latency ``slowdown`` times longer (an incident's; ``sim.models.incidents``)."""
        base, k, log_factor = float(self.base_latency), self.k, math.log(self.factor)
        limit = self.concurrency_limit if capacity == 1.0 else self.concurrency_limit * capacity

        def latency(concurrency: int) -> float:
            if concurrency <= limit:
                return base
            exponent = (concurrency - limit) / k * log_factor
            return base * math.exp(min(exponent, _MAX_LATENCY_EXPONENT))

        if slowdown == 1.0:
            return latency

        def slowed(concurrency: int) -> float:
            return latency(concurrency) * slowdown
        return slowed

    def _incident_hooks(self, wiring: Wiring, set_law: Callable[[Callable[[int], float]], None]) -> None:
        """Hooks that give the build a new latency law when an incident starts or ends."""
        levels = {"capacity": 1.0, "slowdown": 1.0}

        def set_level(kind: str) -> Callable[[float, float], None]:
            def set_it(t: float, level: float) -> None:
                levels[kind] = level
                set_law(self.law(levels["capacity"], levels["slowdown"]))
            return set_it
        wiring.incident_hooks = IncidentHooks(set_level("capacity"), set_level("slowdown"))

    def build(self, wiring: Wiring) -> ServerHandlers:
        if self.latency_rule == "at_start":
            return self._build_at_start(wiring)
        # Replies and the completions a check makes at its instant go to ``Wiring.near`` (no
        # outage moves them); the next check, due an interval away, to the heap.
        heap, seq, net, near = wiring.heap, wiring.seq, wiring.net, wiring.near
        succeeded, gate, series = wiring.client_succeeded, wiring.gate, wiring.series
        latency, interval = self.law(), float(self.check_interval)
        in_flight: deque[tuple[float, int, int]] = deque()  # (start, client, token), oldest first
        concurrency = 0  # in progress: in flight, or completed at this instant but not yet replied
        checking = False  # a check is scheduled
        accepts_code, completes_code, shift = ev.SERVER_ACCEPTS, ev.SERVER_COMPLETES, ev.DETAIL_SHIFT
        accepted_series, inv = series.accepted, series.inverse_width

        def receive_write(t: float, c: int, token: int) -> int:
            nonlocal concurrency, checking
            concurrency += 1
            in_flight.append((t, c, token))
            accepted_series[int(t * inv)] += 1
            if not checking:
                checking = True
                n = int(t / interval) + 1  # the next tick of the grid
                heappush(heap, (n * interval, seq(), check, -1, n))
            return accepts_code | ((concurrency + 1) << shift)

        def sweep(t: float) -> None:
            # Complete, oldest first, every request whose elapsed time exceeds the latency at the
            # current concurrency; each completion is its own event at this instant.
            delay = latency(concurrency)
            while in_flight and t - in_flight[0][0] > delay:
                _, client, token = in_flight.popleft()
                heappush(near, (t, seq(), served, client, token))

        def check(t: float, c: int, n: int) -> int:
            nonlocal checking
            if gate is not None and gate.paused:
                checking = False  # stopped: the resume checks again
                return NO_EVENT
            sweep(t)
            if in_flight:
                heappush(heap, ((n + 1) * interval, seq(), check, -1, n + 1))
            else:
                checking = False
            return NO_EVENT

        def complete(t: float, c: int, token: int) -> int:
            nonlocal concurrency
            concurrency -= 1
            heappush(near, (t + net[c](), seq(), succeeded, c, token))
            return completes_code | ((concurrency + 1) << shift)

        def resume(t: float) -> None:
            # Timers that fell due while the server was stopped fire at once, before the requests
            # held at the door are let in.
            nonlocal checking
            sweep(t)
            if in_flight and not checking:
                checking = True
                n = int(t / interval) + 1
                heappush(heap, (n * interval, seq(), check, -1, n))

        def set_law(law: Callable[[int], float]) -> None:
            nonlocal latency
            latency = law

        served = wiring.after_service(complete)  # complete, or the call to a tier below first
        if gate is not None:
            gate.on_resume(resume)
        wiring.server_state = lambda: (concurrency, 0)
        self._incident_hooks(wiring, set_law)
        return ServerHandlers(receive_write)

    def _build_at_start(self, wiring: Wiring) -> ServerHandlers:
        heap, seq, net, near = wiring.heap, wiring.seq, wiring.net, wiring.near  # near: replies
        succeeded, gate, series = wiring.client_succeeded, wiring.gate, wiring.series
        latency = self.law()
        concurrency = 0
        accepts_code, completes_code, shift = ev.SERVER_ACCEPTS, ev.SERVER_COMPLETES, ev.DETAIL_SHIFT
        accepted_series, inv = series.accepted, series.inverse_width

        def receive_write(t: float, c: int, token: int) -> int:
            nonlocal concurrency
            concurrency += 1
            accepted_series[int(t * inv)] += 1
            heappush(heap, (t + latency(concurrency), seq(), served, c, token))
            return accepts_code | ((concurrency + 1) << shift)

        def complete(t: float, c: int, token: int) -> int:
            nonlocal concurrency
            concurrency -= 1
            heappush(near, (t + net[c](), seq(), succeeded, c, token))
            return completes_code | ((concurrency + 1) << shift)

        def set_law(law: Callable[[int], float]) -> None:
            nonlocal latency
            latency = law

        served = wiring.after_service(complete)  # complete, or the call to a tier below first
        if gate is not None:
            gate.wall(served)
            gate.wall(complete)
        wiring.server_state = lambda: (concurrency, 0)
        self._incident_hooks(wiring, set_law)
        return ServerHandlers(receive_write)
