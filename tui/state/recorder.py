"""Record runs in a child process, so the simulation never competes with the UI for the GIL.

The engine's loop is pure Python: run in a thread, it holds the GIL for most of a second on a
large run, and every frame the UI draws meanwhile waits for it in 5 ms slices (the convoy effect),
which made frames of 100-200 ms while a 1,000-client run was recorded. A child process records
the run, converts it to the views' arrays (``RunData``) and bins it for the timeline, and sends
that back: numpy arrays pickle as plain buffers, so receiving a million events takes the UI
thread's GIL for milliseconds only. A newer request supersedes one still running: the process is
killed by pid (``sim.runs.procpool``) and a new one started, so switching runs quickly never queues stale work. With
``in_process`` (tests, or ``--workers 1``) runs are recorded in the calling thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from sim.analysis.policy_state import scopes_of
from sim.analysis.pool_state import pool_capacity
from sim.runs.procpool import WorkerDied, WorkerPool
from sim.runs.engine import record_run
from sim.settings.spec import SimulationSpec

from ..view.rundata import RunData
from ..view.timeline_grid import cached_grid

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
                                scopes=scopes_of(spec.strategy(label).policies),
                                capacity=pool_capacity(spec), layout=run.layout,
                                calls=history.call_column())
    if geometry is not None:
        cached_grid(data.top, *geometry)  # the timeline bins the clients' part
    return data


class Cancelled(Exception):
    """The request was superseded or the caller gave up on it."""


def _record(args: tuple) -> RunData:
    return record_run_data(*args)


class RunRecorder:
    """Records runs one at a time, in a child process unless ``in_process``."""

    def __init__(self, in_process: bool = False) -> None:
        self.in_process = in_process
        self._lock = threading.Lock()
        self._pool: WorkerPool | None = None
        self._ticket: object | None = None  # the newest request's
        self._closed = False

    def record(self, spec: SimulationSpec, label: str, clients: int, repetition: int,
               geometry: Geometry | None = None,
               should_stop: Callable[[], bool] = lambda: False) -> RunData:
        """The run, ready for the views (blocking); raises ``Cancelled`` when ``should_stop``
        turns true, a newer request replaced this one or the recorder was closed."""
        if self.in_process:
            return record_run_data(spec, label, clients, repetition, geometry)
        ticket = object()
        with self._lock:
            if self._closed:
                raise Cancelled()
            if self._pool is not None and not self._pool.idle:
                self._pool.stop()  # superseded: do not wait for a run nobody will look at
                self._pool = None
            if self._pool is None:
                self._pool = WorkerPool(1)  # forkserver: the app has threads
            pool, self._ticket = self._pool, ticket

        def check() -> None:
            if should_stop() or self._ticket is not ticket:
                raise Cancelled()

        check()
        try:
            for data in pool.imap_unordered(_record, [(spec, label, clients, repetition, geometry)],
                                            tick=check):
                return data
        except WorkerDied:
            if self._ticket is not ticket or self._closed:
                raise Cancelled() from None
            raise
        raise Cancelled()  # pragma: no cover - one task gives one outcome

    def close(self) -> None:
        """Stop the child process at once (the app is closing); never waits on the child."""
        with self._lock:
            self._closed = True
            self._ticket = None
            if self._pool is not None:
                self._pool.stop()
                self._pool = None
