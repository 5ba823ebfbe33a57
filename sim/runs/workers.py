"""Worker processes that never outlive the process that started them.

A sweep's pool (and the app's run recorder) kill their workers by pid when they stop normally or
on a stop signal. If the parent dies without that chance (SIGKILL, a crash), each worker must
still go: on Linux the kernel sends it SIGKILL when its parent dies (``prctl`` with
``PR_SET_PDEATHSIG``); everywhere, a watchdog thread exits the worker within a second of its
parent changing (re-parented to init) or of the owning process disappearing (workers of a
forkserver are its children, not the owner's).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path

PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.5


def _set_parent_death_signal() -> None:
    """Ask Linux to SIGKILL this process when its parent thread exits (no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # here, not at import: the console scripts import this before their handlers
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - no libc or no prctl
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - exists, owned by someone else
        return True
    return True


def _watch(parent: int, owner: int) -> None:
    while True:
        time.sleep(WATCH_SECONDS)
        if os.getppid() != parent or not _alive(owner):
            os._exit(1)


def init_worker(owner: int) -> None:
    """A worker's first step (``procpool``): ``owner`` is the pid of the process that created
    the pool.

    Ctrl-C is the owner's to handle (it stops the pool); SIGTERM and SIGHUP keep their default
    action, so a closed terminal or a signal to the process group ends the worker at once;
    unless the owner ignores them (ignored when it started: ``nohup``), where the worker too
    outlives a hang-up. A worker forked while its owner held the stop signals
    (``procpool``) keeps them held: its owner's stop reaches it as SIGKILL, and a signal to the
    group cannot end it before its owner has seen that signal itself.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stops = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]
    for sig in stops[1:]:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)
    parent = os.getppid()
    _set_parent_death_signal()
    # The parent may have died before the death signal was armed.
    if os.getppid() != parent or not _alive(owner):
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, owner), name="parent-watch", daemon=True).start()


def kill(pids: Iterable[int]) -> None:
    """SIGKILL each of ``pids``; one already gone (or not ours) is passed over. Never waits."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def descendants(pid: int | None = None) -> list[int]:
    """Every process below ``pid`` (this one by default), children before grandchildren, read
    from ``/proc`` (Linux); empty where ``/proc`` does not list children."""
    found: list[int] = []
    frontier = [os.getpid() if pid is None else pid]
    while frontier:
        parent = frontier.pop(0)
        for child in _children(parent):
            if child not in found:
                found.append(child)
                frontier.append(child)
    return found


def _children(pid: int) -> list[int]:
    children: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return children
    for task in tasks:
        try:
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
        except OSError:
            continue
        children += [int(p) for p in text.split()]
    return children
