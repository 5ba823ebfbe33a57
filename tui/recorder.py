"""Record runs in a child process, so the simulation never competes with the UI for the GIL.

The engine's loop is pure Python: run in a thread, it holds the GIL for most of a second on a
large run, and every frame the UI draws meanwhile waits for it in 5 ms slices (the convoy effect),
which made frames of 100-200 ms while a 1,000-client run was recorded. A child process records
the run, converts it to the views' arrays (``RunData``) and bins it for the timeline, and sends
that back: numpy arrays pickle as plain buffers, so receiving a million events takes the UI
thread's GIL for milliseconds only. A newer request supersedes one still running: the process is
terminated and a new one started, so switching runs quickly never queues stale work. With
``in_process`` (tests, or ``--workers 1``) runs are recorded in the calling thread.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from multiprocessing.pool import AsyncResult, Pool

import numpy as np

from sim.runs.workers import init_worker
from sim.runs.engine import record_run
from sim.spec import SimulationSpec

from .policy_state import scopes_of
from .rundata import RunData
from .timeline_grid import cached_grid

POLL_SECONDS = 0.05
Geometry = tuple[int, int]  # the timeline's (lanes, columns)


def record_run_data(spec: SimulationSpec, label: str, clients: int, repetition: int,
                    geometry: Geometry | None = None) -> RunData:
    """Record one run, convert it for the views and bin it for the timeline (in the child)."""
    run = record_run(spec, label, clients, repetition)
    history = run.history
    data = RunData.from_columns(np.asarray(history.times, dtype=np.float64),
                                np.asarray(history.clients, dtype=np.int32),
                                np.asarray(history.packed, dtype=np.int64), clients,
                                run.open_metrics, time_unit=spec.time_unit,
                                scopes=scopes_of(spec.strategy(label).policies))
    if geometry is not None:
        cached_grid(data, *geometry)
    return data


def _context() -> multiprocessing.context.BaseContext:
    """forkserver (the app has threads, where fork could deadlock), else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["sim.runs.engine"])
        return ctx
    return multiprocessing.get_context("spawn")


class Cancelled(Exception):
    """The request was superseded or the caller gave up on it."""


class RunRecorder:
    """Records runs one at a time, in a child process unless ``in_process``."""

    def __init__(self, in_process: bool = False) -> None:
        self.in_process = in_process
        self._lock = threading.Lock()
        self._pool: Pool | None = None
        self._pending: AsyncResult | None = None

    def record(self, spec: SimulationSpec, label: str, clients: int, repetition: int,
               geometry: Geometry | None = None,
               should_stop: Callable[[], bool] = lambda: False) -> RunData:
        """The run, ready for the views (blocking); raises ``Cancelled`` when ``should_stop``
        turns true or a newer request replaced this one."""
        if self.in_process:
            return record_run_data(spec, label, clients, repetition, geometry)
        with self._lock:
            if self._pending is not None and not self._pending.ready():
                self._terminate()  # superseded: do not wait for a run nobody will look at
            if self._pool is None:
                # The app handles Ctrl-C; the child dies with the app, however it ends.
                self._pool = _context().Pool(1, initializer=init_worker, initargs=(os.getpid(),))
            pending = self._pending = self._pool.apply_async(
                record_run_data, (spec, label, clients, repetition, geometry))
        while not pending.ready():
            if should_stop() or pending is not self._pending:
                raise Cancelled()
            pending.wait(POLL_SECONDS)
        return pending.get()  # re-raises the engine's error (e.g. a stalled run)

    def _terminate(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None
        self._pending = None

    def close(self) -> None:
        """Stop the child process at once (the app is closing)."""
        with self._lock:
            self._terminate()
