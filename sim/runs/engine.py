"""The event engine: one seeded run of clients contending for a server.

A lean discrete-event loop in the manner of SimPy: a heap of plain tuples
``(time, seq, handler, client, arg)``; the monotonic ``seq`` breaks ties so simultaneous events
always pop in the order they were scheduled. Items due soon may sit in a second heap of the
same items (``Wiring.near``, for speed); the loop pops whichever head comes first, so the order
is the same. Each popped item is one event, which its handler returns packed as an int (see
``events``), or ``NO_EVENT`` for internal bookkeeping (a bucket sample, a stale timeout, a
request held through an outage), which is not recorded and not counted:
``RunMetrics.events`` is the number of recorded events.

The same run serves two uses:
- ``run_metrics`` (sweeps): drains the heap keeping only counters; no history. Where nothing can
  change the order of events (``ahead_is_exact``), a contention control's clients take the steps
  only they see (a failure heard, the backoff, the next request) when the server sends the
  message, without items of their own, and count them as events (``Wiring.ahead``).
- ``Run`` (the TUI and exports): ``step()`` one event at a time or ``run()`` to the end,
  appending each event to a ``History`` from which any earlier state can be rebuilt.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import cached_property, partial
from heapq import heappop, heappush

import numpy as np

from sim.analysis.hosts import host_counts
from sim.analysis.metrics import RunMetrics, cost
from sim.analysis.open_metrics import OpenRunMetrics, recovery_verdict
from sim.vocabulary.bounds import MAX_TIME
from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.core.history import NO_CALL, History
from sim.runs import fast
from sim.runs.caller import caller
from sim.runs.counters import RunCounters
from sim.runs.tiers import RunTiers, TierLayout
from sim.models.tiers import stopping_both
from sim.runs.resources import RUNAWAY_FACTOR, event_budget, expected_events, time_scale
from sim.core.series import Series, extra_series
from sim.core.streams import PURPOSE_WORKLOAD, clipped_normal, generator
from sim.core.wiring import Wiring
from sim.vocabulary.errors import UserError
from sim.models.clients import Clients, start_clients
from sim.models.controls import Control, ServerHandlers
from sim.models.fleet import FleetSpec, HostIncident, build_fleet
from sim.models.incidents import Incidents
from sim.models.initial import InitialState
from sim.models.open_clients import OpenClients
from sim.models.outage import AcceptQueue, OutageGate
from sim.models.strategies import Strategy
from sim.policies.chain import ChainSpec
from sim.policies.entries import seconds_per_unit
from sim.settings.spec import SimulationSpec

__all__ = ["STALL_EVENTS", "Run", "build_wiring", "counters_of", "guard_for", "kernel_metrics", "kernel_record",
           "record_run", "run_metrics", "start_run"]


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
        self.strategy = strategy
        self.clients = clients
        self.report = report  # metrics-only runs report their progress (the sweep's)
        self.checked_at = -1.0
        self.checked_seq = 0

    # The creep and the event budget are worked out at the first check that needs them: most
    # runs (the sample's every one) end before it, and a sweep builds thousands of guards.
    @cached_property
    def creep(self) -> float:
        # Only an exact stall when limits are off (--force): the creep check is a judgement.
        return time_scale(self.spec, self.strategy) * CREEP_FRACTION if self.spec.soft_limits else 0.0

    @cached_property
    def budget(self) -> int | None:
        return event_budget(self.spec, self.clients) if self.spec.soft_limits else None

    def check(self, t: float, s: int) -> None:
        if t == self.checked_at:
            raise StalledRun(self.spec, t)
        if t - self.checked_at <= self.creep:
            raise StalledRun(self.spec, t, self.creep)
        self.final(t)
        if not gc.isenabled():  # paused for the loop (``_collector_paused``): young cycles, if any
            gc.collect(0)
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


@contextmanager
def _collector_paused() -> Iterator[None]:
    """While a run is built and goes, Python's cyclic garbage collector is off. Every few hundred
    heap tuples allocated it would examine its young objects (the run's live tuples among them),
    and now and then every object of the program. A run's items are tuples its reference counts free;
    what only the collector frees, the run's structure (closures that reference each other),
    becomes garbage when the run ends, young, and the first collection after it frees it. The
    ``_Guard`` collects the young objects every ``STALL_EVENTS`` items meanwhile, in case a model
    makes cycles as it goes.

    This replaced ``gc.freeze`` around the loop, which excluded what existed from collections
    but at ``unfreeze`` moved it all, the run's own structure included, to the oldest generation,
    where only a rare full collection freed it: a sweep worker grew to ~240 MB (441 MB for the
    sample's whole sweep in one process, 39 MB now; its OCC sweep ~3% faster, medians of 3
    alternating runs). Left as it is when something froze objects (``sim.commands.collector``: the app,
    which collects on its own clock, or the CLI writing files: the caller's GC policy,
    ``sim.runs.caller``) or the collector is off."""
    if caller().collector_frozen() or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def build_wiring(spec: SimulationSpec, clients: int, repetition: int) -> Wiring:
    def rng(purpose: int) -> np.random.Generator:
        return generator(spec.seed, spec.title, clients, repetition, purpose)

    caps = spec.control.CAPS
    series = Series(spec.horizon, spec.bucket_width, extra_series(spec.series_declared)) if caps.keeps_series else None
    return Wiring(rng, clients, clipped_normal(spec.network_mu, spec.network_sigma), series)


def accept_queue(spec: SimulationSpec) -> AcceptQueue:
    """The simulation's accept queue during outages (its ``backlog`` keys)."""
    return AcceptQueue(spec.backlog, spec.backlog_overflow, spec.abandoned,
                       seconds_per_unit(spec.time_unit))


def as_chain(strategy: Strategy | ChainSpec) -> ChainSpec:
    """A strategy entry's chain; a bare strategy is a chain of itself (and its limits)."""
    return strategy if isinstance(strategy, ChainSpec) else ChainSpec(strategy)


# Clients may take their own steps ahead of time in a run that keeps no history (``Wiring.ahead``,
# ``Clients``) only where that keeps every event's order: the request a client sends early takes
# its seq earlier, which matters only on an exact tie of its time with another item's. Its time
# ends in a fresh network draw, continuous unless clipped to 0 by max(0, N(mu, sigma)), which
# happens with probability Phi(-mu/sigma): Phi(-4.75) = 1.0e-6. A tie then needs the other parts
# of the time to vanish as well (the failure's own network delay, clipped too, and no backoff):
# under 1e-12 per attempt, so a sweep of millions of attempts meets none. With sigma = 0 times
# tie exactly everywhere, so clients take nothing ahead there.
AHEAD_SIGMAS = 4.75


def ahead_is_exact(spec: SimulationSpec, initial: InitialState | None = None) -> bool:
    """Whether clients may take their steps ahead of time in a run of ``spec`` that keeps no
    history (``Wiring.ahead``): its network delays have no mass at 0 to speak of (above), and
    nothing else holds or moves a step (outages, incidents, tiers, a starting state)."""
    sigma = spec.network_sigma
    return (sigma > 0 and spec.network_mu >= AHEAD_SIGMAS * sigma and not spec.stops
            and not spec.degradations and not spec.tiers and initial is None
            and spec.backoff_from == "reply")  # a step taken ahead counts its backoff from the failure


def _build(spec: SimulationSpec, strategy: Strategy | ChainSpec, clients: int,
           repetition: int, initial: InitialState | None = None,
           ahead: bool = False) -> tuple[Wiring, Clients]:
    wiring = build_wiring(spec, clients, repetition)
    wiring.ahead = ahead and ahead_is_exact(spec, initial)
    wiring.backoff_from_send = spec.backoff_from == "send"
    control = spec.control
    chain = as_chain(strategy)
    stops, degradations = spec.stops, spec.degradations
    lone_hedging = chain.hedging is not None and spec.fleet is None
    if stops:
        wiring.gate = OutageGate(wiring, stops, accept_queue(spec))
    # A lone server that hedges is a fleet of one host, whose incidents are the host's (every copy meets them).
    incidents = Incidents(wiring, degradations) if degradations and not lone_hedging else None
    side = start_clients(wiring, as_chain(strategy), control, spec.workload, spec.timeout,
                         partial(wiring._rng, PURPOSE_WORKLOAD),
                         OpenClients if spec.workload.CONCURRENT else None, initial)
    tiers = wiring.tiers = RunTiers(spec, wiring, clients, repetition) if spec.tiers else None
    handlers = _server(spec, chain, control, wiring)
    receive_write = handlers.receive_write
    if incidents is not None:
        incidents.bind(wiring.incident_hooks)
        receive_write = incidents.wrap(receive_write)  # errors inside the gate: a stopped server sends none
    gate = wiring.gate
    if tiers is not None:
        receive_write = tiers.entry(receive_write if gate is None else gate.wrap(receive_write))
        side.bind(receive_write, None, stopping_both(handlers.stopped_waiting, tiers.stopped_waiting))
    elif gate is not None:
        side.bind(gate.wrap(receive_write), gate.wrap(handlers.receive_read),
                  handlers.stopped_waiting)
    else:
        side.bind(receive_write, handlers.receive_read, handlers.stopped_waiting)
    if wiring.series is not None:
        _schedule_sampling(wiring, float(spec.horizon))
    return wiring, side


def _server(spec: SimulationSpec, chain: ChainSpec, control: Control, wiring: Wiring) -> ServerHandlers:
    """The server the clients call: the control, a fleet of its copies, or (a strategy entry
    that hedges, no fleet) a fleet of one host whose events name no host, so the copies of an
    attempt go to the one server (``sim.models.hedging``)."""
    hedging, fleet = chain.hedging, spec.fleet
    if hedging is None and fleet is None:
        return control.build(wiring)
    if fleet is None:
        own = tuple(HostIncident(i.start, i.duration, i.kind, i.level, (0,)) for i in spec.degradations)
        return build_fleet(FleetSpec(hosts=1, hedging=hedging, incidents=own), control, wiring, accept_queue(spec),
                           tag_hosts=False)
    return build_fleet(replace(fleet, hedging=hedging), control, wiring, accept_queue(spec))


def start_run(spec: SimulationSpec, strategy: Strategy | ChainSpec, clients: int, repetition: int,
              initial: InitialState | None) -> tuple[Wiring, Clients]:
    """A run built in ``initial`` at t = 0 (work at the server, clients in backoff; None: every
    client at its first start, as ``run``'s), not yet run: the phase portrait drives its heap
    itself (``sim.phase.estimate``, ``sim.phase.resume``)."""
    return _build(spec, strategy, clients, repetition, initial)


def guard_for(spec: SimulationSpec, strategy: Strategy | ChainSpec, clients: int) -> _Guard:
    """The checks a loop driving a run (``start_run``'s) makes every ``STALL_EVENTS`` items:
    time stalled or creeping, a runaway past its event budget or ``MAX_TIME``."""
    return _Guard(spec, as_chain(strategy).strategy, clients)


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
        wiring.dropped_at_end = len(heap) + len(wiring.near)
        heap.clear()
        wiring.near.clear()
        return NO_EVENT

    heappush(heap, (width, seq(), sample, -1, 0))
    heappush(heap, (horizon, seq(), end, -1, 0))


def counters_of(spec: SimulationSpec, wiring: Wiring, side: Clients, duration: float) -> RunCounters:
    """The counters of a run of the reference models (finished, or as it stands): what its
    clients, series, outage gate and tiers counted."""
    series = wiring.series
    end = duration if series is None else float(spec.horizon)
    counters = RunCounters(side.work, side.calls, side.gave_up, side.retries_denied, side.calls_refused,
                           side.breaker_open_time(end))
    if series is None:
        return counters
    counts = side.counts
    counters.series = {name: np.asarray(values, dtype=np.int64) for name, values in series.arrays().items()}
    counters.bucket = series.width
    counters.successes, counters.rejections = counts["successes"], counts["rejections"]
    counters.timeouts, counters.unfinished = counts["timeouts"], side.unfinished
    counters.attempts = np.asarray(side.attempts, dtype=np.int64)
    counters.latencies = latencies = np.asarray(side.latencies, dtype=np.float64)
    counters.latency_clients = np.asarray(side.latency_clients, dtype=np.int64)
    counters.latency_times = np.asarray(side.latency_times, dtype=np.float64)
    gate = wiring.gate
    if gate is not None:
        counters.refused, counters.dropped = gate.refused, gate.dropped
    if wiring.tiers is not None:
        counters.tiers = wiring.tiers.counts(counts["successes"], latencies, side.retries_denied)
    fleet = getattr(wiring, "fleet", None)
    if fleet is not None:
        counters.hedges = sum(fleet.hedges)
        if spec.fleet is not None:  # not a lone server's hedging
            counters.hosts = host_counts(fleet, float(spec.horizon))
    return counters


def _metrics(spec: SimulationSpec, counters: RunCounters, duration: float, events: int) -> RunMetrics:
    """Final metrics of a drained run (``events`` counts recorded events only), from its
    counters alone, whichever path ran it: what every run has, and the overload metrics where
    the run keeps series (it then ends at its horizon)."""
    series = counters.series
    end = duration if series is None else float(spec.horizon)
    work = counters.work
    common = dict(work=work, duration=duration, cost=cost(work, duration, spec.work_to_duration),
                  gave_up=counters.gave_up, events=events, retries_denied=counters.retries_denied,
                  breaker_open_time=counters.breaker_open_time, calls_refused=counters.calls_refused,
                  calls=counters.calls, hedges=counters.hedges)
    if series is None:
        return RunMetrics(**common)
    latencies, latency_times = counters.latencies, counters.latency_times
    offered = int(series["offered"].sum())
    recovery = recovery_verdict(series["goodput"], counters.bucket, spec.disruptions, latency_times, latencies,
                                time_unit=spec.time_unit)
    return OpenRunMetrics(
        **{**common, "calls": offered}, offered=offered, successes=counters.successes,
        rejections=counters.rejections, timeouts=counters.timeouts, unfinished=counters.unfinished,
        horizon=end, latencies=latencies, latency_clients=counters.latency_clients,
        latency_times=latency_times, attempts_per_client=counters.attempts, bucket=counters.bucket,
        series=series, refused=counters.refused, dropped=counters.dropped,
        recovery_time=recovery.time, recovery_note=recovery.note, tiers=counters.tiers,
        hosts=counters.hosts)


def run_metrics(spec: SimulationSpec, strategy: Strategy | ChainSpec, clients: int, repetition: int) -> RunMetrics:
    """Run to completion keeping only metrics: the sweep's hot path. ``strategy``: a strategy
    entry's chain (``StrategySpec.chain``) or a bare strategy."""
    if fast.kernel_fits(spec, as_chain(strategy), clients):
        return kernel_metrics(spec, as_chain(strategy), clients, repetition)
    with _collector_paused():  # its set-up too: thousands of objects, which the collector would examine
        wiring, side = _build(spec, strategy, clients, repetition, ahead=True)
        heap, near, taken = wiring.heap, wiring.near, wiring.taken_ahead
        pop = heappop
        t = last = 0.0
        silent = 0
        guard = _Guard(spec, as_chain(strategy).strategy, clients, report=True)
        check = STALL_EVENTS
        no_event = NO_EVENT  # a local: read once per event
        while True:
            if near:
                t, s, handler, c, a = pop(heap if heap and heap[0] < near[0] else near)
            elif heap:
                t, s, handler, c, a = pop(heap)
            else:
                break
            if s >= check:  # about every STALL_EVENTS items: is the run still sound?
                guard.check(t, s + taken[0])  # events (items and steps taken ahead)
                check = s + STALL_EVENTS
            if handler(t, c, a) == no_event:
                silent += 1
            else:
                last = t
        guard.final(t)
        # Every item was scheduled once; those left when the horizon cleared the heap never ran.
        # Steps clients took ahead of time were events without items.
        events = wiring.seq() - wiring.dropped_at_end - silent - wiring.unscheduled() + taken[0]
        duration = t if spec.runs_to_horizon else last
        metrics = _metrics(spec, counters_of(spec, wiring, side, duration), duration, events)
        side.release()
        # The run's structure is garbage before the collector is back: its first (young)
        # collection frees it. Held a moment longer, it would outlive that one, into an older
        # generation, whose collections cost more (~6% of a sweep).
        del wiring, side, heap, near, handler
    return metrics


def _due_first(wiring: Wiring) -> list[tuple] | None:
    """The queue (``heap`` or ``near``, see ``Wiring``) whose next item is due first; None when
    both are empty. Items are unique by ``seq``, so the two heads never tie."""
    heap, near = wiring.heap, wiring.near
    if near:
        return heap if heap and heap[0] < near[0] else near
    return heap or None


class _Drained:
    """The wiring of a finished run unpickled in another process: both queues empty."""

    heap: tuple = ()
    near: tuple = ()
    call = (-1,)  # ``Wiring.call``: no event is left to carry one


_DRAINED = _Drained()


class Run:
    """A recorded run that can be stepped one event at a time (what the TUI replays)."""

    def __init__(self, spec: SimulationSpec, label: str, clients: int, repetition: int) -> None:
        self.spec = spec
        self.label = label
        self.clients = clients
        self.repetition = repetition
        chain = spec.strategy(label).chain
        self._wiring, self._side = _build(spec, chain, clients, repetition)
        self._guard = _Guard(spec, chain.strategy, clients)
        # A tiered run records its tiers' events with their callers' ids after the clients'
        # (``TierLayout.tier_of`` says an id's tier); None without tiers.
        self.layout: TierLayout | None = self._wiring.tiers.layout if spec.tiers else None
        self.history = History()
        self.time = 0.0
        self._final: RunMetrics | None = None  # set once the run crossed a process (``__getstate__``)

    def __getstate__(self) -> dict:
        """A finished run pickles as its history and final metrics (a sweep worker records the
        example runs and sends them back, ``sim.runs.sweep``); its wiring (closures) stays behind."""
        if not self.done:
            raise TypeError("a run that is still going cannot be pickled; run it to its end first")
        state = {name: getattr(self, name) for name in ("spec", "label", "clients", "repetition",
                                                         "layout", "history", "time")}
        state["_final"] = self.metrics()
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._wiring = _DRAINED
        self._side = self._guard = None

    @property
    def done(self) -> bool:
        return _due_first(self._wiring) is None

    def peek(self) -> float | None:
        """Time of the next event, or None when the run is over."""
        queue = _due_first(self._wiring)
        return queue[0][0] if queue else None

    def step(self) -> tuple[float, int, int, int] | None:
        """Process up to the next recorded event and return it as ``(time, client, code, detail)``;
        None when the run is over. Internal bookkeeping items in between are processed silently."""
        wiring, history = self._wiring, self.history
        while (queue := _due_first(wiring)) is not None:
            t, _, handler, c, a = heappop(queue)
            packed = handler(t, c, a)
            self.time = t
            if packed != NO_EVENT:
                cell = wiring.call
                history.append(t, c, packed, cell[0])
                cell[0] = NO_CALL
                code, detail = ev.unpack(packed)
                return t, c, code, detail
        return None

    def run(self, until: float | None = None) -> Run:
        """Process events up to and including time ``until`` (or to the end); callable again."""
        if self._final is not None:  # finished in another process: nothing left to run
            return self
        wiring = self._wiring
        times, clients, packed = self.history.times, self.history.clients, self.history.packed
        calls, cell = self.history.calls, wiring.call
        t = self.time
        guard = self._guard
        queue = _due_first(wiring)
        check = queue[0][1] + STALL_EVENTS if queue else 0
        heap, near = wiring.heap, wiring.near
        no_event, pop = NO_EVENT, heappop
        with _collector_paused():
            while True:
                # ``_due_first`` inlined (a call per event): recording server_outage's three
                # histories ~4% faster (median of 7 paired runs on a loaded machine).
                if near:
                    queue = heap if heap and heap[0] < near[0] else near
                elif heap:
                    queue = heap
                else:
                    break
                if until is not None and queue[0][0] > until:
                    break
                t, s, handler, c, a = pop(queue)
                if s >= check:
                    guard.check(t, s)
                    check = s + STALL_EVENTS
                p = handler(t, c, a)
                if p != no_event:
                    packed.append(p)
                    times.append(t)
                    clients.append(c)
                    calls.append(cell[0])  # the event's call, set by a client's handler
                    cell[0] = -1
        guard.final(t)
        self.time = t
        return self

    def metrics(self) -> RunMetrics:
        """Metrics of the events processed so far (final once ``done``); equal to ``run_metrics``."""
        if self._final is not None:
            return self._final
        times = self.history.times
        duration = self.time if self.spec.runs_to_horizon else (times[-1] if times else 0.0)
        return _metrics(self.spec, counters_of(self.spec, self._wiring, self._side, duration), duration,
                        len(self.history))

    @property
    def open_metrics(self) -> OpenRunMetrics | None:
        """The overload metrics, for runs against replying servers."""
        m = self.metrics()
        return m if isinstance(m, OpenRunMetrics) else None


def record_run(spec: SimulationSpec, label: str, clients: int, repetition: int, report: bool = False) -> Run:
    """Run to completion with the full history recorded. ``report``: tell ``progress_hook`` the
    events done every ``STALL_EVENTS`` on the way, as a run of metrics does (a sweep's recorded
    runs, among its longest: its progress would otherwise stand still through them)."""
    if fast.kernel_fits(spec, spec.strategy(label).chain, clients):
        return kernel_record(spec, label, clients, repetition, report=report)
    run = Run(spec, label, clients, repetition)
    run._guard.report = report
    return run.run()


# --- the compiled fast paths (sim.runs.fast): the same results, by the kernels of sim.kernels ---

def _kernel_run(spec: SimulationSpec, chain: ChainSpec, clients: int, repetition: int, record: bool,
                kernel: Callable | None, guard: _Guard):
    """A run by the kernel that expresses it (``fast.kernel_name``: the one of its server,
    whose packing checks the run again), driven to its end."""
    run = fast.run_class(fast.kernel_of_control(spec))(spec, chain, clients, repetition, record=record,
                                                       kernel=kernel)
    run.drive(guard, STALL_EVENTS)
    guard.final(run.time)
    return run


def kernel_metrics(spec: SimulationSpec, chain: ChainSpec, clients: int, repetition: int,
                   kernel: Callable | None = None) -> RunMetrics:
    """``run_metrics`` by a compiled kernel (``kernel``: another build of it, for the tests).
    The kernel returns to Python every ``STALL_EVENTS`` items (``ArrayRun.drive``), where the
    guard checks the run and reports the events done to ``progress_hook``: a long run's
    progress moves while it goes (a few tenths of a second apart), its results unchanged."""
    guard = _Guard(spec, chain.strategy, clients, report=True)
    run = _kernel_run(spec, chain, clients, repetition, False, kernel, guard)
    return _metrics(spec, run.counters(), run.duration, run.events)


def kernel_record(spec: SimulationSpec, label: str, clients: int, repetition: int,
                  kernel: Callable | None = None, report: bool = False) -> Run:
    """``record_run`` by a compiled kernel: a finished ``Run`` holding the whole history and
    its final metrics (nothing left to step, as a run that finished in another process)."""
    chain = spec.strategy(label).chain
    guard = _Guard(spec, chain.strategy, clients, report=report)
    run = _kernel_run(spec, chain, clients, repetition, True, kernel, guard)
    done = Run.__new__(Run)  # its state set here: nothing left to step
    done.spec, done.label, done.clients, done.repetition = spec, label, clients, repetition
    done._wiring, done._side, done._guard = _DRAINED, None, guard
    done.layout = None
    done.history = run.history()
    done.time = run.time
    # As ``Run.metrics`` computes them: the events recorded (the kernel's count, checked equal).
    done._final = _metrics(spec, run.counters(), run.duration, len(done.history))
    return done
