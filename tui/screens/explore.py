"""The explore view: a simulation's ``[simulation.explore]`` map, a coloured cell grid per
strategy, filled in as cells finish; Enter opens a cell's runs in the normal view.

The map runs in a thread worker on the local process pool (``sim.exploration``: cells read back
from the cache first, then computed and cached one by one), with a progress bar; ``x`` cancels
it, ``w`` runs what is left, closing the view cancels it too. Nothing here computes a number:
the cells' states, glyphs and texts are ``sim.exploration.grid``'s, the detail line's verdicts
``sim.analysis.recovery``'s; the screen keeps only the cursor, the selected strategy and the metric
(``MapState``, kept by the main screen so the map reopens where it was left).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from sim.runs.sweep import SweepCancelled, default_workers
from sim.errors import UserError
from sim.exploration.axes import format_value
from sim.exploration.backends import LocalBackend
from sim.exploration.cache import CellCache
from sim.exploration.checks import check_cells
from sim.exploration.grid import COLLAPSED, GLYPHS, RECOVERED, grid_rows, verdict_state
from sim.exploration.plan import ExplorePlan, plot_metrics
from sim.exploration.runner import run_explores
from sim.exploration.summary import CellResult, METRIC_HELP
from sim.report.latency import recovery_number

from ..keys import EXPLORE_KEYS, KEYS, key_bindings
from ..view.plural import count
from ..theme import palette_for
from ..widgets.map_grid import MapGrid, MapView


@dataclass
class MapState:
    """Where the user is in one map: cursor (column, row from the top), strategy, metric."""

    cursor: tuple[int, int] = (0, 0)
    strategy: int = 0
    metric: str | None = None  # None: the plan's


@dataclass(frozen=True)
class CellChoice:
    """Enter on a cell: the plan, the cell's position in it, and the strategy to show."""

    plan: ExplorePlan
    position: int
    strategy: str


class MapProgress(Message):
    """Runs done so far; a newer one replaces an unprocessed older one."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MapProgress)


class MapCellDone(Message):
    """A cell of the map is known (read back or computed)."""

    def __init__(self, position: int, result: CellResult) -> None:
        super().__init__()
        self.position = position
        self.result = result


def explore_bindings() -> list[Binding]:
    """The map's keys, and the app's help, theme and palette."""
    bindings = [b for k in EXPLORE_KEYS for b in key_bindings(k)]
    for k in KEYS:
        if k.action in ("help", "cycle_theme"):
            bindings.append(Binding(k.keys, f"app.{k.action}", k.short or k.description,
                                    show=k.footer, key_display=k.display, tooltip=k.description))
    bindings.append(Binding("ctrl+p", "app.command_palette", "palette", show=False))
    return bindings


class ExploreScreen(ModalScreen[CellChoice | None]):
    """One simulation's map; dismissed with a ``CellChoice`` (Enter) or None (Escape)."""

    BINDINGS = explore_bindings()
    AUTO_FOCUS = ""  # every key reaches the bindings

    DEFAULT_CSS = """
    ExploreScreen {
        background: $background;
        layout: vertical;
        & > #map-title { height: auto; background: $panel; padding: 0 1; }
        & > #map-progress-row { display: none; height: 1; padding: 0 1; background: $panel; }
        &.-running > #map-progress-row { display: block; }
        & #map-progress-label, & #map-progress-hint { width: auto; color: $foreground 70%; }
        & #map-progress { width: 1fr; }
        & > #map-body { height: auto; max-height: 1fr; }
        & > #map-legend { height: auto; padding: 0 1; color: $foreground 80%; }
        & > #map-detail { height: 1fr; padding: 0 1; }
    }
    """

    def __init__(self, plan: ExplorePlan, cache: CellCache, state: MapState,
                 workers: int | None = None, backend=None) -> None:
        super().__init__()
        self.plan = plan
        self.cache = cache
        self.state = state
        self.pool_workers = workers
        self.backend = backend or LocalBackend(workers)  # Dask with `explore --app --dask`
        self.cells: list[CellResult | None] = [cache.remembered(c.spec) for c in plan.cells]
        self._cancelled_by_user = False

    # --- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="map-title", markup=False)
        with Horizontal(id="map-progress-row"):
            yield Label("", id="map-progress-label", markup=False)
            yield ProgressBar(id="map-progress", show_eta=False)
            yield Label(" x cancels", id="map-progress-hint")
        with ScrollableContainer(id="map-body"):
            yield MapGrid(palette_for(self.app.theme), id="map-grid")
        yield Static("", id="map-legend", markup=False)
        yield Static("", id="map-detail", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda _theme: self._draw(), init=False)
        self._draw()
        if self.missing:
            self.start()

    def _title(self) -> Text:
        plan, base = self.plan, self.plan.base
        axes = (f"columns {plan.axes[0].name}" + (f", rows {plan.axes[1].name}" if len(plan.axes) > 1 else ""))
        clients = "" if any(a.path.steps == ("clients",) for a in plan.axes) else f" · {count(base.clients[0], 'client')}"
        return Text.assemble((f"Explore map · {plan.title}", "bold"),
                             f" · {base.control.type_name}{clients} · {count(base.repeat, 'repetition')} a cell"
                             f" · seed {base.seed} · {axes}")

    # --- state ------------------------------------------------------------------------------

    @property
    def metric(self) -> str:
        return self.state.metric or self.plan.metric

    @property
    def missing(self) -> int:
        """Cells not known yet."""
        return sum(c is None for c in self.cells)

    def rows(self, s: int) -> list[list]:
        return grid_rows(self.plan, self.cells, s, self.metric)

    def cursor_cell(self):
        """The MapCell under the cursor, for the selected strategy."""
        column, row = self.state.cursor
        return self.rows(self.state.strategy)[row][column]

    def _view(self) -> MapView:
        plan = self.plan
        grids = tuple(tuple(tuple(r) for r in self.rows(s)) for s in range(len(plan.base.labels)))
        y_values = tuple(reversed(plan.axes[1].values)) if len(plan.axes) > 1 else ()
        limits = None
        values = [c.value for g in grids for r in g for c in r if c.state == "value" and not math.isnan(c.value)]
        if values:
            limits = (min(values), max(values))
        return MapView(plan.base.labels, grids, self.state.strategy, self.state.cursor,
                       plan.axes[0].name, plan.axes[1].name if len(plan.axes) > 1 else "",
                       plan.axes[0].values, y_values, limits)

    def _draw(self) -> None:
        self.query_one(MapGrid).show(self._view(), palette_for(self.app.theme))
        self.query_one("#map-legend", Static).update(self._legend())
        self.query_one("#map-detail", Static).update(self._detail())

    def _legend(self) -> Text:
        if self.metric == "recovered":
            text = Text(f"runs recovered: {GLYPHS['recovered']} ≥ {RECOVERED:.0%}  "
                        f"{GLYPHS['partial']} some  {GLYPHS['collapsed']} ≤ {COLLAPSED:.0%} (collapsed)  "
                        f"{GLYPHS['pending']} running")
        else:
            text = Text(f"{self.metric}: {METRIC_HELP.get(self.metric, self.metric)} (mean over the "
                        "runs; the stronger the colour, the higher)")
        text.append(" · Enter: the cell's runs", style="dim")
        return text

    def _detail(self) -> Text:
        """The cursor cell: where it is, then each strategy's verdict and metric there."""
        plan = self.plan
        cell = self.cursor_cell()
        out = Text(plan.cell_label(cell.position), style="bold")
        result = self.cells[cell.position]
        for s, label in enumerate(plan.base.labels):
            out.append("\n")
            marker = "▶ " if s == self.state.strategy else "  "
            if result is None:
                out.append(f"{marker}{label}: running…", style="dim")
                continue
            verdict = result.verdict(s)
            glyph = GLYPHS[verdict_state(verdict)]
            line = f"{marker}{glyph} {label}: " + (verdict.text(recovery_number) if verdict else "no verdict")
            if self.metric != "recovered":
                e = result.estimate(self.metric, s)
                if not math.isnan(e.mean):
                    ci = "" if math.isnan(e.ci95) else f" ± {format_value(e.ci95)}"
                    line += f" · {self.metric} {format_value(e.mean)}{ci}"
            out.append(line, style="bold" if s == self.state.strategy else "")
        return out

    # --- running the map --------------------------------------------------------------------

    def start(self) -> None:
        self._cancelled_by_user = False
        where = " on Dask" if self.backend.name == "dask" else ""
        label = f"mapping {count(self.missing, 'cell')} of {len(self.cells)}{where} "
        self.query_one("#map-progress-label", Label).update(label)
        self.query_one("#map-progress", ProgressBar).update(total=None, progress=0)
        self.add_class("-running")
        self.run_map()

    @work(thread=True, exclusive=True, exit_on_error=False, group="map")
    def run_map(self) -> None:
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            self.post_message(MapProgress(done, total))

        def on_cell(position: int, result: CellResult) -> None:
            self.post_message(MapCellDone(position, result))

        # The limits every cell is held to, as `backoff-sim explore` checks them (--force lifts
        # the soft ones: the plan's specs then carry soft_limits off).
        check_cells([self.plan], workers=self.pool_workers or default_workers(),
                    force=not self.plan.base.soft_limits)
        run_explores([self.plan], self.backend, self.cache, progress=progress,
                     should_stop=lambda: worker.is_cancelled, on_cell=on_cell)

    def on_map_progress(self, message: MapProgress) -> None:
        self.query_one("#map-progress", ProgressBar).update(total=message.total, progress=message.done)

    def on_map_cell_done(self, message: MapCellDone) -> None:
        if self.cells[message.position] is None:
            self.cells[message.position] = message.result
            self._draw()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker, state = event.worker, event.state
        if worker.group != "map" or state not in (WorkerState.SUCCESS, WorkerState.ERROR,
                                                  WorkerState.CANCELLED):
            return
        self.remove_class("-running")
        if state == WorkerState.SUCCESS:
            return
        if state == WorkerState.CANCELLED or isinstance(worker.error, SweepCancelled):
            if self._cancelled_by_user:
                self.notify(f"Map cancelled with {count(self.missing, 'cell')} to go: w runs them "
                            "(finished cells are kept).", timeout=5)
            return
        error = worker.error
        message = str(error) if isinstance(error, UserError) else repr(error)
        self.notify(message, title="The map failed", severity="error", markup=False, timeout=8)

    # --- actions ----------------------------------------------------------------------------

    def action_move(self, columns: int, rows: int) -> None:
        column, row = self.state.cursor
        n_columns = len(self.plan.axes[0].values)
        n_rows = len(self.plan.axes[1].values) if len(self.plan.axes) > 1 else 1
        self.state.cursor = (min(max(column + columns, 0), n_columns - 1),
                             min(max(row + rows, 0), n_rows - 1))
        self._draw()

    def action_strategy(self, delta: int) -> None:
        n = len(self.plan.base.labels)
        self.state.strategy = (self.state.strategy + delta) % n
        self._draw()
        if n > 1 and len(self.query_one(MapGrid).shown()) == 1:
            self.notify(f"Map of {self.plan.base.labels[self.state.strategy]}", timeout=2)

    def action_metric(self) -> None:
        metrics = plot_metrics(self.plan.base)
        self.state.metric = metrics[(metrics.index(self.metric) + 1) % len(metrics)]
        self._draw()
        self.notify(f"Cells: {self.metric} ({METRIC_HELP.get(self.metric, self.metric)})", timeout=2)

    def action_open_cell(self) -> None:
        cell = self.cursor_cell()
        if self.cells[cell.position] is None:
            self.notify("That cell is still running: its runs open once it is done.", timeout=3)
            return
        self.dismiss(CellChoice(self.plan, cell.position, self.plan.base.labels[self.state.strategy]))

    def action_cancel(self) -> None:
        workers = self.workers_running()
        if not workers:
            self.notify("The map is not running.", timeout=3)
            return
        self._cancelled_by_user = True
        for worker in workers:
            worker.cancel()

    def action_resume(self) -> None:
        if self.workers_running():
            self.notify("The map is already running.", timeout=3)
        elif not self.missing:
            self.notify("Every cell of the map is done.", timeout=3)
        else:
            self.start()

    def workers_running(self) -> list[Worker]:
        return [w for w in self.app.workers if w.group == "map" and w.node is self and w.is_running]

    def action_close(self) -> None:
        self.dismiss(None)

    @on(MapGrid.CellClicked)
    def _clicked(self, message: MapGrid.CellClicked) -> None:
        self.state.strategy = message.strategy
        self.state.cursor = (message.column, message.row)
        self._draw()
