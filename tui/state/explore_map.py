"""One explore map as the app holds it: the plan, the cells known so far, where the user is in it,
and the blocking run the explore screen calls from a thread worker. Free of Textual.

The cells are read back from the cache first, then filled in as ``sim.exploration`` computes
them (``run_explores``, the headless command's, held to the limits ``backoff-sim explore``
checks). ``MapState`` (cursor, strategy, metric) outlives the screen: the main screen keeps one
per (simulation, seed), so a map reopens where it was left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sim.exploration.backends import DaskBackend, LocalBackend
from sim.exploration.cache import CellCache
from sim.exploration.checks import check_cells
from sim.exploration.grid import MapCell, grid_rows
from sim.exploration.plan import ExplorePlan, plot_metrics
from sim.exploration.runner import run_explores
from sim.exploration.summary import CellResult
from sim.runs.procpool import worker_count
from sim.runs.sweep import Progress, ShouldStop


@dataclass
class MapState:
    """Where the user is in one map: cursor (column, row from the top), strategy, metric."""

    cursor: tuple[int, int] = (0, 0)
    strategy: int = 0
    metric: str | None = None  # None: the plan's
    cancelled: bool = False  # the user stopped the map (x): reopening it does not start it again


@dataclass(frozen=True)
class CellChoice:
    """Enter on a cell: the plan, the cell's position in it, and the strategy to show."""

    plan: ExplorePlan
    position: int
    strategy: str


class ExploreMap:
    """A plan's cells (None until known) and the user's place in them."""

    def __init__(self, plan: ExplorePlan, cache: CellCache, state: MapState,
                 workers: int | None = None,
                 backend: LocalBackend | DaskBackend | None = None) -> None:
        self.plan = plan
        self.cache = cache
        self.state = state
        self.workers = workers
        self.backend = backend or LocalBackend(workers)  # Dask with `explore --app --dask`
        self.cells: list[CellResult | None] = [cache.remembered(c.spec) for c in plan.cells]
        self.running = False  # a worker is computing the missing cells (the screen says so)

    @property
    def metric(self) -> str:
        return self.state.metric or self.plan.metric

    @property
    def missing(self) -> int:
        """Cells not known yet."""
        return sum(c is None for c in self.cells)

    @property
    def on_dask(self) -> bool:
        return self.backend.name == "dask"

    def rows(self, s: int) -> list[list[MapCell]]:
        """Strategy ``s``'s cells, top row first (``sim.exploration.grid``)."""
        return grid_rows(self.plan, self.cells, s, self.metric, self.running)

    def cursor_cell(self) -> MapCell:
        """The cell under the cursor, for the selected strategy."""
        column, row = self.state.cursor
        return self.rows(self.state.strategy)[row][column]

    # --- moves ------------------------------------------------------------------------------

    def move(self, columns: int, rows: int) -> None:
        """The cursor by (columns, rows), held inside the map."""
        column, row = self.state.cursor
        n_columns = len(self.plan.axes[0].values)
        n_rows = len(self.plan.axes[1].values) if len(self.plan.axes) > 1 else 1
        self.state.cursor = (min(max(column + columns, 0), n_columns - 1),
                             min(max(row + rows, 0), n_rows - 1))

    def next_strategy(self, delta: int) -> str:
        """Select the strategy ``delta`` along (wrapping); its label."""
        labels = self.plan.base.labels
        self.state.strategy = (self.state.strategy + delta) % len(labels)
        return labels[self.state.strategy]

    def next_metric(self) -> str:
        """Show the next metric the plan can map; its name."""
        metrics = plot_metrics(self.plan.base)
        self.state.metric = metrics[(metrics.index(self.metric) + 1) % len(metrics)]
        return self.metric

    def choice(self) -> CellChoice | None:
        """The cursor cell's runs to open, or None while that cell is still running."""
        cell = self.cursor_cell()
        if self.cells[cell.position] is None:
            return None
        return CellChoice(self.plan, cell.position, self.plan.base.labels[self.state.strategy])

    # --- running ----------------------------------------------------------------------------

    def cell_done(self, position: int, result: CellResult) -> bool:
        """Keep a cell's result; whether it was new."""
        if self.cells[position] is not None:
            return False
        self.cells[position] = result
        return True

    def run(self, *, progress: Progress, should_stop: ShouldStop,
            on_cell: Callable[[int, CellResult], None]) -> None:
        """Compute the missing cells (blocking; the caller's thread): read back, then run and
        cached one by one. Raises ``SweepCancelled`` once ``should_stop`` says so."""
        # The limits every cell is held to, as `backoff-sim explore` checks them (--force lifts
        # the soft ones: the plan's specs then carry soft_limits off).
        check_cells([self.plan], workers=worker_count(self.workers),
                    force=not self.plan.base.soft_limits)
        run_explores([self.plan], self.backend, self.cache, progress=progress,
                     should_stop=should_stop, on_cell=on_cell)
