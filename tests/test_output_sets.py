"""A run's files appear all together or not at all, and two runs never write one --out at once."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import make_spec, sim_table, toml_text

import sim.runs.engine as engine
import sim.export.outset as outset
from sim.commands import cli, compat
from sim.runs.sweep import run_sweep
from sim.vocabulary.errors import UserError
from sim.export import export_simulation
from sim.export.outset import LOCK_NAME, OutputSet

FIRST = sim_table(title="first", clients=[2, 3], repeat=2)
SECOND = sim_table(title="second", clients=[2, 4], repeat=2, control="ThrottlingServer")
STALL = sim_table(title="second", clients=[5], repeat=1, control="QueueServer", concurrency=1,
                  service_time=5.0, horizon=100.0, network_mu=0.0, network_sigma=0.0,
                  strategies=[{"type": "NoBackoff"}])


def _config(tmp_path: Path, *tables: dict) -> Path:
    path = tmp_path / "sims.toml"
    path.write_text(toml_text(*tables))
    return path


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def _previous_set(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    config = _config(tmp_path, FIRST, SECOND)
    out = tmp_path / "out"
    assert cli.main(["run", str(config), "--out", str(out), "--quiet", "--workers", "1"]) == 0
    before = _snapshot(out)
    assert len(before) == 12 and all(not name.startswith(".") for name in before)
    return config, out, before


def test_a_full_disk_during_a_rerun_leaves_the_previous_set(tmp_path: Path, capsys,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    config, out, before = _previous_set(tmp_path)
    import sim.export.atomic as atomic

    real_fdopen = atomic.os.fdopen
    opened = []

    def fdopen_then_fill(fd, *args, **kwargs):
        opened.append(fd)
        if len(opened) == 3:  # the third file of the new set: the disk is full
            os.close(fd)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(atomic.os, "fdopen", fdopen_then_fill)
    status = cli.main(["run", str(config), "--out", str(out), "--quiet", "--workers", "1", "--seed", "9"])
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err
    assert _snapshot(out) == before  # not 3 of 5 new files: all the old ones, unchanged


def test_an_interrupted_rerun_with_another_seed_leaves_the_previous_set(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    config, out, before = _previous_set(tmp_path)
    real = engine.run_metrics

    def interrupt_in_the_second(spec, *args, **kwargs):
        if spec.title == "second":  # the first simulation is written by now
            raise KeyboardInterrupt
        return real(spec, *args, **kwargs)

    monkeypatch.setattr("sim.runs.sweep.run_metrics", interrupt_in_the_second)
    assert cli.main(["run", str(config), "--out", str(out), "--quiet", "--workers", "1",
                     "--seed", "9"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"
    assert _snapshot(out) == before


def test_a_bad_second_simulation_writes_nothing(tmp_path: Path, capsys,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "STALL_EVENTS", 2000)
    out = tmp_path / "out"
    config = _config(tmp_path, FIRST, STALL)
    assert cli.main(["run", str(config), "--out", str(out), "--quiet", "--workers", "1"]) == 2
    assert "time stopped advancing" in capsys.readouterr().err
    assert list(out.iterdir()) == []  # not the first simulation's files


def test_a_second_run_into_the_same_out_is_refused(tmp_path: Path, capsys) -> None:
    config = _config(tmp_path, FIRST)
    out = tmp_path / "out"
    with OutputSet(out):  # another run, writing there now
        assert cli.main(["run", str(config), "--out", str(out), "--quiet", "--workers", "1"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"another backoff-sim is writing there (pid {os.getpid()})" in err
        assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".backoff-sim-staging"))\
            == [LOCK_NAME]
    assert list(out.iterdir()) == []  # the lock is gone with its holder
    assert cli.main(["run", str(config), "--out", str(out), "--quiet", "--workers", "1"]) == 0


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
def test_two_processes_at_once_never_mix_their_sets(tmp_path: Path) -> None:
    config = _config(tmp_path, FIRST, SECOND)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "sim", "run", str(config), "--out", str(out), "--quiet", "--workers", "1"]
    runs = [subprocess.Popen(argv + ["--seed", str(seed)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in runs]
    for p in runs:
        p.stdout.close()
        p.stderr.close()
    assert sorted(code for code, _ in results) in ([0, 0], [0, 2])
    for code, err in results:
        assert code == 0 or "another backoff-sim is writing there" in err
    # Whichever won, the files are one seed's set: they match a clean run with that seed.
    seeds = [seed for seed, (code, _) in zip((1, 2), results) if code == 0]
    candidates = []
    for seed in seeds:
        reference = tmp_path / f"ref{seed}"
        assert cli.main(["run", str(config), "--out", str(reference), "--quiet", "--workers", "1",
                         "--seed", str(seed)]) == 0
        candidates.append(_snapshot(reference))
    csvs = {k: v for k, v in _snapshot(out).items() if k.endswith(".csv")}
    assert any(csvs == {k: v for k, v in c.items() if k.endswith(".csv")} for c in candidates)


def test_staging_folders_of_killed_runs_are_cleaned_up(tmp_path: Path) -> None:
    out = tmp_path / "out"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = out / f"{outset.STAGING_PREFIX}{dead}-abc"
    # Named after a live process: a killed command's pid given to another one since (in a
    # container, every command may be pid 1). Under the lock, no other command is staging here.
    reused = out / f"{outset.STAGING_PREFIX}{os.getpid()}-abc"
    for folder in (stale, reused):
        folder.mkdir(parents=True)
        (folder / "x_events.csv").write_text("partial")
    with OutputSet(out) as output:
        assert sorted(p.name for p in out.iterdir()) == sorted([LOCK_NAME, output.staging.name])
    assert list(out.iterdir()) == []


def test_a_killed_run_s_staging_folder_goes_with_the_next_run(tmp_path: Path) -> None:
    # SIGKILL while the sweep runs: the staging folder and the lock file stay; the next run into
    # the same directory removes the folder, even with the killed run's pid reused.
    config = _config(tmp_path, FIRST)
    out = tmp_path / "out"
    code = ("import os, sys\n"
            "from sim.export.outset import OutputSet\n"
            "output = OutputSet(sys.argv[1]).__enter__()\n"
            "(output.staging / 'first_events.csv').write_text('half')\n"
            "os.kill(os.getpid(), 9)")
    assert subprocess.run([sys.executable, "-c", code, str(out)]).returncode == -9
    [left] = [p for p in out.iterdir() if p.name.startswith(outset.STAGING_PREFIX)]
    left.rename(out / f"{outset.STAGING_PREFIX}{os.getpid()}-{left.name.rsplit('-', 1)[1]}")
    assert cli.main(["run", str(config), "--out", str(out), "--quiet", "--workers", "1"]) == 0
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_a_failed_move_puts_the_previous_files_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_spec(title="t", clients=[2, 3], repeat=1)
    result = run_sweep(spec, workers=1)
    out = tmp_path / "out"
    export_simulation(result, out)
    before = _snapshot(out)
    real = os.replace
    moved = []

    def fail_on_the_third_move(src, dst):
        if Path(dst).parent == out:
            moved.append(dst)
            if len(moved) == 3:
                raise OSError(errno.EIO, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(outset.os, "replace", fail_on_the_third_move)
    changed = run_sweep(make_spec(title="t", clients=[2, 3], repeat=1, seed=5), workers=1)
    with pytest.raises(UserError, match="previous files are unchanged"):
        export_simulation(changed, out)
    monkeypatch.setattr(outset.os, "replace", real)
    assert _snapshot(out) == before


def test_files_of_an_earlier_overload_set_are_removed_with_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    open_spec = make_spec("QueueServer", title="t", clients=[2], repeat=1, concurrency=1,
                          service_time=1.0, horizon=50.0)
    export_simulation(run_sweep(open_spec, workers=1), out)
    assert len(list(out.iterdir())) == 10
    export_simulation(run_sweep(make_spec(title="t", clients=[2], repeat=1), workers=1), out)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"t{k}" for k in ("_metrics.png", "_scatter.png", "_metrics.csv", "_runs.csv", "_events.csv",
                          "_provenance.json"))


# --- file names ----------------------------------------------------------------------------------

def test_titles_too_long_for_the_file_system_are_refused_before_any_run(tmp_path: Path, capsys,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # 230 characters: 230 + "_metrics.png" fits in 255, the temporary name does not; the issue
    # saw titles of 224-243 characters fail after the whole sweep.
    monkeypatch.setattr("sim.runs.sweep.run_sweeps", lambda *a, **k: pytest.fail("a sweep started"))
    title = "T" * 230
    config = _config(tmp_path, {**FIRST, "title": title})
    assert cli.main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"simulation '{title}': key 'title'" in err and "shorten the title to at most" in err


def test_the_compat_command_checks_its_names_too(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sim.runs.sweep.run_sweeps", lambda *a, **k: pytest.fail("a sweep started"))
    _config(tmp_path, {**FIRST, "title": "é" * 120})  # 240 bytes in UTF-8, kept raw by compat
    assert compat.main(["--config-file", "sims.toml"]) == 2
    assert "key 'title'" in capsys.readouterr().err


def test_the_compat_command_makes_newlines_in_titles_safe(tmp_path: Path, capsys,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _config(tmp_path, {**FIRST, "title": "two\nlines"})
    assert compat.main(["--config-file", "sims.toml"]) == 0
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["two_lines_metrics.png",
                                                              "two_lines_scatter.png"]


@pytest.mark.parametrize("out, words", [
    ("a" * 300, "of 300 bytes, more than the 255 a name can have"),
    ("/".join(["b" * 200] * 25), "the paths of the files in it would pass the system's limit"),
])
@pytest.mark.parametrize("argv", [["run", "CONFIG", "--out"], ["explore", "CONFIG", "--out"],
                                  ["explore", "CONFIG", "--cache"], ["CONFIG", "--out"]])
def test_an_out_too_long_for_the_system_is_one_line_before_any_work(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, out: str, words: str,
        argv: list[str]) -> None:
    # A traceback (ENAMETOOLONG from sim/export/names.py) before; the app's --out too.
    from tui.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sim.runs.sweep.run_sweeps", lambda *a, **k: pytest.fail("a sweep started"))
    config = str(_config(tmp_path, FIRST))
    with pytest.raises(SystemExit) as info:
        main([config if a == "CONFIG" else a for a in argv] + [out])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: backoff-sim") and words in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sims.toml"]



def test_one_place_locks_stages_and_commits_an_output_set() -> None:
    """``run``, the drop-in, ``explore``, ``phase``, the API and the app's export all go through
    ``sim.export.outset.output_set`` (33.4): no other module makes an ``OutputSet`` or commits one."""
    import ast

    root = Path(__file__).resolve().parent.parent
    found = []
    for path in sorted([*root.glob("sim/**/*.py"), *root.glob("tui/**/*.py")]):
        if path.relative_to(root).as_posix() == "sim/export/outset.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name == "OutputSet" or (name == "commit" and isinstance(node.func, ast.Attribute)):
                    found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    assert found == []


STOP_INSIDE_ENTER = """
import os, signal, sys, tempfile
from pathlib import Path
from sim.commands.stdout import command_status
from sim.export.outset import OutputSet

out = Path(sys.argv[1])
made = tempfile.mkdtemp

def mkdtemp(*args, **kwargs):  # the stop arrives the moment the staging folder exists
    path = made(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)
    return path

tempfile.mkdtemp = mkdtemp

def body() -> int:
    with OutputSet(out):
        print("the block ran", flush=True)
    return 0

sys.exit(command_status(body))
"""


def test_a_stop_as_the_staging_folder_appears_leaves_nothing_behind(tmp_path: Path) -> None:
    """The lock, the staging folder and their clean-up's registration are one step a stop cannot
    split: a SIGTERM the moment the folder exists ends the command (143) with neither left."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", STOP_INSIDE_ENTER, str(out)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 143, done.stderr
    assert "the block ran" not in done.stdout
    assert list(out.iterdir()) == []
