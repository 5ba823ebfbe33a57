"""Sweeps: every (strategy, client count, repetition) of a simulation, metrics only, on all cores.

Work is split into tasks of one (strategy, client count) each, all repetitions; results land in
arrays by coordinates, so the outcome does not depend on the number of workers or the order in
which tasks finish. Progress goes to a callback; cancellation is cooperative through a callable.
The engine itself knows nothing of either (Ciw's mistake, not repeated).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from sim.analysis.hosts import HostSummary, host_summaries
from sim.analysis.metrics import RunMetrics, cost as run_cost
from sim.analysis.open_metrics import OpenRunMetrics, latency_summary
from sim.analysis.recovery import RecoverySummary, summary_note, undecided_reason
from sim.analysis.stats import Estimate, estimate
from sim.analysis.tiers import TierSummary, tier_summaries
# default_workers: named here by the benches and tests, as before it moved to procpool.
from sim.runs.procpool import default_workers, leased_pool, report_progress, worker_count  # noqa: F401
from sim.runs import engine, fast
from sim.runs.engine import Run, record_run, run_metrics
from sim.runs.resources import expected_events
from sim.runs.shared_runs import no_attempt_failed, stands_for
from sim.policies.chain import ChainSpec
from sim.settings.spec import SimulationSpec

Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]


class SweepCancelled(Exception):
    """Raised when a sweep is stopped by its caller before it finished."""


@dataclass
class SweepResult:
    """Per-run metrics of one simulation, indexed ``[strategy, client_count, repetition]``."""

    spec: SimulationSpec
    work: np.ndarray
    duration: np.ndarray
    gave_up: np.ndarray
    events: np.ndarray
    retries_denied: np.ndarray = None  # type: ignore[assignment]  # filled by ``empty``
    amplification: np.ndarray = None  # type: ignore[assignment]
    breaker_open_time: np.ndarray = None  # type: ignore[assignment]
    calls_refused: np.ndarray = None  # type: ignore[assignment]
    success_rate: np.ndarray = None  # type: ignore[assignment]  # share of calls that succeeded
    # Runs against replying servers keep their full overload metrics, keyed (strategy, clients, rep).
    open_runs: dict[tuple[int, int, int], OpenRunMetrics] = field(default_factory=dict, repr=False)
    # Example runs recorded by the sweep itself (``run_sweeps(record=True)``), keyed (label,
    # clients): repetition 0 at the client counts the exports show (``recorded_clients``).
    recorded: dict[tuple[str, int], Run] = field(default_factory=dict, repr=False)
    _summary: dict = field(default_factory=dict, repr=False)

    @classmethod
    def empty(cls, spec: SimulationSpec) -> SweepResult:
        shape = (len(spec.strategies), len(spec.clients), spec.repeat)
        return cls(spec, np.zeros(shape, np.int64), np.zeros(shape, np.float64),
                   np.zeros(shape, np.int64), np.zeros(shape, np.int64), np.zeros(shape, np.int64),
                   np.zeros(shape, np.float64), np.zeros(shape, np.float64), np.zeros(shape, np.int64),
                   np.zeros(shape, np.float64))

    @property
    def cost(self) -> np.ndarray:
        return run_cost(self.work, self.duration, self.spec.work_to_duration)

    @property
    def total_events(self) -> int:
        return int(self.events.sum())

    def store(self, s: int, k: int, runs: Sequence[RunMetrics], first: int = 0) -> None:
        """Keep the metrics of runs ``first``, ``first + 1``, ... of strategy ``s`` at client-count
        index ``k``."""
        for r, m in enumerate(runs, start=first):
            self.work[s, k, r] = m.work
            self.duration[s, k, r] = m.duration
            self.gave_up[s, k, r] = m.gave_up
            self.events[s, k, r] = m.events
            self.retries_denied[s, k, r] = m.retries_denied
            self.amplification[s, k, r] = m.amplification
            self.breaker_open_time[s, k, r] = m.breaker_open_time
            self.calls_refused[s, k, r] = m.calls_refused
            self.success_rate[s, k, r] = m.success_rate
            if isinstance(m, OpenRunMetrics):
                self.open_runs[(s, k, r)] = m

    def metric(self, name: str) -> np.ndarray:
        """``work``, ``duration``, ``cost``, ``gave_up``, ``retries_denied``, ``calls_refused``,
        ``amplification``, ``breaker_open_time`` or ``success_rate`` as an array [strategy, clients, rep]."""
        return self.cost if name == "cost" else getattr(self, name)

    def summary(self, name: str, s: int, k: int) -> Estimate:
        """Mean and 95% CI of a metric for strategy index ``s`` at client-count index ``k``."""
        key = (name, s, k)
        if key not in self._summary:
            self._summary[key] = estimate(self.metric(name)[s, k])
        return self._summary[key]

    def open_run(self, s: int, k: int, r: int) -> OpenRunMetrics | None:
        """Overload metrics of one run (None for the contention controls)."""
        return self.open_runs.get((s, k, r))

    def latency(self, s: int, k: int) -> dict[str, float]:
        """Latency percentiles pooled over every repetition's successful requests, but those that
        arrived before the spec's ``warmup``."""
        runs = [self.open_runs[(s, k, r)] for r in range(self.spec.repeat) if (s, k, r) in self.open_runs]
        warmup = self.spec.warmup
        kept = [m.latencies[m.latency_times >= warmup] if warmup else m.latencies for m in runs]
        pooled = np.concatenate(kept) if runs else np.zeros(0)
        return latency_summary(pooled)

    def open_mean(self, name: str, s: int, k: int) -> float:
        """Mean over repetitions of an OpenRunMetrics attribute (requests, successes, timeouts, ...)."""
        values = [float(getattr(self.open_runs[(s, k, r)], name)) for r in range(self.spec.repeat)
                  if (s, k, r) in self.open_runs]
        return float(np.mean(values)) if values else float("nan")

    def _open(self, s: int, k: int) -> list[OpenRunMetrics]:
        return [self.open_runs[(s, k, r)] for r in range(self.spec.repeat) if (s, k, r) in self.open_runs]

    def tier_summaries(self, s: int, k: int) -> list[TierSummary]:
        """Per tier of a tiered simulation (tier 1 first), over the cell's repetitions; [] without tiers."""
        runs = self._open(s, k)
        return tier_summaries(runs) if runs and runs[0].tiers else []

    def host_summaries(self, s: int, k: int) -> list[HostSummary]:
        """Per host of a fleet (host 0 first), over the cell's repetitions; [] without a fleet."""
        return host_summaries(self._open(s, k))

    def recovery(self, s: int, k: int) -> RecoverySummary | None:
        """The repetitions' recovery verdicts (how many recovered, in how long, how many were too
        noisy to tell); None without an outage or when no repetition could be judged."""
        runs = self._open(s, k)
        return RecoverySummary.of([m.recovery_time for m in runs],
                                  sum(undecided_reason(m.recovery_note) is not None for m in runs))

    def recovery_note(self, s: int, k: int) -> str:
        """Why repetitions were not judged (``sim.analysis.recovery.summary_note``); empty when
        all were, or there is no outage."""
        return summary_note([m.recovery_note for m in self._open(s, k)])

    def best_by_cost(self, k: int) -> int:
        """Index of the strategy with the lowest mean cost at client-count index ``k``."""
        return int(np.argmin(self.cost[:, k, :].mean(axis=1)))


@dataclass(frozen=True)
class _Task:
    sim: int
    strategy: int
    clients_index: int
    spec: SimulationSpec
    # Strategies ``strategy``, ``strategy + 1``, ... run in this one task (a whole cell of an
    # explore: a run in which no attempt failed then stands for the other strategies' runs).
    strategies: int = 1
    # Record repetition 0 of each strategy with its history (the exports' example runs), rather
    # than running it again for them once the sweep is over.
    record: bool = False
    # The repetitions run, ``range(*repetitions)``; None: all of them.
    repetitions: tuple[int, int] | None = None
    # On a worker: report long runs' events to the parent; load these compiled kernels first
    # (``fast.warm_up``, once per process however many sweeps its pool serves).
    counting: bool = False
    warm: tuple[str, ...] = ()

    @property
    def reps(self) -> range:
        return range(*self.repetitions) if self.repetitions else range(self.spec.repeat)

    @property
    def runs(self) -> int:
        return len(self.reps) * self.strategies


# (simulation, client-count index, first repetition, runs by strategy, runs recorded)
Outcome = tuple[int, int, int, list[tuple[int, list[RunMetrics]]], list[Run]]


def recorded_clients(spec: SimulationSpec) -> frozenset[int]:
    """The client counts whose repetition 0 the exports show: the example histories'
    (``SimulationSpec.representative_clients``) and the scatter plot's (the largest)."""
    return frozenset((spec.representative_clients(), spec.max_clients))


def _run_on_worker(task: _Task) -> Outcome:
    """A task on a pool's worker, which may serve sweeps that count and sweeps that do not."""
    _counting.start(_Reported() if task.counting else None)
    if task.warm:
        fast.warm_up(task.warm)
    return _run_task(task)


def _run_task(task: _Task) -> Outcome:
    spec = task.spec
    n = spec.clients[task.clients_index]
    chosen = range(task.strategy, task.strategy + task.strategies)
    runs: dict[int, list[RunMetrics]] = {s: [] for s in chosen}
    recorded: list[Run] = []
    for r in task.reps:
        template: tuple[ChainSpec, RunMetrics] | None = None
        for s in chosen:
            chain = spec.strategies[s].chain
            if template is not None and stands_for(template[0], chain):
                runs[s].append(template[1])  # the same run, event for event (``shared_runs``)
                continue
            if task.record and r == 0:
                # The same run as ``run_metrics``'s (``Run.metrics`` equals it), its history kept.
                run = record_run(spec, spec.strategies[s].label, n, r, report=True)
                recorded.append(run)
                m = run.metrics()
            else:
                m = run_metrics(spec, chain, n, r)
            _counting.settle(m.events)
            runs[s].append(m)
            if template is None and task.strategies > 1 and no_attempt_failed(m):
                template = (chain, m)
    return task.sim, task.clients_index, task.reps.start, list(runs.items()), recorded


# A sweep expected to take fewer events than this (the kernels' ~1-2 s) loads the kernels in
# the parent before its workers start, rather than in each worker (``run_sweeps``).
PARENT_WARM_EVENTS = 20_000_000

# Fewer tasks than this many per worker are split by repetition: server_outage's three (one per
# strategy, 3 runs each) left one worker idle for most of the sweep, its constant-retry runs 4x
# the others' events.
TASKS_PER_WORKER = 4


def _split_by_repetition(tasks: list[_Task], workers: int) -> list[_Task]:
    """``tasks`` cut into pieces of contiguous repetitions, so that there are about
    ``TASKS_PER_WORKER`` per worker (as many as repetitions allow): the same runs, in more tasks."""
    if len(tasks) >= TASKS_PER_WORKER * workers:
        return tasks
    pieces = -(-TASKS_PER_WORKER * workers // len(tasks))  # ceil
    out = []
    for task in tasks:
        reps = task.reps
        n = min(pieces, len(reps))
        bounds = [reps.start + len(reps) * j // n for j in range(n + 1)]
        out += [replace(task, repetitions=(a, b)) for a, b in zip(bounds, bounds[1:])]
    return out


class EventCount:
    """Events simulated so far by a sweep, including runs still going: the engine reports every
    few million events (``engine.progress_hook``); workers send their reports to the parent on
    their pipes (``procpool.report_progress``), where they are added up here."""

    def __init__(self) -> None:
        self.value = 0
        self.expected = 0.0  # the sweep's events as estimated before it runs (a lower bound)
        self._done_expected = 0.0  # ... of the runs finished
        self._done_actual = 0  # the events those runs took

    def add(self, n: int) -> None:
        self.value += n

    def plan(self, expected: float) -> None:
        """Runs of ``expected`` events in all (``resources.expected_events``) are to come."""
        self.expected += expected

    def finished(self, expected: float, actual: int) -> None:
        """Runs estimated at ``expected`` events took ``actual``."""
        self._done_expected += expected
        self._done_actual += actual

    def fraction(self) -> float | None:
        """The share of the sweep done, by events: those simulated so far over the sweep's as
        now estimated, the runs finished telling how far the estimate (a lower bound: retries
        make more) is from what runs take; None when nothing is planned. Below 1 until the
        sweep ends, so an ETA from it never says 0 while work remains."""
        if self.expected <= 0:
            return None
        ratio = self._done_actual / self._done_expected if self._done_expected > 0 else 1.0
        total = self._done_actual + ratio * max(0.0, self.expected - self._done_expected)
        return min(0.999, self.value / total) if total > 0 else None


class _Reported:
    """A worker's side of an EventCount: each addition goes to the parent."""

    @staticmethod
    def add(n: int) -> None:
        report_progress(n)


class _Counting:
    """This process's share of an EventCount: the engine reports a run in progress every few
    million events; when the run ends, its exact count replaces what was reported."""

    def __init__(self) -> None:
        self.events: EventCount | _Reported | None = None
        self.tick: Callable[[], None] | None = None
        self.partial = 0

    def start(self, events: EventCount | _Reported | None, tick: Callable[[], None] | None = None) -> None:
        self.events, self.tick, self.partial = events, tick, 0
        engine.progress_hook = self.report if events is not None or tick is not None else None

    def stop(self) -> None:
        self.start(None)

    def report(self, n: int) -> None:
        if self.events is not None:
            self.partial += n
            self.events.add(n)
        if self.tick is not None:
            self.tick()

    def settle(self, events: int) -> None:
        if self.events is not None:
            self.events.add(events - self.partial)
        self.partial = 0


_counting = _Counting()


def run_sweeps(specs: Sequence[SimulationSpec], *, workers: int | None = None,
               progress: Progress | None = None, should_stop: ShouldStop | None = None,
               on_complete: Callable[[int, SweepResult], None] | None = None,
               events: EventCount | None = None,
               tick: Callable[[], None] | None = None,
               whole_cells: bool = False, record: bool = False) -> list[SweepResult]:
    """Run every simulation's sweep and return one ``SweepResult`` per spec, in order.

    ``on_complete(i, result)`` is called in the caller's thread as soon as simulation ``i`` is
    done, while the pool goes on with the next ones: the CLI exports there, overlapping the work.
    ``events`` counts the events simulated as they happen (for progress within long runs), and
    ``tick()`` is called every ~0.1 s while waiting for workers, or every few million events of a
    run in this process. ``whole_cells`` runs all strategies of a client count in one task (an
    explore's many cells: a run in which no attempt failed then stands for the other
    strategies', ``sim.runs.shared_runs``); otherwise each strategy is a task of its own.
    ``record`` keeps the histories of the runs the exports show (``recorded_clients``, repetition
    0) in ``SweepResult.recorded``, so exporting does not run them again (not with ``whole_cells``).
    """
    results = [SweepResult.empty(spec) for spec in specs]
    shown = [recorded_clients(spec) if record and not whole_cells else frozenset() for spec in specs]
    # Never more processes than cores (the work is CPU-bound) nor than tasks (below).
    workers = worker_count(workers)
    tasks = [_Task(i, 0, k, spec, len(spec.strategies)) if whole_cells
             else _Task(i, s, k, spec, record=spec.clients[k] in shown[i])
             for i, spec in enumerate(specs)
             for s in range(1 if whole_cells else len(spec.strategies)) for k in range(len(spec.clients))]
    if workers > 1:
        tasks = _split_by_repetition(tasks, workers)
    # Simulation by simulation (so the first finishes early), biggest tasks first within each.
    tasks.sort(key=lambda t: (t.sim, -t.spec.clients[t.clients_index] * len(t.reps)))
    remaining = [sum(t.sim == i for t in tasks) for i in range(len(specs))]
    total = sum(t.runs for t in tasks)
    done = 0
    # Events per run as estimated up front, by (simulation, client-count index): the progress's
    # measure, so that it moves within long runs and gives an ETA before the first run ends.
    per_run = {(i, k): expected_events(spec, spec.clients[k])
               for i, spec in enumerate(specs) for k in range(len(spec.clients))}
    if events is not None:
        events.plan(sum(per_run[(t.sim, t.clients_index)] * t.runs for t in tasks))

    def finish(outcome: Outcome) -> None:
        nonlocal done
        i, k, first, by_strategy, recorded = outcome
        for s, runs in by_strategy:
            results[i].store(s, k, runs, first)
            done += len(runs)
            if events is not None:
                events.finished(per_run[(i, k)] * len(runs), sum(m.events for m in runs))
        for run in recorded:
            results[i].recorded[(run.label, run.clients)] = run
        if progress:
            progress(done, total)
        remaining[i] -= 1
        if remaining[i] == 0 and on_complete:
            on_complete(i, results[i])

    if progress:
        progress(0, total)
    # The compiled kernels, where the sweep's runs they express pay for loading them (so every
    # such run takes them, not only those large enough alone: ``fast.kernel_fits``).
    in_process = workers == 1 or len(tasks) <= 1
    # Not from another thread (the app's): loading, or a first compilation, holds the
    # interpreter for a second or more, and the app's screen with it.
    main = threading.current_thread() is threading.main_thread()
    # A sweep over in a few seconds by the kernels (the sample's) would spend a large share of
    # it loading them in every worker (~0.6 s each): this process loads them once, before it
    # starts its workers, which have them (forked: ``fast._loaded`` and numba's code). A larger
    # sweep's workers load them each, so that this process never holds numba's ~120 MB while it
    # writes the files (server_outage's peak).
    loads_first = (main and not in_process and fast.kernels_loaded_by_fork()
                   and sum(per_run[(t.sim, t.clients_index)] * t.runs for t in tasks) < PARENT_WARM_EVENTS)
    processes = 1 if in_process or loads_first else worker_count(workers, len(tasks))
    warm = fast.kernels_of(specs) if fast.worth_warming(specs, processes) else ()
    if in_process:
        if warm and main:
            fast.warm_up(warm)
        # The engine's hook is global: only the main thread's sweep (the CLI's) reports through it.
        counting = threading.current_thread() is threading.main_thread()
        if counting:
            _counting.start(events, tick)
        try:
            for task in tasks:
                if should_stop and should_stop():
                    raise SweepCancelled()
                finish(_run_task(task))
        finally:
            if counting:
                _counting.stop()
        return results

    # Workers stopped by pid when the sweep is cancelled or interrupted (``procpool``): no wait
    # for their current tasks; kept for the next sweep when it ends well inside a
    # ``reusing_workers`` scope (the app's), so they load the kernels once.
    def check() -> None:
        if should_stop and should_stop():
            raise SweepCancelled()
        if tick is not None:
            tick()

    # Each worker loads the kernels as its first task that wants them (a no-op where it has
    # them: ``loads_first`` above, or a kept pool's worker that loaded them for an earlier sweep).
    if warm and loads_first:
        fast.warm_up(warm)
    tasks = [replace(t, counting=events is not None, warm=warm) for t in tasks]
    with leased_pool(worker_count(workers, len(tasks))) as pool:
        for outcome in pool.imap_unordered(_run_on_worker, tasks, tick=check,
                                           on_progress=events.add if events is not None else None):
            if should_stop and should_stop():
                raise SweepCancelled()
            finish(outcome)
        if should_stop and should_stop():
            raise SweepCancelled()
    return results


def run_sweep(spec: SimulationSpec, **kwargs) -> SweepResult:
    """One simulation's sweep."""
    return run_sweeps([spec], **kwargs)[0]
