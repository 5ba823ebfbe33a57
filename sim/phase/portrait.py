"""A whole phase portrait: the healthy state first, then every cell's runs, on the workers.

The healthy equilibrium is where runs from the empty state (no work, no orbit) settle: its
mean over a few runs, and the healthy region around it (``Healthy``), is what a cell's runs
must return to. Cells then run on all cores (``sim.runs.procpool``), each cell's random
numbers fixed by its place, so a portrait depends only on the config, the seed and the flags.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from sim.analysis.stats import Estimate, estimate
from sim.vocabulary.bounds import MAX_TIME, MIN_SPAN
from sim.vocabulary.errors import UserError
from sim.models.initial import InitialState
from sim.phase.bound import collapse_bound
from sim.phase.attempt import delay_after, outage_attempt
from sim.phase.estimate import CellResult, CellTask, Healthy, Replicate, phase_spec, replicate, run_cell
from sim.phase.grid import PhaseGrid
from sim.phase.refine import coarse_indices, inferred, refines
from sim.phase.state import outage_age, outage_door, stale_queue
from sim.settings.spec import SimulationSpec

# The pilot runs from the empty state are numbered from here, or after every cell's when the
# cells make more runs (``pilot_base``), so none shares a cell's random numbers.
PILOT_BASE = 1 << 19
# A run samples its state every horizon up to the time limit: at most this many samples (the
# defaults take 30, fifteen timeouts by half ones; --horizon 1e-300 would take 10^300).
MAX_SAMPLES = 10**6


@dataclass(frozen=True)
class PhaseSettings:
    """What ``backoff-sim phase`` was asked for (``None``: derived from the simulation)."""

    size: int = 20
    runs: int = 4
    horizon: float | None = None
    limit: float | None = None
    attempt: int | None = None  # None: where the config's outage leaves a call (``outage_attempt``)
    clients: int | None = None
    work_max: int | None = None
    orbit_max: int | None = None
    age: float | None = None  # None: as the config's outage leaves requests (``sim.phase.state``)


@dataclass(frozen=True)
class Resolved:
    """``PhaseSettings`` with every value decided for one simulation."""

    size: int
    runs: int
    horizon: float
    limit: float
    step: float
    attempt: int
    clients: int
    grid: PhaseGrid
    age: float = 0.0  # the seeded requests' ages are uniform below it (``outage_age``)
    held: int | None = None  # the requests at the server at t = 0, the rest at the door (``outage_door``)
    retransmits: tuple[float, ...] = ()
    stale: bool = False  # the held requests are orphans (``sim.phase.state.stale_queue``)


def resolve(spec: SimulationSpec, settings: PhaseSettings, label: str) -> Resolved:
    """The settings' values for ``spec`` and strategy ``label``: the horizon half the timeout (a
    client's reaction to a state shows within it); the time limit fifteen timeouts or four times
    the backoff after the state's attempt, whichever is longer (an orbit's clients must have
    had time to send again, and those that fail once more to wait the next, longer backoff), at most the simulation's horizon (without a timeout, a
    tenth and a quarter of that horizon); both axes up to the largest client count."""
    span = float(spec.horizon or 0.0)
    timeout = spec.timeout
    attempt = settings.attempt if settings.attempt is not None else outage_attempt(spec, label)
    horizon = settings.horizon or (timeout / 2 if timeout else span / 100)
    limit = settings.limit or (min(max(15 * timeout, 4 * delay_after(spec, label, attempt)), span)
                               if timeout else span / 4)
    if span > 0:
        limit = min(limit, span)  # as --help says: at most the simulation's horizon
    if not MIN_SPAN <= horizon <= MAX_TIME:
        raise UserError(f"phase: --horizon must be a time from {MIN_SPAN:g} to {MAX_TIME:g}, got {horizon:g}")
    if limit < horizon:
        raise UserError(f"phase: the time limit ({limit:g}) is shorter than the horizon ({horizon:g}); "
                        "pass a longer --limit or a shorter --horizon")
    if limit / horizon > MAX_SAMPLES:  # a run samples its state every horizon until the limit
        raise UserError(f"phase: the time limit ({limit:g}) is more than {MAX_SAMPLES:,} horizons "
                        f"({horizon:g}) long; pass a longer --horizon or a shorter --limit")
    clients = settings.clients or max(spec.clients)
    held, retransmits = outage_door(spec)
    # After an outage with a bounded accept queue the work is at most every client's request and
    # the queue's stale ones: the axis reaches that, so every resume state is on the grid.
    top = clients + (held or 0)
    orbit_top = clients
    if spec.workload.CONCURRENT:  # open arrivals: the calls in a state are not bounded by the clients
        top = orbit_top = open_top(spec, clients)
    grid = PhaseGrid(settings.size, settings.work_max if settings.work_max is not None else top,
                     settings.orbit_max if settings.orbit_max is not None else orbit_top)
    age = settings.age if settings.age is not None else outage_age(spec)
    return Resolved(settings.size, settings.runs, float(horizon), float(limit), float(horizon),
                    attempt, clients, grid, float(age), held, retransmits, stale_queue(spec))


def open_top(spec: SimulationSpec, clients: int) -> int:
    """The top of both axes for open arrivals: twice the calls that arrive in one timeout (at
    ``clients / think_time``). A collapsed server answers no call in time, so it holds at least
    every call of the last timeout, one timeout's arrivals; a state twice that is past the
    boundary of any server that can collapse, and the grid shows both sides. Without a timeout,
    the calls of a tenth of the horizon."""
    rate = clients / float(spec.workload.think_time)
    span = float(spec.timeout) if spec.timeout else float(spec.horizon or 0.0) / 10
    return max(clients, math.ceil(2 * rate * span))


def replying_problem(spec: SimulationSpec) -> str | None:
    """Why ``spec`` has no phase portrait, or None."""
    if not spec.control.CAPS.replies:
        return (f"simulation {spec.title!r}: a phase portrait needs a server that replies "
                f"(QueueServer, LatencyServer, PoolServer...), and {spec.control.type_name} does not")
    if spec.tiers:
        return f"simulation {spec.title!r}: a phase portrait of a tiered simulation is not supported"
    return None


@dataclass(frozen=True)
class Cell:
    """One cell's estimates: drift of work and orbit per time unit, and return probability."""

    work: int
    orbit: int
    drift_work: Estimate
    drift_orbit: Estimate
    returned: int
    runs: int
    median_return: float
    finals: tuple[tuple[int, int], ...] = ()
    inferred: bool = False  # its return probability is the coarse cells' around it (``sim.phase.refine``)

    @property
    def return_probability(self) -> float:
        return self.returned / self.runs


@dataclass(frozen=True)
class Portrait:
    """A strategy's phase portrait of one simulation."""

    title: str
    label: str
    settings: Resolved
    healthy_state: tuple[float, float]
    healthy: Healthy
    cells: tuple[Cell, ...]  # in grid order (``PhaseGrid.cells``)
    time_unit: str

    @property
    def probabilities(self) -> np.ndarray:
        """Return probability per cell as a size x size array, rows the orbit values."""
        n = self.settings.size
        return np.array([c.return_probability for c in self.cells]).reshape(n, n)

    def drifts(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.settings.size
        return (np.array([c.drift_work.mean for c in self.cells]).reshape(n, n),
                np.array([c.drift_orbit.mean for c in self.cells]).reshape(n, n))

    def collapsed_state(self) -> tuple[int, int] | None:
        """Where the runs that did not return were at the end (their mean state), when that is
        on the grid: a collapsed equilibrium. None when they left the grid (the collapse grows
        without bound: work piles up beyond the top) or every run returned."""
        finals = [f for c in self.cells for f in c.finals]
        if not finals:
            return None
        work = float(np.mean([f[0] for f in finals]))
        orbit = float(np.mean([f[1] for f in finals]))
        grid = self.settings.grid
        if work > grid.work_max or orbit > grid.orbit_max:
            return None
        return round(work), round(orbit)

    @property
    def basins(self) -> int:
        """How many basins the grid shows: 2 when some cells return and some do not (by more
        than half their runs each way), else 1."""
        p = self.probabilities
        return 2 if (p >= 0.5).any() and (p < 0.5).any() else 1


def pilot_base(r: Resolved) -> int:
    """The first pilot run's number: after every cell's (a cell's are below cells x runs), so
    none shares a cell's random numbers; ``PILOT_BASE`` while that is more (the numbers every
    portrait of at most 2^19 cell runs has always had)."""
    return max(PILOT_BASE, r.size ** 2 * r.runs)


def pilot_run(job: tuple) -> Replicate:
    """One of ``healthy_state``'s runs from the empty state (``replicate``'s arguments)."""
    return replicate(*job)


def healthy_state(spec: SimulationSpec, label: str, r: Resolved,
                  run_many: Callable[[Callable, list], list] | None = None,
                  ) -> tuple[tuple[float, float], Healthy]:
    """Where runs from the empty state are after half the time limit (the mean of ``r.runs``
    runs), and the healthy region: that state plus three standard deviations of the runs or
    one grid step, whichever is more, on each axis. ``run_many(func, items)`` runs them (on
    the workers the cells run on, so this process holds no large run a stop must unwind);
    default: here."""
    base = pilot_base(r)
    jobs = [(spec, label, r.clients, InitialState(0, 0, 1), base + i, r.limit / 2, r.limit,
             r.step, None) for i in range(r.runs)]
    outs = run_many(pilot_run, jobs) if run_many is not None else [pilot_run(job) for job in jobs]
    work = np.array([o.work for o in outs], dtype=float)
    orbit = np.array([o.orbit for o in outs], dtype=float)
    sw, so = r.grid.steps
    spread = (lambda v: 3 * float(v.std(ddof=1))) if len(outs) > 1 else (lambda v: 0.0)
    return ((float(work.mean()), float(orbit.mean())),
            Healthy(float(work.mean()) + max(spread(work), sw), float(orbit.mean()) + max(spread(orbit), so)))


def tasks(spec: SimulationSpec, label: str, r: Resolved, healthy: Healthy) -> list[CellTask]:
    beyond = collapse_bound(spec, r.limit, max(r.grid.work_max, r.clients))  # decided: ``sim.phase.bound``
    return [CellTask(spec, label, r.clients, i, w, o, r.attempt, r.runs, r.horizon, r.limit, r.step,
                     healthy, beyond, r.age, r.held, r.retransmits, r.stale) for i, (w, o) in enumerate(r.grid.cells)]


def summarise(results: list[CellResult], runs: int) -> tuple[Cell, ...]:
    """Each cell's estimates, in grid order."""
    cells = []
    for res in sorted(results, key=lambda c: c.index):
        times = res.return_times
        cells.append(Cell(res.work, res.orbit, estimate(np.array(res.d_work)), estimate(np.array(res.d_orbit)),
                          sum(res.returned), len(res.returned), float(np.median(times)) if times else math.nan,
                          res.finals, res.inferred))
    return tuple(cells)


def run_cells(todo: list[CellTask], size: int,
              run_all: Callable[..., list[CellResult]] | None) -> list[CellResult]:
    """Every cell's results: the coarse grid's cells in full first, then the others, in full
    near the boundary and to the drift's horizon where the coarse cells around agree
    (``sim.phase.refine``). Progress counts every cell of the portrait."""
    def run(part: list[CellTask], done: int) -> list[CellResult]:
        if run_all is None:
            return [run_cell(t) for t in part]
        return run_all(part, done=done, total=len(todo))

    if not refines(size):
        return run(todo, 0)
    coarse = set(coarse_indices(size))
    first = [t for t in todo if t.index % size in coarse and t.index // size in coarse]
    results = run(first, 0)
    probability = {(res.index % size, res.index // size): sum(res.returned) / len(res.returned)
                   for res in results}
    known = inferred(size, probability)
    rest = [t if (t.index % size, t.index // size) not in known
            else replace(t, inferred=known[(t.index % size, t.index // size)])
            for t in todo if not (t.index % size in coarse and t.index // size in coarse)]
    return results + run(rest, len(first))


def compute_portrait(spec: SimulationSpec, label: str, settings: PhaseSettings,
                     run_all: Callable[[list[CellTask]], list[CellResult]] | None = None) -> Portrait:
    """The portrait of ``spec``'s strategy ``label``; ``run_all`` runs the cells' tasks (on a
    pool, with progress; default: here, one after the other), and its ``run_many`` the pilot
    runs when it has one (``sim.phase.pool.cell_runner``)."""
    problem = replying_problem(spec)
    if problem:
        raise UserError(problem)
    r = resolve(spec, settings, label)
    runnable = phase_spec(spec, r.limit)
    state, healthy = healthy_state(runnable, label, r, getattr(run_all, "run_many", None))
    todo = tasks(runnable, label, r, healthy)
    results = run_cells(todo, r.size, run_all)
    return Portrait(spec.title, label, r, state, healthy, summarise(results, r.runs), spec.time_unit)


def with_seed(spec: SimulationSpec, seed: int | None) -> SimulationSpec:
    return spec if seed is None else replace(spec, seed=seed)
