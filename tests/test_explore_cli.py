"""``backoff-sim explore`` end to end: files, clean one-line errors, Ctrl-C, the same CSVs with
--dask local, no Textual, and the product working without the optional extras."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sim.commands import cli
from support import (CONSTANT, FULL_JITTER, PNG_MAGIC, one_error_line, section, sim_table,
                     toml_text, without_progress, write_config)

# A small lock map with a tune table, then a simulation without either.
CONFIG = (toml_text(sim_table(title="Lock map", clients=[5],
                              strategies=[CONSTANT, {**FULL_JITTER, "name": "jitter"}]), top={"seed": 3})
          + section("explore", {"axes": [
              {"key": "strategies[1].base", "from": 1, "to": 100, "steps": 3, "scale": "log"},
              {"key": "write_mu", "values": [1.0, 3.0]}]})
          + section("tune", {"strategy": "jitter", "params": {"base": {"low": 0.5, "high": 50.0, "log": True}},
                             "trials": 4})
          + toml_text(sim_table(title="Plain", clients=[2], repeat=1, network_mu=1.0, network_sigma=0.0,
                                write_mu=1.0, write_sigma=0.0, strategies=[{"type": "Constant", "constant": 1.0}])))

FILES = ("Lock_map_explore.csv", "Lock_map_explore.png", "Lock_map_tune.csv", "Lock_map_pareto.csv",
         "Lock_map_pareto.png")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "map.toml", CONFIG)


def test_explore_writes_the_map_and_tune_files_only_for_simulations_that_ask(config: Path, tmp_path: Path,
                                                                            capsys) -> None:
    out = tmp_path / "out"
    assert cli.main(["explore", str(config), "--out", str(out), "-j", "1"]) == 0
    names = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert names == sorted(FILES)
    for name in FILES:
        if name.endswith(".png"):
            assert (out / name).read_bytes().startswith(PNG_MAGIC)
    printed = capsys.readouterr().out
    assert "Lock map · jitter: cost" in printed  # one grid per strategy for two axes
    assert "0 cells from the cache" in printed
    assert cli.main(["explore", str(config), "--out", str(out), "-j", "1"]) == 0
    # 6 map cells + 4 trials + 1 held-out evaluation: all read back the second time
    assert "11 cells from the cache" in capsys.readouterr().out


@pytest.mark.slow  # starts a Dask LocalCluster (~4 s); tests/test_explore_dask.py covers Dask by default
def test_same_csvs_with_dask_local_as_with_the_local_pool(config: Path, tmp_path: Path) -> None:
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "a"), "-q", "--no-cache"]) == 0
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "b"), "-q", "--no-cache",
                     "--dask", "local", "--workers", "1"]) == 0
    for name in FILES:
        if name.endswith(".csv"):
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_config_without_explore_tables_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    plain = tmp_path / "plain.toml"
    plain.write_text(CONFIG.split("[simulation.explore]")[0], "utf-8")
    assert cli.main(["explore", str(plain), "--out", str(tmp_path)]) == 2
    assert "no simulation has a [simulation.explore]" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("scheduler", ["", "  "])
def test_an_empty_dask_scheduler_is_one_line_not_a_local_run(config: Path, tmp_path: Path, capsys,
                                                             scheduler: str) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["explore", str(config), "--out", str(tmp_path / "out"), "--dask", scheduler])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --dask: must name a scheduler, got an empty string" in err
    assert not (tmp_path / "out").exists()


def test_a_bad_axis_is_one_line_naming_file_simulation_and_key(config: Path, tmp_path: Path, capsys) -> None:
    config.write_text(CONFIG.replace('values = [1.0, 3.0]', 'values = [1.0, -3.0]'), "utf-8")
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert str(config) in line and "simulation 'Lock map'" in line and "key 'explore.axes'" in line
    assert "write_mu = -3" in line and "must be >= 0" in line
    assert not (tmp_path / "out").exists()


def test_ctrl_c_exits_130_with_one_line_and_no_files(config: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    import sim.exploration.backends as backends

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(backends, "run_sweeps", interrupted)
    out = tmp_path / "out"
    assert cli.main(["explore", str(config), "--out", str(out)]) == 130
    err = capsys.readouterr().err.strip()
    assert err.startswith("interrupted: finished cells are cached") and "\n" not in err
    assert [p.name for p in out.iterdir()] == [".backoff-sim-cache"]


def test_backoff_sim_explore_runs_without_textual_dask_or_optuna_imported(config: Path, tmp_path: Path) -> None:
    # The map half of the config (no tune): the product needs none of the optional extras for it.
    map_only = tmp_path / "maponly.toml"
    map_only.write_text(CONFIG.split("[simulation.tune]")[0], "utf-8")
    code = (
        "import sys\n"
        "from tui.main import main\n"
        f"rc = main(['explore', {str(map_only)!r}, '--out', {str(tmp_path / 'o')!r}, '-q', '-j', '1'])\n"
        "bad = [m for m in ('textual', 'distributed', 'dask', 'optuna') if m in sys.modules]\n"
        "print(rc, bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "0 []"


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def test_a_failed_write_of_the_tune_leaves_the_previous_set_and_no_new_map(config: Path, tmp_path: Path,
                                                                          monkeypatch, capsys) -> None:
    import sim.exploration.pareto as pareto
    from sim.vocabulary.errors import UserError

    out = tmp_path / "out"
    assert cli.main(["explore", str(config), "--out", str(out), "-q", "-j", "1", "--no-cache"]) == 0
    before = _files(out)
    assert sorted(before) == sorted(FILES)
    # A different map (new write_mu values), whose tune file then cannot be written: the new map's
    # CSV and PNG were already staged when the disk filled up.
    other = CONFIG.replace("values = [1.0, 3.0]", "values = [1.5, 2.5]")
    assert other != CONFIG
    config.write_text(other, "utf-8")

    def full_disk(path, text):
        raise UserError(f"cannot write {path}: No space left on device")

    monkeypatch.setattr(pareto, "atomic_write_text", full_disk)
    assert cli.main(["explore", str(config), "--out", str(out), "-q", "-j", "1", "--no-cache"]) == 2
    assert "No space left on device" in one_error_line(capsys.readouterr().err)
    assert _files(out) == before  # the old set, whole: not a new map beside an old tune
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)  # no staging folder, no lock left


def test_ctrl_c_during_the_tune_writes_none_of_the_maps_files(config: Path, tmp_path: Path, monkeypatch,
                                                            capsys) -> None:
    import sim.exploration.tune as tune

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tune, "run_tune", interrupted)  # after the map's files were staged
    out = tmp_path / "out"
    assert cli.main(["explore", str(config), "--out", str(out), "-j", "1"]) == 130
    # the map's cells, run before the tune, may outlast the progress interval on a slow machine
    assert without_progress(capsys.readouterr().err)[0].startswith("interrupted")
    assert [p.name for p in out.iterdir()] == [".backoff-sim-cache"]


def test_a_tune_with_no_feasible_trial_removes_the_previous_front(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli.main(["explore", str(config), "--out", str(out), "-q", "-j", "1"]) == 0
    assert (out / "Lock_map_pareto.csv").exists()
    infeasible = CONFIG.replace("trials = 4", 'trials = 4\nconstraints = ["work < 1"]')
    assert infeasible != CONFIG
    config.write_text(infeasible, "utf-8")
    assert cli.main(["explore", str(config), "--out", str(out), "-q", "-j", "1"]) == 0
    names = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert names == sorted(set(FILES) - {"Lock_map_pareto.csv", "Lock_map_pareto.png"})


def test_an_explore_refused_by_the_lock_creates_nothing(config: Path, tmp_path: Path, capsys) -> None:
    # Another command writes into --out: the explore is one line, and leaves no cache folder
    # (it created .backoff-sim-cache before asking for the lock).
    from sim.export.outset import LOCK_NAME, OutputSet

    out = tmp_path / "out"
    with OutputSet(out) as other:
        assert cli.main(["explore", str(config), "--out", str(out), "-q", "-j", "1"]) == 2
        assert "another backoff-sim is writing there" in one_error_line(capsys.readouterr().err)
        assert sorted(p.name for p in out.iterdir()) == sorted([LOCK_NAME, other.staging.name])
    assert list(out.iterdir()) == []


def test_progress_lines_come_at_most_every_interval_on_a_fake_clock() -> None:
    from sim.commands.progress import ProgressLines

    now = [100.0]
    written: list[str] = []
    lines = ProgressLines(written.append, interval=5.0, clock=lambda: now[0], phase="checking",
                          unit="cells")
    lines.update(10, 1000)
    now[0] += 4.9
    assert not lines.keep_going() and written == []  # a tick, never a stop
    now[0] += 0.1
    lines.update(20, 1000)
    # The time left from the share done: 5 s for 2%, so 5 * 98 / 2 = 245 s more (39.6).
    assert written == ["checking: 20 of 1,000 cells done, 0m05s, about 4m05s left"]
    now[0] += 1.0
    lines.tick()
    assert len(written) == 1
    report = lines.reporter("exploring 4 cells")
    report(0, 8)  # a phase starts: its time left is from its own pace, not the whole command's
    now[0] += 60.0
    report(3, 8)
    assert written[-1] == "exploring 4 cells: 3 of 8 runs done, 1m06s, about 1m40s left"  # 60 * 5 / 3
    # A finer measure of the share (a sweep's events) moves the estimate before a unit is done.
    share = [None]
    finer = ProgressLines(written.append, interval=0.0, clock=lambda: now[0], fraction=lambda: share[0])
    now[0] += 10.0
    finer.update(0, 30)
    assert written[-1] == "simulating: 0 of 30 runs done, 0m10s"  # nothing known: no estimate
    share[0] = 0.25
    now[0] += 10.0
    finer.tick()
    assert written[-1] == "simulating: 0 of 30 runs done, 0m20s, about 1m00s left"  # 20 * 3


def test_explore_and_tune_print_progress_lines_when_stderr_is_not_a_terminal(
        config: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    # README: "a progress line every 5 s" without a terminal; explore and tune printed nothing
    # for minutes. The interval set to 0 here: every step of the work makes a line.
    import sim.commands.progress

    monkeypatch.setattr(sim.commands.progress, "PROGRESS_SECONDS", 0.0)
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "out"), "-j", "1", "--no-cache"]) == 0
    err = capsys.readouterr().err.splitlines()
    phases = [line.split(":")[0] for line in err]
    assert phases[0] == "checking the maps" and "6 of 6 cells done" in err[phases.count("checking the maps") - 1]
    assert "exploring 6 cells" in phases and "tuning 'jitter' of Lock map" in phases
    assert phases.index("exploring 6 cells") < phases.index("tuning 'jitter' of Lock map")
    assert all(" runs done, " in line for line in err if not line.startswith("checking"))
    # -q prints no progress at all.
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "out"), "-j", "1", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_check_cells_reports_its_progress(config: Path) -> None:
    from sim.exploration.checks import check_cells
    from sim.exploration.plan import load_document

    seen: list[tuple[int, int]] = []
    check_cells(load_document(config).explores, workers=1,
                progress=lambda done, total: seen.append((done, total)))
    assert seen == [(n, 6) for n in range(1, 7)]


def test_an_adaptive_map_s_progress_never_goes_back() -> None:
    """39.6: each round of an adaptive map started its own count (153 of 159, then 2 of 3); the
    rounds now count on from each other: runs done and runs known never decrease."""
    import sim
    from sim.exploration.methods import _Rounds

    seen: list[tuple[int, int]] = []
    rounds = _Rounds(lambda done, total: seen.append((done, total)))
    for total in (159, 3, 5):  # three rounds, each counting its own runs from 0
        rounds.next_round()
        for done in range(total + 1):
            rounds(done, total)
    assert seen[-1] == (167, 167)
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(seen, seen[1:]))
    # And a real map, adaptive (it has an outage: a recover/collapse verdict).
    seen.clear()
    sim.explore(Path(__file__).parent / "fixtures" / "tiny_map.toml", workers=1, method="adaptive",
                progress=lambda done, total: seen.append((done, total)))
    assert seen and all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(seen, seen[1:]))
    assert seen[-1][0] == seen[-1][1]
