"""The stop signals' windows at a command's edges (issue 40, items 8 and 13).

- Before the command starts (the imports, the parsing): SIGTERM or SIGHUP is the same one line
  and status as later, never death by the default action (the handlers are installed first).
- After the command has committed its files, and after it has returned: a stop changes nothing,
  the process ends with the command's status (the handlers are kept until exit).
- Signals ignored when the process started (``nohup``: SIGHUP; ``&`` in a non-interactive
  shell: SIGINT) stay ignored, in the command and in its workers.

Each window is reached deterministically: the child says where it is (a line on stdout, a
staged file) and waits on its stdin, and the test signals it there. ``-m slow`` also sends
signals at random moments over many runs and checks that every outcome is one of the two
allowed ones.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import hang_guard, sim_table, toml_text, without_progress

ROOT = Path(__file__).resolve().parent.parent
STOPS = {"SIGTERM": signal.SIGTERM, "SIGHUP": signal.SIGHUP, "SIGINT": signal.SIGINT}


def _handlers_installed(pid: int) -> bool:
    """Whether the process catches SIGTERM and SIGHUP (``/proc``'s mask of caught signals): our
    handlers exist. Before that the interpreter itself is starting (tens of milliseconds, a few
    hundred under load), where no code of ours has run yet."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # gone already: nothing to wait for
    caught = int(status.split("SigCgt:")[1].split()[0], 16)
    return all(caught >> (sig - 1) & 1 for sig in (signal.SIGTERM, signal.SIGHUP))


def _line(signum: int) -> str:
    return "interrupted" if signum == signal.SIGINT else f"interrupted ({signal.Signals(signum).name})"


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))


def _entry(tmp_path: Path, module: str, *, ignore: tuple[int, ...] = ()) -> subprocess.Popen:
    """``run_entry(module)`` in a child, as the console scripts run a command."""
    def preexec() -> None:
        for sig in STOPS.values():
            signal.signal(sig, signal.SIG_IGN if sig in ignore else signal.SIG_DFL)

    code = f"import sys; from sim.commands.entry import run_entry; sys.exit(run_entry({module!r}))"
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=_env(tmp_path),
                            preexec_fn=preexec)


IMPORTING = """
import sys
print("importing", flush=True)
sys.stdin.readline()  # the test signals here: the command's module is still being imported

def main():
    return 0
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stop_while_the_command_is_imported_is_one_line(tmp_path: Path, name: str) -> None:
    (tmp_path / "importing_command.py").write_text(IMPORTING)
    proc = _entry(tmp_path, "importing_command")
    with hang_guard(proc):
        assert proc.stdout.readline().strip() == "importing"
        proc.send_signal(STOPS[name])
        _, err = proc.communicate()
    assert proc.returncode == 128 + STOPS[name]
    assert err.strip().splitlines() == [_line(STOPS[name])]


COMMITTING = """
import sys
from pathlib import Path

from sim.commands.stdout import command_status
from sim.export.outset import OutputSet


def body():
    with OutputSet(Path(sys.argv[1] if len(sys.argv) > 1 else "out")) as output:
        (output.staging / "result.csv").write_text("a,b\\n")
        output.commit(["result.csv"], last=True)
        print("committed", flush=True)
        sys.stdin.readline()  # the test signals here: the files are in place
    return 0


def main():
    status = command_status(body)
    print("returned", flush=True)
    sys.stdin.readline()  # and here: the command has returned, the process not yet exited
    return status
"""


@pytest.mark.parametrize("name", ["SIGHUP", "SIGTERM", "SIGINT"])
def test_a_stop_after_the_commit_changes_nothing(tmp_path: Path, name: str) -> None:
    (tmp_path / "committing_command.py").write_text(COMMITTING)
    proc = _entry(tmp_path, "committing_command")
    with hang_guard(proc):
        assert proc.stdout.readline().strip() == "committed"
        proc.send_signal(STOPS[name])
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "returned"
        proc.send_signal(STOPS[name])
        out, err = proc.communicate("\n")
    assert proc.returncode == 0, err
    assert err == ""
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["result.csv"]


# A first simulation that finishes at once and a second that keeps both workers busy for minutes
# (the staging folder is made before either starts).
QUICK = sim_table(title="quick", clients=[2, 3], repeat=2)
LONG = sim_table(title="long", clients=[40, 50], repeat=100_000,
                 strategies=[{"type": "Constant", "constant": 0.5},
                             {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}])


def _start_run(tmp_path: Path, ignore: tuple[int, ...]) -> tuple[subprocess.Popen, Path]:
    config = tmp_path / "long.toml"
    config.write_text(toml_text(QUICK, LONG))
    out = tmp_path / "out"

    def preexec() -> None:
        for sig in STOPS.values():
            signal.signal(sig, signal.SIG_IGN if sig in ignore else signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-m", "sim", "run", str(config), "--out", str(out),
                             "--workers", "2", "--force"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=_env(tmp_path),
                            preexec_fn=preexec, start_new_session=True)
    return proc, out


# nohup's SIGHUP stays in the default run; a background job's SIGINT is the same rule (-m slow).
@pytest.mark.parametrize("name", ["SIGHUP", pytest.param("SIGINT", marks=pytest.mark.slow)])
def test_a_signal_ignored_at_start_stays_ignored(tmp_path: Path, name: str) -> None:
    """``nohup backoff-sim run`` (SIGHUP) and ``backoff-sim run &`` in a script (SIGINT): the
    signal, sent to the whole group, reaches neither the command nor its workers; a SIGTERM
    afterwards still stops it as usual."""
    proc, out = _start_run(tmp_path, (STOPS[name],))
    with hang_guard(proc):
        while proc.poll() is None and not list(out.glob(".backoff-sim-staging-*")):
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        # Ignored when sent: the kernel discards it for every process that ignores it, at once.
        os.killpg(proc.pid, STOPS[name])
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert without_progress(err) == [_line(signal.SIGTERM)]  # the files may come after a progress line
    assert list(out.iterdir()) == []


TINY = sim_table(title="tiny", clients=[2, 5, 10], repeat=40)
TRIALS = 40


@pytest.mark.slow
def test_a_stop_at_a_random_moment_is_the_line_or_a_clean_exit(tmp_path: Path) -> None:
    """Signals at random moments of a short run, from the instant its handlers exist (the first
    thing its code does) to past its end: each run ends with status 0 (its files all there) or
    with the signal's line and 128 + signal (no file left), never by the signal's default
    action."""
    config = tmp_path / "tiny.toml"
    config.write_text(toml_text(TINY))
    rng = random.Random(40)
    outcomes = {"stopped": 0, "finished": 0}

    def start(out: Path) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "sim", "run", str(config), "--out", str(out),
                                 "--workers", "2", "--quiet"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=_env(tmp_path))

    # How long a run takes here, so that the moments span it all and a little past its end
    # (the moments' range only: no assertion depends on the machine's speed).
    began = time.monotonic()
    first = start(tmp_path / "unsignalled")
    with hang_guard(first):
        assert first.wait() == 0
    span = 1.2 * (time.monotonic() - began)
    for trial in range(TRIALS):
        out = tmp_path / f"out{trial}"
        name = rng.choice(sorted(STOPS))
        proc = start(out)
        with hang_guard(proc):
            while proc.poll() is None and not _handlers_installed(proc.pid):
                time.sleep(0.001)
            time.sleep(rng.uniform(0.0, span))  # the moment is the point: anywhere in the run
            proc.send_signal(STOPS[name])
            _, err = proc.communicate()
        assert proc.returncode >= 0, f"trial {trial}: killed by {name}'s default action"
        if proc.returncode == 0:
            outcomes["finished"] += 1
            assert err == "", f"trial {trial}: {err}"
            assert any(out.glob("tiny_*.csv")) and not any(out.glob(".backoff-sim*")), trial
        else:
            outcomes["stopped"] += 1
            assert proc.returncode == 128 + STOPS[name], f"trial {trial} ({name}): {err}"
            assert err.strip().splitlines() == [_line(STOPS[name])], f"trial {trial}"
            assert not out.exists() or list(out.iterdir()) == [], f"trial {trial}"
    print(f"signals at random moments: {outcomes}")
    assert outcomes["stopped"], outcomes  # the moments reached the work, not only its end
