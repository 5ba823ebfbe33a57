"""The explore view: a simulation's ``[simulation.explore]`` map, a coloured cell grid per
strategy, filled in as cells finish; Enter opens a cell's runs in the normal view.

The map runs in a thread worker on the local process pool (``ExploreMap.run``: cells read back
from the cache first, then computed and cached one by one), with a progress bar; ``x`` cancels
it, ``w`` runs what is left, closing the view cancels it too. Nothing here computes a number:
the map and the user's place in it are ``tui.state.explore_map``'s (``MapState`` is kept by the
main screen so the map reopens where it was left), what is drawn ``tui.view.map_view``'s.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer
from textual.screen import ModalScreen
from textual.widgets import Label, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from sim import UserError

from ..keys import EXPLORE_APP_ACTIONS, EXPLORE_VIEW, key_bindings
from ..widgets.footer import FittedFooter
from ..messages import MapCellDone, MapProgress
from ..state.explore_map import CellChoice, CellResult, ExploreMap, ExplorePlan, MapCell, MapState
from ..state.sweeps import stopped
from ..theme import palette_for
from ..view.map_view import cell_detail, map_legend, map_title, map_view, metric_help
from ..view.plural import count
from ..widgets.map_grid import MapGrid


def explore_bindings() -> list[Binding]:
    """``EXPLORE_VIEW``'s keys: the map's, and the app's help and theme; and the palette."""
    bindings = []
    for k in EXPLORE_VIEW.keys:
        if k.action in EXPLORE_APP_ACTIONS:
            bindings.append(Binding(k.keys, f"app.{k.action}", k.short or k.description,
                                    show=k.footer, key_display=k.display, tooltip=k.description))
        else:
            bindings += key_bindings(k)
    bindings.append(Binding("ctrl+p", "app.command_palette", "palette", show=False))
    return bindings


class ExploreScreen(ModalScreen[CellChoice | None]):
    """One simulation's map; dismissed with a ``CellChoice`` (Enter) or None (Escape)."""

    BINDINGS = explore_bindings()
    HELP = EXPLORE_VIEW  # what ? lists here
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

    def __init__(self, explore_map: ExploreMap) -> None:
        super().__init__()
        self.map = explore_map
        self._cancelled_by_user = False

    # --- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(map_title(self.plan), id="map-title", markup=False)
        with Horizontal(id="map-progress-row"):
            yield Label("", id="map-progress-label", markup=False)
            yield ProgressBar(id="map-progress", show_eta=False)
            yield Label(" x cancels", id="map-progress-hint")
        with ScrollableContainer(id="map-body"):
            yield MapGrid(palette_for(self.app.theme), id="map-grid")
        yield Static("", id="map-legend", markup=False)
        yield Static("", id="map-detail", markup=False)
        yield FittedFooter()

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda _theme: self._draw(), init=False)
        self._draw()
        if self.missing and not self.state.cancelled:
            self.start()
        elif self.missing:  # the user cancelled it: reopening (p after a cell) leaves it so
            self.notify(f"The map was cancelled with {count(self.missing, 'cell')} to go: w runs "
                        "them.", timeout=4)

    # --- state ------------------------------------------------------------------------------

    @property
    def plan(self) -> ExplorePlan:
        return self.map.plan

    @property
    def state(self) -> MapState:
        return self.map.state

    @property
    def cells(self) -> list[CellResult | None]:
        return self.map.cells

    @property
    def metric(self) -> str:
        return self.map.metric

    @property
    def missing(self) -> int:
        """Cells not known yet."""
        return self.map.missing

    def cursor_cell(self) -> MapCell:
        """The MapCell under the cursor, for the selected strategy."""
        return self.map.cursor_cell()

    def _draw(self) -> None:
        m = self.map
        rows = [m.rows(s) for s in range(len(m.plan.base.labels))]
        view = map_view(m.plan, rows, m.state.strategy, m.state.cursor)
        self.query_one(MapGrid).show(view, palette_for(self.app.theme))
        self.query_one("#map-legend", Static).update(map_legend(m.metric, m.running, m.missing))
        cell = m.cursor_cell()
        self.query_one("#map-detail", Static).update(
            cell_detail(m.plan, cell, m.cells[cell.position], m.state.strategy, m.metric, m.running))

    # --- running the map --------------------------------------------------------------------

    def start(self) -> None:
        self._cancelled_by_user = False
        self.state.cancelled = False
        self.map.running = True
        where = " on Dask" if self.map.on_dask else ""
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

        self.map.run(progress=progress, should_stop=lambda: worker.is_cancelled, on_cell=on_cell)

    def on_map_progress(self, message: MapProgress) -> None:
        self.query_one("#map-progress", ProgressBar).update(total=message.total, progress=message.done)

    def on_map_cell_done(self, message: MapCellDone) -> None:
        if self.map.cell_done(message.position, message.result):
            self._draw()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker, state = event.worker, event.state
        if worker.group != "map" or state not in (WorkerState.SUCCESS, WorkerState.ERROR,
                                                  WorkerState.CANCELLED):
            return
        self.remove_class("-running")
        self.map.running = False
        if self.is_attached:
            self._draw()  # the cells left read as not computed, not as running
        if state == WorkerState.SUCCESS:
            return
        if state == WorkerState.CANCELLED or stopped(worker.error):
            if self._cancelled_by_user:
                self.notify(f"Map cancelled with {count(self.missing, 'cell')} to go: w runs them "
                            "(finished cells are kept).", timeout=5)
            return
        error = worker.error
        message = str(error) if isinstance(error, UserError) else repr(error)
        self.notify(message, title="The map failed", severity="error", markup=False, timeout=8)

    # --- actions ----------------------------------------------------------------------------

    def action_move(self, columns: int, rows: int) -> None:
        self.map.move(columns, rows)
        self._draw()

    def action_strategy(self, delta: int) -> None:
        label = self.map.next_strategy(delta)
        self._draw()
        if len(self.plan.base.labels) > 1 and len(self.query_one(MapGrid).shown()) == 1:
            self.notify(f"Map of {label}", timeout=2)

    def action_metric(self) -> None:
        metric = self.map.next_metric()
        self._draw()
        self.notify(f"Cells: {metric} ({metric_help(metric)})", timeout=2)

    def action_open_cell(self) -> None:
        choice = self.map.choice()
        if choice is None:
            self.notify("That cell is still running: its runs open once it is done." if self.map.running
                        else "That cell was not computed (the map was cancelled): w runs it.", timeout=3)
            return
        self.dismiss(choice)

    def action_cancel(self) -> None:
        workers = self.workers_running()
        if not workers:
            self.notify("The map is not running.", timeout=3)
            return
        self._cancelled_by_user = True
        self.state.cancelled = True
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
