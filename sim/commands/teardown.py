"""A bounded way out: once a stop signal arrives, the process is gone within ``EXIT_SECONDS``.

The commands and the app stop gracefully on SIGINT, SIGTERM and SIGHUP (a closing terminal):
pools are killed by pid, staged files removed, the terminal restored. That path is written not to
block, but it runs through code that is not ours (Textual's output thread writing to a terminal
that is gone, Dask closing its cluster). So the first stop signal also arms a deadline
(``arm_exit_deadline``): if the process is still alive when it expires, a watchdog thread kills
every process this one started (by pid, found in ``/proc``, or the ones registered here
elsewhere), runs the registered clean-ups (staged output, the output directory's lock,
multiprocessing's temporary folder) and ends the process with the signal's exit status. Should
even that thread not get to run, an interval timer lets the kernel end the process (SIGALRM's
default action) shortly after. A hang on the way out is therefore impossible by construction.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Callable

from sim.runs.workers import descendants, kill

__all__ = ["arm_exit_deadline", "descendants", "discard", "emergency_exit", "is_armed", "kill",
           "kill_descendants", "on_emergency", "on_exit", "reap_children", "start_resource_tracker"]

EXIT_SECONDS = 1.5  # the watchdog's bound: the issue asks for an exit within 2 s of the signal
KERNEL_MARGIN = 0.4  # then the kernel's SIGALRM, if the watchdog could not run

_cleanups: dict[int, Callable[[], None]] = {}
_cleanup_ids = iter(range(1, 1 << 62))
_lock = threading.Lock()
_armed = False


def on_emergency(cleanup: Callable[[], None]) -> int:
    """Run ``cleanup`` if the deadline expires (remove staged files, release a lock); returns a
    handle for ``discard`` once the clean-up is no longer needed."""
    with _lock:
        handle = next(_cleanup_ids)
        _cleanups[handle] = cleanup
    return handle


_finals: list[Callable[[], None]] = []


def on_exit(final: Callable[[], None]) -> None:
    """Run ``final`` as the very last step of an emergency exit, after every clean-up (to undo
    what a clean-up had to leave in place while other threads still ran)."""
    with _lock:
        _finals.append(final)


def discard(handle: int) -> None:
    with _lock:
        _cleanups.pop(handle, None)


def _tracker_pid() -> int | None:
    from multiprocessing import resource_tracker

    return getattr(resource_tracker._resource_tracker, "_pid", None)  # type: ignore[attr-defined]


def kill_descendants() -> list[int]:
    """SIGKILL every process below this one (worker pools, the forkserver and its children,
    Dask's worker processes) but multiprocessing's resource tracker, which ends by itself once
    we are gone (killed, it would be started anew, and the new one would print a traceback
    for every semaphore it had not heard of); returns their pids. Never waits."""
    spare = _tracker_pid()
    pids = [pid for pid in descendants() if pid != spare]
    kill(pids)
    return pids


def reap_children(seconds: float) -> None:
    """Collect this process's dead children for at most ``seconds`` (so none lingers as a zombie
    while we still run); never blocks beyond that."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)


def _multiprocessing_temp_dir() -> str | None:
    from multiprocessing import process

    return process.current_process()._config.get("tempdir")  # type: ignore[attr-defined]


def emergency_exit(status: int) -> None:
    """Kill what we started, run the clean-ups, leave no temporary folder, and exit now."""
    try:
        kill_descendants()
        reap_children(0.1)
        with _lock:
            cleanups = list(_cleanups.values())
        for cleanup in cleanups:  # last, so that threads still running here add nothing after
            try:
                cleanup()
            except Exception:  # noqa: BLE001 - each clean-up is best effort; exit regardless
                pass
        tempdir = _multiprocessing_temp_dir()
        if tempdir:
            shutil.rmtree(tempdir, ignore_errors=True)
        for final in list(_finals):
            try:
                final()
            except Exception:  # noqa: BLE001 - best effort, as above
                pass
    finally:
        os._exit(status)


def arm_exit_deadline(status: int, seconds: float = EXIT_SECONDS) -> None:
    """Make sure the process ends within ``seconds`` (then ``KERNEL_MARGIN`` more at worst),
    with ``status``; the first call wins, later ones change nothing."""
    global _armed
    with _lock:
        if _armed:
            return
        _armed = True

    def expire() -> None:
        time.sleep(seconds)
        emergency_exit(status)

    threading.Thread(target=expire, name="exit-deadline", daemon=True).start()
    if hasattr(signal, "setitimer"):
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.setitimer(signal.ITIMER_REAL, seconds + KERNEL_MARGIN)


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now, deaf to the stop signals and mute.

    Worker processes that make semaphores (Dask's, the forkserver's) report them to it. It
    ignores SIGINT and SIGTERM but not SIGHUP: a closing terminal killed it, multiprocessing
    started another on the next report, and that one printed a traceback for every semaphore it
    had not heard of. Started with the stop signals blocked (a mask the tracker inherits and
    keeps), it survives them and ends when the last process using it does; its standard error
    is /dev/null (the real one may be a terminal that is gone, or Textual's capture)."""
    from multiprocessing import resource_tracker

    tracker = resource_tracker._resource_tracker  # type: ignore[attr-defined]
    if getattr(tracker, "_fd", None) is not None:
        return
    blocked = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, blocked) if hasattr(signal, "pthread_sigmask") else None
    try:
        os.dup2(devnull, 2)
        resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def is_armed() -> bool:
    return _armed
