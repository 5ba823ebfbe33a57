"""The app goes away with its terminal: SIGTERM, SIGHUP, or a terminal that stopped answering.

SIGTERM and SIGHUP close the app as ``q`` does (workers stopped, terminal restored when there is
still one), with exit status 143 or 129; by default they would kill it with its workers running
and the terminal left in raw mode. The first one also arms ``sim.commands.teardown``'s deadline, so the
process is gone within its bound whatever Textual's shutdown meets (an output thread blocked on
a terminal that is gone). Later stop signals are ignored: the app is already leaving.

A dropped SSH connection normally reaches the app as SIGHUP, but not always (the app may not be
in the terminal's foreground process group, or the hang-up may reach only the session leader).
So a watcher thread also checks the terminal itself every ``WATCH_SECONDS``: once it is hung up,
its attributes can no longer be read (EIO), and the watcher signals SIGHUP to the app itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Protocol

WATCH_SECONDS = 0.25
STOP_NAMES = ("SIGTERM", "SIGHUP")


class Exits(Protocol):
    def exit(self, result: object = None, return_code: int = 0) -> None: ...


def exit_on_stop_signals(app: Exits) -> None:
    """Install the handlers (main thread, before ``app.run()``)."""
    from sim.commands.interrupt import IGNORED_AT_START
    from sim.commands.teardown import arm_exit_deadline

    stops = [getattr(signal, name) for name in STOP_NAMES
             if hasattr(signal, name) and getattr(signal, name) not in IGNORED_AT_START]

    def stop(signum: int, frame: object) -> None:
        for sig in stops:
            signal.signal(sig, signal.SIG_IGN)
        arm_exit_deadline(128 + signum)
        app.exit(return_code=128 + signum)

    for sig in stops:  # one ignored at start (nohup) stays so
        signal.signal(sig, stop)


def terminal_gone(fd: int) -> bool:
    """True once the terminal on ``fd`` has hung up (or is no terminal any more)."""
    import termios

    try:
        termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError):
        return True
    return False


def watch_terminal(fd: int | None = None) -> threading.Event:
    """Start the watcher on ``fd`` (standard input by default); set the returned event to stop it."""
    if fd is None:
        fd = sys.__stdin__.fileno() if sys.__stdin__ is not None else 0
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(WATCH_SECONDS):
            if terminal_gone(fd):
                os.kill(os.getpid(), signal.SIGHUP)
                return

    if hasattr(signal, "SIGHUP"):
        threading.Thread(target=watch, name="terminal-watch", daemon=True).start()
    return stop
