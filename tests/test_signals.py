"""Stop signals and orphans: SIGTERM and SIGHUP stop a run like Ctrl-C (workers terminated,
nothing left in --out, one line, 128 + signal), and workers die on their own when their parent
is killed outright. Everything runs in subprocesses with bounded waits; each test takes about a
second and a few tens of MB."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import hang_guard, sim_table, toml_text, wait_for_exit, without_progress

from sim.commands.interrupt import Interrupted, exit_status, first_interrupt_only

# A first simulation that finishes at once (so its files are staged) and a second one that keeps
# both workers busy for minutes: 200,000 runs of 50 clients.
QUICK = sim_table(title="quick", clients=[2, 3], repeat=2)
LONG = sim_table(title="long", clients=[40, 50], repeat=100_000,
                 strategies=[{"type": "Constant", "constant": 0.5},
                             {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}])
WAIT = 20.0  # seconds: a hang guard for communicate/wait on a loaded machine; they take about a second


def _state(pid: int) -> str | None:
    """The process's state letter, None once it is gone (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    state = stat[stat.rindex(")") + 2]
    return None if state in "ZX" else state


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(p) for p in text.split()]


def _wait_while_running(proc: subprocess.Popen, condition: Callable[[], object], what: str) -> object:
    """Poll ``condition`` for as long as ``proc`` runs (``hang_guard`` ends a stuck one)."""
    while proc.poll() is None:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"the run ended (exit {proc.returncode}) before {what}")


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        if _state(pid) is not None:
            os.kill(pid, signal.SIGKILL)


def _start(tmp_path: Path) -> tuple[subprocess.Popen, Path, list[int]]:
    config = tmp_path / "long.toml"
    config.write_text(toml_text(QUICK, LONG))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "sim", "run", str(config), "--out", str(out),
                             "--workers", "2", "--force"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    # Two workers at work, and the output set's staging folder made inside --out (the first
    # simulation's files wait in memory for the pool's end: two workers leave no core free).
    with hang_guard(proc):
        workers = _wait_while_running(proc, lambda: len(_children(proc.pid)) >= 2 and _children(proc.pid),
                                      "the workers")
        _wait_while_running(proc, lambda: list(out.glob(".backoff-sim-staging-*")), "the staging folder")
    return proc, out, list(workers)


# SIGHUP's case (a terminal that goes away) in the default run; a second and third stop signal of
# the same clean stop under -m slow (test_teardown has SIGTERM's too).
@pytest.mark.parametrize("signum", [pytest.param(signal.SIGTERM, marks=pytest.mark.slow), signal.SIGHUP,
                                    pytest.param(signal.SIGINT, marks=pytest.mark.slow)],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stop_signal_ends_the_run_cleanly(tmp_path: Path, signum: int) -> None:
    proc, out, workers = _start(tmp_path)
    try:
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=WAIT)
        assert proc.returncode == 128 + signum  # 143, 129, 130
        assert "Traceback" not in err
        assert without_progress(err) == [  # the staged files may come after a progress line
            "interrupted" if signum == signal.SIGINT else f"interrupted ({signal.Signals(signum).name})"]
        # The workers are gone at once (not left running with parent 1), and --out holds nothing:
        # no staged files, no temporary file, no lock.
        assert wait_for_exit(workers) == []  # the workers end
        assert list(out.iterdir()) == []
    finally:
        proc.kill()
        proc.communicate()
        _kill_all(workers)


def test_workers_die_when_their_parent_is_killed(tmp_path: Path) -> None:
    proc, _, workers = _start(tmp_path)
    try:
        proc.kill()  # SIGKILL: no handler runs, the pool cannot terminate its workers
        proc.communicate(timeout=WAIT)
        assert wait_for_exit(workers) == []  # orphaned workers exit
    finally:
        _kill_all(workers)


ORPHAN_SCRIPT = """
import os, sys, time
import multiprocessing
import sim.runs.workers as workers

workers._set_parent_death_signal = lambda: None  # as on a platform without prctl
pool = multiprocessing.get_context("fork").Pool(2, initializer=workers.init_worker,
                                                 initargs=(os.getpid(),))
pool.map_async(time.sleep, [600, 600])
print(" ".join(str(p.pid) for p in pool._pool), flush=True)
time.sleep(600)
"""


def test_the_watchdog_alone_ends_orphaned_workers(tmp_path: Path) -> None:
    """Where there is no parent-death signal, each worker's watchdog notices its parent changed."""
    proc = subprocess.Popen([sys.executable, "-c", ORPHAN_SCRIPT], stdout=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        workers = [int(p) for p in proc.stdout.readline().split()]
        assert len(workers) == 2 and all(_state(w) for w in workers)
        proc.kill()
        proc.wait(timeout=WAIT)
        assert wait_for_exit(workers) == []  # orphaned workers exit
    finally:
        proc.kill()
        proc.wait()
        _kill_all(workers)


def test_a_later_signal_during_clean_up_is_ignored() -> None:
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        with pytest.raises(Interrupted) as info:
            with first_interrupt_only():
                try:
                    signal.raise_signal(signal.SIGTERM)
                finally:
                    signal.raise_signal(signal.SIGHUP)  # during clean-up: ignored
        assert exit_status(info.value) == 143
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
