"""A worker-pool server: ``workers`` serve requests drawn from a service-time distribution,
the rest wait in a queue, and the server-side defences decide what waits and what is dropped.

What happens to a request (each step is one recorded event):

- **Arrival.** A free worker takes it (``server_accepts``, detail: requests in service); else it
  waits (``server_queues``, detail: queue length) if the queue has room (``queue_size``; no key:
  unbounded; 0: no waiting room); else it is rejected (``server_rejects``) and hears so after
  the network delay.
- **Dequeue** (a worker is free). The next request by ``discipline``, then the checks in this
  order; a request that fails one is dropped (``server_drops``, detail: the reason) and costs
  the server nothing:

  - ``cancel`` ≠ ``"none"`` and its client no longer waits for that attempt (it timed out, gave
    up or sent a newer one): dropped, ``cancelled``, no reply (nobody listens). The server
    learns at once, as a request carrying its deadline (gRPC deadline propagation) or a closed
    connection tells it.
  - it waited longer than ``queue_timeout``: dropped, ``queue_timeout``; the client hears an
    error (a rejection) after the network delay.
  - CoDel (``codel_target``, ``codel_interval``) says drop: ``codel``, an error reply likewise.

- **Completion** (``server_completes``, detail: in service): the reply goes back after the
  network delay; a client that stopped waiting ignores it (the work was wasted).
- ``cancel = "immediate"``: when a client stops waiting for an attempt, that request also leaves
  the queue, or its work in service is aborted and the worker takes the next one, at once
  (``server_drops``, ``cancelled``). A request that arrives after its client stopped waiting
  is dropped on arrival.

Disciplines. ``fifo``; ``lifo`` (newest first); ``adaptive_lifo``, Facebook's rule in Ben
Maurer, "Fail at Scale", ACM Queue 13(8), 2015: "During normal operating conditions, requests
are processed in FIFO order, but when a queue is starting to form, the server switches to LIFO
mode", i.e. LIFO while the queue has not been empty during the last interval N (their controlled
delay's test ``queue.lastEmptyTime() < now - N``, N = 100 ms); here N is ``codel_interval``.

CoDel. Nichols and Jacobson, "Controlling Queue Delay", ACM Queue 10(5), 2012, and RFC 8289's
pseudo-code, with a request for a packet: once every request dequeued for a whole ``interval``
waited at least ``target`` (and others wait behind it), drop one and enter the dropping state;
while in it, drop the request at the head each time ``drop_next`` passes, ``drop_next`` moving
by ``interval / √count`` after each drop (the control law), until a request waited less than
``target``. On re-entering soon after leaving (within 16 intervals) the count resumes from
where it was. CoDel judges the request it dequeues, so under ``lifo`` or ``adaptive_lifo`` (the
newest first, which has hardly waited) it would never act: the pair is refused.

Controlled delay (``controlled_delay = { short, long, interval }``, ``sim.models.controlled_delay``):
Maurer's variant of CoDel. A request joining a queue that has not been empty for the last
``interval`` (N = 100 ms) may wait ``short`` (M = 5 ms), else ``long`` (N); past its limit it is
dropped when a worker reaches it (``queue_timeout``, an error reply). With ``adaptive_lifo`` it
is the paper's whole scheme.

Admission limit. ``concurrency_limit = { algorithm = "aimd" | "gradient2" | "vegas", ... }``
puts Netflix's concurrency-limits ``SimpleLimiter`` in front of the pool
(``sim.models.adaptive_limits``): a request arriving while the limit's worth of admitted
requests are still queued or in service is dropped (``server_drops``, ``limiter``) with an error
reply, as a queue timeout's. Each admitted request gives the limit algorithm a sample when it
leaves the server, as the library's gRPC server interceptor does
(concurrency-limits-grpc/.../server/ConcurrencyLimitServerInterceptor.java): its RTT (queue
wait + service, server-side), the in-flight count at its admission and ``didDrop``: false for a
completion (``onSuccess``), true for a queue-timeout, CoDel or cancellation drop
(``onDropped``; the interceptor's DEADLINE_EXCEEDED and onCancel). A request refused by the
full queue, or dropped the instant it came, is released without a sample (``onIgnore``): its
RTT of 0 says nothing of latency (and Vegas refuses one).

Load-dependent slowdown (``sim.models.load_curve``). ``factor``, ``k``, ``slowdown_above``:
study 003's law (``LatencyServer``'s), or ``load_curve_file``: a request's service time is
multiplied by the curve's value at the requests in service when it starts, itself included
(later arrivals do not slow a request already in service).

Outages: service pauses and resumes (``OutageGate.freeze``); arrivals are held at the door.
Run-time hooks (``PoolHooks``, on ``wiring.server_hooks``) change the workers or slow service
down, for incidents.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, fields
from hashlib import sha256
from heapq import heappush
from math import sqrt
from typing import TYPE_CHECKING, Callable, ClassVar, NamedTuple

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.vocabulary.errors import ParamError
from sim.models.adaptive_limits import AdaptiveLimit
from sim.models.controls import Capabilities, Control, ServerHandlers, register
from sim.models.controlled_delay import ControlledDelay
from sim.models.incidents import KINDS as INCIDENT_KINDS, IncidentHooks, kept_slots, slot_speed
from sim.models.load_curve import (LoadCurveError, cached, curve_multiplier, law_multiplier,
                                   read_load_curve)
from sim.models.service_times import (DISTRIBUTIONS, ServiceFileError, lognormal_mean, lognormal_problem,
                                      read_service_file, service_draw)
from sim.vocabulary.params import above, at_least

if TYPE_CHECKING:
    import numpy as np

    from sim.core.wiring import Wiring

DISCIPLINES = ("fifo", "lifo", "adaptive_lifo")
CANCELS = ("none", "dequeue", "immediate")
# RFC 8289: a dropping state re-entered within this many intervals resumes its drop count.
CODEL_REENTRY_INTERVALS = 16
# ``server_drops``: the reason in the low bits of the drop item's arg, the token above them.
_REASON_BITS = 3
_REASON_MASK = (1 << _REASON_BITS) - 1
_QUEUE_TIMEOUT = ev.DROP_REASON_INDEX["queue_timeout"]
_CODEL = ev.DROP_REASON_INDEX["codel"]
_CANCELLED = ev.DROP_REASON_INDEX["cancelled"]
_LIMITER = ev.DROP_REASON_INDEX["limiter"]


class PoolHooks(NamedTuple):
    """What may change a running pool: ``set_workers(t, n)`` (work in service finishes; the
    extra workers, if any, take queued requests at once) and ``set_slowdown(factor)`` (service
    that starts from now on takes ``factor`` times longer); ``state()`` is (busy, queued)."""

    set_workers: Callable[[float, int], None]
    set_slowdown: Callable[[float], None]
    state: Callable[[], tuple[int, int]]


@register
@dataclass(frozen=True, kw_only=True)
class PoolServer(Control):
    """``workers`` serving requests whose service times follow ``service_distribution``, a
    queue with a discipline, and the server-side defences: a queue timeout, CoDel,
    cancellation (see the module docstring)."""

    INCIDENTS: ClassVar[frozenset[str]] = frozenset(INCIDENT_KINDS)  # capacity: its workers
    CAPS: ClassVar[Capabilities] = Capabilities(
        replies=True, keeps_series=True, latencies=True,
        events=frozenset({ev.SERVER_ACCEPTS, ev.SERVER_QUEUES, ev.SERVER_REJECTS,
                          ev.SERVER_COMPLETES, ev.SERVER_DROPS}),
        series=("accepted", "rejected", "server_drops"), state_sample=True)
    CALLS_TIERS: ClassVar[bool] = True
    # Keys naming a file, resolved relative to the config file that gives them (sim.settings.config).
    PATH_KEYS: ClassVar[tuple[str, ...]] = ("service_file", "load_curve_file")

    workers: int
    service_time: float | None = None  # required, except for empirical (the file gives the times)
    service_distribution: str = "constant"
    service_p99: float | None = None
    service_file: str | None = None
    queue_size: int | None = None
    discipline: str = "fifo"
    queue_timeout: float | None = None
    codel_target: float | None = None
    codel_interval: float | None = None
    cancel: str = "none"
    concurrency_limit: AdaptiveLimit | None = None
    controlled_delay: ControlledDelay | None = None  # Fail at Scale (sim.models.controlled_delay)
    factor: float | None = None
    k: float | None = None
    slowdown_above: int | None = None
    load_curve_file: str | None = None

    def validate(self) -> None:
        at_least(self, 1, "workers")
        if self.service_distribution == "empirical":
            if self.service_time is not None:
                raise ParamError("service_time", 'is not read with service_distribution = "empirical": '
                                 "service_file gives the times", "remove service_time")
        elif self.service_time is None:
            raise ParamError("service_time", "is missing (required by PoolServer)",
                             "add e.g. service_time = 10.0 (the mean; the median for lognormal)")
        else:
            above(self, 0, "service_time")
        for key, value, choices in (("service_distribution", self.service_distribution, DISTRIBUTIONS),
                                    ("discipline", self.discipline, DISCIPLINES),
                                    ("cancel", self.cancel, CANCELS)):
            if value not in choices:
                raise ParamError(key, f"must be one of {', '.join(map(repr, choices))}, got {value!r}")
        lognormal = self.service_distribution == "lognormal"
        if lognormal and self.service_p99 is None:
            raise ParamError("service_p99", "is missing: a lognormal service time is given by its median "
                             "(service_time) and its 99th percentile", "add e.g. service_p99 = 5 * service_time")
        if self.service_p99 is not None:
            if not lognormal:
                raise ParamError("service_p99", 'sets the lognormal\'s 99th percentile; it needs '
                                 'service_distribution = "lognormal"')
            if not self.service_p99 > self.service_time:
                raise ParamError("service_p99", f"must be > service_time (the median, {self.service_time:g}), "
                                 f"got {self.service_p99!r}")
            problem = lognormal_problem(float(self.service_time), float(self.service_p99))
            if problem:
                raise ParamError("service_p99", problem, "raise service_time or lower service_p99")
        empirical = self.service_distribution == "empirical"
        if empirical and self.service_file is None:
            raise ParamError("service_file", 'is missing: service_distribution = "empirical" resamples '
                             "the service times of a file", 'add service_file = "times.csv" (one number '
                             "per line, or a CSV with a service_time column)")
        if self.service_file is not None and not empirical:
            raise ParamError("service_file", 'is read only with service_distribution = "empirical"')
        if self.queue_size is not None:
            at_least(self, 0, "queue_size")
        if self.queue_timeout is not None:
            above(self, 0, "queue_timeout")
        for key in ("codel_target", "codel_interval"):
            if getattr(self, key) is not None:
                above(self, 0, key)
        if self.codel_target is not None and self.codel_interval is None:
            raise ParamError("codel_interval", "is missing: CoDel (codel_target) drops once requests "
                             "waited longer than the target for a whole interval",
                             "add codel_interval (CoDel's default is 20 times the target: 5 ms and 100 ms)")
        if self.codel_target is not None and self.discipline != "fifo":
            raise ParamError("codel_target", f'CoDel never acts under discipline = "{self.discipline}": it judges '
                             "the wait of the request dequeued, and LIFO dequeues the newest",
                             'use discipline = "fifo" with CoDel, or controlled_delay = { short = 5.0, long = 100.0, '
                             "interval = 100.0 } (Fail at Scale's queue deadlines)")
        cd = self.controlled_delay
        if cd is not None and not isinstance(cd, ControlledDelay):
            raise ParamError("controlled_delay", f"is a table, got {cd!r}",
                             "write controlled_delay = { short = 5.0, long = 100.0, interval = 100.0 }")
        if cd is not None:
            for key in ("queue_timeout", "codel_target"):
                if getattr(self, key) is not None:
                    raise ParamError(key, "and controlled_delay both limit a request's wait in the queue",
                                     "keep one")
        if self.discipline == "adaptive_lifo" and self.codel_interval is None:
            raise ParamError("codel_interval", 'is missing: discipline = "adaptive_lifo" serves LIFO while '
                             "the queue has not been empty for codel_interval",
                             "add codel_interval (Fail at Scale: 100 ms)")
        self._validate_limit_and_slowdown()
        if empirical:
            try:
                samples = read_service_file(self.service_file)
            except ServiceFileError as exc:
                raise ParamError("service_file", str(exc)) from None
            object.__setattr__(self, "_samples", samples)
            object.__setattr__(self, "_samples_digest", sha256(samples.tobytes()).hexdigest()[:16])

    def _validate_limit_and_slowdown(self) -> None:
        limit = self.concurrency_limit
        if limit is not None and not isinstance(limit, AdaptiveLimit):
            raise ParamError("concurrency_limit", f"PoolServer's is an adaptive admission limit, a table; got {limit!r}",
                             'write e.g. concurrency_limit = { algorithm = "aimd" } ("aimd", "gradient2" or '
                             '"vegas"; a fixed number is LatencyServer\'s concurrency_limit)')
        law = {key: getattr(self, key) for key in ("factor", "k", "slowdown_above")}
        given = [key for key, value in law.items() if value is not None]
        if given and self.load_curve_file is not None:
            raise ParamError(given[0], "and load_curve_file both set the slowdown under load",
                             "keep one: the law (factor, k, slowdown_above) or the measured curve")
        if given and len(given) < 3:
            missing = [key for key in law if law[key] is None]
            raise ParamError(missing[0], "is missing: the slowdown law needs factor, k and slowdown_above "
                             "(service takes factor^((in service - slowdown_above) / k) times longer)",
                             f"add {', '.join(missing)}")
        if given:
            at_least(self, 1, "factor")
            above(self, 0, "k")
            at_least(self, 0, "slowdown_above")
        if self.load_curve_file is not None:
            try:
                curve = read_load_curve(self.load_curve_file)
            except LoadCurveError as exc:
                raise ParamError("load_curve_file", str(exc)) from None
            object.__setattr__(self, "_curve", curve)

    def load_multiplier(self) -> Callable[[int], float] | None:
        """The service-time multiplier at a number of requests in service, or None (no slowdown)."""
        curve = self.__dict__.get("_curve")
        if curve is not None:
            return cached(curve_multiplier(*curve))
        if self.factor is not None:
            return cached(law_multiplier(int(self.slowdown_above), float(self.factor), float(self.k)))
        return None

    def __repr__(self) -> str:
        # The fields, and for an empirical distribution a digest of the file's numbers: a repr
        # keys explore's cell cache, which must miss when the file changes under the same name.
        text = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))
        digest = self.__dict__.get("_samples_digest")
        curve = self.__dict__.get("_curve")
        return (f"{type(self).__qualname__}({text}{f', service_file_sha256={digest!r}' if digest else ''}"
                f"{f', load_curve={curve!r}' if curve else ''})")

    @property
    def caller_processes(self) -> int:
        """Each worker calls the tier below for the request it serves."""
        return int(self.workers)

    @property
    def samples(self) -> np.ndarray | None:
        """The service times read from ``service_file`` (``empirical``), else None."""
        return self.__dict__.get("_samples")

    @property
    def mean_service(self) -> float:
        """The mean service time (the lognormal's is its median times exp(σ²/2))."""
        if self.service_distribution == "lognormal":
            return lognormal_mean(float(self.service_time), float(self.service_p99))
        if self.service_distribution == "empirical":
            return float(self.samples.mean())
        return float(self.service_time)

    def build(self, wiring: Wiring) -> ServerHandlers:
        heap, seq, net, gate, series = wiring.heap, wiring.seq, wiring.net, wiring.gate, wiring.series
        near = wiring.near
        rejected, succeeded = wiring.client_rejected, wiring.client_succeeded
        still_waiting = wiring.still_waiting
        draw = service_draw(self.service_distribution, self.service_time, self.service_p99, self.samples)
        service = wiring.server_stream(draw) if draw is not None else None
        constant = float(self.service_time or 0.0)  # constant service (draw is None)
        capacity_limit = None if self.queue_size is None else int(self.queue_size)
        queue_timeout = None if self.queue_timeout is None else float(self.queue_timeout)
        controlled = self.controlled_delay
        limits: dict[tuple[int, int], float] = {}  # controlled_delay: each queued request's limit
        target = None if self.codel_target is None else float(self.codel_target)
        interval = None if self.codel_interval is None else float(self.codel_interval)
        discipline, cancel = self.discipline, self.cancel
        checks_waiting = cancel != "none"
        immediate = cancel == "immediate"
        queue: deque[tuple[float, int, int]] = deque()  # (arrival time, client, token)
        # cancel = "immediate": where each request is, so that it can be taken back.
        waiting_set: set[tuple[int, int]] = set()
        serving_set: set[tuple[int, int]] = set()
        workers = int(self.workers)
        busy = 0
        queued = 0  # live requests in the queue (immediate cancels leave dead entries behind)
        slowdown = 1.0
        last_empty = 0.0  # when the queue was last empty (adaptive LIFO)
        # CoDel's state (RFC 8289's names).
        first_above_time = 0.0
        dropping = False
        drop_next = 0.0
        count = 0
        last_count = 0
        accepts, queues_code, rejects = ev.SERVER_ACCEPTS, ev.SERVER_QUEUES, ev.pack(ev.SERVER_REJECTS)
        completes_code, drops_code, shift = ev.SERVER_COMPLETES, ev.SERVER_DROPS, ev.DETAIL_SHIFT
        accepted_series, rejected_series, drops_series = series.accepted, series.rejected, series.server_drops
        inv = series.inverse_width
        tag = wiring.event_tag  # a fleet host's drops name the host (sim.models.fleet)
        load = self.load_multiplier()  # None: no slowdown under load
        limiter = (None if self.concurrency_limit is None
                   else self.concurrency_limit.make(wiring.limiter_stream()))
        admitted: dict[tuple[int, int], tuple[float, int]] = {}  # by the limiter: (time, in flight)

        def release(t: float, c: int, tok: int, dropped: bool) -> None:
            # An admitted request leaves the server: the limit algorithm's sample (none for one
            # never admitted, or one that leaves the instant it came).
            record = admitted.pop((c, tok), None)
            if record is not None:
                rtt = t - record[0]
                if rtt > 0:
                    limiter.release(rtt, record[1], dropped)
                else:
                    limiter.ignore()

        def start(t: float, c: int, tok: int) -> None:
            nonlocal busy
            busy += 1
            if immediate:
                serving_set.add((c, tok))
            s = constant if service is None else service()
            if load is not None:
                s *= load(busy)
            heappush(heap, (t + s * slowdown, seq(), served, c, tok))

        def drop(t: float, c: int, a: int) -> int:
            # One dropped request: its event, and the error reply where its client may still listen.
            reason = a & _REASON_MASK
            drops_series[int(t * inv)] += 1
            if limiter is not None:
                release(t, c, a >> _REASON_BITS, True)
            if reason != _CANCELLED:
                heappush(near, (t + net[c](), seq(), rejected, c, a >> _REASON_BITS))
            return drops_code | ((reason + 1) << shift) | tag

        def take(t: float) -> tuple[float, int, int] | None:
            # The next live request by the discipline, past those the checks drop (each dropped
            # one is an event of its own at this instant); None when the queue runs dry.
            nonlocal queued, last_empty
            while queued:
                if discipline == "fifo":
                    item = queue.popleft()
                elif discipline == "lifo" or t - last_empty > interval:
                    item = queue.pop()
                else:
                    item = queue.popleft()
                arrived, c, tok = item
                if immediate:
                    key = (c, tok)
                    if key not in waiting_set:
                        continue  # taken back already (its drop was recorded then)
                    waiting_set.discard(key)
                queued -= 1
                if not queued:
                    last_empty = t
                    queue.clear()  # only taken-back entries are left, if any
                limit = queue_timeout if controlled is None else limits.pop((c, tok))
                if checks_waiting and not still_waiting(c, tok):
                    heappush(near, (t, seq(), drop, c, tok << _REASON_BITS | _CANCELLED))
                elif limit is not None and t - arrived > limit:
                    heappush(near, (t, seq(), drop, c, tok << _REASON_BITS | _QUEUE_TIMEOUT))
                else:
                    return item
            return None

        def codel_take(t: float) -> tuple[float, int, int] | None:
            # RFC 8289's dequeue(), over ``take``: drop while in the dropping state and due.
            nonlocal dropping, drop_next, count, last_count
            item, ok_to_drop = codel_peek(t)
            if dropping:
                if not ok_to_drop:
                    dropping = False
                while dropping and item is not None and t >= drop_next:
                    heappush(near, (t, seq(), drop, item[1], item[2] << _REASON_BITS | _CODEL))
                    count += 1
                    item, ok_to_drop = codel_peek(t)
                    if not ok_to_drop:
                        dropping = False
                    else:
                        drop_next = drop_next + interval / sqrt(count)
            elif ok_to_drop and item is not None:
                heappush(near, (t, seq(), drop, item[1], item[2] << _REASON_BITS | _CODEL))
                item, ok_to_drop = codel_peek(t)
                dropping = True
                delta = count - last_count
                count = delta if delta > 1 and t - drop_next < CODEL_REENTRY_INTERVALS * interval else 1
                drop_next = t + interval / sqrt(count)
                last_count = count
            return item

        def codel_peek(t: float) -> tuple[tuple[float, int, int] | None, bool]:
            # RFC 8289's dodequeue(): the next request, and whether CoDel may drop it (its wait
            # has been at least the target for an interval, and others wait behind it).
            nonlocal first_above_time
            item = take(t)
            if item is None:
                first_above_time = 0.0
                return None, False
            if t - item[0] < target or not queued:
                first_above_time = 0.0
                return item, False
            if first_above_time == 0.0:
                first_above_time = t + interval
                return item, False
            return item, t >= first_above_time

        next_request = take if target is None else codel_take

        def dispatch(t: float) -> None:
            # Free workers take queued requests.
            while busy < workers and queued:
                item = next_request(t)
                if item is None:
                    return
                start(t, item[1], item[2])

        def receive_write(t: float, c: int, tok: int) -> int:
            nonlocal busy, queued, last_empty, first_above_time, dropping
            if immediate and not still_waiting(c, tok):
                return drop(t, c, tok << _REASON_BITS | _CANCELLED)
            if limiter is not None:
                inflight = limiter.acquire()
                if not inflight:
                    return drop(t, c, tok << _REASON_BITS | _LIMITER)
                admitted[(c, tok)] = (t, inflight)
            if busy < workers:
                if checks_waiting and not still_waiting(c, tok):
                    return drop(t, c, tok << _REASON_BITS | _CANCELLED)
                first_above_time = 0.0  # served without waiting: below any target
                dropping = False
                busy += 1  # start(), inline: the common case
                if immediate:
                    serving_set.add((c, tok))
                s = constant if service is None else service()
                if load is not None:
                    s *= load(busy)
                heappush(heap, (t + s * slowdown, seq(), served, c, tok))
                accepted_series[int(t * inv)] += 1
                return accepts | ((busy + 1) << shift)
            if capacity_limit is None or queued < capacity_limit:
                if not queued:
                    last_empty = t
                if controlled is not None:
                    limits[(c, tok)] = controlled.limit(t, last_empty)
                queue.append((t, c, tok))
                queued += 1
                if immediate:
                    waiting_set.add((c, tok))
                accepted_series[int(t * inv)] += 1
                return queues_code | ((queued + 1) << shift)
            rejected_series[int(t * inv)] += 1
            heappush(near, (t + net[c](), seq(), rejected, c, tok))
            if limiter is not None:
                release(t, c, tok, True)  # at once: rtt 0, released without a sample
            return rejects

        def complete(t: float, c: int, tok: int) -> int:
            nonlocal busy
            if immediate:
                key = (c, tok)
                if key not in serving_set:
                    return NO_EVENT  # aborted when its client stopped waiting
                serving_set.discard(key)
            busy -= 1
            heappush(near, (t + net[c](), seq(), succeeded, c, tok))
            if limiter is not None:
                release(t, c, tok, False)
            if queued:
                dispatch(t)
            return completes_code | ((busy + 1) << shift)

        def cancel_now(t: float, c: int, tok: int) -> int:
            # cancel = "immediate": the client stopped waiting for this attempt just now.
            nonlocal queued, busy, last_empty
            key = (c, tok)
            if key in waiting_set:
                waiting_set.discard(key)
                limits.pop(key, None)
                queued -= 1
                if not queued:
                    last_empty = t
                    queue.clear()
            elif key in serving_set:
                serving_set.discard(key)
                busy -= 1
                if gate is None or not gate.paused:
                    dispatch(t)
            else:
                return NO_EVENT  # not at the server: on its way, answered, or never admitted
            return drop(t, c, tok << _REASON_BITS | _CANCELLED)

        def stopped_waiting(t: float, c: int, tok: int) -> int:
            heappush(near, (t, seq(), cancel_now, c, tok))
            return NO_EVENT

        def set_workers(t: float, n: int) -> None:
            nonlocal workers
            workers = int(n)
            dispatch(t)

        def set_slowdown(factor: float) -> None:
            nonlocal slowdown
            slowdown = float(factor)

        def state() -> tuple[int, int]:
            return busy, queued

        served = wiring.after_service(complete)  # complete, or the call to a tier below first
        if gate is not None:
            gate.freeze(served)
            gate.freeze(complete)
            gate.on_resume(dispatch)
        wiring.server_state = state
        wiring.server_hooks = PoolHooks(set_workers, set_slowdown, state)
        # Incidents: capacity is the pool's workers (kept as ``kept_slots``: 64 at 0.5 keep 32;
        # where that is not whole each serves more slowly, ``slot_speed``: 3 at 0.5 keep 2 at
        # 75%), slowdown the factor on service that starts from then on; the two multiply.
        full = int(self.workers)
        levels = {"slowdown": 1.0, "speed": 1.0}

        def set_capacity(t: float, fraction: float) -> None:
            levels["speed"] = slot_speed(full, fraction)
            set_slowdown(levels["slowdown"] / levels["speed"])
            set_workers(t, full if fraction >= 1.0 else kept_slots(full, fraction))

        def set_incident_slowdown(t: float, factor: float) -> None:
            levels["slowdown"] = factor
            set_slowdown(factor / levels["speed"])

        wiring.incident_hooks = IncidentHooks(set_capacity, set_incident_slowdown)
        return ServerHandlers(receive_write, None, stopped_waiting if immediate else None)
