"""The terminal app driven through its bindings with Textual's Pilot (no terminal needed).

Every test uses the small config in tests/fixtures/tiny.toml with one sweep worker, so a sweep
takes milliseconds; tests wait for workers rather than for time to pass.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from tui_support import TINY, fake_clock, help_keys_text, make_app, pilot_test, run_from_palette, settle

from sim.runs.sweep import SweepCancelled
from sim.settings.config import load_config
from sim.runs.engine import record_run
from sim.export.csv_files import read_events_csv, write_events_csv
from sim.export.runs import representative_runs
from tui.app import BackoffApp
from tui.keys import KEYS
from tui.screens.help import HelpScreen
from tui.screens.main import REPLAY_NOTE
from tui.state.source import ConfigSource, ReplaySource, Selection
from tui.widgets.replay.event_log import EventLog
from tui.widgets.replay.timeline import Timeline
from tui.widgets.status import StatusLine

def screen_text(app: BackoffApp) -> list[str]:
    """What the timeline and the log show, line by line."""
    timeline = app.screen.query_one(Timeline)
    log = app.screen.query_one(EventLog)
    return ([timeline.render_line(y).text for y in range(timeline.size.height)]
            + [log.render_line(y).text for y in range(log.size.height)])


def expected_history(app: BackoffApp, selection: Selection):
    source = app.source
    assert isinstance(source, ConfigSource)
    spec = source.spec(selection.simulation)
    return record_run(spec, selection.strategy, selection.clients, selection.repetition).history


@pilot_test
async def test_opens_on_the_first_simulation_with_its_sweep(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.selection == Selection("Tiny_Locking", "Constant", 3, 0, 3)
        assert app.run_data is not None and app.cursor == 0
        assert app.run_data.history.times == expected_history(app, app.selection).times
        status = app.screen.query_one(StatusLine).status
        assert (status.title, status.control, status.clients, status.seed) == (
            "Tiny_Locking", "LockingServer", 3, 3)
        assert status.count == len(app.run_data) and status.index == 0
        assert not app.screen.has_class("-sweeping")
        assert app.screen.query_one("#metrics").rows  # the sweep's comparison table is filled


@pilot_test
async def test_step_forward_and_back_is_exact(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("right", "right")
        assert app.cursor == 2
        at_two = screen_text(app)
        log = app.screen.query_one(EventLog)
        assert log.upto_cursor == 3 and log.event_index(log.cursor_line) == 2
        assert log.line_count == len(app.run_data)  # the events ahead listed too, greyed
        await pilot.press(*["right"] * 5)
        assert app.cursor == 7
        assert screen_text(app) != at_two
        await pilot.press(*["left"] * 5)
        assert app.cursor == 2
        assert screen_text(app) == at_two
        assert app.screen.query_one(StatusLine).status.index == 2


@pilot_test
async def test_jumps_and_ends(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        last = len(app.run_data) - 1
        await pilot.press("right_square_bracket")
        assert app.cursor == min(10, last)
        await pilot.press("left_square_bracket")
        assert app.cursor == 0
        await pilot.press("right_curly_bracket")
        assert app.cursor == last
        await pilot.press("home")
        assert app.cursor == 0
        await pilot.press("end")
        assert app.cursor == last
        await pilot.press("left_curly_bracket")
        assert app.cursor == 0


@pilot_test
async def test_go_to_time(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        data = app.run_data
        k = int(np.flatnonzero(np.diff(data.times) > 0)[1])  # an event with a later neighbour
        target = (data.times[k] + data.times[k + 1]) / 2
        await pilot.press("g")
        await pilot.press("ctrl+a", "ctrl+k", *f"{target:.6f}", "enter")
        await pilot.pause()
        assert app.cursor == k  # the last event at or before the time typed


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_play_advances_with_the_clock_and_stops_at_the_end(tmp_path: Path,
                                                                  monkeypatch) -> None:
    now = fake_clock(monkeypatch)
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("plus", "plus", "plus", "plus")
        assert app.speed == 10  # ms of simulated time per second
        await pilot.press("space")
        assert app.playing
        now[0] += 0.2
        await pilot.pause(0.2)  # timer frames run; together they see 0.2 s pass
        assert app.clock == pytest.approx(2.0)
        assert app.cursor == app.run_data.index_at_time(2.0)
        assert app.playing
        for _ in range(20):
            now[0] += 0.25
            await pilot.pause(0.1)
        assert not app.playing
        assert app.cursor == len(app.run_data) - 1
        assert app.screen.query_one(EventLog).line_count == len(app.run_data)
        await pilot.press("space")  # at the end, play starts over (with the events at t = 0)
        assert app.playing and app.clock == 0.0
        assert app.cursor == app.run_data.index_at_time(0.0)
        await pilot.press("space")
        assert not app.playing


@pilot_test
async def test_no_animation_shows_whole_runs(tmp_path: Path) -> None:
    app = make_app(tmp_path, animated=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.cursor == len(app.run_data) - 1
        await pilot.press("home", "space")
        assert not app.playing and app.cursor == len(app.run_data) - 1
        await pilot.press("s")
        await settle(pilot)
        assert app.cursor == len(app.run_data) - 1


@pilot_test
async def test_switch_strategy_clients_repetition_and_simulation(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert app.selection.strategy == "FullJitteredExpo"
        await pilot.press("c")
        await settle(pilot)
        assert app.selection.clients == 5
        await pilot.press("r")
        await settle(pilot)
        assert app.selection == Selection("Tiny_Locking", "FullJitteredExpo", 5, 1, 3)
        assert app.run_data.history.times == expected_history(app, app.selection).times
        assert app.run_data.n_clients == 5
        await pilot.press("S", "C", "R")
        await settle(pilot)
        assert app.selection == Selection("Tiny_Locking", "Constant", 3, 0, 3)
        await pilot.press("n")
        await settle(pilot)
        assert app.selection.simulation == "Tiny_OCC"
        assert app.screen.query_one(StatusLine).status.control == "ReadWriteOCCServer"
        assert app.run_data.history.times == expected_history(app, app.selection).times
        assert app.screen.sweeps.result(("Tiny_OCC", 3, None)) is not None  # no explore cell


@pilot_test
async def test_change_seed_reruns(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = list(app.run_data.history.times)
        await pilot.press("z")
        await pilot.press("ctrl+a", "ctrl+k", "7", "enter")
        await settle(pilot)
        assert app.selection.seed == 7
        assert app.source.spec("Tiny_Locking").seed == 7
        after = app.run_data.history.times
        assert after != before
        spec = replace(load_config(TINY).simulation("Tiny_Locking"), seed=7)
        assert after == record_run(spec, "Constant", 3, 0).history.times
        assert app.screen.sweeps.result(("Tiny_Locking", 7, None)) is not None


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_filter_the_log(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("end", "ampersand")
        await pilot.press(*"1 reject")
        await pilot.pause()
        log = app.screen.query_one(EventLog)
        data = app.run_data
        names = [data.row(log.event_index(i))[3] for i in range(log.line_count)]
        clients = [data.row(log.event_index(i))[1] for i in range(log.line_count)]
        expected = np.count_nonzero((data.clients == 1) & np.isin(data.codes, [5, 8]))
        assert log.line_count == expected
        assert set(clients) <= {1} and all("rejects" in n or "aborts" in n for n in names)
        await pilot.press("enter")
        assert app.focused is None  # the box closed; keys drive playback again
        await pilot.press("home")
        assert app.cursor == 0
        await pilot.press("ampersand", *"0 [zz")
        await pilot.pause()
        assert app.screen.query_one("#filter").has_class("-invalid")
        assert "zz" in str(app.screen.query_one("#filter-error").render())
        await pilot.press("escape")
        assert log.log_filter.text == "0"  # reopened, the box selects its text: typing replaces it;
        # and the last filter that made sense stays
        assert app.focused is None


@pilot_test
async def test_export_writes_the_files_and_a_screenshot(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["Tiny_Locking_metrics.png", "Tiny_Locking_scatter.png",
                            "Tiny_Locking_metrics.csv", "Tiny_Locking_runs.csv",
                            "Tiny_Locking_events.csv", "Tiny_Locking_provenance.json", "Tiny_Locking_screenshot.svg",
                            "Tiny_Locking_report.html",
                            "Tiny_Locking_Constant_3clients_rep1_events.csv"])
    assert (tmp_path / "Tiny_Locking_screenshot.svg").read_text().startswith("<svg")


@pilot_test
async def test_export_to_an_unusable_directory_notifies(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    app = make_app(blocker / "out")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert any(n.severity == "error" for n in app._notifications)


class BlockingSource(ConfigSource):
    """A source whose sweep only ends when it is told to stop."""

    def sweep(self, simulation, *, workers, progress=None, should_stop=None):
        while not should_stop():
            time.sleep(0.005)
        raise SweepCancelled()


@pilot_test
async def test_cancel_a_running_sweep(tmp_path: Path) -> None:
    app = make_app(tmp_path, source=BlockingSource(load_config(TINY)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.screen.has_class("-sweeping")
        await pilot.press("e")  # the run and a screenshot now, the sweep's files later
        assert any("has not finished" in n.message for n in app._notifications)
        await pilot.press("x")
        await settle(pilot)
        assert not app.screen.has_class("-sweeping")
        assert "cancelled" in str(app.screen.query_one("#analysis-note").render())
        assert app.run_data is not None  # the run itself was never waiting on the sweep


def write_replay_file(tmp_path: Path) -> Path:
    spec = load_config(TINY).simulation("Tiny_Locking")
    path = tmp_path / "Tiny_Locking_events.csv"
    write_events_csv(representative_runs(spec), path)
    return path


@pilot_test
@pytest.mark.slow  # a replay in the app: the replayed pool's test and sim.replay's stay
async def test_replay_loads_runs_from_a_csv(tmp_path: Path) -> None:
    path = write_replay_file(tmp_path)
    runs = read_events_csv(path)
    app = make_app(tmp_path, source=ReplaySource(runs, path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.selection == Selection("Tiny_Locking", "Constant", 3, 0, None)
        spec = load_config(TINY).simulation("Tiny_Locking")
        # the CSV holds times rounded to 12 significant digits
        assert app.run_data.history.times == [
            float(f"{t:.12g}") for t in record_run(spec, "Constant", 3, 0).history.times]
        assert REPLAY_NOTE in str(app.screen.query_one("#analysis-note").render())
        await pilot.press("s")
        await settle(pilot)
        assert app.selection.strategy == "FullJitteredExpo"
        assert app.run_data.history.packed == record_run(spec, "FullJitteredExpo", 3, 0).history.packed
        await pilot.press("end", "left")
        assert app.cursor == len(app.run_data) - 2
        await pilot.press("z")
        assert any("no seed" in n.message for n in app._notifications)
        assert app.selection.seed is None
        await pilot.press("e")  # no sweep in a replay: the export is the screenshot alone
        await settle(pilot)
    assert (tmp_path / "Tiny_Locking_screenshot.svg").is_file()
    assert not (tmp_path / "Tiny_Locking_metrics.png").exists()


@pilot_test
async def test_help_lists_every_binding(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = help_keys_text(app)
        for key in KEYS:
            assert key.description in text
        await pilot.press("right")  # the help screen is modal: keys do not reach playback
        assert app.cursor == 0
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


@pytest.mark.slow  # the palette runs what a key runs; the keys stay in the default run
@pilot_test
async def test_command_palette_runs_actions(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await run_from_palette(pilot, "Next strategy")
        assert app.selection.strategy == "FullJitteredExpo"


@pytest.mark.slow  # a theme or size variant; one of each stays in the default run
@pilot_test
async def test_theme_key_cycles_our_themes(tmp_path: Path) -> None:
    app = make_app(tmp_path, theme="backoff-light")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.theme == "backoff-light"
        seen = set()
        for _ in app.theme_names:
            await pilot.press("t")
            seen.add(app.theme)
        assert seen == {"backoff-dark", "backoff-light", "backoff-contrast"}


# One size in the default run, the others (more of the same layout code) under -m slow.
@pytest.mark.parametrize("size", [(60, 20), *(pytest.param(s, marks=pytest.mark.slow)
                                              for s in ((80, 24), (40, 10), (20, 5)))])
@pilot_test
async def test_small_terminals_do_not_crash(tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("right", "a", "right", "end", "a", "s")
        await settle(pilot)
        assert app.cursor >= 0 and app.run_data is not None


@pilot_test
async def test_narrow_layout_switches_between_panes(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.has_class("-narrow")
        assert screen.query_one("#replay-pane").display and not screen.query_one("#analysis-pane").display
        await pilot.press("a")
        await pilot.pause()
        assert screen.query_one("#analysis-pane").display and not screen.query_one("#replay-pane").display
        await pilot.press("a")
        await pilot.pause()
        assert screen.query_one("#replay-pane").display and not screen.query_one("#analysis-pane").display


@pilot_test
@pytest.mark.slow  # the wide layout's variant; the narrow layout's pane switching stays
async def test_wide_layout_cycles_both_analysis_and_replay_panes(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen

        def shown() -> tuple[bool, bool]:
            return screen.query_one("#replay-pane").display, screen.query_one("#analysis-pane").display

        assert shown() == (True, True)
        await pilot.press("a")
        assert shown() == (False, True)
        assert screen.query_one("#analysis-pane").size.width == 120
        await pilot.press("a")
        assert shown() == (True, False)
        await pilot.press("a")
        assert shown() == (True, True)
