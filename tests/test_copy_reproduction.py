"""Copy reproduction (issue 23): ``y`` puts on the clipboard the command that opens the run on
screen at the event under the cursor, and that command, run, opens the same run there."""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pytest
from tui_support import FIXTURES, TINY, make_app, pilot_test, settle

from tui.app import BackoffApp
from tui.main import _config_source, build_app_parser, main
from tui.state.start import command_words, resolve_start

SNAPSHOT = FIXTURES / "snapshot.toml"  # three strategies, 2/4/6 clients, 3 repetitions, seed 7


def opened(argv: list[str], tmp_path: Path) -> BackoffApp:
    """The app ``backoff-sim ARGV`` would open (its parser, its source, its start)."""
    args = build_app_parser().parse_args(argv)
    source = _config_source(args.config, args.seed, tmp_path, 1, False)
    return BackoffApp(source, sweep_workers=1, out_dir=tmp_path,
                      start=resolve_start(source, args))


@pilot_test
async def test_y_copies_a_command_that_opens_the_same_run_at_the_same_event(tmp_path: Path) -> None:
    app = make_app(tmp_path, SNAPSHOT)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("s", "c", "r", "r")
        await settle(pilot)
        await pilot.press(*["right"] * 7)
        await settle(pilot)
        selection, cursor = app.selection, app.cursor
        await pilot.press("y")
        await pilot.pause()
        line = app.clipboard
        assert any(line in n.message for n in app._notifications)  # shown too
    words = shlex.split(line)
    assert words[:2] == ["backoff-sim", str(SNAPSHOT)] and "--seed" in words
    assert words[words.index("--repetition") + 1] == "3"  # counted from 1, as the app shows it
    again = opened(words[1:], tmp_path)
    async with again.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert again.selection == selection and again.cursor == cursor == 7


def test_events_sharing_a_time_are_told_apart_by_their_number(tmp_path: Path) -> None:
    source = _config_source(SNAPSHOT, None, tmp_path, 1, False)
    selection = source.initial()
    times = np.array([0.0, 1.5, 1.5, 2.0])
    words, caveat = command_words(source, selection, times, 1)
    assert words[-2:] == ["--event", "2"] and not caveat  # --at 1.5 would land on event 3
    words, _ = command_words(source, selection, times, 2)
    assert words[-2:] == ["--at", "1.5"]
    args = build_app_parser().parse_args([str(SNAPSHOT), "--event", "2"])
    assert resolve_start(source, args).event == 1


@pytest.mark.parametrize("flags, words", [
    (["--strategy", "nope"], "--strategy 'nope': no strategy of that name in simulation 'Snapshot'"),
    (["--clients", "5"], "--clients 5: no such client count in simulation 'Snapshot'; choose one of 2, 4, 6"),
    (["--repetition", "4"], "choose one of 1, 2, 3"),
    (["--simulation", "Other"], "choose one of 'Snapshot'"),
    (["--at", "-1"], "expected a time ≥ 0"),
    (["--at", "1", "--event", "2"], "not allowed with argument"),
])
def test_a_start_the_config_does_not_have_is_one_line(flags: list[str], words: str, capsys) -> None:
    try:
        status = main([str(SNAPSHOT), *flags])
    except SystemExit as exit:  # argparse's own checks exit from the parser
        status = exit.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_in_a_replay_y_copies_the_replay_command(tmp_path: Path) -> None:
    from sim.settings.config import load_config
    from sim.export.csv_files import write_events_csv
    from sim.export.runs import representative_runs
    from tui.main import _replay_source, build_replay_parser

    path = tmp_path / "Tiny_Locking_events.csv"
    write_events_csv(representative_runs(load_config(TINY).simulation("Tiny_Locking")), path)
    app = make_app(tmp_path, source=_replay_source(path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("s", *["right"] * 4, "y")
        await settle(pilot)
        selection, cursor, line = app.selection, app.cursor, app.clipboard
    words = shlex.split(line)
    assert words[:5] == ["backoff-sim", "replay", str(path), "--time-unit", "ms"]
    assert "--seed" not in words  # a replay has none
    args = build_replay_parser().parse_args(words[2:])
    source = _replay_source(args.file, args.time_unit)
    again = BackoffApp(source, sweep_workers=1, out_dir=tmp_path, start=resolve_start(source, args))
    async with again.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert again.selection == selection and again.cursor == cursor == 4
