"""Short runs from one state: where the state goes over a short horizon, and whether it returns
to the healthy state within a time limit.

A replicate is one run started in the cell's state (``sim.runs.engine.start_run``), driven
here with its state sampled every ``step``: the state at ``horizon`` gives the drift, and the run
goes on until the state is healthy or the time limit passes (a run that returned stops there:
most of a healthy basin's runs are short).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from heapq import heappop, heappush

from sim.core.events import NO_EVENT
from sim.models.initial import InitialState
from sim.runs.engine import STALL_EVENTS, guard_for, start_run
from sim.settings.spec import SimulationSpec

# The replicates of phase runs are numbered from here, so no run of a sweep (repetitions from 0)
# shares a phase run's random numbers.
REPETITION_BASE = 1 << 20


@dataclass(frozen=True)
class Healthy:
    """The healthy region: work and orbit at most these (the healthy equilibrium with a margin)."""

    work: float
    orbit: float

    def holds(self, work: int, orbit: int) -> bool:
        return work <= self.work and orbit <= self.orbit


@dataclass(frozen=True)
class Replicate:
    """One run from a state: its state at the horizon, and when it was first healthy (None:
    not within the time limit)."""

    work: int
    orbit: int
    returned_at: float | None
    final: tuple[int, int] = (0, 0)  # the state when the run stopped (returned, cut off or at the limit)


def phase_spec(spec: SimulationSpec, limit: float) -> SimulationSpec:
    """The simulation as the portrait runs it: no outages or incidents (the portrait is of the
    system itself; an outage is what moves its state), ending at the time limit."""
    return replace(spec, outages=(), incidents=(), horizon=float(limit), bucket=None)


def drain(heap: list, near: list, guard, tick: Callable[[], None] | None = None) -> None:
    """Handle a started run's items in time order until none is left (its handlers clear both
    queues to stop it): the engine's loop, with its guard checked every ``STALL_EVENTS`` items
    (and ``tick`` called then)."""
    check = STALL_EVENTS
    while heap or near:
        if near and (not heap or near[0] < heap[0]):
            t, s, handler, c, a = heappop(near)
        else:
            t, s, handler, c, a = heappop(heap)
        if s >= check:
            guard.check(t, s)
            check = s + STALL_EVENTS
            if tick is not None:
                tick()
        handler(t, c, a)


def replicate(spec: SimulationSpec, label: str, clients: int, state: InitialState, number: int,
              horizon: float, limit: float, step: float, healthy: Healthy | None,
              beyond: float | None = None, tick: Callable[[], None] | None = None) -> Replicate:
    """Run ``spec`` (a ``phase_spec``) from ``state``; ``number`` picks the replicate's random
    numbers. Without ``healthy`` the run goes to ``horizon`` only. A run whose work passes
    ``beyond`` after the horizon (far above the grid) stops there, counted as not returning:
    a collapsed run would otherwise go on, ever costlier, to the time limit. ``tick`` is called
    at each sample and every ``STALL_EVENTS`` items (the command's progress lines, during a
    long pilot run)."""
    chain = spec.strategy(label).chain
    wiring, side = start_run(spec, chain, clients, REPETITION_BASE + number, state)
    guard = guard_for(spec, chain, clients)  # a stall or a runaway: one line
    heap, near, seq = wiring.heap, wiring.near, wiring.seq
    found: list = [None, None, None, (0, 0)]  # work and orbit at the horizon, first healthy time, last state
    end = horizon if healthy is None else limit

    at_horizon = max(1, round(horizon / step))  # the sample that gives the drift
    last = max(at_horizon, int(end / step))

    def sample(t: float, c: int, k: int) -> int:
        if tick is not None:
            tick()
        work, orbit = sum(wiring.server_state()), side.in_backoff
        found[3] = (work, orbit)
        if k == at_horizon:
            found[0], found[1] = work, orbit
        if healthy is not None and found[2] is None and healthy.holds(work, orbit):
            found[2] = t
        gone = beyond is not None and k >= at_horizon and work > beyond
        if k < last and not gone and (k < at_horizon or (healthy is not None and found[2] is None)):
            heappush(heap, ((k + 1) * step, seq(), sample, -1, k + 1))
            return NO_EVENT
        heap.clear()
        near.clear()
        return NO_EVENT

    heappush(heap, (step, seq(), sample, -1, 1))
    drain(heap, near, guard, tick)
    if found[0] is None:  # the run ended (nothing left to happen) before the horizon
        found[0], found[1] = sum(wiring.server_state()), side.in_backoff
    return Replicate(found[0], found[1], found[2], found[3])


@dataclass(frozen=True)
class CellTask:
    """One cell's replicates, as a worker runs them (picklable)."""

    spec: SimulationSpec
    label: str
    clients: int
    index: int
    work: int
    orbit: int
    attempt: int
    runs: int
    horizon: float
    limit: float
    step: float
    healthy: Healthy
    beyond: float
    age: float = 0.0  # the seeded requests' ages are uniform below it (``sim.phase.state``)
    held: int | None = None  # at the server at t = 0; the rest at the door, arriving at ``retransmits``
    retransmits: tuple[float, ...] = ()
    stale: bool = False  # the held requests are orphans (``sim.phase.state.stale_queue``)
    # Set (0 or 1): the coarse cells around agree on this return probability (``sim.phase.refine``),
    # so the runs go to the drift's horizon only.
    inferred: float | None = None


@dataclass(frozen=True)
class CellResult:
    """One cell's replicates: the changes of work and orbit over the horizon, and which returned."""

    index: int
    work: int
    orbit: int
    d_work: tuple[float, ...]
    d_orbit: tuple[float, ...]
    returned: tuple[bool, ...]
    return_times: tuple[float, ...]
    finals: tuple[tuple[int, int], ...] = ()  # where the runs that did not return ended
    inferred: bool = False  # the return probability is the coarse cells' (``sim.phase.refine``)


def run_cell(task: CellTask) -> CellResult:
    """One cell's replicates: first half of ``runs`` (at least two), and the rest only when
    those disagree on returning, so cells deep in a basin cost half. Replicate numbers are the
    cell's index times the runs per cell plus the replicate's, so a cell's random numbers
    depend on its place alone."""
    state = InitialState(task.work, task.orbit, task.attempt, task.age, task.held, task.retransmits,
                         task.stale)

    def run(r: int, healthy: Healthy | None = task.healthy) -> Replicate:
        return replicate(task.spec, task.label, task.clients, state, task.index * task.runs + r,
                         task.horizon, task.limit, task.step, healthy, task.beyond)

    first = min(task.runs, max(2, task.runs // 2))
    if task.inferred is not None:  # the drift only: the runs to the horizon (the same first ones)
        outs = [run(r, None) for r in range(first)]
        back = task.inferred >= 0.5
        return CellResult(task.index, task.work, task.orbit,
                          tuple((o.work - task.work) / task.horizon for o in outs),
                          tuple((o.orbit - task.orbit) / task.horizon for o in outs),
                          tuple(back for _ in outs), (), (), inferred=True)
    outs = [run(r) for r in range(first)]
    if len({o.returned_at is None for o in outs}) > 1:
        outs += [run(r) for r in range(first, task.runs)]
    return CellResult(task.index, task.work, task.orbit,
                      tuple((o.work - task.work) / task.horizon for o in outs),
                      tuple((o.orbit - task.orbit) / task.horizon for o in outs),
                      tuple(o.returned_at is not None for o in outs),
                      tuple(o.returned_at for o in outs if o.returned_at is not None),
                      tuple(o.final for o in outs if o.returned_at is None))
