"""The phase pane (P): the portrait of the simulation and strategy on screen, arrows coloured by
return probability, with the run's path drawn over it up to the cursor.

The portrait is computed in a thread worker, one cell at a time, with its progress in the pane;
hiding the pane, switching run or quitting cancels it between two cells. Finished portraits
are kept for the session (``state.phase.PhaseCache``).
"""

from __future__ import annotations

from functools import partial

from rich.text import Text
from textual.message import Message
from textual.widget import Widget
from textual.worker import Worker, WorkerState, get_current_worker

from ...state.phase import PhaseCache, PhaseKey, compute, no_portrait, phase_key
from ...state.source import ConfigSource, Selection, Source
from ...state.sweeps import stopped
from ...theme import palette_for
from ...view.phase_text import PhasePath, Portrait, portrait_text, run_path, run_trajectory, state_line
from ...view.rundata import RunData


class PhasePane(Widget, can_focus=False):
    """The portrait and the run's path; ``display`` is off until P shows it."""

    class Progress(Message):
        """Cells done so far in a portrait; a newer one replaces an unprocessed older one."""

        def __init__(self, key: PhaseKey, done: int, total: int) -> None:
            super().__init__()
            self.key, self.done, self.total = key, done, total

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, PhasePane.Progress) and message.key == self.key

    DEFAULT_CSS = """
    PhasePane {
        height: auto;
        max-height: 13;
        padding: 0 1;
        display: none;
        border-top: solid $primary 40%;
        border-title-color: $primary;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cache = PhaseCache()
        self._key: PhaseKey | None = None
        self._note = ""
        self._progress: tuple[int, int] | None = None
        self._portrait: Portrait | None = None
        self._data: RunData | None = None
        self._path: PhasePath | None = None
        self._cursor = 0
        self._title = "Phase portrait"
        self._started: dict[Worker, PhaseKey] = {}  # each running worker's portrait

    # --- what is shown ----------------------------------------------------------------------

    def show(self, selection: Selection | None, source: Source, data: RunData | None,
             cursor: int) -> None:
        """Show the selection's portrait (starting it when the session has none) and the run's
        path; a no-op while hidden."""
        if not self.display or selection is None:
            return
        if data is not self._data:
            self._data = data
            self._path = run_path(data)
        self._cursor = cursor
        key = phase_key(selection, source)
        self._title = f"Phase portrait · {selection.strategy} · {selection.clients} clients"
        if key != self._key:
            self._key = key
            self._portrait, self._progress = None, None
            self._note = no_portrait(selection, source)
            self.workers.cancel_group(self, "phase")
            if not self._note and key is not None:
                self._portrait = self.cache.get(key)  # a failed one is tried again
                if self._portrait is None:
                    assert isinstance(source, ConfigSource)
                    self._progress = (0, 0)
                    self._start(key, selection, source)
        self._redraw()

    def hide(self) -> None:
        """Stop computing (a later ``show`` starts again) and forget the run shown."""
        self.workers.cancel_group(self, "phase")
        self._key, self._progress, self._data, self._path = None, None, None, None

    def set_cursor(self, cursor: int) -> None:
        self._cursor = cursor
        if self.display and self._portrait is not None:
            self._redraw()

    @property
    def marker(self) -> tuple[int, int] | None:
        """The grid cell of the state at the cursor (None: no portrait or no run yet)."""
        path = self._trajectory()
        return path.current if path is not None else None

    def _trajectory(self):
        return run_trajectory(self._portrait, self._path, self._cursor)

    def _redraw(self) -> None:
        line = state_line(self._trajectory())
        self.border_title = f"{self._title} · {line}" if line else self._title
        self.refresh(layout=True)

    def render(self) -> Text:
        if self._note:
            return Text(self._note, no_wrap=False)
        if self._portrait is None:
            done, total = self._progress or (0, 0)
            count = f" {done}/{total} cells" if total else "…"
            return Text(f"computing phase portrait{count} (P hides it and stops)")
        return portrait_text(self._portrait, self._trajectory(), palette_for(self.app.theme))

    # --- the worker -------------------------------------------------------------------------

    def _start(self, key: PhaseKey, selection: Selection, source: ConfigSource) -> None:
        worker = self.run_worker(partial(self._compute, key, selection, source), thread=True,
                                 exclusive=True, group="phase", exit_on_error=False,
                                 description=f"phase portrait {key}")
        self._started[worker] = key

    def _compute(self, key: PhaseKey, selection: Selection, source: ConfigSource
                 ) -> tuple[PhaseKey, Portrait]:
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            self.post_message(PhasePane.Progress(key, done, total))

        return key, compute(selection, source, progress, lambda: worker.is_cancelled,
                            workers=getattr(self.app, "sweep_workers", None))

    def on_phase_pane_progress(self, message: PhasePane.Progress) -> None:
        if message.key == self._key and self._portrait is None:
            self._progress = (message.done, message.total)
            self.refresh()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "phase":
            return
        event.stop()
        if event.state == WorkerState.SUCCESS and worker.result is not None:
            key, portrait = worker.result
            self.cache.done(key, portrait)
            if key == self._key:
                self._portrait, self._progress = portrait, None
                self._redraw()
        elif event.state == WorkerState.ERROR and not stopped(worker.error):
            key = self._started.get(worker)
            if key is not None:
                self.cache.failed(key, worker.error)
                if key == self._key:
                    self._note = self.cache.failure(key)
                    self.refresh(layout=True)
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._started.pop(worker, None)
