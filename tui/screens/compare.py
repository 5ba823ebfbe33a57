"""The comparison view: several strategies' runs at the same (clients, repetition), their
timelines stacked on one time axis under one clock, each with its totals.

The strategies share their random numbers at one coordinate, so what differs between the lanes
is what the strategies did. A table lists every strategy (with this run's totals once it is
loaded): click a row or press its number to show or hide it. The clock steps through the merged
event times of the runs shown (``sim.analysis.replay.merged_times``) and plays them together;
c/C and r/R move every run to another client count or repetition. Runs are recorded in a thread worker, in a child
process (``RunRecorder``), so the screen never waits for the simulation.
"""

from __future__ import annotations

from dataclasses import replace
from time import monotonic

import numpy as np
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from ..view.compare_columns import (
    RunSummary,
    initial_picks,
    merged_times,
    step_time,
    summary_cells,
    summary_headers,
    summary_line,
)
from ..keys import COMPARE_APP_ACTIONS, COMPARE_VIEW, key_bindings
from ..widgets.footer import FittedFooter
from ..messages import CompareRunLoaded
from ..view.rundata import RunData
from ..state.playback import MAX_FPS, change_speed, format_speed
from ..state.recorder import Cancelled, RunRecorder
from ..state.source import Capabilities, ConfigSource, Selection
from ..theme import palette_for
from ..view.timeline_grid import density_bounds, even_lanes
from ..widgets.analysis.charts import series_marker
from ..widgets.replay.timeline import Timeline, rows_for
from .prompt import NumberPrompt

MAX_SHOWN = 6  # timelines stacked at once (each needs a few rows to be read)
MAX_FRAME_SECONDS = 0.25


def compare_bindings() -> list[Binding]:
    """``COMPARE_VIEW``'s keys: the playback keys of the main view, acting on the shared clock
    (not the log's search, which has no log here); the app's keys that move every run
    (clients, repetition, simulation, seed), theme and help; and the comparison's own."""
    bindings = [b for k in COMPARE_VIEW.keys if k.action not in COMPARE_APP_ACTIONS
                for b in key_bindings(k)]
    for k in COMPARE_VIEW.keys:  # after the view's own: the footer lists Help last
        if k.action in COMPARE_APP_ACTIONS:
            bindings.append(Binding(k.keys, f"app.{k.action}", k.short or k.description,
                                    show=k.footer and k.action == "help", key_display=k.display,
                                    tooltip=k.description))
    bindings.append(Binding("ctrl+p", "app.command_palette", "palette", show=False))
    return bindings


class PickTable(DataTable, can_focus=False):
    """The strategies and their totals; a click on a row shows or hides that strategy (the
    table never takes focus: the keys drive the clock)."""

    class Toggled(Message):
        def __init__(self, strategy: str) -> None:
            super().__init__()
            self.strategy = strategy

    def on_click(self, event: events.Click) -> None:
        row = event.style.meta.get("row")
        if row is not None and 0 <= row < self.row_count:
            key = self.ordered_rows[row].key.value
            if key is not None:
                self.post_message(self.Toggled(key))


class ComparePane(Vertical):
    """One strategy's timeline, titled with its marker, name and totals."""

    DEFAULT_CSS = """
    ComparePane {
        height: 1fr;
        min-height: 5;
        border-top: solid $primary 40%;
        border-title-color: $foreground;
        & > Timeline { height: 1fr; }
    }
    """

    def __init__(self, strategy: str, index: int) -> None:
        super().__init__(classes="compare-pane")
        self.strategy = strategy
        self.index = index
        self.timeline = Timeline()

    def compose(self) -> ComposeResult:
        yield self.timeline

    def set_title(self, summary: RunSummary | None, ended: bool, hedges: bool = False) -> None:
        marker = series_marker(self.index)
        text = f"{marker} {self.strategy}"
        if summary is None:
            text += " · recording…"
        else:
            text += f" · {summary_line(summary, hedges)}" + (" · ended" if ended else "")
            if summary.latency_note:  # an older events file: latencies paired by client
                text += " · latencies paired by client (the file has no call column)"
        self.border_title = text.replace("[", r"\[")


class CompareScreen(ModalScreen[float]):
    """Strategies side by side on one clock; Escape or v returns to the single run, at the
    clock's time (the screen's result)."""

    BINDINGS = compare_bindings()
    HELP = COMPARE_VIEW  # what ? lists here
    AUTO_FOCUS = ""  # nothing focused: every key reaches the bindings

    DEFAULT_CSS = """
    CompareScreen {
        background: $background;
        layout: vertical;
        & > #compare-status { height: 1; background: $panel; padding: 0 1; }
        & > #compare-table { height: auto; max-height: 40%; }
        & > #compare-hint { height: 1; color: $text-muted; padding: 0 1; }
        & > #compare-panes { height: 1fr; }
    }
    """

    clock: var[float] = var(0.0)
    playing: var[bool] = var(False)
    speed: var[float] = var(1.0)

    def __init__(self, selection: Selection, cached=lambda selection: None) -> None:
        super().__init__()
        self._selection = selection
        self._cached = cached  # the main screen's run cache: a run it shows needs no recording
        self._runs: dict[Selection, RunData] = {}
        self._summaries: dict[Selection, RunSummary] = {}
        self._picked: list[str] = []
        self._stops = merged_times([])
        self._span = 0.0
        # The user's place on the clock (their last step, seek or play): the clock shows it,
        # or the runs' end when they all end before it. Kept while other runs load, so c/C
        # and r/R land at the same time, not at the first loaded run's end.
        self._place = 0.0
        self._last_tick = 0.0
        self._recorder: RunRecorder | None = None
        self._panes: list[ComparePane] = []

    # --- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="compare-status", markup=False)
        yield PickTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="compare-hint", markup=False)
        yield Vertical(id="compare-panes")
        yield FittedFooter()

    def on_mount(self) -> None:
        app = self.app
        if isinstance(app.source, ConfigSource):
            self._recorder = RunRecorder(in_process=app.sweep_workers == 1)
        self.speed = app.speed
        self._place = app.place_time  # where the single run was
        self.set_reactive(CompareScreen.clock, self._place)
        self._timer = self.set_interval(1 / MAX_FPS, self._tick, pause=True)
        self.watch(app, "selection", self._selection_changed, init=False)
        self._use(self._selection, initial_picks(self._strategies(), self._selection.strategy))

    def on_unmount(self) -> None:
        if self._recorder is not None:
            self._recorder.close()

    @property
    def picked(self) -> list[str]:
        """The strategies shown, in config order."""
        return list(self._picked)

    @property
    def panes(self) -> list[ComparePane]:
        """The timelines' panes, top to bottom (the picked strategies in config order)."""
        return list(self._panes)

    def _strategies(self) -> list[str]:
        return self.app.source.strategies(self._selection.simulation)

    def _caps(self) -> Capabilities:
        """What the compared simulation's server kind offers: the table's columns."""
        return self.app.source.capabilities(self._selection.simulation)

    def _hedges(self) -> bool:
        """Whether the compared simulation counts hedges: the table's hedges column."""
        return self.app.source.hedges(self._selection.simulation)

    def _coordinates(self, strategy: str) -> Selection:
        return replace(self._selection, strategy=strategy)

    def _available(self, strategy: str) -> bool:
        """Whether the source has this strategy's run at the compared coordinates (a replay
        file may hold some only)."""
        s, source = self._selection, self.app.source
        return (s.clients in source.client_counts(s.simulation, strategy)
                and s.repetition in source.repetitions(s.simulation, strategy, s.clients))

    def _use(self, selection: Selection, picks: list[str]) -> None:
        """Compare ``picks`` at ``selection``'s simulation, clients and repetition."""
        self._selection = selection
        strategies = [s for s in self._strategies() if self._available(s)]
        self._picked = [s for s in strategies if s in picks]
        if len(self._picked) < 2:  # the picks are not all here: the first available ones
            self._picked = (self._picked + [s for s in strategies if s not in self._picked])[:2]
        self._fill_table()
        self._build_panes()
        self._load()

    def _fill_table(self) -> None:
        """One row per strategy: shown or not, its key, and its run's totals once loaded."""
        caps, hedges = self._caps(), self._hedges()
        headers = ["#", "Strategy", *summary_headers(caps, hedges)]
        palette = palette_for(self.app.theme)
        rows = []
        for i, strategy in enumerate(self._strategies()):
            shown = strategy in self._picked
            summary = self._summaries.get(self._coordinates(strategy))
            cells = summary_cells(summary, caps, hedges) if shown or summary else (
                ["—"] * len(headers[2:]))
            if not self._available(strategy):
                cells = ["not in file"] + [""] * (len(cells) - 1)
            key = f"{i + 1}" if i < 9 else ""
            rows.append((strategy, [
                Text(f"{'☑' if shown else '☐'} {key}"),
                Text.assemble((series_marker(i) + " ", palette.series_color(i)),
                              (strategy, "bold" if shown else "")),
                *(Text(c, justify="right") for c in cells)]))
        table = self.query_one(PickTable)
        table.clear(columns=True)
        # Widths given, not measured by the table later: every cell is known now.
        for c, header in enumerate(headers):
            width = max([len(header), *(row[c].cell_len for _, row in rows)])
            table.add_column(header, key=header, width=width)
        for strategy, row in rows:
            table.add_row(*row, key=strategy)
        self._update_hint()

    def _update_hint(self) -> None:
        n = len(self._strategies())
        keys = f"1–{min(n, 9)}"
        self.query_one("#compare-hint", Static).update(
            f"Same random numbers for each strategy · {keys} or a click: show/hide · "
            f"c/C r/R: clients, repetition · Esc: back")

    def _build_panes(self) -> None:
        container = self.query_one("#compare-panes")
        container.remove_children()
        strategies = self._strategies()
        self._panes = [ComparePane(s, strategies.index(s)) for s in self._picked]
        container.mount_all(self._panes)
        self.call_after_refresh(self._layout_panes)  # label widths need the panes' sizes

    # --- runs -------------------------------------------------------------------------------

    def _load(self) -> None:
        """Start the worker on the picked runs not here yet (a run the main view holds is
        only summarised)."""
        wanted = [(selection, self._cached(selection)) for selection in
                  map(self._coordinates, self._picked) if selection not in self._runs]
        self._runs_changed()
        if wanted:
            self.record(wanted)

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare")
    def record(self, wanted: list[tuple[Selection, RunData | None]]) -> None:
        """Record (or take) the runs one after the other and count their totals, posting each
        as it comes: the UI thread never simulates nor scans a run."""
        worker = get_current_worker()
        source = self.app.source
        for selection, data in wanted:
            if worker.is_cancelled:
                return
            if data is None:
                try:
                    data = source.run_data(selection, self._recorder, None,
                                           lambda: worker.is_cancelled)
                except Cancelled:
                    return
            summary = data.summary(source.capabilities(selection.simulation))
            self.post_message(CompareRunLoaded(selection, data, summary))

    def on_compare_run_loaded(self, message: CompareRunLoaded) -> None:
        self._runs[message.selection] = message.data
        self._summaries[message.selection] = message.summary
        if message.selection == self._coordinates(message.selection.strategy):
            self._runs_changed()
            self._fill_table()

    def _shown_runs(self) -> list[RunData]:
        return [d for s in self._picked if (d := self._runs.get(self._coordinates(s))) is not None]

    def _runs_changed(self) -> None:
        """New runs on screen: one axis for all, the clock kept where it was."""
        runs = self._shown_runs()
        self._stops = merged_times([run.times for run in runs])
        self._span = max((run.total_time for run in runs), default=0.0)
        if not self.app.animated:
            self.clock = self._span
        elif self._stops.size and len(runs) == len(self._picked):  # every run is here
            self.clock = min(self._place, self._span)
        self._layout_panes()

    def on_resize(self) -> None:
        self._layout_panes()

    def _layout_panes(self) -> None:
        """Heights, legend and the shared axis of the panes, then the clock on each."""
        panes = self.panes
        # Panes of one height, so every run gets the same lanes (as tall as its clients need);
        # the last one also holds the legend, for the marks of every run shown.
        room = self.query_one("#compare-panes").size.height
        legend = False
        if panes and room:
            height = max(4, min((room - 1) // len(panes), self._selection.clients + 3))
            # border, ruler and server lane, and the even lanes that fit (no blank rows)
            height = even_lanes(self._selection.clients, height - 3) + 3
            legend = rows_for(height, True)[1]  # the legend row fits the last pane
            for pane in panes:
                pane.styles.height = height + (legend and pane is panes[-1])
        codes = frozenset().union(*(run.codes_present for run in self._shown_runs()))
        for pane in panes:
            pane.timeline.set_legend(legend and pane is panes[-1], codes)
        width = 0
        for pane in panes:
            data = self._runs.get(self._coordinates(pane.strategy))
            timeline = pane.timeline
            if data is not timeline.data:
                timeline.show(data)
            width = max(width, timeline.lane_label_width())
        for pane in panes:
            pane.timeline.align(self._span or None, width)
        self._share_density()
        self._show_clock()

    def on_timeline_resized(self, message: Timeline.Resized) -> None:
        message.stop()
        self._share_density()

    def _share_density(self) -> None:
        """Crowded lanes shaded on one scale for all: the quartiles of every run's cells, at the
        panes' current sizes."""
        panes = self.panes
        grids = [grid for pane in panes if (grid := pane.timeline.grid) is not None]
        bounds = None
        if grids and all(grid.density for grid in grids):
            bounds = density_bounds(np.concatenate([grid.counts.ravel() for grid in grids]))
        for pane in panes:
            pane.timeline.set_density_bounds(bounds)

    def _show_clock(self) -> None:
        """Every run up to the clock, and whether it has ended by then."""
        hedges = self._hedges()
        for pane in self.panes:
            data = pane.timeline.data
            if data is not None:
                pane.timeline.set_time(self.clock)
            pane.set_title(self._summaries.get(self._coordinates(pane.strategy)),
                           data is not None and self.clock >= data.total_time, hedges)
        self._update_status()

    def _update_status(self) -> None:
        s = self._selection
        state = "▶ " if self.playing else "❚❚ "
        reps = len(self.app.source.repetitions(s.simulation, s.strategy, s.clients))
        left = (f"Comparing {len(self._picked)} strategies · {s.simulation} · {s.clients:,} "
                f"client{'s' if s.clients != 1 else ''} · rep {s.repetition + 1} of {reps}")
        unit = self.app.source.time_unit(s.simulation)
        speed = format_speed(self.speed, unit)
        right = f"{state}t = {self.clock:,.1f} / {self._span:,.1f} {unit} · {speed}"
        status = self.query_one("#compare-status", Static)
        width = max(0, status.content_size.width or self.size.width - 2)
        if len(left) + len(right) + 2 > width:  # the status line's short words
            left = (f"{len(self._picked)} strategies · {s.simulation} · {s.clients:,} cl · "
                    f"rep {s.repetition + 1}/{reps}")
            right = f"{state}{self.clock:,.1f}/{self._span:,.1f} {unit} · {speed}"
        room = max(0, width - len(right) - 2)
        if len(left) > room:
            left = left[:max(room - 1, 0)] + "…"
        status.update(left + " " * max(2, width - len(left) - len(right)) + right)

    # --- the app's selection moves every run ----------------------------------------------

    def _selection_changed(self, selection: Selection | None) -> None:
        if selection is None:
            return
        old = self._selection
        moved = replace(selection, strategy=old.strategy)
        if moved == old:
            return
        picks = self._picked
        if selection.simulation != old.simulation:
            picks = initial_picks(self.app.source.strategies(selection.simulation),
                                  selection.strategy)
        def same_place(k: Selection) -> bool:
            return replace(k, strategy=moved.strategy) == moved

        self._runs = {k: v for k, v in self._runs.items() if same_place(k)}
        self._summaries = {k: v for k, v in self._summaries.items() if same_place(k)}
        self._use(moved, picks)

    # --- picking strategies -----------------------------------------------------------------

    def action_toggle_strategy(self, number: int) -> None:
        """Show or hide the strategy in row ``number`` (1-based; 0 is the tenth)."""
        index = 9 if number == 0 else number - 1
        strategies = self._strategies()
        if index < len(strategies):
            self.toggle(strategies[index])
        else:
            self.notify(f"No row {number}: this simulation has {len(strategies)} strategies.",
                        timeout=3)

    def toggle(self, strategy: str) -> None:
        if not self._available(strategy):
            self.notify(f"The file has no run of {strategy} at these clients and repetition.",
                        severity="warning", timeout=3)
            return
        picks = list(self._picked)
        if strategy in picks:
            if len(picks) <= 2:
                self.notify("A comparison shows at least two strategies.", timeout=3)
                return
            picks.remove(strategy)
        else:
            if len(picks) >= MAX_SHOWN:
                self.notify(f"At most {MAX_SHOWN} strategies at once: hide one first.",
                            timeout=3)
                return
            picks.append(strategy)
        self._use(self._selection, picks)

    @on(PickTable.Toggled)
    def _row_clicked(self, event: PickTable.Toggled) -> None:
        event.stop()
        self.toggle(event.strategy)

    # --- the shared clock -------------------------------------------------------------------

    def watch_clock(self, _clock: float) -> None:
        if self.is_mounted:
            self._show_clock()

    def watch_playing(self, playing: bool) -> None:
        if playing:
            self._last_tick = monotonic()
            self._timer.resume()
        else:
            self._timer.pause()
        if self.is_mounted:
            self._update_status()

    def watch_speed(self, _speed: float) -> None:
        if self.is_mounted:
            self._update_status()

    def _tick(self) -> None:
        now = monotonic()
        elapsed = min(now - self._last_tick, MAX_FRAME_SECONDS)
        self._last_tick = now
        end = self._span
        self.clock = self._place = min(self.clock + self.speed * elapsed, end)
        if self.clock >= end:
            self.playing = False

    def _move(self, time: float) -> None:
        self.playing = False
        self.clock = self._place = time

    def action_toggle_play(self) -> None:
        if not self._stops.size:
            return
        if not self.app.animated:
            self._move(self._span)
            self.notify("Animation is off (--no-animation): showing the whole runs.")
            return
        if not self.playing and self.clock >= self._span:
            self.clock = self._place = float(self._stops[0])
        self.playing = not self.playing

    def action_step(self, events: int) -> None:
        self._move(step_time(self._stops, self.clock, events))

    def action_jump_start(self) -> None:
        self._move(float(self._stops[0]) if self._stops.size else 0.0)

    def action_jump_end(self) -> None:
        self._move(self._span)

    def action_speed(self, steps: int) -> None:
        self.speed = change_speed(self.speed, steps)

    def action_go_to_time(self) -> None:
        span = self._span

        def go(t: float | None) -> None:
            if t is not None:
                self._move(min(max(t, 0.0), span))

        self.app.push_screen(NumberPrompt(
            "Go to time", f"{self.app.source.time_unit(self._selection.simulation)}, 0 to "
                          f"{span:.1f}: every run shows its events up to it",
            value=f"{self.clock:.1f}", minimum=0), go)

    def action_close(self) -> None:
        self.dismiss(self.clock)
