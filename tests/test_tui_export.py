"""The export key: the run on screen with its whole history, the sweep's files and a screenshot,
written in a worker with progress shown, into ``--out`` (``backoff-sim-out`` by default),
never over an earlier export."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest
from tui_support import TINY, pilot_test, settle

from sim.settings.config import load_config
from sim.export.csv_files import read_events_csv
from tui.app import BackoffApp
from tui.main import build_app_parser, build_replay_parser
from tui.state.source import ConfigSource

README = Path(__file__).parent.parent / "README.md"
SWEEP_FILES = ("_metrics.png", "_scatter.png", "_metrics.csv", "_runs.csv", "_events.csv", "_provenance.json",
               "_report.html")


def make_app(**kwargs) -> BackoffApp:
    return BackoffApp(ConfigSource(load_config(TINY)), sweep_workers=1, **kwargs)


def export_notes(app: BackoffApp) -> list[str]:
    return [str(n.title) for n in app._notifications if str(n.title).startswith("Exported")]


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_export_writes_the_run_on_screen_whole_and_never_overwrites(tmp_path: Path) -> None:
    out = tmp_path / "out"
    app = make_app(out_dir=out)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("s", "c")  # FullJitteredExpo at 5 clients: not an example run
        await settle(pilot)
        await pilot.press("r", "right")
        await settle(pilot)
        history = app.run_data.history
        await pilot.press("e")
        await settle(pilot)
        run_file = out / "Tiny_Locking_FullJitteredExpo_5clients_rep2_events.csv"
        first = {p.name: p.read_bytes() for p in out.iterdir()}
        assert set(first) == {run_file.name, "Tiny_Locking_screenshot.svg",
                              *(f"Tiny_Locking{kind}" for kind in SWEEP_FILES)}
        [(key, saved)] = read_events_csv(run_file).items()
        assert (key.strategy, key.clients, key.repetition) == ("FullJitteredExpo", 5, 1)
        # times as CSV numbers are written: rounded to 12 significant digits
        assert saved.times == [float(f"{t:.12g}") for t in history.times]
        assert saved.packed == list(history.packed)
        assert export_notes(app) == [f"Exported {len(first)} files to {out.resolve()}"]
        # Again: a numbered set beside the first, which is left as it was.
        await pilot.press("e")
        await settle(pilot)
        again = {p.name for p in out.iterdir()} - set(first)
        assert again == {name.replace("Tiny_Locking", "Tiny_Locking-2") for name in first}
        assert {name: (out / name).read_bytes() for name in first} == first
        assert export_notes(app)[-1] == f"Exported {len(first)} files to {out.resolve()}"


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_export_shows_its_progress_while_the_worker_writes(tmp_path: Path,
                                                                 monkeypatch) -> None:
    gate = threading.Event()
    import tui.screens.main as main_screen
    real = main_screen.export_view

    def held(*args, **kwargs):
        gate.wait(10)  # the worker waits until the test has looked at the screen
        return real(*args, **kwargs)

    monkeypatch.setattr(main_screen, "export_view", held)
    progress = []
    app = make_app(out_dir=tmp_path)
    async with app.run_test(size=(120, 40), message_hook=progress.append) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        row = app.screen.query_one("#export-row")
        assert row.display and "exporting…" in str(app.screen.query_one("#export-label").render())
        assert app.cursor == 0 and not app.playing
        await pilot.press("right")  # the app answers keys while the files are written
        assert app.cursor == 1
        gate.set()
        await settle(pilot)
        assert not row.display
    steps = [(m.done, m.total) for m in progress if type(m).__name__ == "ExportProgress"]
    total = len(list(tmp_path.iterdir()))
    assert steps and steps[-1] == (total, total)
    assert [done for done, _ in steps] == sorted(done for done, _ in steps)


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_an_export_to_a_full_disk_writes_none_of_its_files(tmp_path: Path, monkeypatch) -> None:
    # The disk fills up at the export's second file: "Export failed", and no file of the export
    # is left (the run's events file, written first, stayed behind).
    import sim.export.atomic as atomic

    real_fdopen = atomic.os.fdopen
    opened = []

    def fdopen_then_fill(fd, *args, **kwargs):
        opened.append(fd)
        if len(opened) == 2:
            os.close(fd)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fdopen(fd, *args, **kwargs)

    out = tmp_path / "out"
    app = make_app(out_dir=out)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        monkeypatch.setattr(atomic.os, "fdopen", fdopen_then_fill)
        await pilot.press("e")
        await settle(pilot)
        failed = [n for n in app._notifications if str(n.title) == "Export failed"]
        assert len(failed) == 1 and "No space left on device" in str(failed[0].message)
        assert list(out.iterdir()) == []  # no file, no staging folder, no lock
        monkeypatch.undo()
        await pilot.press("e")  # the disk has room again: the whole export, under its own name
        await settle(pilot)
        assert export_notes(app) == [f"Exported {len(SWEEP_FILES) + 2} files to {out.resolve()}"]
        assert len(list(out.iterdir())) == len(SWEEP_FILES) + 2


@pilot_test
async def test_export_goes_to_backoff_sim_out_under_the_current_directory(tmp_path: Path,
                                                                         monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert build_app_parser().parse_args([]).out == Path("backoff-sim-out")
    assert build_replay_parser().parse_args(["x.csv"]).out == Path("backoff-sim-out")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert not (tmp_path / "backoff-sim-out").exists()  # created on demand
        await pilot.press("e")
        await settle(pilot)
    folder = tmp_path / "backoff-sim-out"
    assert (folder / "Tiny_Locking_screenshot.svg").is_file()
    assert export_notes(app) == [f"Exported {len(SWEEP_FILES) + 2} files to {folder.resolve()}"]
    assert (folder / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"  # the app's own folder


def test_readme_documents_the_apps_out_option() -> None:
    text = README.read_text(encoding="utf-8")
    options = next(line for line in text.splitlines() if line.startswith("Options of the app"))
    paragraph = text[text.index(options):].split("\n\n")[0]
    assert "--out DIR" in paragraph and "backoff-sim-out" in paragraph
