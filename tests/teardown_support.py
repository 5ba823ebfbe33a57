"""What the teardown tests share: a process and everything it started, watched from outside.

A ``Watched`` process runs in a session of its own (so a signal can go to its whole group, as
``timeout``, systemd and a closing terminal send it) with a private TMPDIR (so a leftover
``pymp-*`` or scratch folder is seen). Waits follow the process's own events: its output, its
exit (a pidfd), the processes it starts (read from /proc while it runs); ``hang_guard`` kills a
stuck one so that a defect fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from support import HANG_GUARD, wait_for_exit, without_progress

from sim.commands.teardown import descendants

BACKOFF_SIM = [sys.executable, "-m", "tui.main"]


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def env_with_tmpdir(tmpdir: Path) -> dict[str, str]:
    return dict(os.environ, TMPDIR=str(tmpdir), TERM="xterm-256color", COLUMNS="100", LINES="30")


@dataclass
class Watched:
    """A started command: its pid, its terminal (master side) or pipes, what it printed."""

    pid: int
    tmpdir: Path
    master: int | None = None  # the pseudo-terminal's master side, for the app
    proc: subprocess.Popen | None = None  # for the headless commands
    output: bytes = b""
    started: list[int] = field(default_factory=list)  # every process it started, as seen
    _status: int | None = None

    @property
    def running(self) -> bool:
        if self._status is not None:
            return False
        if self.proc is not None:
            self._status = self.proc.poll()
            return self._status is None
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self._status = os.waitstatus_to_exitcode(status)
        return self._status is None

    def drain(self, seconds: float) -> None:
        """Read what the app draws for up to ``seconds`` (a terminal nobody reads blocks it)."""
        if self.master is None:
            return
        ready, _, _ = select.select([self.master], [], [], seconds)
        if ready:
            try:
                self.output += os.read(self.master, 65536)
            except OSError:
                pass

    def wait_for(self, condition: Callable[[Watched], object], what: str) -> None:
        """Until ``condition`` holds, reading the terminal, noting the processes it starts."""
        deadline = time.monotonic() + HANG_GUARD
        while not condition(self):
            if not self.running:
                raise AssertionError(f"it ended (status {self._status}) before {what}")
            if time.monotonic() > deadline:
                raise AssertionError(f"still no {what} after {HANG_GUARD} s")
            self.note_children()
            self.drain(0.05)
        self.note_children()

    def note_children(self) -> list[int]:
        now = descendants(self.pid)
        self.started += [p for p in now if p not in self.started]
        return now

    def signal(self, signum: int, group: bool) -> None:
        self.note_children()
        if group:
            os.killpg(self.pid, signum)
        else:
            os.kill(self.pid, signum)

    def hang_up(self) -> None:
        """What an SSH drop does: the terminal's master side closes."""
        self.note_children()
        assert self.master is not None
        os.close(self.master)
        self.master = None

    def exit_status(self) -> int:
        """Wait for the exit (bounded by the hang guard) and return its status."""
        deadline = time.monotonic() + HANG_GUARD
        while self.running:
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError("it did not exit")
            self.drain(0.05) if self.master is not None else wait_for_exit([self.pid])
        assert self._status is not None
        return self._status

    def stderr_lines(self) -> list[str]:
        """What a headless command printed on stderr, once it has exited, but its progress lines
        (a run that outlives the progress interval, on a slow machine, prints some)."""
        assert self.proc is not None and not self.running
        _, err = self.proc.communicate()
        return without_progress(err.decode("utf-8", "replace").strip())

    def leftovers(self) -> list[str]:
        """Files left in its private TMPDIR."""
        return sorted(p.name for p in self.tmpdir.iterdir())

    def survivors(self) -> list[int]:
        """Processes it started that still run (each waited for on its pidfd first)."""
        wait_for_exit(self.started)
        return [p for p in self.started if alive(p)]

    def kill(self) -> None:
        for pid in [self.pid, *self.started]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.master is not None:
            os.close(self.master)
            self.master = None
        if self.proc is not None:
            self.proc.communicate()
        elif self._status is None:
            os.waitpid(self.pid, 0)
            self._status = -9


def start_app(args: list[str], cwd: Path, tmpdir: Path) -> Watched:
    """The app on a pseudo-terminal it controls (``pty.fork``: a session leader whose
    controlling terminal hangs up when the master side closes, as under sshd)."""
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.chdir(cwd)
            os.execve(sys.executable, [*BACKOFF_SIM, *args], env_with_tmpdir(tmpdir))
        finally:
            os._exit(127)
    return Watched(pid, tmpdir, master=master)


def start_command(args: list[str], cwd: Path, tmpdir: Path) -> Watched:
    """A headless command in a session and process group of its own, output on pipes."""
    proc = subprocess.Popen([*BACKOFF_SIM, *args], cwd=cwd, env=env_with_tmpdir(tmpdir),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    return Watched(proc.pid, tmpdir, proc=proc)
