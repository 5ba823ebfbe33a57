"""Worker processes: ``concurrent.futures.ProcessPoolExecutor``, with the promises kept around it.

The promises (tests/test_teardown.py, test_signals.py): stopping never waits for a worker's
cooperation nor for longer than ``REAP_SECONDS`` (SIGKILL by pid, then the executor is let go);
a worker that dies is reported (``WorkerDied``) and the others are stopped; workers die with
their parent however it ends (``sim.runs.workers``); a stop signal cannot land in a fork's hooks
(the processes start under the caller's ``hold_stops``, ``sim.runs.caller``). Workers report
progress (``report_progress``) on a pipe of the pool's own, which the waiting caller drains.

Once a waiting caller stops reading (a task's error, a cancel, a stop), tasks may still be
running: the pool is not ``idle`` and must be stopped. A pool that ran its tasks to their end
can take more: ``leased_pool`` hands out one kept from an earlier sweep inside a
``reusing_workers`` scope (the app's, an explore's rounds), so a worker loads the compiled
kernels once, not once per sweep. ``worker_count`` is the one rule for how many processes any
command or stage starts: never more than cores, nor than tasks.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from multiprocessing import connection
from multiprocessing.connection import Connection
from typing import Any

from sim.kernels import ahead
from sim.runs.caller import caller
from sim.runs.workers import init_worker, kill

REAP_SECONDS = 1.0  # how long stop() waits, in all, for killed workers to be gone
POLL_SECONDS = 0.1  # how often a waiting caller's tick runs (progress, cancellation)
DEATH_SECONDS = 0.5  # how long a dead worker may take to be reaped before it is reported

_progress: Connection | None = None  # in a worker process: the pool's progress pipe


class WorkerDied(RuntimeError):
    """A worker process ended without answering (killed, or the pool was stopped)."""


def default_workers() -> int:
    """The cores this process may run on."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def worker_count(requested: int | None = None, tasks: int | None = None) -> int:
    """How many worker processes to start, for every command and stage: what was asked for
    (all cores by default), never more than the cores (the work is CPU-bound) nor than the
    tasks when they are known (``phase --workers 64`` on 2 cores starts 2), and at least 1."""
    n = default_workers() if requested is None else max(1, min(int(requested), default_workers()))
    return max(1, min(n, tasks)) if tasks is not None else n


def report_progress(n: int) -> None:
    """In a worker, send ``n`` (events simulated) to the parent; a no-op elsewhere."""
    if _progress is not None:
        try:
            _progress.send(n)  # a few bytes: one write, whole, whichever worker sends
        except (OSError, ValueError):
            pass


def _start_worker(owner: int, progress: Connection, initializer: Callable[..., None] | None,
                  initargs: tuple, built_kernels: bool = False) -> None:
    global _progress
    init_worker(owner)
    _progress = progress
    if built_kernels:  # the owner's kernels built ahead of time (a fork has them already)
        ahead.enable()
    if initializer is not None:
        initializer(*initargs)


def _forkserver_fits() -> bool:
    """Whether the forkserver's socket, ``<TMPDIR>/pymp-XXXXXXXX/listener-XXXXXXXX``, fits in a
    Unix socket's path (107 bytes on Linux, 103 elsewhere): under a longer TMPDIR it cannot start
    (``AF_UNIX path too long``), and every pool would fail."""
    tempdir = multiprocessing.current_process()._config.get("tempdir")  # made on first use
    folder = tempdir or os.path.join(tempfile.gettempdir(), "pymp-xxxxxxxx")
    limit = 108 if sys.platform.startswith("linux") else 104
    return len(os.fsencode(os.path.join(folder, "listener-xxxxxxxx"))) < limit


def default_context() -> multiprocessing.context.BaseContext:
    """fork when single-threaded (fastest, and no re-import of a caller's unguarded main module);
    forkserver when the caller has threads (the app), where fork could deadlock, and its socket
    fits under TMPDIR; else spawn."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods and _forkserver_fits():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["sim.runs.engine"])
        return ctx
    return multiprocessing.get_context("spawn")


class WorkerPool:
    """Up to ``processes`` workers (an executor's); ``imap_unordered`` runs tasks on them.

    One ``imap_unordered`` at a time. ``stop()`` may be called from any thread, at any moment,
    as often as wanted; it never blocks for longer than ``REAP_SECONDS``.
    """

    def __init__(self, processes: int, *, context: multiprocessing.context.BaseContext | None = None,
                 initializer: Callable[..., None] | None = None, initargs: tuple = ()) -> None:
        self.processes = max(1, processes)
        self._ctx = context or default_context()
        self._reader, writer = self._ctx.Pipe(duplex=False)
        self._writer: Connection | None = writer
        self._executor = ProcessPoolExecutor(self.processes, mp_context=self._ctx,
                                             initializer=_start_worker,
                                             initargs=(os.getpid(), writer, initializer, initargs,
                                                       ahead.enabled()))
        self._futures: set[Future] = set()
        self._stopped = False
        self._lock = threading.Lock()
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    @property
    def start_method(self) -> str:
        return self._ctx.get_start_method()

    def _processes(self) -> list[multiprocessing.process.BaseProcess]:
        # The executor's processes: it has no public way to name them, and stopping is by pid.
        return list((getattr(self._executor, "_processes", None) or {}).values())

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._processes() if p.pid is not None]

    @property
    def idle(self) -> bool:
        """True when no task is outstanding and every worker is alive (the pool can take
        another ``imap_unordered``)."""
        return (not self._stopped and all(f.done() for f in self._futures)
                and not getattr(self._executor, "_broken", False)
                and all(p.exitcode is None for p in self._processes()))

    def _start(self) -> None:
        """Start every worker now, all at once (the executor would start them as tasks arrive,
        and a fork then could come after its thread started), under the caller's
        ``hold_stops``: a stop signal must not land in a fork's hooks, which drop it."""
        launch = getattr(self._executor, "_launch_processes", None)  # no public way to
        with caller().hold_stops():
            if launch is not None:
                launch()

    def imap_unordered(self, func: Callable[[Any], Any], items: Iterable[Any], *,
                       tick: Callable[[], None] | None = None,
                       on_progress: Callable[[int], None] | None = None) -> Iterator[Any]:
        """``func(item)`` for every item, on the workers; outcomes in the order they finish.

        Every task is handed to the executor at once: its own thread feeds the workers, so they
        go on while the caller is busy with an outcome. ``tick()`` runs every ``POLL_SECONDS``
        while waiting (it may raise to cancel: the pool is then left busy, to be stopped), as
        does the caller's ``check_stop``; ``on_progress(n)`` receives what workers report with
        ``report_progress``. A task's exception is raised here; a worker that dies raises
        ``WorkerDied``.
        """
        if self._stopped:
            raise WorkerDied("the worker processes were stopped")
        items = list(items)
        with caller().hold_stops():  # processes start here: no stop lands in a fork's hooks
            try:
                pending = {self._executor.submit(func, item) for item in items}
            except (BrokenProcessPool, RuntimeError):
                raise self._died() from None
        with self._lock:
            self._futures = set(pending)
        # Ticks are timed, not only the waits that find nothing done: tasks that each end
        # within a poll (the sample's 2,400 runs) would otherwise never let one run.
        ticked = time.monotonic()
        while pending:
            try:
                done, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            except (OSError, ValueError):
                raise self._died() from None
            self._drain(on_progress)
            for future in done:
                try:
                    outcome = future.result()
                except (BrokenProcessPool, CancelledError):
                    raise self._died() from None
                yield outcome
            if not done or time.monotonic() - ticked >= POLL_SECONDS:
                ticked = time.monotonic()
                caller().check_stop()
                if tick is not None:
                    tick()
        self._drain(on_progress)

    # The executor feeds its workers itself: the background variant is the same loop.
    imap_in_background = imap_unordered

    def _drain(self, on_progress: Callable[[int], None] | None) -> None:
        try:
            while self._reader.poll():
                n = self._reader.recv()
                if on_progress is not None:
                    on_progress(n)
        except (EOFError, OSError, ValueError):
            pass

    def _died(self) -> WorkerDied:
        if self._stopped:
            return WorkerDied("the worker processes were stopped")
        # The executor may see the pool broken before the dead worker is reaped (its exit code
        # still None): wait for it a moment, never longer than DEATH_SECONDS.
        deadline = time.monotonic() + DEATH_SECONDS
        while True:
            codes = [p.exitcode for p in self._processes() if p.exitcode is not None and p.exitcode != 0]
            if codes or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        # The cause first: a worker killed by a signal; the executor then ends the others, which
        # exit with a code of their own (255) that says nothing of why.
        killed = [c for c in codes if c < 0]
        code = (killed or codes or [None])[0]
        how = (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0
               and -code in signal.valid_signals() else f"exit code {code}")
        self.stop()
        return WorkerDied(f"a worker process ended unexpectedly ({how})")

    def stop(self) -> None:
        """Kill every worker by pid and let the executor go, waiting ``REAP_SECONDS`` at the
        most for the workers to be gone.

        SIGKILL, not a request: a worker needs to do nothing for it to work. The executor's
        own thread then finds its workers dead and winds itself up; the parent's end of its
        result pipe is closed first, so a reply a killed worker left half written cannot hold
        that thread (and the interpreter's exit, which joins it) for good."""
        with self._lock:
            first = not self._stopped
            self._stopped = True
        processes = self._processes()
        kill(p.pid for p in processes if p.pid is not None and p.exitcode is None)
        if first:
            results = getattr(self._executor, "_result_queue", None)
            writer = getattr(results, "_writer", None)
            try:
                self._executor.shutdown(wait=False, cancel_futures=True)
            except Exception:  # noqa: BLE001 - a broken executor may complain; it is let go anyway
                pass
            if writer is not None:
                try:
                    writer.close()
                except OSError:
                    pass
        sentinels = [p.sentinel for p in processes if p.pid is not None]
        try:
            remaining = set(sentinels)
            end = time.monotonic() + REAP_SECONDS
            while remaining and time.monotonic() < end:
                ready = connection.wait(list(remaining), timeout=max(0.0, end - time.monotonic()))
                remaining -= set(ready)
        except (OSError, ValueError):
            pass
        for process in processes:
            if process.exitcode is None:
                _forget(process)

    def close(self) -> None:
        """Stop the workers and close the progress pipe (by the pool's owner, once nothing uses
        it)."""
        self.stop()
        for end in (self._reader, self._writer):
            try:
                if end is not None:
                    end.close()
            except OSError:
                pass
        self._writer = None

    def shutdown(self) -> None:
        """End an idle pool's workers the polite way (they have no task): as ``close`` when
        any task is outstanding."""
        if not self.idle:
            self.close()
            return
        with self._lock:
            self._stopped = True
        try:
            self._executor.shutdown(wait=True, cancel_futures=True)
        except Exception:  # noqa: BLE001
            pass
        self.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None and self.idle:
            self.shutdown()  # its thread joined: a fork after it (the files' workers) is safe
        else:
            self.close()


def _forget(process: multiprocessing.process.BaseProcess) -> None:
    """Keep multiprocessing's exit handler from joining ``process`` without a bound."""
    from multiprocessing import process as mp_process

    try:
        mp_process._children.discard(process)  # type: ignore[attr-defined]
    except AttributeError:  # pragma: no cover - another multiprocessing layout
        pass


# --- pools kept from one sweep to the next ---------------------------------------------------

_kept: WorkerPool | None = None
_scopes = 0
_kept_lock = threading.Lock()


@contextmanager
def reusing_workers() -> Iterator[None]:
    """Within the block (and blocks nested in it), a pool whose tasks all ran to their end is
    kept for the next ``leased_pool`` instead of being stopped: the app's sweeps (one for every
    seed and simulation it shows), an explore's rounds. Leaving the outermost block ends it."""
    global _scopes
    with _kept_lock:
        _scopes += 1
    try:
        yield
    finally:
        with _kept_lock:
            _scopes -= 1
            pool = _take_kept() if _scopes == 0 else None
        if pool is not None:
            pool.shutdown()


def _take_kept() -> WorkerPool | None:
    global _kept
    pool, _kept = _kept, None
    return pool


def kept_pool() -> WorkerPool | None:
    """The pool kept for the next sweep, if any (for tests and the app's status)."""
    return _kept


@contextmanager
def leased_pool(processes: int) -> Iterator[WorkerPool]:
    """A pool of at least ``processes`` workers for one ``imap_unordered``: the kept one when it
    is idle and big enough (its workers have loaded what earlier sweeps loaded), else a new one.
    On the way out it is kept (inside ``reusing_workers``, when idle) or stopped."""
    global _kept
    with _kept_lock:
        pool = _take_kept()
    if pool is not None and not (pool.idle and pool.processes >= processes):
        pool.close()
        pool = None
    if pool is None:
        pool = WorkerPool(processes)
    keep = False
    try:
        yield pool
        keep = pool.idle
    finally:
        with _kept_lock:
            if keep and _scopes > 0 and _kept is None:
                _kept, pool = pool, None
        if pool is not None:
            if keep:
                pool.shutdown()
            else:
                pool.close()
