"""The app's phase pane (P, issue 22): the portrait computed in a worker, arrows on screen, the
run's state at the cursor marked on it; a config without a replying server says so; hiding
the pane stops a portrait being computed."""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from textual.worker import WorkerState
from tui_support import FIXTURES, TINY_OUTAGE, make_app, pause_until, pilot_test, settle

from sim.analysis.phase_path import phase_path
from sim.settings.config import load_config
from sim.vocabulary.errors import UserError
from sim.phase.pool import cell_runner
from sim.phase.portrait import PhaseSettings, compute_portrait
from sim.runs.sweep import SweepCancelled
from sim.phase.glyphs import ARROWS, grid_cell
from tui.state.phase import no_portrait
from tui.state.source import ConfigSource, Selection
from tui.view.phase_text import CURRENT
from tui.widgets.replay.phase_pane import PhasePane


def pane_text(pane: PhasePane) -> str:
    console = Console(width=120, file=io.StringIO(), color_system=None)
    console.print(pane.render())
    return console.file.getvalue()


async def open_pane(pilot) -> PhasePane:
    """Wait for the run, press P and wait for the portrait's worker to end."""
    await settle(pilot)
    await pilot.press("P")
    await settle(pilot)
    return pilot.app.screen.query_one(PhasePane)


@pilot_test
async def test_the_pane_shows_arrows_and_the_state_at_the_cursor(tmp_path: Path) -> None:
    app = make_app(tmp_path, TINY_OUTAGE)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_pane(pilot)
        assert pane.display and app.screen.has_class("-phase")
        text = pane_text(pane)
        assert sum(text.count(a) for a in ARROWS) > 50 and CURRENT in text
        assert "work at the server" in text and "calls in backoff" in text
        path = phase_path(app.run_data.history)
        grid = pane.cache.get(pane._key).settings.grid
        assert pane.marker == grid_cell(grid, int(path.work[0]), int(path.orbit[0]))
        deepest = int(np.argmax(path.orbit))  # the outage's largest orbit
        app.go_to_event(deepest)
        await settle(pilot)
        assert pane.marker == grid_cell(grid, int(path.work[deepest]), int(path.orbit[deepest]))
        assert pane.marker != grid_cell(grid, int(path.work[0]), int(path.orbit[0]))
        assert f"in backoff {int(path.orbit[deepest])}" in str(pane.border_title)
        await pilot.press("P")
        assert not pane.display and not app.screen.has_class("-phase")


def test_a_config_without_a_replying_server_says_so_in_one_line() -> None:
    source = ConfigSource(load_config(FIXTURES / "snapshot.toml"))  # a LockingServer
    note = no_portrait(Selection("Snapshot", source.strategies("Snapshot")[0], 2, 0), source)
    assert note.startswith("No phase portrait:") and "replies" in note and "\n" not in note
    assert no_portrait(Selection("Tiny outage", "constant", 30, 0),
                       ConfigSource(load_config(TINY_OUTAGE))) == ""


def waits_for_cancel(selection, source, progress, cancelled, workers=None):
    """A portrait that stays at its first cell until cancelled (as a long one would)."""
    progress(1, 100)
    while not cancelled():
        time.sleep(0.005)
    raise SweepCancelled("phase portrait cancelled")


def test_a_portrait_asked_to_stop_stops_before_its_next_cell() -> None:
    spec = load_config(TINY_OUTAGE).simulations[0]
    asked = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 3

    with cell_runner(1, progress=lambda done, total: None, cancelled=cancelled) as run_all:
        with pytest.raises(SweepCancelled):
            compute_portrait(spec, "constant", PhaseSettings(size=3, runs=2, clients=30), run_all)
    assert len(asked) == 4  # three cells ran, the fourth was not started


def fails(selection, source, progress, cancelled, workers=None):
    raise UserError("phase: the time limit (1) is shorter than the horizon (2)")


@pilot_test
async def test_a_failure_is_one_line_hiding_cancels_and_showing_again_retries(tmp_path: Path,
                                                                             monkeypatch) -> None:
    monkeypatch.setattr("tui.widgets.replay.phase_pane.compute", fails)
    app = make_app(tmp_path, TINY_OUTAGE)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_pane(pilot)
        assert pane_text(pane).strip() == ("The phase portrait failed: phase: the time limit (1) is "
                                           "shorter than the horizon (2)")
        monkeypatch.setattr("tui.widgets.replay.phase_pane.compute", waits_for_cancel)
        await pilot.press("P", "P")
        await pause_until(pilot, lambda: "1/100 cells" in pane_text(pane))
        assert "computing phase portrait 1/100 cells" in pane_text(pane)
        worker = next(w for w in app.workers if w.group == "phase")
        await pilot.press("P")
        await settle(pilot)
        assert worker.state in (WorkerState.CANCELLED, WorkerState.ERROR)
        assert worker.result is None and pane.cache.get(("Tiny outage", None, 3, "constant", 30)) is None
        monkeypatch.undo()
        await pilot.press("P")
        await settle(pilot)
        assert pane.marker is not None and CURRENT in pane_text(pane)
