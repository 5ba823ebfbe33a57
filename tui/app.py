"""The terminal app: which run is selected, where the cursor is, and the playback clock.

The app holds the state (reactive selection, cursor, playing, speed) and the actions that change
it; ``screens/main.py`` turns state into widgets and runs the workers; ``keys.py`` is the one
table of bindings. Nothing here simulates: runs and sweeps come from a ``Source``.
"""

from __future__ import annotations

import gc
from dataclasses import replace
from pathlib import Path
from time import monotonic

from textual.app import App
from textual.binding import Binding
from textual.reactive import var
from textual.screen import Screen

from sim.commands import collector
from sim.exploration.backends import LocalBackend
from sim.exploration.cache import CellCache
from sim.export.palette import DEFAULT_THEME
from sim.commands.teardown import start_resource_tracker

from .commands import BackoffCommands
from .keys import MAIN_VIEW, bindings
from .view.rundata import RunData
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .screens.prompt import NumberPrompt
from .state.paths import DEFAULT_OUT
from .state.place import Place
from .state.playback import MAX_FPS, advance, change_speed, clamp, initial_speed
from .state.source import ConfigSource, Selection, Source
from .state.start import Start
from .theme import register_themes

# A frame that comes late (a busy machine, a suspended terminal) advances at most this much.
MAX_FRAME_SECONDS = 0.25
GC_INTERVAL = 1.0  # seconds between full garbage collections (see ``on_ready``)


class BackoffApp(App[None]):
    """Play, step and compare seeded runs of backoff strategies."""

    CSS_PATH = "app.tcss"
    TITLE = "backoff-sim"
    # After the table's: space under --no-animation, f/F before a filter is set (each says why
    # the key does nothing; see the check_action methods).
    BINDINGS = [*bindings(), Binding("space", "animation_off", show=False),
                Binding("f,F", "screen.find_help", show=False)]
    COMMANDS = App.COMMANDS | {BackoffCommands}

    selection: var[Selection | None] = var(None)
    run_data: var[RunData | None] = var(None, always_update=True)
    cursor: var[int] = var(0)
    playing: var[bool] = var(False)
    speed: var[float] = var(1.0)
    clock: var[float] = var(0.0)  # simulated time of the playback, in the run's time unit

    def __init__(self, source: Source, *, theme: str = DEFAULT_THEME, animated: bool = True,
                 sweep_workers: int | None = None, out_dir: Path | str = DEFAULT_OUT,
                 freeze_gc: bool = False, explore_cache: Path | None = None,
                 open_map: bool = False, explore_backend=None, start: Start | None = None,
                 export_events: str = "sample") -> None:
        super().__init__()
        self.export_events = export_events  # what the export key's events files hold (--events)
        self._start = start  # the run and place the command line asked for (--simulation...)
        # Where map cells and tune trials run: a backend the caller entered and closes (a Dask
        # cluster, `explore --app --dask`), else this machine's process pool.
        self.explore_backend = explore_backend
        # Explore maps' cells: kept in memory for the app's life, and in ``explore_cache`` on disk
        # when given (as `backoff-sim explore` does), so a map reopens or resumes at once.
        self.explore_cache = CellCache(explore_cache, memory=True)
        self._open_map = open_map  # show the first explore map once the app is up
        self._freeze_gc = freeze_gc
        self.source = source
        self.animated = animated
        self.sweep_workers = sweep_workers
        self.out_dir = Path(out_dir)
        self.theme_names: list[str] = []
        self._start_theme = theme
        self._last_tick = 0.0
        self._place: Place | None = None  # where the user is (None: the start of the run)
        self._visited: dict[str, tuple[Selection, Place | None]] = {}  # by simulation

    def on_load(self) -> None:
        # Sweeps on several processes need multiprocessing's resource tracker, which is spawned
        # with sys.stderr's file descriptor. Textual replaces sys.stderr with a capture whose
        # fileno() is -1 once the app runs, so start the tracker now (deaf to a closing
        # terminal's SIGHUP, and mute: ``start_resource_tracker``).
        if isinstance(self.source, ConfigSource) and self.sweep_workers != 1:
            start_resource_tracker()

    def on_ready(self) -> None:
        # Full collections of the cyclic garbage collector stalled frames for 50-190 ms while
        # playing: every frame leaves rendered lines (Textual's strips and their caches) in
        # reference cycles, which live long enough to reach the oldest generation and pile up
        # there. Once the first frame
        # is up, the objects alive (modules, styles, widgets) stay for the app's life: freeze
        # them out of the collector, and collect fully once a second instead of when the
        # collector decides, so each collection has a second's garbage only (~10 ms). Off in
        # tests, where many apps share one process and frozen cycles would never be freed.
        if self._freeze_gc:
            collector.freeze()
            young, middle, _ = gc.get_threshold()
            gc.set_threshold(young, middle, 10_000)  # full collections: ours, below
            self.set_interval(GC_INTERVAL, self._collect_garbage)

    @staticmethod
    def _collect_garbage() -> None:
        gc.collect()

    def get_default_screen(self) -> Screen:
        return MainScreen()

    def on_mount(self) -> None:
        self.theme_names = register_themes(self)
        if self._start_theme in self.theme_names:
            self.theme = self._start_theme
        elif self.theme_names:
            self.theme = self.theme_names[0]
        self._timer = self.set_interval(1 / MAX_FPS, self._tick, pause=True)
        self.selection = self.source.initial() if self._start is None else self._start.selection
        if self._open_map and isinstance(self.source, ConfigSource) and self.source.explores:
            first = next(t for t in self.source.simulations() if t in self.source.explores)
            if first != self.selection.simulation:
                self.selection = self.source.complete(first)
            self.call_after_refresh(self.run_action, "screen.explore")

    def cell_backend(self):
        """The backend for map cells and tune trials (``sim.exploration.backends``)."""
        return self.explore_backend or LocalBackend(self.sweep_workers)

    # --- state ------------------------------------------------------------------------------

    @property
    def current_time(self) -> float:
        """The playback clock while playing, else the time of the event under the cursor."""
        data = self.run_data
        if data is None or not len(data):
            return 0.0
        return self.clock if self.playing else float(data.times[self.cursor])

    def validate_cursor(self, cursor: int) -> int:
        return clamp(cursor, len(self.run_data) if self.run_data is not None else 0)

    def watch_playing(self, playing: bool) -> None:
        if playing:
            self._last_tick = monotonic()
            self._timer.resume()
        else:
            self._timer.pause()

    def set_run(self, data: RunData) -> None:
        """Show a newly loaded run at the user's place (see ``Place``; the start for the first
        run) and at the same playback speed (the first run's speed suits its length)."""
        if self.run_data is None:
            self.speed = initial_speed(data.total_time)
        start, self._start = self._start, None
        if start is not None and start.event is not None and len(data):  # --event N: that one
            cursor = clamp(start.event, len(data))
            self._place = Place.of_event(data.times, cursor)
            if start.event >= len(data):  # the run was simulated here: say where the cursor went
                self.notify(f"--event {start.event + 1:,}: this run has only {len(data):,} events; "
                            "showing the last", severity="warning")
        elif start is not None and start.time is not None:  # --at T: the last event by then
            cursor = data.index_at_time(start.time)
            self._place = Place(start.time)
        elif not self.animated:
            cursor = len(data) - 1
        elif self._place is None or not len(data):
            cursor = 0
        else:
            cursor = self._place.index_in(data.times)
        # Cursor and clock first, quietly, so the watchers of run_data see a consistent state.
        cursor = clamp(cursor, len(data))
        clock = float(data.times[cursor]) if len(data) else 0.0
        if self.playing and self._place is not None:  # play on from the same simulated time
            clock = min(max(self._place.time, clock), data.total_time)
        self.set_reactive(BackoffApp.cursor, cursor)
        self.set_reactive(BackoffApp.clock, clock)
        self.run_data = data
        if self.playing and self.cursor >= len(data) - 1:
            self.playing = False

    def _tick(self) -> None:
        data = self.run_data
        if data is None or not self.playing:
            return
        now = monotonic()
        elapsed = min(now - self._last_tick, MAX_FRAME_SECONDS)
        self._last_tick = now
        cursor, self.clock, finished = advance(data.times, self.clock, elapsed, self.speed)
        self.cursor = cursor
        self._place = Place(self.clock)
        if finished:
            self.playing = False

    def _move(self, cursor: int) -> None:
        """Put the cursor on an event (pausing playback: a step means "let me look")."""
        self.playing = False
        self.cursor = cursor
        if self.run_data is not None and len(self.run_data):
            self.clock = float(self.run_data.times[self.cursor])
            self._place = Place.of_event(self.run_data.times, self.cursor)

    @property
    def place_time(self) -> float:
        """Where the user is, in simulated time: their last move's (a seek keeps its exact
        time, even between events or past this run's end), else the cursor's."""
        return self._place.time if self._place is not None else self.current_time

    def seek(self, time: float) -> None:
        """Put the cursor on the last event at or before ``time`` and keep ``time`` itself as
        the place: the comparison view's clock when the user leaves it, so the next run shown
        and the view opened again are at that time, not at this run's event before it."""
        data = self.run_data
        if data is not None and len(data):
            self._move(data.index_at_time(time))
        self._place = Place(time)

    def go_to_event(self, index: int) -> None:
        """Put the cursor on event ``index`` of the run on screen (a click, the log's Enter)."""
        self._move(index)

    # --- actions ----------------------------------------------------------------------------

    def action_toggle_play(self) -> None:
        data = self.run_data
        if data is None:
            return
        if not self.playing and self.cursor >= len(data) - 1:
            self._move(0)
        self.playing = not self.playing

    def action_animation_off(self) -> None:
        """Space under ``--no-animation``: there is nothing to play, say why."""
        if self.run_data is not None:
            self._move(len(self.run_data) - 1)
        self.notify("Animation is off (--no-animation): showing the whole run; ←/→ step.")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Without animation the footer does not offer Play: space explains instead.
        if action == "toggle_play":
            return self.animated
        if action == "animation_off":
            return not self.animated
        return True

    def action_step(self, events: int) -> None:
        self._move(self.cursor + events)

    def action_jump_start(self) -> None:
        self._move(0)

    def action_jump_end(self) -> None:
        self._move(len(self.run_data) - 1 if self.run_data is not None else 0)

    def action_speed(self, steps: int) -> None:
        self.speed = change_speed(self.speed, steps)

    def action_go_to_time(self) -> None:
        data = self.run_data
        if data is None:
            return

        def go(t: int | float | None) -> None:
            if t is None or self.run_data is not data:
                return
            # The time of the event under the cursor (the prefilled value) keeps that event,
            # even when later events share its time.
            same = len(data) and t == float(data.times[self.cursor])
            self._move(self.cursor if same else data.index_at_time(t))

        # Prefilled with the exact time (repr: the shortest text that reads back to the same
        # float), so Enter on it goes nowhere; a rounded value could land on an earlier event.
        self.push_screen(NumberPrompt(
            "Go to time", f"{data.time_unit}, 0 to {data.total_time:.1f}: the cursor goes to the "
                          "last event at or before it", value=repr(self.current_time),
            minimum=0), go)

    def action_cycle(self, axis: str, delta: int) -> None:
        """Show the next (``delta`` 1) or previous (-1) strategy, client count, repetition or
        simulation, at the same place. Client counts stop at their ends; the others wrap.
        Leaving a simulation remembers its run and place, so ``n`` then ``N`` comes back."""
        selection = self.selection
        if selection is None:
            return
        if axis == "clients":
            counts = self.source.options(selection, "clients")
            index = counts.index(selection.clients) + delta
            if len(counts) > 1 and not 0 <= index < len(counts):
                end = "most" if delta > 0 else "fewest"
                other = "C for fewer" if delta > 0 else "c for more"
                self.notify(f"Already at the {end} clients this simulation has: "
                            f"{selection.clients} ({other}).", timeout=3)
                return
        new = self.source.cycle(selection, axis, delta)
        if new == selection:
            self.notify(f"This simulation has only one {axis.replace('clients', 'client count')} "
                        "value.", timeout=3)
        if axis == "simulation" and new.simulation != selection.simulation:
            self._visited[selection.simulation] = (selection, self._place)
            back = self._visited.get(new.simulation)
            if back is not None:
                old, self._place = back
                new = self.source.complete(old.simulation, old.strategy, old.clients,
                                           old.repetition)
        self.selection = new

    def action_change_seed(self) -> None:
        if not isinstance(self.source, ConfigSource) or self.selection is None:
            self.notify("A replay shows recorded runs: there is no seed to change.",
                        severity="warning")
            return

        def reseed(seed: int | float | None) -> None:
            if seed is None or not isinstance(self.source, ConfigSource) or self.selection is None:
                return
            assert isinstance(seed, int)  # the prompt parses whole numbers exactly
            self.source = self.source.with_seed(seed)
            self.selection = replace(self.selection, seed=seed)

        self.push_screen(NumberPrompt("Seed", "a whole number ≥ 0; every run and the sweep are "
                                              "simulated again with it",
                                      value=str(self.selection.seed), integer=True, minimum=0),
                         reseed)

    def action_cycle_theme(self) -> None:
        names = self.theme_names or [self.theme]
        index = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(index + 1) % len(names)]
        self.notify(f"Theme: {self.theme}", timeout=2)

    def action_help(self) -> None:
        """The keys of the view on screen (each view declares them as ``HELP``)."""
        self.push_screen(HelpScreen(getattr(self.screen, "HELP", MAIN_VIEW)))
