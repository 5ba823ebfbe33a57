"""Small builders shared by the tests: a validated spec from a few keyword arguments."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import select
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sim.settings.config import parse_config
from sim.core import events as ev
from sim.runs.engine import Run
from sim.models.strategies import Strategy
from sim.settings.spec import SimulationSpec

# The first bytes of every PNG file (the PNG specification's signature).
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# The two strategies the command-line tests compare: a constant retry and the AWS post's full
# jitter (sim_table's default strategy).
CONSTANT = {"type": "Constant", "constant": 0.5}
FULL_JITTER = {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}

# A recorded event as the invariant tests read it: (time, client, event name, integer detail).
Event = tuple[float, int, str, int]


def take(strategy: Strategy, u: float | Callable[[], float], n: int) -> list[float]:
    """A strategy's first ``n`` delays, fed a fixed U (a float) or a stream of them."""
    uniform = itertools.repeat(u).__next__ if isinstance(u, float) else u
    return list(itertools.islice(strategy.delays(uniform), n))


def numpy_uniform(seed: int = 1) -> Callable[[], float]:
    """U[0, 1) in blocks from a numpy Generator, as the simulator's client streams draw them."""
    rng = np.random.default_rng(seed)

    def stream() -> Iterator[float]:
        while True:
            yield from rng.random(1024).tolist()
    return stream().__next__


def decode(run: Run) -> list[Event]:
    """A recorded run's events with their names."""
    out = []
    for i in range(len(run.history)):
        t, c, code, detail = run.history.event(i)
        out.append((t, c, ev.EVENT_NAMES[code], detail))
    return out


CONTROL_PARAMS: dict[str, dict[str, Any]] = {
    "LockingServer": {"write_mu": 2.0, "write_sigma": 1.0},
    "WriteOnlyOCCServer": {"write_mu": 2.0, "write_sigma": 1.0},
    "ReadWriteOCCServer": {"write_mu": 1.0, "write_sigma": 0.5},
    "ThrottlingServer": {"window": 20.0, "limit": 3},
}


def sim_table(control: str = "LockingServer", strategies: list[dict[str, Any]] | None = None,
              **overrides: Any) -> dict[str, Any]:
    """One ``[[simulation]]`` table as a dict, with small, fast defaults."""
    table: dict[str, Any] = {
        "title": "t", "clients": [1, 5], "repeat": 2, "network_mu": 10.0, "network_sigma": 2.0,
        "work_to_duration": 1.0, "control": control, **CONTROL_PARAMS.get(control, {}),
        "strategies": strategies or [dict(FULL_JITTER)],
    }
    table.update(overrides)
    return table


def make_spec(control: str = "LockingServer", strategies: list[dict[str, Any]] | None = None,
              **overrides: Any) -> SimulationSpec:
    """A validated ``SimulationSpec`` built through the real config parser."""
    return parse_config({"simulation": [sim_table(control, strategies, **overrides)]}).simulations[0]


def toml_value(value: Any) -> str:
    """A Python value written as TOML (enough for configs: numbers, strings, lists, inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # TOML has no surrogate-pair escapes
    if isinstance(value, (list, tuple)):  # a model's tuple default (``rate_profile``) is a TOML list
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def toml_text(*tables: dict[str, Any], top: dict[str, Any] | None = None) -> str:
    """A config file's text: top-level keys, then one [[simulation]] block per table."""
    lines = [f"{k} = {toml_value(v)}" for k, v in (top or {}).items()]
    for table in tables:
        lines += ["", "[[simulation]]"] + [f"{k} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def section(name: str, table: dict[str, Any]) -> str:
    """A ``[simulation.NAME]`` table (explore, tune) for the ``[[simulation]]`` written just before."""
    return f"\n[simulation.{name}]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in table.items())


def write_config(path: Path, text: str) -> Path:
    """Write a config file as UTF-8 and return its path."""
    path.write_text(text, "utf-8")
    return path


def one_error_line(stderr: str) -> str:
    """The one ``error: …`` line a refused command prints (no traceback, nothing else)."""
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def sim_process(*args: str, module: str = "sim", cwd: Path | None = None,
                timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m sim ARGS`` in a fresh process, its output captured as text (``env``: its whole
    environment; a plugin may have put variables in the process's own that os.environ lacks)."""
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


def file_bytes(folder: Path, names: Any) -> dict[str, bytes]:
    """Each named file's bytes, to compare two output folders."""
    return {name: (folder / name).read_bytes() for name in names}


# A hang guard, not a measurement: far above what any of these waits takes (about a second; a
# minute seen on a machine at load 18 with the tests on both cores), so only a defect (a child
# that never does what the test waits for) ever reaches it.
HANG_GUARD = 180.0


@contextlib.contextmanager
def hang_guard(proc: subprocess.Popen) -> Iterator[None]:
    """Kill ``proc`` if it is still running after HANG_GUARD seconds, so a test waiting on it
    (its output, its files, its exit) fails on what it finds instead of hanging the suite. The
    waits themselves follow the child's events, not a clock."""
    timer = threading.Timer(HANG_GUARD, proc.kill)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def wait_for_exit(pids: list[int]) -> list[int]:
    """Block until each of ``pids`` (any process, not only a child) has exited, woken by the exit
    itself through a pidfd; return those still running after HANG_GUARD seconds (a defect)."""
    running = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            ready, _, _ = select.select([fd], [], [], HANG_GUARD)
            if not ready:
                running.append(pid)
        finally:
            os.close(fd)
    return running


# A progress line (sim.commands.progress.ProgressLines.line): a command whose run outlives the
# progress interval (a slow machine) prints some on stderr; nothing else may be there. The unit
# may be two words (phase's "pilot runs"); test_progress_display checks the pattern against the
# lines themselves.
PROGRESS_LINE = re.compile(r"^.+: [\d,]+ of [\d,]+ \w+( \w+)* done(, [\d,]+ events simulated)?, \d+m\d\ds"
                           r"(, about \d+m\d\ds left)?$")


def without_progress(stderr: str) -> list[str]:
    """``stderr``'s lines but the progress lines (their number depends on the machine's speed)."""
    return [line for line in stderr.splitlines() if not PROGRESS_LINE.match(line)]
