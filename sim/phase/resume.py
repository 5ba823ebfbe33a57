"""A portrait checked against the outages it describes: the config's own runs, their state at the
resume (``sim.phase.state.resume_state``) looked up on the portrait, and how they end.

A run of the config (its outage included, the repetition's own random numbers, as ``run`` draws
them) is driven to just before its first outage's resume, where its state is read; then on, its
state sampled every portrait step, until it is back in the portrait's healthy region or the
portrait's time limit after the resume has passed (the portrait's own "returns": a cell's runs
must return within the limit). The prediction is the return probability of the portrait's cell
nearest that state (a state beyond the grid: its edge), "returns" when at least one half.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from heapq import heappush

import numpy as np

from sim.core.events import NO_EVENT
from sim.phase.bound import collapse_bound
from sim.phase.estimate import Healthy, drain
from sim.phase.state import resume_state
from sim.runs.engine import guard_for, start_run
from sim.settings.spec import SimulationSpec
from sim.vocabulary.errors import UserError


@dataclass(frozen=True)
class OutageRun:
    """One run of the config: its state just before the resume, and when (after the resume) it
    was first healthy (None: not within the limit)."""

    work: int
    orbit: int
    returned_at: float | None

    @property
    def returned(self) -> bool:
        return self.returned_at is not None


def outage_run(spec: SimulationSpec, label: str, clients: int, repetition: int, healthy: Healthy,
               limit: float, step: float, top: int) -> OutageRun:
    """Repetition ``repetition`` of ``spec``'s strategy ``label`` at ``clients``: its state at the
    first outage's resume and whether it returns within ``limit`` after it. A run stops when
    decided: past the portrait's collapse bound (``sim.phase.bound``, ``top`` its grid's top)
    plus the requests in service at the pause (the only ones older than the resume)."""
    if not spec.stops:
        raise UserError(f"simulation {spec.title!r} has no outage to check a portrait against")
    outage = spec.stops[0]
    end = float(outage.end)
    run_spec = replace(spec, horizon=end + float(limit), bucket=None)
    chain = spec.strategy(label).chain
    wiring, side = start_run(run_spec, chain, clients, repetition, None)
    guard = guard_for(run_spec, chain, clients)
    heap, near, seq = wiring.heap, wiring.near, wiring.seq
    found: list = [None, None]  # the state at the resume; the first healthy time after it
    last = max(1, int(limit / step))
    bound = [collapse_bound(spec, limit, top)]

    def at_resume(t: float, c: int, a: int) -> int:
        found[0] = resume_state(wiring, side, float(outage.duration), spec.timeout, spec.abandoned == "serve")
        bound[0] += sum(wiring.server_state())
        heappush(heap, (end + step, seq(), sample, -1, 1))
        return NO_EVENT

    def sample(t: float, c: int, k: int) -> int:
        work, orbit = sum(wiring.server_state()), side.in_backoff
        if healthy.holds(work, orbit):
            found[1] = t - end
        elif k < last and work <= bound[0]:
            heappush(heap, (end + (k + 1) * step, seq(), sample, -1, k + 1))
            return NO_EVENT
        heap.clear()
        near.clear()
        return NO_EVENT

    # Just before the resume marker (due at ``end``, queued first): the held requests still held.
    heappush(heap, (math.nextafter(end, -math.inf), seq(), at_resume, -1, 0))
    drain(heap, near, guard)
    work, orbit = found[0] if found[0] is not None else (0, 0)
    return OutageRun(work, orbit, found[1])


def predicted_return(portrait, work: int, orbit: int) -> float:
    """The return probability of ``portrait``'s cell nearest (work, orbit), clipped to the grid."""
    grid = portrait.settings.grid
    i = int(np.argmin(np.abs(grid.work - min(work, grid.work_max))))
    j = int(np.argmin(np.abs(grid.orbit - min(orbit, grid.orbit_max))))
    return float(portrait.probabilities[j, i])
