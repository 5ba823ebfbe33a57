"""The app and the commands go away with their terminal, at any moment, leaving nothing behind.

A closing terminal (the pseudo-terminal's master side closed, as sshd does when a connection
drops), SIGTERM, SIGHUP and SIGINT, to the process alone or to its whole group (as ``timeout``,
systemd and a closing terminal send them), while idle, during a sweep with idle workers (uneven
tasks), while a Dask LocalCluster starts and while it works. Each case checks: the exit status,
one line on stderr for the commands, every process it started gone (waited for on pidfds), and
nothing left in its private TMPDIR (no ``pymp-*``, no scratch folder) or its output directory.
The default run covers each kind of moment once; ``-m slow`` repeats the whole matrix ten times
so that a race would show. Timing is never asserted: a hang guard fails a stuck case.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from support import CONSTANT, FULL_JITTER, hang_guard, section, sim_table, toml_text, wait_for_exit
from teardown_support import Watched, alive, start_app, start_command

from sim.runs.procpool import WorkerDied, WorkerPool
from sim.runs.sweep import default_workers
from sim.commands.teardown import descendants

REPEATS_SLOW = 10
CORES = default_workers()

# Uneven tasks: the small client counts finish at once and leave their workers idle, waiting
# on their pipes, while the 400-client task runs for minutes.
UNEVEN = sim_table(title="Uneven", clients=[1, 2, 3, 4, 5, 400], repeat=400,
                   strategies=[CONSTANT, FULL_JITTER])
MAP = sim_table(title="Map", clients=[300], repeat=100, strategies=[CONSTANT, FULL_JITTER])
MAP_AXES = {"axes": [{"key": "write_mu", "values": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}]}

STOPS = {"SIGTERM": signal.SIGTERM, "SIGHUP": signal.SIGHUP, "SIGINT": signal.SIGINT}


def _config(tmp_path: Path, explore: bool = False) -> Path:
    path = tmp_path / "config.toml"
    text = toml_text(MAP) + section("explore", MAP_AXES) if explore else toml_text(UNEVEN)
    path.write_text(text)
    return path


# The private TMPDIRs, made short and removed after each test: multiprocessing's forkserver (the
# app's pools) listens on TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX, a Unix socket whose path has at
# most 107 bytes. Under tmp_path (longer under xdist: .../popen-gw0/<test name>/tmp) it does not
# fit: the app then starts its workers by spawn, without the forkserver these cases count on.
_SHORT_BASE = "/tmp" if os.path.isdir("/tmp") else None
_made: list[Path] = []


@pytest.fixture(autouse=True)
def _remove_private_tmpdirs():
    yield
    while _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    tmpdir = Path(tempfile.mkdtemp(prefix="td-", dir=_SHORT_BASE))
    _made.append(tmpdir)
    out = tmp_path / "out"
    return tmpdir, out


def _assert_all_gone(run: Watched) -> None:
    assert run.survivors() == [], "processes it started are still running"
    assert run.leftovers() == [], "files left in its TMPDIR"


def _sweep_workers_up(run: Watched) -> bool:
    """The app's sweep has its worker processes (beyond the forkserver, the resource tracker and
    the run recorder's child), or runs in the app's own process on a one-core machine."""
    return b"sweeping" in run.output and (CORES == 1 or len(run.note_children()) >= 5)


def _first_frame(run: Watched) -> bool:
    return b"Uneven" in run.output


# --- the app ------------------------------------------------------------------------------------

APP_CASES = [  # (moment, how the app is told), the first of each kind in the default run
    ("idle", "hang-up"), ("sweep", "hang-up"), ("idle", "SIGTERM"), ("sweep", "SIGTERM"),
    ("sweep", "SIGHUP-group"),
]
SLOW = pytest.mark.slow
# The hang-ups in the default run; the app's SIGTERM and the SIGHUP to the group, a second signal
# of the same clean exit, under -m slow (every case runs ten times over with -m slow, below).
APP_CASES_BY_DEFAULT = [case if case[1] == "hang-up" else pytest.param(*case, marks=SLOW) for case in APP_CASES]


def _app_case(tmp_path: Path, moment: str, how: str) -> None:
    tmpdir, out = _dirs(tmp_path)
    run = start_app([str(_config(tmp_path)), "--out", str(out), "--force"], tmp_path, tmpdir)
    try:
        run.wait_for(_first_frame if moment == "idle" else _sweep_workers_up, f"the app's {moment}")
        if how == "hang-up":
            run.hang_up()
            expected = 128 + signal.SIGHUP
        elif how == "SIGHUP-group":
            run.signal(signal.SIGHUP, group=True)
            expected = 128 + signal.SIGHUP
        else:
            run.signal(signal.SIGTERM, group=False)
            expected = 128 + signal.SIGTERM
        assert run.exit_status() == expected
        _assert_all_gone(run)
        assert not out.exists() or list(out.iterdir()) == []
    finally:
        run.kill()


@pytest.mark.parametrize("moment,how", APP_CASES_BY_DEFAULT)
def test_the_app_goes_away_with_its_terminal(tmp_path: Path, moment: str, how: str) -> None:
    _app_case(tmp_path, moment, how)


@pytest.mark.slow
@pytest.mark.parametrize("moment,how", APP_CASES)
def test_the_app_goes_away_with_its_terminal_every_time(tmp_path: Path, moment: str, how: str) -> None:
    for i in range(REPEATS_SLOW):
        (tmp_path / str(i)).mkdir()
        _app_case(tmp_path / str(i), moment, how)


def test_the_app_leaves_a_terminal_that_hung_up_without_a_signal(tmp_path: Path) -> None:
    """A terminal that is not the app's controlling terminal sends no SIGHUP when it closes: the
    app's watcher sees it hung up and leaves as on SIGHUP."""
    import pty

    tmpdir, out = _dirs(tmp_path)
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tui.main", str(_config(tmp_path)), "--out", str(out),
                             "--force"], stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path,
                            env=dict(os.environ, TMPDIR=str(tmpdir), TERM="xterm-256color"),
                            start_new_session=True)
    os.close(slave)
    run = Watched(proc.pid, tmpdir, master=master, proc=proc)
    try:
        with hang_guard(proc):
            run.wait_for(_sweep_workers_up, "the sweep")
            run.hang_up()
            assert run.exit_status() == 128 + signal.SIGHUP
        _assert_all_gone(run)
    finally:
        run.kill()


# --- the commands -------------------------------------------------------------------------------

def _workers_up(n: int):
    return lambda run: len(run.note_children()) >= n


def _staged(out: Path):
    return lambda run: any(out.glob(".backoff-sim-staging-*"))


def _command_case(tmp_path: Path, command: str, moment: str, stop: str, group: bool) -> None:
    tmpdir, out = _dirs(tmp_path)
    dask = command == "explore --dask local"
    args = (["explore", str(_config(tmp_path, explore=True)), "--no-cache"] if command.startswith("explore")
            else ["run", str(_config(tmp_path))])
    args += ["--out", str(out), "--workers", "4", "--force"] + (["--dask", "local"] if dask else [])
    run = start_command(args, tmp_path, tmpdir)
    try:
        with hang_guard(run.proc):
            if moment == "cluster start":
                # The resource tracker comes first, then the cluster's processes: the signal
                # lands while the LocalCluster is starting.
                run.wait_for(_workers_up(1), "the cluster's start")
            elif moment == "workers":
                run.wait_for(_workers_up(min(2, CORES) + (1 if dask else 0)), "the workers")
            else:
                run.wait_for(_staged(out), "the staged files")
            run.signal(STOPS[stop], group=group)
            status = run.exit_status()
        lines = run.stderr_lines()
        assert status == 128 + STOPS[stop], lines
        assert len(lines) == 1 and lines[0].startswith("interrupted"), lines
        _assert_all_gone(run)
        assert not out.exists() or list(out.iterdir()) == []  # no staging folder, no lock
    finally:
        run.kill()


# (command, moment, signal, to the group): the default run's share; a second signal of a moment
# whose first stays in the default run is under -m slow.
COMMAND_CASES = [
    ("run", "workers", "SIGTERM", True, SLOW),
    ("run", "workers", "SIGHUP", False, ()),
    ("run", "staged", "SIGHUP", True, ()),
    ("run", "staged", "SIGINT", True, SLOW),
    ("explore", "workers", "SIGTERM", True, ()),
    ("explore --dask local", "cluster start", "SIGINT", False, ()),
    ("explore --dask local", "cluster start", "SIGTERM", True, SLOW),
    ("explore --dask local", "workers", "SIGHUP", False, ()),
    ("explore --dask local", "workers", "SIGINT", True, SLOW),
]
ALL_COMMAND_CASES = [(c, m, s, g) for c, moments in (("run", ("workers", "staged")),
                                                     ("explore", ("workers",)),
                                                     ("explore --dask local", ("cluster start", "workers")))
                     for m in moments for s in STOPS for g in (False, True)]


def _case_id(case: tuple) -> str:
    command, moment, stop, group = case
    return f"{command}-{moment}-{stop}-{'group' if group else 'process'}".replace(" ", "_")


@pytest.mark.parametrize("command,moment,stop,group", [
    pytest.param(*case, id=_case_id(case), marks=marks) for *case, marks in COMMAND_CASES])
def test_a_command_stops_cleanly_at_any_moment(tmp_path: Path, command: str, moment: str, stop: str,
                                               group: bool) -> None:
    _command_case(tmp_path, command, moment, stop, group)


@pytest.mark.slow
@pytest.mark.parametrize("command,moment,stop,group", ALL_COMMAND_CASES, ids=map(_case_id, ALL_COMMAND_CASES))
def test_a_command_stops_cleanly_at_any_moment_every_time(tmp_path: Path, command: str, moment: str,
                                                          stop: str, group: bool) -> None:
    for i in range(REPEATS_SLOW):
        (tmp_path / str(i)).mkdir()
        _command_case(tmp_path / str(i), command, moment, stop, group)


# --- the worker pool ----------------------------------------------------------------------------

def _square(x: int) -> int:
    return x * x


def _fail(x: int) -> int:
    raise ValueError(f"bad {x}")


def _sleep(seconds: float) -> None:
    threading.Event().wait(seconds)


def test_the_pool_runs_every_task_and_raises_a_task_error() -> None:
    with WorkerPool(2) as pool:
        assert sorted(pool.imap_unordered(_square, range(10))) == [x * x for x in range(10)]
        assert pool.idle
        with pytest.raises(ValueError, match="bad 3"):
            list(pool.imap_unordered(_fail, [3]))


def test_a_killed_worker_is_reported_and_the_pool_still_stops() -> None:
    """The old deadlock: a worker killed while the others wait (idle or busy). Stopping must not
    depend on any worker, and every worker must be gone after it."""
    pool = WorkerPool(3)
    pids = pool.pids
    try:
        tasks = pool.imap_unordered(_sleep, [600, 600])
        os.kill(pids[0], signal.SIGKILL)
        os.kill(pids[2], signal.SIGKILL)  # one busy, one idle (or both busy: either way)
        with pytest.raises(WorkerDied, match="killed by SIGKILL"):
            next(tasks)
        assert not pool.idle
        done = threading.Event()
        stopper = threading.Thread(target=lambda: (pool.close(), done.set()), daemon=True)
        stopper.start()
        stopper.join(60)  # a hang guard: stop() bounds itself far below this
        assert done.is_set()
        assert wait_for_exit(pids) == []
        assert not any(alive(p) for p in pids)
    finally:
        pool.close()


def test_a_stop_from_another_thread_ends_a_waiting_caller() -> None:
    pool = WorkerPool(1)
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            list(pool.imap_unordered(_sleep, [600]))
        except BaseException as exc:  # noqa: BLE001 - what the waiting caller saw
            outcome.append(exc)

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    while not descendants() and waiter.is_alive():
        waiter.join(0.01)
    pool.stop()
    waiter.join(60)
    assert not waiter.is_alive()
    assert isinstance(outcome[0], WorkerDied)
    assert wait_for_exit(pool.pids) == []
    pool.close()


EXIT_DEADLINE_SCRIPT = """
import os, subprocess, sys, threading
from pathlib import Path
from sim.commands.teardown import arm_exit_deadline, on_emergency

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
marker = Path(sys.argv[1])
marker.write_text("staged")
on_emergency(marker.unlink)
print(child.pid, flush=True)
sys.stdin.readline()
arm_exit_deadline(143, seconds=0.2)
threading.Event().wait()  # a teardown that never ends
"""


def test_the_exit_deadline_ends_a_stuck_teardown(tmp_path: Path) -> None:
    """Whatever the graceful path blocks on, the deadline kills what the process started, runs
    the clean-ups and exits with the signal's status."""
    marker = tmp_path / "staged.txt"
    proc = subprocess.Popen([sys.executable, "-c", EXIT_DEADLINE_SCRIPT, str(marker)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    with hang_guard(proc):
        child = int(proc.stdout.readline())
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.wait() == 143
    assert wait_for_exit([child]) == []
    assert not marker.exists()


STAGED_SET_SCRIPT = """
import sys, threading
from sim.export.outset import OutputSet
from sim.commands.teardown import arm_exit_deadline

output = OutputSet(sys.argv[1]).__enter__()  # an export under way in a thread of the app
(output.staging / "T_events.csv").write_text("time,client")
print(output.staging, flush=True)
sys.stdin.readline()
arm_exit_deadline(129, seconds=0.2)  # the terminal went away, and the export never returns
threading.Event().wait()
"""


def test_the_exit_deadline_leaves_no_staged_files_and_no_lock(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", STAGED_SET_SCRIPT, str(out)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    with hang_guard(proc):
        staging = Path(proc.stdout.readline().strip())
        assert staging.is_dir() and (out / ".backoff-sim.lock").exists()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.wait() == 129
    assert list(out.iterdir()) == []  # an output set is complete or absent, and unlocked
