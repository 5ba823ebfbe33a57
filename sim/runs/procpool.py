"""Worker processes this process owns, each on a pipe of its own, stopped by pid.

``multiprocessing.Pool`` shares one task queue and one result queue among its workers, each
guarded by a lock that a worker holds while it reads or writes. A worker killed while it holds
one (a closing terminal or ``timeout`` signals the whole process group) leaves that lock held for
good, and ``Pool.terminate`` waits for it: the app and the commands hung there, deaf to further
signals. Here nothing is shared: each worker reads its tasks from its own pipe and writes its
results (and progress) back on it; the parent waits on all the pipes and the processes'
sentinels at once; and stopping is SIGKILL by pid followed by a reap bounded in time. Nothing on
the way out waits for a worker's cooperation, so a hang there cannot happen.

The workers themselves die with their parent however it ends (``sim.runs.workers``).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing import connection
from multiprocessing.connection import Connection
from typing import Any

from sim.commands.interrupt import raise_if_stopped, stop_signals_held
from sim.commands.teardown import kill
from sim.runs.workers import init_worker

# What a worker sends back on its pipe: (kind, payload).
_DONE, _FAILED, _PROGRESS = "done", "failed", "progress"
REAP_SECONDS = 1.0  # how long stop() waits, in all, for killed workers to be reaped
POLL_SECONDS = 0.1  # how often a waiting caller's tick runs (progress, cancellation)

_worker_conn: Connection | None = None  # in a worker process: its pipe to the parent


class WorkerDied(RuntimeError):
    """A worker process ended without answering (killed, or the pool was stopped)."""


def report_progress(n: int) -> None:
    """In a worker, send ``n`` (events simulated) to the parent; a no-op elsewhere."""
    if _worker_conn is not None:
        _worker_conn.send((_PROGRESS, n))


def _serve(conn: Connection, owner: int, initializer: Callable[..., None] | None,
           initargs: tuple) -> None:
    """A worker's life: run each task that arrives on ``conn`` and send back its outcome, until
    the pipe closes."""
    global _worker_conn
    init_worker(owner)
    _worker_conn = conn
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        func, arg = task
        try:
            reply: tuple[str, Any] = (_DONE, func(arg))
        except Exception as exc:  # the parent re-raises it (e.g. a stalled run)
            reply = (_FAILED, exc)
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return
        except Exception as exc:  # the outcome did not pickle: say so instead
            conn.send((_FAILED, RuntimeError(f"{type(exc).__name__}: {exc}")))


def default_context() -> multiprocessing.context.BaseContext:
    """fork when single-threaded (fastest, and no re-import of a caller's unguarded main module);
    forkserver when the caller has threads (the app), where fork could deadlock; else spawn."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["sim.runs.engine"])
        return ctx
    return multiprocessing.get_context("spawn")


@dataclass(eq=False)
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: Connection


class WorkerPool:
    """``processes`` workers, started at once; ``imap_unordered`` runs tasks on them.

    One ``imap_unordered`` at a time. A pool whose ``imap_unordered`` did not run to its end (an
    error, a cancel) still has busy workers: ``idle`` is False and it must be stopped. ``stop()``
    may be called from any thread, at any moment, as often as wanted; it never blocks for longer
    than ``REAP_SECONDS``.
    """

    def __init__(self, processes: int, *, context: multiprocessing.context.BaseContext | None = None,
                 initializer: Callable[..., None] | None = None, initargs: tuple = ()) -> None:
        self._ctx = context or default_context()
        self._workers: list[_Worker] = []
        self._busy: dict[Connection, _Worker] = {}
        self._stopped = False
        self._pump: threading.Thread | None = None
        try:
            for _ in range(processes):
                self._start(initializer, initargs)
        except BaseException:
            self.stop()
            raise

    def _start(self, initializer: Callable[..., None] | None, initargs: tuple) -> None:
        ours, theirs = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=_serve, args=(theirs, os.getpid(), initializer, initargs),
                                    daemon=True, name=f"backoff-sim-worker-{len(self._workers) + 1}")
        worker = _Worker(process, ours)
        self._workers.append(worker)  # before start: a stop during start still finds it
        with stop_signals_held():
            process.start()
        theirs.close()

    @property
    def pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    @property
    def idle(self) -> bool:
        """True when no worker has a task and all are alive (the pool can take another
        ``imap_unordered``)."""
        return (not self._busy and not self._stopped
                and all(w.process.exitcode is None for w in self._workers))

    def imap_unordered(self, func: Callable[[Any], Any], items: Iterable[Any], *,
                       tick: Callable[[], None] | None = None,
                       on_progress: Callable[[int], None] | None = None) -> Iterator[Any]:
        """``func(item)`` for every item, on the workers; outcomes in the order they finish.

        ``tick()`` runs every ``POLL_SECONDS`` while waiting (it may raise to cancel: the pool is
        then left busy, to be stopped); ``on_progress(n)`` receives what workers report with
        ``report_progress``. A task's exception is raised here; a worker that dies raises
        ``WorkerDied``.
        """
        if self._stopped:
            raise WorkerDied("the worker processes were stopped")
        pending = deque(items)
        idle = [w for w in self._workers if w.conn not in self._busy]
        while pending or self._busy:
            while idle and pending:
                worker = idle.pop()
                self._send(worker, (func, pending.popleft()))
            ready = self._wait()
            if not ready:
                raise_if_stopped()
                if tick is not None:
                    tick()
                continue
            for conn in ready:
                worker = self._busy[conn]
                kind, payload = self._receive(worker)
                if kind == _PROGRESS:
                    if on_progress is not None:
                        on_progress(payload)
                    continue
                del self._busy[conn]
                if kind == _FAILED:
                    raise payload
                idle.append(worker)
                yield payload

    def imap_in_background(self, func: Callable[[Any], Any], items: Iterable[Any], *,
                           tick: Callable[[], None] | None = None,
                           on_progress: Callable[[int], None] | None = None) -> Iterator[Any]:
        """``imap_unordered``, its feeding and reading done by a thread of the pool's own, so the
        workers go on while the caller is busy with an outcome (the CLI draws a finished
        simulation's PNGs meanwhile: fed from the caller's thread, the workers sat idle then,
        7% of the sample's wall time). ``tick`` runs in the caller's thread; ``on_progress`` in
        the pool's. ``stop()`` ends the thread: its waits are the pool's, a tenth of a second."""
        outcomes: queue.SimpleQueue = queue.SimpleQueue()
        done = object()

        def pump() -> None:
            try:
                for outcome in self.imap_unordered(func, items, on_progress=on_progress):
                    outcomes.put((True, outcome))
                outcomes.put((True, done))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                outcomes.put((False, exc))

        self._pump = threading.Thread(target=pump, name="worker-pool-pump", daemon=True)
        self._pump.start()
        while True:
            try:
                ok, value = outcomes.get(timeout=POLL_SECONDS)
            except queue.Empty:
                raise_if_stopped()
                if tick is not None:
                    tick()
                continue
            if not ok:
                raise value
            if value is done:
                self._pump.join(REAP_SECONDS)
                return
            yield value

    def _send(self, worker: _Worker, task: tuple) -> None:
        try:
            worker.conn.send(task)
        except (OSError, ValueError):
            raise self._died(worker) from None
        self._busy[worker.conn] = worker

    def _wait(self) -> list[Connection]:
        """The busy workers' pipes with something to read, after at most ``POLL_SECONDS``; a
        worker whose process ended with nothing left to read raises ``WorkerDied``."""
        if self._stopped:
            raise WorkerDied("the worker processes were stopped")
        by_sentinel = {w.process.sentinel: w for w in self._busy.values()}
        try:
            ready = connection.wait([*self._busy, *by_sentinel], timeout=POLL_SECONDS)
        except (OSError, ValueError):  # a handle closed under us: the pool was stopped
            raise WorkerDied("the worker processes were stopped") from None
        conns = [r for r in ready if isinstance(r, Connection)]
        for r in ready:
            if not isinstance(r, Connection):
                worker = by_sentinel[r]
                if worker.conn not in conns and not self._has_data(worker):
                    raise self._died(worker)
        return conns

    @staticmethod
    def _has_data(worker: _Worker) -> bool:
        try:
            return worker.conn.poll()
        except (OSError, ValueError, EOFError):
            return False

    def _receive(self, worker: _Worker) -> tuple[str, Any]:
        try:
            return worker.conn.recv()
        except (EOFError, OSError, ValueError):
            raise self._died(worker) from None

    def _died(self, worker: _Worker) -> WorkerDied:
        if self._stopped:
            return WorkerDied("the worker processes were stopped")
        worker.process.join(REAP_SECONDS)  # reap it (it is dying, or gone), for its exit code
        code = worker.process.exitcode
        how = (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0
               and -code in signal.valid_signals() else f"exit code {code}")
        return WorkerDied(f"a worker process ended unexpectedly ({how})")

    def stop(self) -> None:
        """Kill every worker by pid and reap them, waiting ``REAP_SECONDS`` at the most.

        SIGKILL, not a request: a worker needs to do nothing for it to work. A worker not reaped
        in time (which only an uninterruptible kernel wait could cause) is forgotten rather than
        waited for, at exit too."""
        self._stopped = True
        kill(w.process.pid for w in self._workers
             if w.process.pid is not None and w.process.exitcode is None)
        deadline = time.monotonic() + REAP_SECONDS
        for worker in self._workers:
            if worker.process.pid is None:
                continue
            try:
                worker.process.join(max(0.0, deadline - time.monotonic()))
            except (AssertionError, ValueError, OSError):  # never started, or already closed
                pass
            if worker.process.exitcode is None:
                _forget(worker.process)

    def close(self) -> None:
        """Stop the workers and close the pipes (by the pool's owner, once nothing uses it). A
        pump thread still reading them (it notices the stop within ``POLL_SECONDS``) is given
        ``REAP_SECONDS``; should it still run, the pipes are left to the garbage collector
        rather than closed under it, where their numbers could go to another pool's pipes."""
        self.stop()
        if self._pump is not None:
            self._pump.join(REAP_SECONDS)
            if self._pump.is_alive():
                return
        for worker in self._workers:
            worker.conn.close()
        self._busy.clear()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _forget(process: multiprocessing.process.BaseProcess) -> None:
    """Keep multiprocessing's exit handler from joining ``process`` without a bound."""
    from multiprocessing import process as mp_process

    try:
        mp_process._children.discard(process)  # type: ignore[attr-defined]
    except AttributeError:  # pragma: no cover - another multiprocessing layout
        pass
