"""Server concurrency controls, as in the ``backoff-simulator`` reference.

A control is a frozen dataclass of its parameters whose ``build`` returns the server's handlers for
one run. Handlers are closures over the run's heap, so the hot loop pays one call per event and no
attribute look-ups. Each handler has the signature ``handler(t, client, arg) -> packed event`` and
schedules what follows by pushing ``(time, seq, handler, client, arg)`` onto ``wiring.heap``.
Internal steps are registered with ``wiring.gate.freeze`` when the simulation has outages, so they
wait out a pause with their remaining time (the engine holds arrivals at the entry points).

Adding a control is one class decorated with ``@register``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from heapq import heappush
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from sim.core import events as ev
from sim.vocabulary.outcomes import ABORTED, REJECTED
from sim.core.streams import folded_normal
from sim.vocabulary.params import above, at_least, finite_fields

if TYPE_CHECKING:
    from sim.core.wiring import Wiring

Handler = Callable[[float, int, int], int]

CONTROLS: dict[str, type[Control]] = {}


def register(cls: type[Control]) -> type[Control]:
    """Add a control class to the registry under its class name; it must declare its own ``CAPS``
    (an inherited one would silently claim the base's events and outputs)."""
    if not isinstance(cls.__dict__.get("CAPS"), Capabilities):
        raise TypeError(f"control {cls.__name__} declares no CAPS = Capabilities(...) of its own: "
                        "say whether it replies, keeps series and measures latencies, its events, series counters and state sample")
    CONTROLS[cls.__name__] = cls
    return cls


# The features a server kind may offer (``Capabilities`` attributes), by which tables of metrics,
# output files and the app's columns say what they need (``Capabilities.has``): those it
# declares, and those that follow from them.
DECLARED_FEATURES = ("replies", "keeps_series", "latencies")
FEATURES = DECLARED_FEATURES + ("recovery",)


@dataclass(frozen=True, kw_only=True)
class Capabilities:
    """What a server kind offers, declared once on its class as ``CAPS``: the engine, the CLI,
    the exports, the explore metrics, the resource estimate and the app read these features
    instead of branching on the kind, so a kind with another mix of them needs no edit there.
    ``tests/test_capabilities.py`` fails when a registered control leaves one out, declares one
    its runs do not deliver, or emits an event it did not declare."""

    # Success replies: clients time out and may run workloads that repeat (many requests each);
    # without them a client hears a commit at that instant from the control itself
    # (``sim.models.clients``).
    replies: bool
    # Every event code the server's handlers return (the outage gate's pause/resume aside).
    events: frozenset[int]
    # Per-bucket series: runs end at the horizon, and the overload outputs, the latency table,
    # the series metrics and the app's time-series panes apply.
    keeps_series: bool
    # Clients measure each success's latency: percentiles, the p50/p99 metrics and columns.
    latencies: bool
    # The ``Series`` counters the server's handlers fill itself; () when it keeps no series.
    series: tuple[str, ...] = ()
    # True when ``build`` sets ``wiring.server_state`` (in service, queued) for each bucket's sample.
    state_sample: bool = False

    def __post_init__(self) -> None:
        if self.latencies and not self.replies:
            raise TypeError("Capabilities: latencies are measured to a success reply (replies=True)")
        if (self.series or self.state_sample) and not self.keeps_series:
            raise TypeError("Capabilities: series counters and a state sample need keeps_series=True")

    @property
    def recovery(self) -> bool:
        """Recovery verdicts after an outage: judged on the goodput (successes) series."""
        return self.keeps_series and self.replies

    def has(self, feature: str) -> bool:
        """Whether the kind offers ``feature`` (one of ``FEATURES``)."""
        if feature not in FEATURES:
            raise ValueError(f"unknown feature {feature!r}; one of {', '.join(FEATURES)}")
        return bool(getattr(self, feature))


class Timer(NamedTuple):
    """A server's own unrecorded event, scheduled every ``period`` while a request is in service
    (each request in service for at least ``service``); ``key`` is the config key that sets the
    period. The resource estimate counts these events (``sim.runs.resources``)."""

    period: float
    service: float
    key: str


class ServerHandlers(NamedTuple):
    """Entry points a client's messages arrive at."""

    receive_write: Handler
    receive_read: Handler | None = None
    # Told ``(t, client, token)`` when a client stops waiting for that attempt (it timed out):
    # a server that cancels such work (PoolServer's ``cancel = "immediate"``); None: not told.
    stopped_waiting: Handler | None = None


@dataclass(frozen=True, kw_only=True)
class Control:
    """Base class for concurrency controls."""

    # True when clients read the version before each write (read-then-write OCC).
    READS_VERSION: ClassVar[bool] = False
    # What the kind offers: every registered control declares its own (see ``Capabilities``).
    CAPS: ClassVar[Capabilities]
    # The incident kinds the server honours (``sim.models.incidents``; an outage, capacity 0,
    # stops every server): ``capacity`` and ``slowdown`` through the ``IncidentHooks`` its build
    # sets on ``wiring.incident_hooks``, ``error_rate`` at its door (any server that replies).
    INCIDENTS: ClassVar[frozenset[str]] = frozenset()
    # True when the server hands each served request to ``wiring.after_service``, so that it can
    # call a tier below it (``sim.models.tiers``) while the request holds its place in service.
    CALLS_TIERS: ClassVar[bool] = False

    def __post_init__(self) -> None:
        finite_fields(self)
        self.validate()

    def validate(self) -> None:
        """Raise ``ParamError`` for impossible parameters."""

    def build(self, wiring: Wiring) -> ServerHandlers:
        raise NotImplementedError

    @property
    def timer(self) -> Timer | None:
        """The periodic event the server schedules while busy, if any (most have none)."""
        return None

    def incident_problem(self, kind: str) -> tuple[str, str] | None:
        """Why this server cannot run an incident of ``kind`` (message, hint), or None."""
        if kind in self.INCIDENTS:
            return None
        if not self.CAPS.replies:
            return (f"needs a server that replies; {self.type_name} lets clients assume success",
                    "an outage (capacity = 0) stops any server")
        honoured = ", ".join(sorted(self.INCIDENTS)) or "none"
        return (f"{self.type_name} has no {kind} to change", f"its incidents: {honoured}, or capacity = 0 (an outage)")

    @property
    def type_name(self) -> str:
        return type(self).__name__

    def tier_problem(self, calls_below: bool) -> str | None:
        """Why this server cannot be a tier of a call chain (``calls_below``: one that calls a
        tier below it), or None. A tier replies to its caller, and waits for the tier below
        while a request holds its place in service."""
        if not self.CAPS.replies:
            return (f"{self.type_name} is a contention control: it lets clients assume success, "
                    "so it cannot answer a calling tier")
        if calls_below and not self.CALLS_TIERS:
            return f"{self.type_name} cannot call a tier below it"
        return None

    @property
    def caller_processes(self) -> int:
        """The processes that call a tier below this server, each with its own policy state
        (``scope = "client"``): one, for a server that serves without workers."""
        return 1


def message_to_client(wiring: Wiring, handler: Handler,
                      ahead: Callable[[float, int, int], None] | None) -> Callable[[float, int, int], None]:
    """How a contention control sends client c a message that arrives at T, ``send(T, c, arg)``:
    an item for the client's ``handler``, or, where the client takes its steps ahead of time
    (``Wiring.ahead``: ``ahead`` not None), those steps at once. The arrival time is worked out
    (its network draw taken) before the item's seq, as a pushed item's always was."""
    if ahead is not None:
        return ahead
    heap, seq = wiring.heap, wiring.seq

    def push(t: float, c: int, arg: int) -> None:
        heappush(heap, (t, seq(), handler, c, arg))
    return push


@dataclass(frozen=True, kw_only=True)
class _WritingControl(Control):
    """Controls whose writes take ``|N(write_mu, write_sigma)|``, as the reference's code draws
    them (not ``max(0, N)`` as its README says: users switching from it get its code's numbers)."""

    write_mu: float
    write_sigma: float

    def validate(self) -> None:
        at_least(self, 0, "write_mu", "write_sigma")

    def write_durations(self, wiring: Wiring) -> Callable[[], float]:
        return wiring.server_stream(folded_normal(float(self.write_mu), float(self.write_sigma)))

    @staticmethod
    def instant_queue(wiring: Wiring) -> list[tuple]:
        """Where a write that takes no time (``write_mu = 0``) is scheduled: the small heap of
        items due soon (``Wiring.near``), or the heap when outages may move it (the gate moves
        a frozen step in the heap alone)."""
        return wiring.near if wiring.gate is None else wiring.heap


@register
@dataclass(frozen=True, kw_only=True)
class LockingServer(_WritingControl):
    """Pessimistic: accept if free and hold the lock while writing; otherwise reject at once."""

    CAPS: ClassVar[Capabilities] = Capabilities(
        replies=False, keeps_series=False, latencies=False,
        events=frozenset({ev.SERVER_ACCEPTS, ev.SERVER_REJECTS, ev.SERVER_COMMITS}))

    def build(self, wiring: Wiring) -> ServerHandlers:
        heap, seq, net, committed = wiring.heap, wiring.seq, wiring.net, wiring.client_committed
        reject = message_to_client(wiring, wiring.client_rejected, wiring.client_rejected_at)
        write, instant = self.write_durations(wiring), self.instant_queue(wiring)
        available = True
        accepts = ev.pack(ev.SERVER_ACCEPTS)
        rejects = ev.pack(ev.SERVER_REJECTS)
        commits = ev.pack(ev.SERVER_COMMITS)

        def receive_write(t: float, c: int, a: int) -> int:
            nonlocal available
            if available:
                available = False
                duration = write()
                heappush(heap if duration else instant, (t + duration, seq(), free, c, 0))
                return accepts
            reject(t + net[c](), c, REJECTED)
            return rejects

        def free(t: float, c: int, a: int) -> int:
            nonlocal available
            available = True
            if committed is not None:
                committed(t, c)
            return commits

        if wiring.gate is not None:
            free = wiring.gate.freeze(free)
        return ServerHandlers(receive_write)


@dataclass(frozen=True, kw_only=True)
class _OCCControl(_WritingControl):
    """Optimistic concurrency: write tentatively, commit only if the version is still the one the
    write is based on (noted on arrival, or read by the client first); otherwise abort."""

    def build(self, wiring: Wiring) -> ServerHandlers:
        heap, seq, net = wiring.heap, wiring.seq, wiring.net
        abort = message_to_client(wiring, wiring.client_rejected, wiring.client_rejected_at)
        report = message_to_client(wiring, wiring.client_version_reply, wiring.client_version_at)
        committed = wiring.client_committed
        reads_version = self.READS_VERSION
        write, instant = self.write_durations(wiring), self.instant_queue(wiring)
        near, ahead, taken = wiring.near, wiring.ahead, wiring.taken_ahead
        version = 0
        tentative = ev.pack(ev.SERVER_TENTATIVELY_WRITES)
        aborts = ev.pack(ev.SERVER_ABORTS)
        shift = ev.DETAIL_SHIFT
        commits, reports = ev.SERVER_COMMITS, ev.SERVER_REPORTS_VERSION

        def receive_read(t: float, c: int, a: int) -> int:
            report(t + net[c](), c, version)
            return reports | ((version + 1) << shift)

        def receive_write(t: float, c: int, read_version: int) -> int:
            based_on = read_version if reads_version else version
            duration = write()
            if duration or not ahead or (heap and heap[0][0] == t) or (near and near[0][0] == t):
                heappush(heap if duration else instant, (t + duration, seq(), maybe_commit, c, based_on))
            else:
                # A write of no duration, in a run that keeps no history (``Wiring.ahead``), and
                # nothing else due at t: the engine would pop its item next, so it is done now.
                taken[0] += 1
                maybe_commit(t, c, based_on)
            return tentative

        def maybe_commit(t: float, c: int, based_on: int) -> int:
            nonlocal version
            if version != based_on:
                abort(t + net[c](), c, ABORTED)
                return aborts
            version += 1
            if committed is not None:
                committed(t, c)
            return commits | ((version + 1) << shift)

        if wiring.gate is not None:
            maybe_commit = wiring.gate.freeze(maybe_commit)
        return ServerHandlers(receive_write, receive_read if reads_version else None)


@register
@dataclass(frozen=True, kw_only=True)
class WriteOnlyOCCServer(_OCCControl):
    """Optimistic: note the version on arrival, write tentatively, commit only if nobody committed meanwhile."""

    CAPS: ClassVar[Capabilities] = Capabilities(
        replies=False, keeps_series=False, latencies=False,
        events=frozenset({ev.SERVER_TENTATIVELY_WRITES, ev.SERVER_ABORTS, ev.SERVER_COMMITS}))


@register
@dataclass(frozen=True, kw_only=True)
class ReadWriteOCCServer(_OCCControl):
    """Optimistic, read-then-write: the client reads the version, then writes it back (the AWS post)."""

    READS_VERSION: ClassVar[bool] = True
    CAPS: ClassVar[Capabilities] = Capabilities(
        replies=False, keeps_series=False, latencies=False,
        events=frozenset({ev.SERVER_REPORTS_VERSION, ev.SERVER_TENTATIVELY_WRITES, ev.SERVER_ABORTS,
                          ev.SERVER_COMMITS}))


@register
@dataclass(frozen=True, kw_only=True)
class ThrottlingServer(Control):
    """Admission control: at most ``limit`` acceptances in any sliding ``window``; others rejected."""

    CAPS: ClassVar[Capabilities] = Capabilities(
        replies=False, keeps_series=False, latencies=False,
        events=frozenset({ev.SERVER_ACCEPTS, ev.SERVER_REJECTS, ev.SERVER_DECREMENTS}))

    window: float
    limit: int

    def validate(self) -> None:
        above(self, 0, "window")
        at_least(self, 1, "limit")

    def build(self, wiring: Wiring) -> ServerHandlers:
        heap, seq, net, committed = wiring.heap, wiring.seq, wiring.net, wiring.client_committed
        reject = message_to_client(wiring, wiring.client_rejected, wiring.client_rejected_at)
        window, limit = float(self.window), int(self.limit)
        count = 0
        rejects = ev.pack(ev.SERVER_REJECTS)
        shift = ev.DETAIL_SHIFT
        accepts, decrements = ev.SERVER_ACCEPTS, ev.SERVER_DECREMENTS

        def receive_write(t: float, c: int, a: int) -> int:
            nonlocal count
            if count >= limit:
                reject(t + net[c](), c, REJECTED)
                return rejects
            count += 1
            heappush(heap, (t + window, seq(), decrement, c, 0))
            if committed is not None:
                committed(t, c)
            return accepts | ((count + 1) << shift)

        def decrement(t: float, c: int, a: int) -> int:
            nonlocal count
            count -= 1
            return decrements | ((count + 1) << shift)

        if wiring.gate is not None:
            decrement = wiring.gate.freeze(decrement)
        return ServerHandlers(receive_write)
