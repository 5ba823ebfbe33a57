"""``backoff-sim run`` end to end: files, exact CSV headers, readable PNGs, clean errors,
byte-identical output for a seed whatever the number of workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.commands import cli
from sim.export.csv_files import EVENTS_HEADER, METRICS_HEADER, RUNS_HEADER, read_events_csv
from support import (CONSTANT, FULL_JITTER, PNG_MAGIC, file_bytes, one_error_line, sim_process,
                     sim_table, toml_text, write_config)

CONFIG = toml_text(
    sim_table(title="Small lock", clients=[1, 3, 6], repeat=3, strategies=[CONSTANT, FULL_JITTER]),
    sim_table("ThrottlingServer", [{"type": "Expo", "base": 2.0, "cap": 100.0}], title="Throttle",
              clients=[2, 5], network_mu=5.0, network_sigma=1.0, work_to_duration=0.5, limit=2),
    top={"seed": 3})

STEMS = ("Small_lock", "Throttle")
KINDS = ("_metrics.png", "_scatter.png", "_metrics.csv", "_runs.csv", "_events.csv", "_provenance.json")
CSV_KINDS = ("_metrics.csv", "_runs.csv", "_events.csv")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "small.toml", CONFIG)


def _csvs(out: Path) -> dict[str, bytes]:
    return file_bytes(out, [stem + kind for stem in STEMS for kind in CSV_KINDS])


def test_run_writes_the_six_files_per_simulation(config: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out" / "nested"
    assert cli.main(["run", str(config), "--out", str(out), "--workers", "1"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(s + k for s in STEMS for k in KINDS)

    headers = {"_metrics.csv": METRICS_HEADER, "_runs.csv": RUNS_HEADER, "_events.csv": EVENTS_HEADER}
    for stem in STEMS:
        for kind, header in headers.items():
            first = (out / f"{stem}{kind}").read_text("utf-8").splitlines()[0]
            assert first == ",".join(header)

    from matplotlib.image import imread
    for stem in STEMS:
        for kind in ("_metrics.png", "_scatter.png"):
            path = out / f"{stem}{kind}"
            assert path.read_bytes()[:8] == PNG_MAGIC
            image = imread(path)
            assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100

    printed = capsys.readouterr().out
    assert "Small lock · LockingServer · 3 repeats" in printed
    assert "★ best" in printed
    # The representative histories: smallest client count above 2.
    assert "Small lock · Constant · 3 clients, repetition 1 of " in printed  # counted from 1, as the app counts
    assert "Throttle · Expo · 5 clients, repetition 1 of " in printed
    assert "wrote 6 files for 'Small lock'" in printed


def test_csv_contents_are_consistent(config: Path, tmp_path: Path) -> None:
    assert cli.main(["run", str(config), "--out", str(tmp_path), "--quiet", "--workers", "1"]) == 0
    metrics = (tmp_path / "Small_lock_metrics.csv").read_text().splitlines()
    # 2 strategies x 3 client counts, after the header.
    assert len(metrics) == 1 + 6
    first = metrics[1].split(",")
    assert first[:5] == ["Small lock", "LockingServer", "Constant", "1", "3"]
    runs = (tmp_path / "Small_lock_runs.csv").read_text().splitlines()
    assert len(runs) == 1 + 2 * 3 * 3
    for row in runs[1:]:
        _, _, clients, _, work, duration, cost, gave_up, denied, refused, amplification, open_time = row.split(",")
        assert float(cost) == pytest.approx(1.0 * int(work) + float(duration))
        assert gave_up == "0"
        # No policies: nothing denied, no breaker; each client's one call took work/clients attempts.
        assert denied == refused == "0" and float(open_time) == 0.0
        assert float(amplification) == pytest.approx(int(work) / int(clients))
    histories = read_events_csv(tmp_path / "Small_lock_events.csv")
    assert [(k.strategy, k.clients, k.repetition) for k in histories] == [
        ("Constant", 3, 0), ("FullJitteredExpo", 3, 0)]


def test_same_seed_gives_byte_identical_csvs_across_runs_and_workers(config: Path, tmp_path: Path) -> None:
    one, again, two = tmp_path / "one", tmp_path / "again", tmp_path / "two"
    assert cli.main(["run", str(config), "--out", str(one), "--quiet", "--workers", "1"]) == 0
    assert cli.main(["run", str(config), "--out", str(again), "--quiet", "--workers", "1"]) == 0
    # Once through `python -m sim`, in a fresh process, on two workers.
    done = sim_process("run", str(config), "--out", str(two), "--quiet", "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(two / (s + k)) for s in STEMS for k in KINDS]
    assert _csvs(one) == _csvs(again) == _csvs(two)


def test_seed_option_overrides_the_config(config: Path, tmp_path: Path) -> None:
    base, other = tmp_path / "base", tmp_path / "other"
    assert cli.main(["run", str(config), "--out", str(base), "--quiet", "--workers", "1"]) == 0
    assert cli.main(["run", str(config), "--out", str(other), "--quiet", "--workers", "1",
                     "--seed", "4"]) == 0
    assert (base / "Small_lock_runs.csv").read_bytes() != (other / "Small_lock_runs.csv").read_bytes()


def test_unwritable_output_directory_is_one_line_exit_2(config: Path, tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    assert cli.main(["run", str(config), "--out", str(blocker / "sub"), "--quiet"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "output directory" in line and str(blocker / "sub") in line


def test_output_path_that_is_a_file_is_one_line_exit_2(config: Path, tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    assert cli.main(["run", str(config), "--out", str(blocker), "--quiet"]) == 2
    assert "not a directory" in one_error_line(capsys.readouterr().err)


def test_bad_config_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(CONFIG.replace('"LockingServer"', '"LockingServr"'), "utf-8")
    assert cli.main(["run", str(bad), "--out", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "LockingServr" in line and "LockingServer" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_bad_config_in_a_subprocess_has_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(CONFIG.replace('title = "Throttle"', "title = 3"), "utf-8")
    done = sim_process("run", str(bad), cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert "title" in one_error_line(done.stderr)


def test_missing_config_and_unknown_theme(config: Path, tmp_path: Path, capsys) -> None:
    assert cli.main(["run", str(tmp_path / "nope.toml")]) == 2
    assert "no such file" in one_error_line(capsys.readouterr().err)
    assert cli.main(["run", str(config), "--theme", "neon"]) == 2
    assert "unknown theme 'neon'" in one_error_line(capsys.readouterr().err)


def test_titles_that_would_share_files_are_refused(tmp_path: Path, capsys) -> None:
    clash = tmp_path / "clash.toml"
    clash.write_text(CONFIG.replace('title = "Throttle"', 'title = "Small_lock"'), "utf-8")
    assert cli.main(["run", str(clash), "--out", str(tmp_path / "out")]) == 2
    assert "same files" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("argv", [["run", "--workers", "0"], ["run", "--seed", "-1"],
                                  ["run", "--bogus"], ["fly"]])
def test_argument_errors_exit_2(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    # One line, not usage plus the error; it says where the help is.
    line = one_error_line(capsys.readouterr().err)
    assert "usage" not in line and "--help" in line


def test_no_command_prints_help(capsys) -> None:
    assert cli.main([]) == 0
    assert "run" in capsys.readouterr().out


def test_ctrl_c_stops_cleanly_with_no_files(config: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    import sim.runs.sweep

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sim.runs.sweep, "run_sweeps", interrupted)
    out = tmp_path / "out"
    assert cli.main(["run", str(config), "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "interrupted"
    assert list(out.iterdir()) == []


def test_ctrl_c_while_writing_leaves_no_partial_file(config: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    import sim.export.atomic as atomic

    real_replace = atomic.os.replace
    calls = []

    def replace_then_interrupt(src, dst):
        calls.append(dst)
        if len(calls) == 3:  # the third file: interrupted between writing and renaming
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace_then_interrupt)
    out = tmp_path / "out"
    (out / "Small_lock_metrics.csv").parent.mkdir()
    (out / "Small_lock_metrics.csv").write_text("the previous run's")
    assert cli.main(["run", str(config), "--out", str(out), "--quiet", "--workers", "1"]) == 130
    # All or nothing: two files were complete, but a set is only moved into place whole; the
    # previous file is untouched and no temporary file or folder is left.
    assert [p.name for p in out.iterdir()] == ["Small_lock_metrics.csv"]
    assert (out / "Small_lock_metrics.csv").read_text() == "the previous run's"


def test_run_parser_is_reusable_by_another_entry_point(config: Path, tmp_path: Path) -> None:
    import argparse

    top = argparse.ArgumentParser(prog="backoff-sim")
    sub = top.add_subparsers(dest="command")
    cli.add_run_subparser(sub)
    args = top.parse_args(["run", str(config), "--out", str(tmp_path), "-q", "-j", "1"])
    assert cli.run_command(args) == 0
    assert (tmp_path / "Throttle_events.csv").is_file()


def test_a_config_given_without_a_command_says_run_it_or_open_the_app(config: Path, tmp_path: Path,
                                                                      capsys) -> None:
    # The walk-through of issue 39: `python -m sim my.toml` (the app's way in) said only
    # "invalid choice ... (choose from 'run', 'explore', 'phase')". Nothing is written.
    import pytest

    with pytest.raises(SystemExit) as stop:
        cli.main([str(config)])
    assert stop.value.code == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"run {config}` runs it" in line and f"`backoff-sim {config}` opens it in the app" in line
    assert not list(tmp_path.glob("*.csv"))
