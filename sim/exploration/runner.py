"""Run explore plans: cached cells are read back, the rest run on one backend, in one go.

Every cell's result is cached the moment it is complete, so a cancelled or interrupted map
resumes where it stopped, and a map with one more axis value computes only the new cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sim.runs.sweep import ShouldStop
from sim.exploration.cache import CellCache
from sim.exploration.plan import ExplorePlan
from sim.exploration.summary import CellResult
from sim.settings.spec import SimulationSpec

Progress = Callable[[int, int], None]
OnCell = Callable[[int, CellResult], None]


@dataclass
class ExploreResult:
    """A plan and one CellResult per cell, in the order of ``plan.cells``; ``methods``: per
    cell, which method produced each strategy's row (``sim.exploration.methods``; None for a
    map simulated throughout, whose CSV has no ``method`` column)."""

    plan: ExplorePlan
    cells: list[CellResult]
    methods: list[tuple[str, ...]] | None = None

    def cell(self, index: tuple[int, ...]) -> CellResult:
        """The result at a grid position (one index per axis)."""
        return self.cells[[c.index for c in self.plan.cells].index(tuple(index))]


def run_cells(specs: Sequence[SimulationSpec], backend, cache: CellCache, *,
              progress: Progress | None = None, should_stop: ShouldStop | None = None,
              on_cell: OnCell | None = None) -> list[CellResult]:
    """Each spec's CellResult, from the cache or computed on ``backend`` (then cached).
    ``on_cell(i, result)`` hears of each cell as soon as it is known (cached ones first), so a
    view can fill the map in while the rest run."""
    results: list[CellResult | None] = [cache.get(spec) for spec in specs]
    todo = [i for i, r in enumerate(results) if r is None]
    if on_cell is not None:
        for i, r in enumerate(results):
            if r is not None:
                on_cell(i, r)

    def computed(j: int, result: CellResult) -> None:
        i = todo[j]
        results[i] = result
        cache.put(specs[i], result)
        if on_cell is not None:
            on_cell(i, result)

    backend.run([specs[i] for i in todo], progress=progress, should_stop=should_stop, on_cell=computed)
    return [r for r in results if r is not None]


def run_explores(plans: Sequence[ExplorePlan], backend, cache: CellCache, *,
                 progress: Progress | None = None, should_stop: ShouldStop | None = None,
                 on_cell: OnCell | None = None) -> list[ExploreResult]:
    """Every plan's cells on one backend (cells of all plans in parallel); ``on_cell`` as for
    ``run_cells``, its index counting the plans' cells in order."""
    specs = [cell.spec for plan in plans for cell in plan.cells]
    results = run_cells(specs, backend, cache, progress=progress, should_stop=should_stop,
                        on_cell=on_cell)
    out, start = [], 0
    for plan in plans:
        out.append(ExploreResult(plan, results[start:start + len(plan.cells)]))
        start += len(plan.cells)
    return out
