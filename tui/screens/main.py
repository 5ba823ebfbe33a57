"""The main screen: turns the app's state into widgets, and runs sweeps, runs and exports in
thread workers so no frame waits on the simulation.

State flows down (the app's reactives are watched here and pushed into widgets); results come
back as worker results or messages, never by touching widgets from a thread.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import numpy as np
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import DataTable, Label, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from sim import SweepResult, UserError
from ..state.source import cached_note

from ..keys import MAIN_VIEW
from ..widgets.footer import FittedFooter
from ..messages import ExportProgress, SweepProgress, TuneProgress
from ..view.rundata import RunData
from ..state.explore_map import CellChoice, ExploreMap, MapState
from ..state.export import export_view
from ..state.recorder import Cancelled, RunRecorder
from ..state.source import ConfigSource, Selection, Source
from ..state.start import command_line, command_words
from ..state.sweeps import SweepBook, SweepKey, stopped
from ..state.playback import format_speed
from ..state.tuning import TuneOutcome, tune_variant
from ..theme import palette_for
from ..view.client_picks import describe_clients
from ..view.table_sort import Sort
from ..view.ticks import DEFAULT_TIME_UNIT
from ..widgets.analysis.chart_stack import ChartStack
from ..widgets.analysis.charts import MetricsChart, RequestsChart
from ..widgets.analysis.latency_table import LatencyTable
from ..widgets.analysis.metrics_table import MetricsTable
from ..widgets.analysis.series_panels import SeriesPanels
from ..widgets.analysis.strategy_table import StrategyTable
from ..widgets.analysis.host_table import HostTable
from ..widgets.analysis.tier_table import TierTable
from ..widgets.replay.event_log import EventLog
from ..widgets.replay.log_pane import LogPane
from ..widgets.replay.phase_pane import PhasePane
from ..widgets.replay.pool_line import PoolLine
from ..widgets.replay.tier_lanes import TierLanes
from ..widgets.replay.timeline import Timeline
from ..widgets.status import Status, StatusLine
from .clients_prompt import ClientsPrompt
from .columns import ColumnPicker
from .compare import CompareScreen
from .explore import ExploreScreen

RUN_CACHE_EVENTS = 2_000_000  # recent runs kept for instant switching back, up to this many events
CHART_INTERVAL = 0.25  # seconds between requests-chart cursor redraws while playing

PANE_VIEWS = ("both", "analysis", "replay")
NARROW_WIDTH = 100  # below this the panes show one at a time
REPLAY_NOTE = ("Sweep metrics are not available in replay: the events file holds recorded runs "
               "only. Open the config with `backoff-sim CONFIG` to compare strategies.")
SERIES_REPLAY_NOTE = ("Replay: the latency table needs the sweep, which an events file does not "
                    "hold (open the config with `backoff-sim CONFIG` for it). The charts below are "
                    "counted from this run's events.")


class MainScreen(Screen):
    """Status, timeline and log on the left; the strategy comparison and charts on the right.

    Simulations whose runs end when the clients are done compare work, duration and cost,
    charted against client count, beside the run's requests over time. Those whose server kind
    keeps series (``Capabilities.keeps_series``, class ``-series``: the overload servers) compare
    requests, latency and recovery instead, beside the run's time series with its outage windows.
    """

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_WIDTH, "-wide")]
    HELP = MAIN_VIEW  # what ? lists here (the app's keys and the event log's)
    AUTO_FOCUS = ""  # nothing focused: every key reaches the app's bindings

    pane_view: var[str] = var("both")

    def __init__(self) -> None:
        super().__init__()
        self.sweeps = SweepBook()
        self._runs: OrderedDict[Selection, RunData] = OrderedDict()
        self._shown_sweep: SweepKey | None = None
        self._chart_timer = None
        self._recorder: RunRecorder | None = None
        self._map_states: dict[tuple[str, int], MapState] = {}  # by (simulation, seed)
        self._tune_cancelled_by_user = False

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        with Horizontal(id="progress-row"):
            yield Label("", id="progress-label", markup=False)
            yield ProgressBar(id="progress", show_eta=False)
            yield Label(" x cancels", id="progress-hint")
        with Horizontal(id="tune-row"):
            yield Label("", id="tune-label", markup=False)
            yield ProgressBar(id="tune-progress", show_eta=False)
            yield Label(" x cancels", id="tune-hint")
        with Horizontal(id="export-row"):
            yield Label("", id="export-label", markup=False)
            yield ProgressBar(id="export-progress", show_eta=False)
        with Horizontal(id="body"):
            with Vertical(id="replay-pane"):
                timeline = Timeline(id="timeline")
                yield timeline
                yield TierLanes(timeline, id="tier-lanes")
                yield PoolLine(id="pool-line")
                yield PhasePane(id="phase-pane")
                yield LogPane(id="log-pane")
            with Vertical(id="analysis-pane"):
                yield MetricsTable(id="metrics")
                yield LatencyTable(id="latency")
                yield TierTable(id="tiers")
                yield HostTable(id="hosts")
                yield Static("", id="analysis-note", markup=False)
                yield ChartStack(id="charts")
                yield SeriesPanels(id="series")
        yield FittedFooter()

    def on_mount(self) -> None:
        app = self.app
        # Runs are simulated in a child process (see ``recorder``) unless one worker was asked
        # for; a replay simulates nothing.
        if isinstance(app.source, ConfigSource):
            self._recorder = RunRecorder(in_process=app.sweep_workers == 1)
        self.set_class(app.source.replay, "-replay")
        # Keys drive the app: a focused table would swallow the arrow keys.
        for table in self.query(DataTable):
            table.can_focus = False
        self.watch(app, "selection", self._selection_changed)
        self.watch(app, "run_data", self._run_changed)
        self.watch(app, "cursor", self._cursor_changed)
        self.watch(app, "playing", self._clock_changed)
        self.watch(app, "speed", lambda _speed: self._update_status())
        self.watch(app, "speed", self._speed_changed, init=False)
        self.watch(app, "clock", self._clock_changed)

    # --- state → widgets --------------------------------------------------------------------

    def _selection_changed(self, selection: Selection | None) -> None:
        if selection is None:
            return
        self.set_class(self.app.source.capabilities(selection.simulation).keeps_series, "-series")
        self._update_status(loading=True)
        self._show_sweep(selection)
        self.query_one(PhasePane).show(selection, self.app.source, None, 0)  # the run follows
        index = self.app.source.strategies(selection.simulation).index(selection.strategy)
        self.query_one(MetricsTable).highlight(index)
        self.query_one(LatencyTable).highlight(index)
        self.query_one(TierTable).highlight(selection.strategy)
        self.query_one(HostTable).highlight(selection.strategy)
        cached = self._runs.get(selection)
        if cached is not None:
            self._runs.move_to_end(selection)
            self.app.set_run(cached)
        else:
            geometry = self.query_one(Timeline).predicted_geometry(selection.clients)
            self.load_run(selection, self.app.source, geometry)

    def _run_changed(self, data: RunData | None) -> None:
        cursor = self.app.cursor
        tiers = self.query_one(TierLanes)
        tiers.show(data, cursor)
        timeline = self.query_one(Timeline)
        timeline.align(None, tiers.label_width())  # their columns line up
        # One legend for both: the marks of every tier's events (None: the run's own).
        timeline.set_legend(True, data.codes_present if data is not None and data.tiers is not None
                            else None)
        timeline.show(data, cursor)
        self.query_one(PoolLine).show(data, cursor)
        self.query_one(PhasePane).show(self.app.selection, self.app.source, data, cursor)
        self.query_one(LogPane).show(data, cursor)
        unit = data.time_unit if data is not None else DEFAULT_TIME_UNIT
        time = self.app.current_time if data is not None else None
        chart = self.query_one(RequestsChart)
        chart.show(data.requests if data is not None else None, time_unit=unit)
        chart.set_cursor(time)
        panels = self.query_one(SeriesPanels)
        panels.show(data.series if data is not None else None, time_unit=unit)
        panels.set_cursor(time)
        self._update_status()
        self._update_timeline_title()

    def _speed_changed(self, speed: float) -> None:
        """A status line too narrow for the speed (it gives way first) cannot show + and -
        act: say the new speed instead (not for the first run's speed, set before it shows)."""
        status = self.query_one(StatusLine)
        if self.app.run_data is not None and not status.shows_speed:
            self.notify(f"Speed: {format_speed(speed, status.status.time_unit)}", timeout=2)

    def _cursor_changed(self, cursor: int) -> None:
        app = self.app
        self.query_one(Timeline).set_cursor(cursor, app.current_time if app.playing else None)
        self.query_one(TierLanes).set_cursor(cursor, app.current_time if app.playing else None)
        self.query_one(PoolLine).set_cursor(cursor)
        self.query_one(PhasePane).set_cursor(cursor)
        self.query_one(LogPane).set_cursor(cursor)
        self._update_status()
        self._follow_in_charts()
        if self.query_one(Timeline).trace is not None:  # its attempt count moved
            self._update_timeline_title()

    def _clock_changed(self, _value: object) -> None:
        """The playback clock moved, or playback started or stopped."""
        app = self.app
        self.query_one(Timeline).set_cursor(app.cursor, app.current_time if app.playing else None)
        self.query_one(TierLanes).set_cursor(app.cursor, app.current_time if app.playing else None)
        self._update_status()
        self._follow_in_charts()

    def _follow_in_charts(self) -> None:
        """Put the charts' cursor where the timeline's is: at once when paused, and while
        playing at most every ``CHART_INTERVAL`` (a plot is slower to draw than a frame)."""
        if not self.app.playing:
            if self._chart_timer is not None:
                self._chart_timer.stop()
            self._move_chart_cursor()
        elif self._chart_timer is None:
            self._chart_timer = self.set_timer(CHART_INTERVAL, self._move_chart_cursor)

    def _move_chart_cursor(self) -> None:
        self._chart_timer = None
        if self.app.run_data is not None:
            self.query_one(RequestsChart).set_cursor(self.app.current_time)
            self.query_one(SeriesPanels).set_cursor(self.app.current_time)

    def _update_status(self, loading: bool = False) -> None:
        app = self.app
        s, data = app.selection, app.run_data
        if s is None:
            return
        source = app.source
        loading = loading or data is None
        title = s.simulation if s.variant is None else f"{s.simulation} @ {s.variant}"
        self.query_one(StatusLine).show(Status(
            title=title, control=source.control(s.simulation), strategy=s.strategy,
            clients=s.clients, repetition=s.repetition,
            repetitions=len(source.repetitions(s.simulation, s.strategy, s.clients)),
            seed=s.seed, time=app.current_time, total=data.total_time if data else 0.0,
            time_unit=source.time_unit(s.simulation),
            index=app.cursor, count=len(data) if data else 0, playing=app.playing,
            speed=app.speed, animated=app.animated, loading=loading,
            outage=bool(data and data.in_outage(app.current_time)),
            incidents=data.incidents_at(app.current_time) if data else ()))

    # --- runs -------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="run")
    def load_run(self, selection: Selection, source: Source,
                 geometry: tuple[int, int] | None = None) -> tuple[Selection, RunData] | None:
        """Record (or read back) the selected run, convert it for the views and bin it for the
        timeline's ``geometry`` (lanes, columns); None when a newer selection superseded it."""
        worker = get_current_worker()
        try:
            data = source.run_data(selection, self._recorder, geometry,
                                   lambda: worker.is_cancelled)
        except Cancelled:
            return None
        return selection, data

    def _run_loaded(self, selection: Selection, data: RunData) -> None:
        self._runs[selection] = data
        while len(self._runs) > 1 and sum(map(len, self._runs.values())) > RUN_CACHE_EVENTS:
            self._runs.popitem(last=False)
        if selection == self.app.selection:
            self.app.set_run(data)

    def on_unmount(self) -> None:
        if self._recorder is not None:
            self._recorder.close()

    # --- sweeps -----------------------------------------------------------------------------

    def _sweep_key(self, selection: Selection) -> SweepKey:
        return selection.simulation, selection.seed, selection.variant

    def _show_sweep(self, selection: Selection) -> None:
        """Show the selection's sweep, starting it if it has not run yet."""
        source = self.app.source
        series = source.capabilities(selection.simulation).keeps_series
        if not isinstance(source, ConfigSource):
            self._set_note(SERIES_REPLAY_NOTE if series else REPLAY_NOTE)
            self.query_one(TierTable).show(None, 0)
            self.query_one(HostTable).show(None, 0)
            return
        key = self._sweep_key(selection)
        result = self.sweeps.result(key)
        clients_index = source.spec(selection.simulation).clients.index(selection.clients)
        if self.sweeps.needs_start(key):
            self.start_sweep(key)
        self._shown_sweep = key
        self._set_note(self.sweeps.note(key))
        self.query_one(TierTable).show(result, clients_index)
        self.query_one(HostTable).show(result, clients_index)
        if series:
            self.query_one(LatencyTable).show(result, clients_index)
        else:
            self.query_one(MetricsTable).show(result, clients_index)
            self.query_one(ChartStack).show_result(result)

    def _set_note(self, note: str) -> None:
        self.query_one("#analysis-note", Static).update(note)
        self.set_class(bool(note), "-noted")
        self.query_one(ChartStack).set_only_requests(bool(note))

    def start_sweep(self, key: SweepKey, fresh: bool = False) -> None:
        self.query_one("#progress-label", Label).update(f"sweeping {key[0]} ")
        self.query_one(ProgressBar).update(total=None, progress=0)
        self.add_class("-sweeping")
        source = self.app.source
        assert isinstance(source, ConfigSource)
        self.sweeps.started(self.sweep(key, source, fresh), key)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sweep")
    def sweep(self, key: SweepKey, source: ConfigSource, fresh: bool = False) -> tuple[SweepKey, SweepResult]:
        """Every strategy × client count × repetition of one simulation, on worker processes;
        read back from the cache when ``run`` or an earlier launch did it (unless ``fresh``: w)."""
        worker = get_current_worker()
        hit = None if fresh else source.cached_sweep(key[0])
        if hit is not None:
            result, created = hit
            self.app.call_from_thread(self.notify, f"{key[0]}: {cached_note(created)} (or press w)",
                                      timeout=8, markup=False)
            return key, result

        def progress(done: int, total: int) -> None:
            self.post_message(SweepProgress(key, done, total))

        result = source.sweep(key[0], workers=self.app.sweep_workers, progress=progress,
                              should_stop=lambda: worker.is_cancelled)
        return key, result

    def on_sweep_progress(self, message: SweepProgress) -> None:
        if message.key == self._shown_sweep:
            self.query_one(ProgressBar).update(total=message.total, progress=message.done)

    def _sweep_finished(self, key: SweepKey | None) -> None:
        """Show the sweep's result or note when it is the one on screen (see ``SweepBook``)."""
        self.set_class(self.sweeps.busy, "-sweeping")
        if key is None:
            return
        selection = self.app.selection
        if selection is not None and self._sweep_key(selection) == key:
            self._show_sweep(selection)

    def action_cancel_sweep(self) -> None:
        tunes = self._tunes_running()
        if not self.sweeps.busy and not tunes:
            self.notify("No sweep or tune is running.", timeout=3)
        for worker in self.sweeps.cancel_all():
            worker.cancel()
        self._tune_cancelled_by_user = bool(tunes)
        for worker in tunes:
            worker.cancel()

    def action_run_sweep(self) -> None:
        selection = self.app.selection
        if selection is None or not isinstance(self.app.source, ConfigSource):
            self.notify("A replay has no sweep to run.", severity="warning")
            return
        key = self._sweep_key(selection)
        self.sweeps.forget(key)
        self.start_sweep(key, fresh=True)  # simulated again, not read back from the cache
        self._show_sweep(selection)

    # --- tune -----------------------------------------------------------------------------

    def _tunes_running(self) -> list[Worker]:
        return [w for w in self.app.workers if w.group == "tune" and w.node is self and w.is_running]

    def action_tune(self) -> None:
        """Run the simulation's ``[simulation.tune]`` (``tuning``); its best variant becomes the
        table's last strategy. Trials already in the cache (an earlier tune, or `backoff-sim
        explore` into the same --out) are read back, not run."""
        plan = self._plan("tune", "nothing to tune", "", "Tune")
        if plan is None:
            return
        if self._tunes_running():
            self.notify("The tune is already running (x cancels it).", timeout=3)
            return
        self._tune_cancelled_by_user = False
        self.query_one("#tune-label", Label).update(f"tuning {plan.label!r} of {plan.title} ")
        self.query_one("#tune-progress", ProgressBar).update(total=None, progress=0)
        self.add_class("-tuning")
        self.tune(plan)

    @work(thread=True, exclusive=True, exit_on_error=False, group="tune")
    def tune(self, plan) -> TuneOutcome:
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            self.post_message(TuneProgress(done, total))

        return tune_variant(plan, backend=self.app.cell_backend(), cache=self.app.explore_cache,
                            progress=progress, should_stop=lambda: worker.is_cancelled)

    def on_tune_progress(self, message: TuneProgress) -> None:
        self.query_one("#tune-progress", ProgressBar).update(total=message.total, progress=message.done)

    def _tuned(self, outcome: TuneOutcome) -> None:
        """Add the tuned variant to its simulation and sweep it with the others."""
        if outcome.strategy is None:
            self.notify(outcome.summary, title="Tune", severity="warning", markup=False, timeout=8)
            return
        app = self.app
        source = app.source
        assert isinstance(source, ConfigSource)
        title = outcome.simulation
        app.source = source.with_tuned(title, outcome.strategy)
        key = (title, source.seed(title), source.variant(title))
        self.sweeps.forget(key)
        selection = app.selection
        if selection is not None and selection.simulation == title:
            self.start_sweep(key)  # the sweep again, with the new row (replacing a running one)
            self._show_sweep(selection)
        self.notify(f"{outcome.summary}\nIt is the table's last row: s selects it.", title="Tuned",
                    markup=False, timeout=10)

    # --- view actions ---------------------------------------------------------------------

    def action_filter_log(self) -> None:
        self.query_one(LogPane).open_filter()

    def action_search_log(self) -> None:
        self.query_one(LogPane).open_search()

    def action_copy_command(self) -> None:
        """Copy reproduction: the command that opens this run at this event, on the clipboard
        (OSC 52, through the terminal, over SSH too) and in a notification."""
        app = self.app
        if app.run_data is None or app.selection is None:
            self.notify("No run on screen yet: nothing to copy.", timeout=3)
            return
        words, caveat = command_words(app.source, app.selection, app.run_data.times, app.cursor)
        line = command_line(words)
        app.copy_to_clipboard(line)
        self.notify(line + (f"\n(but {caveat})" if caveat else ""), markup=False, timeout=10,
                    title="Copied to the clipboard (OSC 52)")

    def action_cycle_panes(self) -> None:
        """Wide: both panes → analysis alone → timeline and log alone; narrow: one or the other."""
        view = self.pane_view
        if self.has_class("-narrow"):
            view = "analysis" if view != "analysis" else "replay"
        else:
            view = PANE_VIEWS[(PANE_VIEWS.index(view) + 1) % len(PANE_VIEWS)]
        self.pane_view = view

    def watch_pane_view(self, view: str) -> None:
        for name in PANE_VIEWS:
            self.set_class(view == name, f"-view-{name}")
        self._update_table_hints()

    def on_resize(self) -> None:
        self._update_table_hints()

    def _update_table_hints(self) -> None:
        """Tables that hide columns say how to see them: `a` widens the analysis pane, unless
        it already has the whole width; on a narrow terminal the timeline says where the
        analysis is."""
        narrow = self.size.width < NARROW_WIDTH
        full = self.pane_view == "analysis" or narrow
        hint = "press T" if full else "press a or T"
        for table in (self.query_one(MetricsTable), self.query_one(LatencyTable)):
            table.set_more_hint(hint)
        self._update_timeline_title()

    def _update_timeline_title(self) -> None:
        """"Timeline", how far it is zoomed in, on a narrow terminal (one pane at a time) where
        the other pane is, and the key of the comparison view."""
        timeline = self.query_one(Timeline)
        parts = ["Timeline"]
        data = self.app.run_data
        if timeline.window.zoomed and data is not None:
            parts.append(f"zoom ×{timeline.window.magnification(data.total_time):,.0f} "
                         "(o out, 0 whole run)")
        if timeline.picked is not None:
            parts.append(f"clients {describe_clients(timeline.picked)}")
        trace = timeline.trace
        if trace is not None:
            seen = trace.seen(timeline.cursor)
            retry = f" (retry {seen - 1})" if seen > 1 else ""
            parts.append(f"c{trace.client}▸ attempt {seen}/{trace.total}{retry}")
        if self.size.width < NARROW_WIDTH:
            parts += ["a: strategy table", "v: side by side"]
        else:
            parts.append("v: strategies side by side")
        timeline.border_title = " · ".join(parts)

    # --- navigation: find, zoom, clicks --------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # f/F are offered (footer) and work once a filter is set; before, f explains.
        if action == "find":
            return self.query_one(LogPane).can_find
        return True

    def action_find_help(self) -> None:
        self.query_one(LogPane).explain_find()

    def action_find(self, direction: int) -> None:
        """Move the cursor to the next (1) or previous (-1) event the log's filter matches."""
        found = self.query_one(LogPane).find(direction)
        if found is not None:
            self.app.go_to_event(found)

    def action_zoom(self, steps: int) -> None:
        """Zoom the timeline in (1) or out (-1) around the current time; 0 shows the whole run."""
        if self.app.run_data is None:
            return
        self.query_one(Timeline).zoom(steps, self.app.current_time)
        self.query_one(TierLanes).refresh()  # it reads the timeline's window as it draws
        self._update_timeline_title()

    def action_fold_tiers(self) -> None:
        """Unfold every tier's lane group, or fold them all (a click folds or unfolds one)."""
        tiers = self.query_one(TierLanes)
        if not tiers.tiered:
            self.notify("This run has no tiers ([[simulation.tiers]]): nothing to fold.", timeout=3)
            return
        tiers.toggle()

    @on(Timeline.Seek)
    @on(EventLog.Chosen)
    def _go_to_event(self, message: Timeline.Seek | EventLog.Chosen) -> None:
        self.app.go_to_event(message.index)

    def action_cycle_metric(self) -> None:
        if self.has_class("-series"):
            panels = self.query_one(SeriesPanels)
            self.notify(f"Time series: {panels.cycle()}", timeout=2)
            return
        if self.app.source.replay:
            self.notify("A replay has no sweep metrics to chart.", severity="warning")
            return
        self.notify(f"Chart: {self.query_one(ChartStack).cycle()}", timeout=2)

    def action_toggle_log(self) -> None:
        """The metric chart's value axis: linear or log (metrics that span decades)."""
        if self.has_class("-series") or self.app.source.replay:
            self.notify("The log scale is for the sweep metrics chart, which this view does not "
                        "show.", severity="warning")
            return
        chart = self.query_one(MetricsChart)
        chart.log = not chart.log
        self.notify(f"Chart: {'log' if chart.log else 'linear'} scale", timeout=2)

    def action_toggle_phase(self) -> None:
        """Show or hide the phase pane (the portrait of the run's simulation and strategy, the
        run's path over it up to the cursor); hiding it stops a portrait being computed."""
        pane, app = self.query_one(PhasePane), self.app
        pane.display = not pane.display
        self.set_class(pane.display, "-phase")
        if pane.display:
            self._show_replay()
            pane.show(app.selection, app.source, app.run_data, app.cursor)
        else:
            pane.hide()

    def action_compare(self) -> None:
        """Strategies side by side at the current clients and repetition (``CompareScreen``)."""
        selection = self.app.selection
        if selection is None:
            return
        if len(self.app.source.strategies(selection.simulation)) < 2:
            self.notify("This simulation has one strategy: nothing to compare it with.",
                        severity="warning")
            return
        self.app.push_screen(CompareScreen(selection, self._runs.get), self._compared)

    def _compared(self, time: float | None) -> None:
        """Back from the comparison view: at its clock's time (and ``v`` opens it there)."""
        if time is not None:
            self.app.seek(time)

    def _plan(self, table: str, in_replay: str, purpose: str, section: str):
        """The selected simulation's explore or tune plan (``table``), or None after saying why
        there is none: a replay has no config, or the simulation has no such table."""
        selection, source = self.app.selection, self.app.source
        if selection is None:
            return None
        if not isinstance(source, ConfigSource):
            self.notify(f"A replay has {in_replay}: open the config with `backoff-sim CONFIG`.",
                        severity="warning")
            return None
        simulation = selection.simulation
        plan = source.explore_plan(simulation) if table == "explore" else source.tune_plan(simulation)
        if plan is None:
            self.notify(f"{simulation} has no [simulation.{table}] table{purpose}: add one (README, "
                        f"\"{section}\").", severity="warning", markup=False, timeout=5)
        return plan

    def action_explore(self) -> None:
        """The simulation's explore map (``ExploreScreen``); Enter there opens a cell's runs."""
        app = self.app
        plan = self._plan("explore", "no explore map", " to map", "Explore")
        if plan is None:
            return
        state = self._map_states.setdefault((plan.title, plan.base.seed), MapState())
        explore_map = ExploreMap(plan, app.explore_cache, state, app.sweep_workers,
                                 app.cell_backend())
        app.push_screen(ExploreScreen(explore_map), self._cell_chosen)

    def _cell_chosen(self, choice: CellChoice | None) -> None:
        """Show the chosen explore cell's runs: its spec stands in for the simulation's."""
        if choice is None:
            return
        app = self.app
        source = app.source
        assert isinstance(source, ConfigSource)
        spec = choice.plan.cells[choice.position].spec
        title = choice.plan.title
        app.source = source.with_cell(title, spec, choice.plan.cell_label(choice.position))
        app.selection = app.source.complete(title, choice.strategy, spec.clients[0], 0)

    # --- the timeline's clients: pick, expand, follow --------------------------------------

    def _cursor_client(self) -> int | None:
        """The client of the event at the cursor (None: a server's or a lower tier's event)."""
        data = self.app.run_data
        if data is None or not len(data):
            return None
        client = int(data.clients[self.app.cursor])
        return client if 0 <= client < data.n_clients else None

    def _show_replay(self) -> None:
        """Bring the timeline into view (it may be hidden behind the analysis pane)."""
        if self.pane_view == "analysis":
            self.pane_view = "replay" if self.has_class("-narrow") else "both"

    def _pick(self, ids: np.ndarray | None, say: str) -> None:
        self._show_replay()
        self.query_one(Timeline).pick_clients(ids)
        self._update_timeline_title()
        self.notify(say, timeout=3, markup=False)

    def action_pick_clients(self) -> None:
        """Type the clients that get lanes (ids and ranges; empty: every client)."""
        data = self.app.run_data
        if data is None:
            return
        picked = self.query_one(Timeline).picked

        def chosen(ids: np.ndarray | None) -> None:
            if ids is not None and self.app.run_data is data:
                self._pick(ids if len(ids) else None, f"Timeline: clients {describe_clients(ids)}"
                           if len(ids) else "Timeline: every client")

        self.app.push_screen(ClientsPrompt(data.n_clients, describe_clients(picked)
                                           if picked is not None else ""), chosen)

    def action_expand_lane(self) -> None:
        """Give the clients of the lane group that holds the followed client (or the cursor's)
        a lane each; when lanes hold one client already, show every client again."""
        timeline = self.query_one(Timeline)
        trace = timeline.trace
        client = trace.client if trace is not None else self._cursor_client()
        if client is None:
            self.notify("The cursor is on a server event: step to a client's event (or L picks "
                        "clients).", timeout=3)
            return
        lane = timeline.lane_of_client(client)
        members = timeline.lane_clients(lane) if lane is not None else np.zeros(0, np.int64)
        if len(members) > 1:
            self._pick(members, f"Timeline: clients {describe_clients(members)} (E again: every "
                                "client)")
        elif timeline.picked is not None:
            self._pick(None, "Timeline: every client")
        else:
            self.notify("Each lane holds one client already: nothing to expand.", timeout=3)

    def action_follow_client(self) -> None:
        """Follow the cursor's client (its attempts highlighted; j/J jump between them), or
        stop following."""
        timeline = self.query_one(Timeline)
        client, trace = self._cursor_client(), timeline.trace
        if trace is not None and client in (None, trace.client):
            timeline.follow(None)
            self.notify(f"Stopped following c{trace.client}.", timeout=2)
        elif client is None:
            self.notify("The cursor is on a server event: step to a client's event to follow "
                        "its client.", timeout=3)
        else:
            self._show_replay()
            timeline.follow(client)
            self.notify(f"Following c{client}: j/J jump to its next/previous attempt.", timeout=3)
        self._update_timeline_title()

    def action_jump_attempt(self, direction: int) -> None:
        """The cursor to the followed client's next (1) or previous (-1) attempt; with nobody
        followed, follow the cursor's client first."""
        data, timeline = self.app.run_data, self.query_one(Timeline)
        if data is None:
            return
        if timeline.trace is None:
            self.action_follow_client()
            if timeline.trace is None:
                return
        client = timeline.trace.client
        trace = data.client_trace(client)  # the whole run's indices (the timeline's: its part's)
        target = trace.next(self.app.cursor, direction)
        if target is None:
            way = "after" if direction > 0 else "before"
            self.notify(f"c{client} makes no attempt {way} this event ({trace.total} in all).",
                        timeout=3)
            return
        self.app.go_to_event(target)

    # --- the strategy table: columns and sort ------------------------------------------

    def _strategy_table(self) -> StrategyTable | None:
        """The strategy table this simulation shows (None in a replay: no sweep)."""
        if self.app.source.replay:
            self.notify("A replay has no sweep: no strategy table.", severity="warning")
            return None
        return self.query_one(LatencyTable if self.has_class("-series") else MetricsTable)

    def _show_analysis(self) -> None:
        """Bring the analysis pane into view (a narrow terminal shows one pane at a time)."""
        if self.pane_view == "replay" or (self.has_class("-narrow") and self.pane_view != "analysis"):
            self.pane_view = "analysis"

    def action_pick_columns(self) -> None:
        table = self._strategy_table()
        if table is not None:
            self._show_analysis()
            self.app.push_screen(ColumnPicker(table))

    def action_sort_table(self) -> None:
        table = self._strategy_table()
        if table is not None:
            self._show_analysis()
            self._say_sort(table, table.sort_by_next())

    def action_reverse_sort(self) -> None:
        table = self._strategy_table()
        if table is not None:
            self._show_analysis()
            self._say_sort(table, table.reverse_sort())

    def _say_sort(self, table: StrategyTable, sort: Sort | None) -> None:
        text = "config order" if sort is None else sort.describe(table.header(sort.column))
        self.notify(f"Strategies: {text}", timeout=2, markup=False)

    @on(StrategyTable.StrategySelected)
    def _strategy_selected(self, message: StrategyTable.StrategySelected) -> None:
        app, selection = self.app, self.app.selection
        if selection is None:
            return
        labels = app.source.strategies(selection.simulation)
        if 0 <= message.strategy_index < len(labels):
            app.selection = app.source.complete(selection.simulation, labels[message.strategy_index],
                                                selection.clients, selection.repetition)

    # --- export ---------------------------------------------------------------------------

    def action_export(self) -> None:
        """The run on screen (all its events), the simulation's PNG/CSV files (as ``backoff-sim
        run`` writes them) and a screenshot, into the app's ``--out`` folder (see ``export``)."""
        app = self.app
        selection, data = app.selection, app.run_data
        if selection is None or data is None or self._runs.get(selection) is not data:
            self.notify("The run is still loading: export when it is on screen.", timeout=3)
            return
        if self.has_class("-exporting"):
            self.notify("An export is already being written.", timeout=3)
            return
        result = None
        if isinstance(app.source, ConfigSource):
            result = self.sweeps.result(self._sweep_key(selection))
            if result is None:
                self.notify("The sweep for this simulation has not finished: exporting the run "
                            "and a screenshot now; press e again when the progress bar is gone "
                            "for the sweep's files.", severity="warning", timeout=6)
        svg = app.export_screenshot(title=f"backoff-sim · {selection.simulation}")
        self.query_one("#export-label", Label).update(f"exporting… to {app.out_dir} ")
        self.query_one("#export-progress", ProgressBar).update(total=None, progress=0)
        self.add_class("-exporting")
        self.export(app.out_dir, selection, data, result, svg, app.theme)

    @work(thread=True, exclusive=True, exit_on_error=False, group="export")
    def export(self, out_dir: Path, selection: Selection, data: RunData,
               result: SweepResult | None, svg: str, theme: str) -> list[Path]:
        def progress(done: int, total: int, path: Path) -> None:
            self.post_message(ExportProgress(done, total, path.name))

        return export_view(out_dir, selection, data.history, result, svg, palette_for(theme),
                           progress, data.tiers.layout if data.tiers is not None else None,
                           events=self.app.export_events)

    def on_export_progress(self, message: ExportProgress) -> None:
        self.query_one("#export-label", Label).update(
            f"exporting… {message.done} of {message.total} files ({message.name}) ")
        self.query_one("#export-progress", ProgressBar).update(total=message.total,
                                                              progress=message.done)

    # --- workers' outcomes ------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker, state = event.worker, event.state
        if worker.group == "run":
            if state == WorkerState.SUCCESS and worker.result is not None:
                self._run_loaded(*worker.result)
            elif state == WorkerState.ERROR:
                self.notify(f"Could not load the run: {worker.error}", severity="error",
                            markup=False)
        elif worker.group == "sweep" and state in (WorkerState.SUCCESS, WorkerState.ERROR,
                                                   WorkerState.CANCELLED):
            if state == WorkerState.SUCCESS:
                self._sweep_finished(self.sweeps.succeeded(worker, worker.result[1]))
            elif state == WorkerState.CANCELLED or stopped(worker.error):
                self._sweep_finished(self.sweeps.cancelled(worker))
            else:
                self._sweep_finished(self.sweeps.failed(worker, worker.error))
        elif worker.group == "tune" and state in (WorkerState.SUCCESS, WorkerState.ERROR,
                                                  WorkerState.CANCELLED):
            self.remove_class("-tuning")
            if state == WorkerState.SUCCESS:
                self._tuned(worker.result)
            elif state == WorkerState.CANCELLED or stopped(worker.error):
                if self._tune_cancelled_by_user:
                    self.notify("Tune cancelled: its finished trials are cached, u runs it again "
                                "from them.", timeout=5)
            else:
                error = worker.error
                message = str(error) if isinstance(error, UserError) else repr(error)
                self.notify(message, title="The tune failed", severity="error", markup=False, timeout=8)
        elif worker.group == "export":
            if state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
                self.remove_class("-exporting")
            if state == WorkerState.SUCCESS:
                paths: list[Path] = worker.result
                folder = paths[0].parent.resolve()
                self.notify("\n".join(p.name for p in paths),
                            title=f"Exported {len(paths)} files to {folder}", markup=False,
                            timeout=10)
            elif state == WorkerState.ERROR:
                error = worker.error
                message = str(error) if isinstance(error, UserError) else repr(error)
                self.notify(message, title="Export failed", severity="error", timeout=8,
                            markup=False)
