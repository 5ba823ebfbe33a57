"""The event engine: one seeded run of clients contending for a server.

A lean discrete-event loop in the manner of SimPy: a heap of plain tuples
``(time, seq, handler, client, arg)``; the monotonic ``seq`` breaks ties so simultaneous events
always pop in the order they were scheduled. Each popped item is one event, which its handler
returns packed as an int (see ``events``), or ``NO_EVENT`` for internal bookkeeping (a bucket
sample, a stale timeout, a request held through an outage), which is not recorded and not
counted: ``RunMetrics.events`` is the number of recorded events.

The same run serves two uses:
- ``run_metrics`` (sweeps): drains the heap keeping only counters; no history.
- ``Run`` (the TUI and exports): ``step()`` one event at a time or ``run()`` to the end,
  appending each event to a ``History`` from which any earlier state can be rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heapify, heappop, heappush
from itertools import count

import numpy as np

from . import events as ev
from .bounds import MAX_TIME
from .config import SimulationSpec
from .errors import UserError
from .limits import RUNAWAY_FACTOR, event_budget, expected_events, time_scale
from .metrics import RunMetrics
from .open_clients import NO_EVENT, OpenClients, Series, gap_functions
from .open_metrics import OpenRunMetrics, recovery_time
from .streams import (PURPOSE_JITTER, PURPOSE_NETWORK, PURPOSE_SERVER, PURPOSE_WORKLOAD, ClientStreams,
                      Draw, clipped_normal, generator, serial_stream, uniform01)
from .strategies import Strategy
from .workloads import Outage

__all__ = ["History", "Run", "RunMetrics", "OpenRunMetrics", "Wiring", "record_run", "run_metrics"]


# Every this many scheduled events a run checks that its clock moves (see ``_Guard``).
STALL_EVENTS = 1 << 22
# Progress: the clock must advance by at least this fraction of the config's largest time per
# STALL_EVENTS events; slower is a loop creeping in sub-resolution steps (e.g. latencies of 1e-300
# against a window of 20), which would otherwise run for ever.
CREEP_FRACTION = 1e-9

# Called in the process running the engine with the events done since the last call (about
# every STALL_EVENTS): the sweep's progress reporting sets it.
progress_hook: Callable[[int], None] | None = None


class StalledRun(UserError):
    """Time stopped advancing, or creeps forward in steps too small to ever reach anything."""

    def __init__(self, spec: SimulationSpec, t: float, creep: float = 0.0) -> None:
        where = f"{spec.source}: " if spec.source else ""
        if creep:
            what = (f"time creeps forward in sub-resolution steps near t={t:g} (less than "
                    f"{creep:g} per {STALL_EVENTS:,} events): delays "
                    "far smaller than the config's other times make retries loop almost in place; "
                    "use a network latency, backoff or server delay on the scale of the other times")
        else:
            what = (f"time stopped advancing at t={t:g} ({STALL_EVENTS:,} events at that instant): "
                    "with zero network latency, zero backoff and no server delay, retries loop "
                    "forever; add network latency (network_mu > 0), a non-zero backoff or a server delay")
        super().__init__(f"{where}simulation {spec.title!r}: {what}")

    def __reduce__(self):  # raised in sweep workers, re-raised in the parent
        return (UserError, (str(self),))


class RunawayRun(UserError):
    """A run far beyond its estimate (events), or whose clock passed MAX_TIME."""

    def __init__(self, spec: SimulationSpec, clients: int, what: str) -> None:
        where = f"{spec.source}: " if spec.source else ""
        super().__init__(f"{where}simulation {spec.title!r}: the run with {clients:,} clients {what}")

    def __reduce__(self):
        return (UserError, (str(self),))


class _Guard:
    """Checks a run every STALL_EVENTS scheduled events: the clock moves by more than a creep,
    stays below MAX_TIME, and the events stay within the run's budget (unless limits are off)."""

    def __init__(self, spec: SimulationSpec, strategy: Strategy, clients: int,
                 report: bool = False) -> None:
        self.spec = spec
        self.clients = clients
        self.report = report  # metrics-only runs report their progress (the sweep's)
        # Only an exact stall when limits are off (--force): the creep check is a judgement.
        self.creep = time_scale(spec, strategy) * CREEP_FRACTION if spec.soft_limits else 0.0
        self.budget = event_budget(spec, clients) if spec.soft_limits else None
        self.checked_at = -1.0
        self.checked_seq = 0

    def check(self, t: float, s: int) -> None:
        if t == self.checked_at:
            raise StalledRun(self.spec, t)
        if t - self.checked_at <= self.creep:
            raise StalledRun(self.spec, t, self.creep)
        self.final(t)
        if self.budget is not None and s > self.budget:
            raise RunawayRun(self.spec, self.clients,
                             f"passed {s:,} events, {RUNAWAY_FACTOR:,} times its estimate of "
                             f"{expected_events(self.spec, self.clients):,.0f} for its size: retries "
                             "with little or no backoff under heavy contention? (pass --force to "
                             "let it run on)")
        self.checked_at = t
        if self.report and progress_hook is not None:
            progress_hook(s - self.checked_seq)
        self.checked_seq = s

    def final(self, t: float) -> None:
        if t > MAX_TIME:
            raise RunawayRun(self.spec, self.clients,
                             f"reached t={t:g}, past {MAX_TIME:g} where a delay of one time unit no "
                             "longer moves the clock; use smaller delays, or fewer clients")


class Wiring:
    """What a control's handlers need from the run: the heap, streams and client entry points."""

    def __init__(self, spec: SimulationSpec, clients: int, repetition: int) -> None:
        self.heap: list[tuple] = []
        self.seq: Callable[[], int] = count().__next__
        self._spec = spec
        self._clients = clients
        self._repetition = repetition
        net_rng = self._rng(PURPOSE_NETWORK)
        self.net: list[Callable[[], float]] = ClientStreams(
            net_rng, clients, clipped_normal(spec.network_mu, spec.network_sigma)).next_functions()
        self.jitter: list[Callable[[], float]] = ClientStreams(
            self._rng(PURPOSE_JITTER), clients, uniform01).next_functions()
        self._server_rng: np.random.Generator | None = None
        # Per-bucket counters, for servers that reply (they need a horizon).
        self.series: Series | None = Series(spec.horizon, spec.bucket_width) if spec.control.REPLIES else None
        self.gate: OutageGate | None = None
        self.dropped_at_end = 0
        # Set by the client side before the control builds its handlers.
        self.client_rejected: Callable[[float, int, int], int]
        self.client_version_reply: Callable[[float, int, int], int]
        self.client_succeeded: Callable[[float, int, int], int]
        # Set by replying servers: (in service, queued), sampled at bucket ends.
        self.server_state: Callable[[], tuple[int, int]] = lambda: (0, 0)

    def _rng(self, purpose: int) -> np.random.Generator:
        return generator(self._spec.seed, self._spec.title, self._clients, self._repetition, purpose)

    def server_stream(self, draw: Draw) -> Callable[[], float]:
        """The server's own stream (write durations); one per run."""
        if self._server_rng is None:
            self._server_rng = self._rng(PURPOSE_SERVER)
        return serial_stream(self._server_rng, draw)


class _Clients:
    """Client-side handlers: request, back off or give up.

    Work is ``sum(attempts)``, so the hot path only bumps one list slot per request.
    """

    def __init__(self, wiring: Wiring, strategy: Strategy, reads_version: bool) -> None:
        self.gave_up = 0
        n = len(wiring.net)
        heap, seq, net = wiring.heap, wiring.seq, wiring.net
        self.attempts = attempts = [0] * n
        # When each client first acted; every client starts at 0 in a burst.
        self.first_request = first = [0.0] * n
        backoffs = [strategy.delays(u).__next__ for u in wiring.jitter]
        max_attempts = strategy.max_attempts or 0
        max_elapsed = strategy.max_elapsed
        limited = bool(max_attempts) or max_elapsed is not None
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

        start = read if reads_version else write

        def rejected(t: float, c: int, a: int) -> int:
            heappush(heap, (t + backoffs[c](), seq(), start, c, 0))
            return backs_off

        def rejected_limited(t: float, c: int, a: int) -> int:
            n_attempts = attempts[c]
            if (max_attempts and n_attempts >= max_attempts) or (
                    max_elapsed is not None and t - first[c] > max_elapsed):
                clients.gave_up += 1
                return gives_up | ((n_attempts + 1) << shift)
            heappush(heap, (t + backoffs[c](), seq(), start, c, 0))
            return backs_off

        self.start = start
        self._receive = receive
        wiring.client_rejected = rejected_limited if limited else rejected
        wiring.client_version_reply = write

    @property
    def work(self) -> int:
        return sum(self.attempts)

    def bind(self, receive_write: Callable, receive_read: Callable | None) -> None:
        self._receive[0] = receive_write
        self._receive[1] = receive_read


class OutageGate:
    """Stops the server during outage windows (study 003's SIGSTOP).

    - Arrivals wait, as connections in a stopped server's accept queue do: at most ``backlog`` of
      them (None: no bound); beyond it an arrival is refused, so its client only hears its own
      timeout. At the resume, held requests whose client still waits for that very attempt are
      served in arrival order; the others (timed out, given up, superseded by a newer attempt)
      are dropped, as a closed connection is. Stale held requests keep their backlog slot until
      the resume, as closed connections stay in the accept queue until accepted.
    - Work in progress on the server's own clock (``freeze``: writes, service, rejections, window
      expiries) stops with it and resumes with its remaining time: at the pause, every such
      scheduled step is moved later by the outage's duration. Steps on the wall clock (``wall``:
      a latency fixed at the start) that fall inside the outage happen at the resume.
    - ``on_resume`` callbacks run first at each resume (LatencyServer restarts its checks there).

    Nothing here touches the hot loop: steps are moved once per pause, and the pause and resume
    markers are recorded only while the run still has work (a marker after the last client
    finished changes neither duration nor cost).
    """

    def __init__(self, wiring: Wiring, outages: tuple[Outage, ...], backlog: int | None) -> None:
        self.paused = False
        self.backlog = backlog
        self.refused = 0
        self.dropped = 0
        # Set by clients that can stop waiting for an attempt: (client, token) -> still waiting?
        self.still_waiting: Callable[[int, int], bool] | None = None
        self._wiring = wiring
        self._outages = outages
        self._held: list[tuple[Callable, int, int]] = []
        self._frozen: set[Callable] = set()
        self._wall: set[Callable] = set()
        self._resume_hooks: list[Callable[[float], None]] = []
        self._markers = 2 * len(outages)  # still in the heap
        heap, seq = wiring.heap, wiring.seq
        for i, outage in enumerate(outages):
            heappush(heap, (outage.start, seq(), self._pause, -1, i))
            heappush(heap, (outage.end, seq(), self._resume, -1, i))

    def wrap(self, handler: Callable | None) -> Callable | None:
        """An entry point that holds arrivals while the server is paused."""
        if handler is None:
            return None
        held = self._held

        def gated(t: float, c: int, a: int) -> int:
            if self.paused:
                if self.backlog is not None and len(held) >= self.backlog:
                    self.refused += 1
                else:
                    held.append((handler, c, a))
                return NO_EVENT
            return handler(t, c, a)
        return gated

    def freeze(self, handler: Callable) -> Callable:
        """Register a server step on the server's own clock: it waits out a pause."""
        self._frozen.add(handler)
        return handler

    def wall(self, handler: Callable) -> Callable:
        """Register a server step on the wall clock: one due inside a pause happens at the resume."""
        self._wall.add(handler)
        return handler

    def on_resume(self, hook: Callable[[float], None]) -> None:
        self._resume_hooks.append(hook)

    def _has_work(self) -> bool:
        """True while anything but outage markers is scheduled or held."""
        return len(self._wiring.heap) > self._markers or bool(self._held)

    def _pause(self, t: float, c: int, i: int) -> int:
        self._markers -= 1
        self.paused = True
        outage = self._outages[i]
        shift, end = outage.duration, outage.end
        heap, frozen, wall = self._wiring.heap, self._frozen, self._wall
        moved = False
        for j, item in enumerate(heap):
            due, handler = item[0], item[2]
            if due >= t:
                if handler in frozen:
                    heap[j] = (due + shift, *item[1:])
                    moved = True
                elif handler in wall and due < end:
                    heap[j] = (end, *item[1:])
                    moved = True
        if moved:
            heapify(heap)
        return ev.pack(ev.SERVER_PAUSES) if self._has_work() else NO_EVENT

    def _resume(self, t: float, c: int, i: int) -> int:
        self._markers -= 1
        self.paused = False
        heap, seq = self._wiring.heap, self._wiring.seq
        for hook in self._resume_hooks:
            hook(t)
        still_waiting = self.still_waiting
        recorded = self._has_work()
        for handler, client, arg in self._held:
            if still_waiting is None or still_waiting(client, arg):
                heappush(heap, (t, seq(), handler, client, arg))
            else:
                self.dropped += 1
        self._held.clear()
        return ev.pack(ev.SERVER_RESUMES) if recorded else NO_EVENT


def _build(spec: SimulationSpec, strategy: Strategy, clients: int, repetition: int) -> tuple[Wiring, object]:
    wiring = Wiring(spec, clients, repetition)
    control = spec.control
    if spec.outages:
        wiring.gate = OutageGate(wiring, spec.outages, spec.backlog)
    if control.REPLIES:
        rng = wiring._rng(PURPOSE_WORKLOAD)
        starts = spec.workload.start_times(rng, clients)
        side = OpenClients(wiring, strategy, spec.workload, spec.timeout, starts,
                           gap_functions(spec.workload, rng, clients))
    else:
        side = _Clients(wiring, strategy, control.READS_VERSION)
        heap, seq, start = wiring.heap, wiring.seq, side.start
        for c in range(clients):
            heappush(heap, (0.0, seq(), start, c, 0))
    handlers = control.build(wiring)
    gate = wiring.gate
    if gate is not None:
        side.bind(gate.wrap(handlers.receive_write), gate.wrap(handlers.receive_read))
    else:
        side.bind(handlers.receive_write, handlers.receive_read)
    if wiring.series is not None:
        _schedule_sampling(wiring, float(spec.horizon))
    return wiring, side


def _schedule_sampling(wiring: Wiring, horizon: float) -> None:
    """Sample the server's state at each bucket's end, and end the run at the horizon."""
    heap, seq, series = wiring.heap, wiring.seq, wiring.series
    in_service, queued, width = series.in_service, series.queued, series.width
    last = series.buckets - 1

    def sample(t: float, c: int, b: int) -> int:
        in_service[b], queued[b] = wiring.server_state()
        if b < last:
            heappush(heap, ((b + 2) * width, seq(), sample, -1, b + 1))
        return NO_EVENT

    def end(t: float, c: int, a: int) -> int:
        # The last bucket ends at (or is cut short by) the horizon, where its own sample would fall
        # after this item: sample it here, or its in_service/queued would always read 0.
        in_service[last], queued[last] = wiring.server_state()
        wiring.dropped_at_end = len(heap)
        heap.clear()
        return NO_EVENT

    heappush(heap, (width, seq(), sample, -1, 0))
    heappush(heap, (horizon, seq(), end, -1, 0))


def _metrics(spec: SimulationSpec, wiring: Wiring, side, duration: float, events: int) -> RunMetrics:
    """Final metrics of a drained run; ``events`` counts recorded events only."""
    work = side.work
    if not spec.control.REPLIES:
        return RunMetrics(work, duration, spec.work_to_duration * work + duration, side.gave_up, events)
    series = wiring.series
    arrays = {name: np.asarray(values, dtype=np.int64) for name, values in series.arrays().items()}
    counts = side.counts
    gate = wiring.gate
    latencies = np.asarray(side.latencies, dtype=np.float64)
    latency_times = np.asarray(side.latency_times, dtype=np.float64)
    return OpenRunMetrics(
        work, duration, spec.work_to_duration * work + duration, side.gave_up, events,
        offered=int(arrays["offered"].sum()), successes=counts["successes"],
        rejections=counts["rejections"], timeouts=counts["timeouts"], unfinished=side.unfinished,
        horizon=float(spec.horizon), latencies=latencies,
        latency_clients=np.asarray(side.latency_clients, dtype=np.int64),
        latency_times=latency_times,
        attempts_per_client=np.asarray(side.attempts, dtype=np.int64), bucket=series.width,
        series=arrays, refused=gate.refused if gate else 0, dropped=gate.dropped if gate else 0,
        recovery_time=recovery_time(arrays["goodput"], series.width, spec.outages,
                                    latency_times, latencies))


def run_metrics(spec: SimulationSpec, strategy: Strategy, clients: int, repetition: int) -> RunMetrics:
    """Run to completion keeping only metrics: the sweep's hot path."""
    wiring, side = _build(spec, strategy, clients, repetition)
    heap = wiring.heap
    pop = heappop
    t = last = 0.0
    silent = 0
    guard = _Guard(spec, strategy, clients, report=True)
    check = STALL_EVENTS
    while heap:
        t, s, handler, c, a = pop(heap)
        if s >= check:  # about every STALL_EVENTS events: is the run still sound?
            guard.check(t, s)
            check = s + STALL_EVENTS
        if handler(t, c, a) == NO_EVENT:
            silent += 1
        else:
            last = t
    guard.final(t)
    # Every item was scheduled once; those left when the horizon cleared the heap never ran.
    events = wiring.seq() - wiring.dropped_at_end - silent
    return _metrics(spec, wiring, side, t if spec.control.REPLIES else last, events)


class History:
    """A run's events in order, as parallel columns (cheap to append, easy to index and slice)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.clients: list[int] = []
        self.packed: list[int] = []

    def __len__(self) -> int:
        return len(self.times)

    def append(self, t: float, c: int, packed: int) -> None:
        self.times.append(t)
        self.clients.append(c)
        self.packed.append(packed)

    def event(self, i: int) -> tuple[float, int, int, int]:
        """``(time, client, code, detail)`` of the i-th event."""
        code, detail = ev.unpack(self.packed[i])
        return self.times[i], self.clients[i], code, detail

    def rows(self) -> list[tuple[float, int, str, str]]:
        """``(time, client_id, event_type, event_detail)`` rows, as the reference prints them."""
        out = []
        for t, c, p in zip(self.times, self.clients, self.packed):
            code, detail = ev.unpack(p)
            out.append((t, c, ev.EVENT_NAMES[code], ev.format_detail(code, detail)))
        return out

    def codes(self) -> np.ndarray:
        return np.asarray(self.packed, dtype=np.int64) & ev.CODE_MASK

    def details(self) -> np.ndarray:
        return (np.asarray(self.packed, dtype=np.int64) >> ev.DETAIL_SHIFT) - 1


class Run:
    """A recorded run that can be stepped one event at a time (what the TUI replays)."""

    def __init__(self, spec: SimulationSpec, label: str, clients: int, repetition: int) -> None:
        self.spec = spec
        self.label = label
        self.clients = clients
        self.repetition = repetition
        strategy = spec.strategy(label).strategy
        self._wiring, self._side = _build(spec, strategy, clients, repetition)
        self._guard = _Guard(spec, strategy, clients)
        self.history = History()
        self.time = 0.0

    @property
    def done(self) -> bool:
        return not self._wiring.heap

    def peek(self) -> float | None:
        """Time of the next event, or None when the run is over."""
        heap = self._wiring.heap
        return heap[0][0] if heap else None

    def step(self) -> tuple[float, int, int, int] | None:
        """Process up to the next recorded event and return it as ``(time, client, code, detail)``;
        None when the run is over. Internal bookkeeping items in between are processed silently."""
        heap, history = self._wiring.heap, self.history
        while heap:
            t, _, handler, c, a = heappop(heap)
            packed = handler(t, c, a)
            self.time = t
            if packed != NO_EVENT:
                history.append(t, c, packed)
                code, detail = ev.unpack(packed)
                return t, c, code, detail
        return None

    def run(self, until: float | None = None) -> Run:
        """Process events up to and including time ``until`` (or to the end); callable again."""
        heap = self._wiring.heap
        times, clients, packed = self.history.times, self.history.clients, self.history.packed
        t = self.time
        guard = self._guard
        check = heap[0][1] + STALL_EVENTS if heap else 0
        while heap and (until is None or heap[0][0] <= until):
            t, s, handler, c, a = heappop(heap)
            if s >= check:
                guard.check(t, s)
                check = s + STALL_EVENTS
            p = handler(t, c, a)
            if p != NO_EVENT:
                packed.append(p)
                times.append(t)
                clients.append(c)
        guard.final(t)
        self.time = t
        return self

    def metrics(self) -> RunMetrics:
        """Metrics of the events processed so far (final once ``done``); equal to ``run_metrics``."""
        times = self.history.times
        duration = self.time if self.spec.control.REPLIES else (times[-1] if times else 0.0)
        return _metrics(self.spec, self._wiring, self._side, duration, len(self.history))

    @property
    def open_metrics(self) -> OpenRunMetrics | None:
        """The overload metrics, for runs against replying servers."""
        m = self.metrics()
        return m if isinstance(m, OpenRunMetrics) else None


def record_run(spec: SimulationSpec, label: str, clients: int, repetition: int) -> Run:
    """Run to completion with the full history recorded."""
    return Run(spec, label, clients, repetition).run()
