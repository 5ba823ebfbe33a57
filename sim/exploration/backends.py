"""Where an explore's cells run: the local process pool (``sim.runs.sweep``), or a Dask cluster.

Both run the same tasks, one (cell, strategy) with all its repetitions, and hand back each
cell's ``CellResult`` as soon as the cell is complete. Every run depends only on its spec and
coordinates, and a cell's numbers are assembled the same way whichever backend ran them, so the
files are byte-identical. Progress counts runs; cancellation is cooperative (``should_stop``)
or Ctrl-C, and leaves no task running. What a stop means, and what to remove should the process
be ended abruptly, is the caller's (``sim.runs.caller``).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import queue
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from sim.analysis.metrics import RunMetrics
from sim.runs.sweep import ShouldStop, SweepCancelled, SweepResult, run_sweeps
from sim.runs.engine import run_metrics
from sim.vocabulary.errors import UserError
from sim.vocabulary.extras import install_hint
from sim.exploration.summary import CellResult, run_values
from sim.runs.caller import caller
from sim.runs.procpool import reusing_workers, worker_count
from sim.runs.workers import descendants, kill
from sim.settings.spec import SimulationSpec

Progress = Callable[[int, int], None]
OnCell = Callable[[int, CellResult], None]
Rows = list[dict[str, float]]

DASK_EXTRA_HINT = install_hint("dask")
START_GRACE_SECONDS = 0.8  # how long a stop waits for a starting cluster, under the exit deadline
CLOSE_SECONDS = 2  # Dask's own bound on closing a client or cluster (its default is 10 s or more)


def task_rows(spec: SimulationSpec, s: int) -> Rows:
    """Run every repetition of strategy ``s`` of a one-client-count spec: its per-run values."""
    strategy = spec.strategies[s].chain
    n = spec.clients[0]
    return [run_values(spec, run_metrics(spec, strategy, n, r)) for r in range(spec.repeat)]


def _sweep_rows(result: SweepResult) -> list[Rows]:
    """Per-run values of a finished sweep at its one client count, as ``task_rows`` gives them."""
    spec = result.spec
    rows: list[Rows] = []
    for s in range(len(spec.strategies)):
        row = []
        for r in range(spec.repeat):
            m = result.open_run(s, 0, r) or RunMetrics(
                int(result.work[s, 0, r]), float(result.duration[s, 0, r]),
                float(result.cost[s, 0, r]), int(result.gave_up[s, 0, r]), int(result.events[s, 0, r]))
            row.append(run_values(spec, m))
        rows.append(row)
    return rows


class LocalBackend:
    """All cells' tasks on one process pool (cells in parallel), through ``run_sweeps``."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers
        self._reusing: contextlib.ExitStack | None = None

    def __enter__(self) -> LocalBackend:
        # One pool for every round of the backend's runs (an adaptive map's, a tune's trials):
        # its workers load the compiled kernels once.
        self._reusing = contextlib.ExitStack()
        self._reusing.enter_context(reusing_workers())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._reusing is not None:
            self._reusing.close()
            self._reusing = None

    def run(self, specs: Sequence[SimulationSpec], *, progress: Progress | None = None,
            should_stop: ShouldStop | None = None, on_cell: OnCell) -> None:
        def complete(i: int, result: SweepResult) -> None:
            on_cell(i, CellResult.from_rows(result.spec, _sweep_rows(result)))
            result.open_runs.clear()  # a cell keeps only its summary: free the latencies and series

        if specs:
            # A task per cell (all its strategies) when there are cells enough to keep every
            # worker busy: runs in which no attempt failed then stand for the other strategies'.
            workers = worker_count(self.workers)
            run_sweeps(list(specs), workers=self.workers, progress=progress,
                       should_stop=should_stop, on_complete=complete,
                       whole_cells=len(specs) >= 4 * workers)


class DaskBackend:
    """The same tasks on a Dask distributed cluster: ``tcp://host:8786``, ``local`` (a
    LocalCluster of ``workers`` processes on this machine), or a ``distributed.Client``."""

    name = "dask"

    def __init__(self, address: str | None = None, *, workers: int | None = None, client: Any = None,
                 connect_timeout: float = 10.0, tasks: int | None = None) -> None:
        self.address = address
        self.workers = workers
        self.tasks = tasks
        self.client = client
        self.connect_timeout = connect_timeout
        self._owned: list[Any] = []
        self._scratch: str | None = None
        self._cleanup: int | None = None
        self._before: set[int] | None = None  # the processes there before a LocalCluster started

    def __enter__(self) -> DaskBackend:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UserError(f"--dask needs dask's distributed scheduler, which is not installed "
                            f"({DASK_EXTRA_HINT})") from None
        try:
            if self.client is None:
                if self.address == "local":
                    cluster = self._start_local(LocalCluster)
                    self._owned.append(cluster)
                    self.client = Client(cluster)
                else:
                    try:
                        self.client = Client(self.address, timeout=self.connect_timeout)
                    except (OSError, TimeoutError, ValueError) as exc:
                        raise UserError(f"--dask {self.address}: cannot reach the scheduler: {exc} "
                                        "(start one with `dask scheduler`, or use --dask local)") from None
                self._owned.append(self.client)
            self._check_versions()
        except BaseException as exc:  # a stop signal or a mistake: close what was started
            self.__exit__(type(exc), exc, None)
            raise
        return self

    def _start_local(self, local_cluster: Any) -> Any:
        """A LocalCluster in a scratch folder of its own (removed at the end, or by the exit
        deadline); a stop signal while it starts kills the processes it had started."""
        self._scratch = tempfile.mkdtemp(prefix="backoff-sim-dask-")
        self._cleanup = caller().on_abandon(lambda: self._remove_scratch(seal=True))
        caller().on_final(self._unseal)
        atexit.register(self._remove_scratch)  # again, at exit: Dask's threads may have written
        caller().prepare_children()
        before = set(descendants())  # the tracker among them: it must outlive the workers
        self._before = before
        try:
            return _in_quiet_thread(lambda: _local_cluster(local_cluster, self.local_workers,
                                                           self._scratch))
        except BaseException:
            # Stopped while it started: what it had started goes now, and Dask, still starting
            # in its thread, is not heard complaining about it.
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
            kill(set(descendants()) - before)
            self._remove_scratch(seal=True)
            atexit.register(self._unseal)  # registered last, so run first: before the removal
            raise

    @property
    def local_workers(self) -> int:
        """A LocalCluster's size: what was asked for (all cores by default), but never more
        than the cores, nor than the tasks when they are known (a 4-task map started 24
        processes, 1.7 GB, for ``-j 24``)."""
        return worker_count(self.workers, self.tasks or None)

    def _remove_scratch(self, seal: bool = False) -> None:
        """Remove the scratch folder, again if Dask was still writing in it (a few tries).
        ``seal`` (a stop while the cluster may still be starting in its thread): leave an empty
        file in its place, on which Dask's ``makedirs`` fails instead of making the folder
        anew; the file goes as the process ends (``_unseal``)."""
        path = self._scratch
        if path is None:
            return
        for _ in range(5):
            if not os.path.lexists(path):
                break
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            time.sleep(0.02)
        if seal:
            with contextlib.suppress(OSError):
                open(path, "x").close()

    def _unseal(self) -> None:
        if self._scratch is not None and os.path.isfile(self._scratch):
            with contextlib.suppress(OSError):
                os.unlink(self._scratch)

    def _check_versions(self) -> None:
        """Workers must run the same simulator, or results would silently differ."""
        from sim.exploration.cache import code_version

        ours = code_version()
        theirs = self.client.run(code_version)
        stale = sorted(w for w, v in theirs.items() if v != ours)
        if stale:
            raise UserError(f"--dask: {len(stale)} worker(s) run another version of backoff-sim "
                            f"(e.g. {stale[0]}); install this one on every worker")

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        """Close what this backend started. On an error or a stop signal the LocalCluster's
        worker processes are killed by pid first, so closing waits for nobody; Dask's own
        complaints about the connections that go with them are not shown."""
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        stopping = exc_type is not None or caller().ending()
        try:
            for thing in reversed(self._owned):
                if stopping:
                    _close_now(thing)
                else:
                    with contextlib.suppress(Exception):
                        thing.close(timeout=CLOSE_SECONDS)
                    _forget_cluster(thing)
        finally:
            self._owned.clear()
            if stopping and self._before is not None:
                _kill_started_since(self._before)
            self._remove_scratch()
            if self._cleanup is not None:
                caller().forget(self._cleanup)
                self._cleanup = None

    def run(self, specs: Sequence[SimulationSpec], *, progress: Progress | None = None,
            should_stop: ShouldStop | None = None, on_cell: OnCell) -> None:
        total = sum(len(s.strategies) * s.repeat for s in specs)
        rows: list[list[Rows | None]] = [[None] * len(s.strategies) for s in specs]
        missing = [len(s.strategies) for s in specs]
        done_queue: queue.Queue = queue.Queue()
        futures = []
        for i, spec in enumerate(specs):
            for s in range(len(spec.strategies)):
                future = self.client.submit(task_rows, spec, s, pure=False)
                future.add_done_callback(lambda f, i=i, s=s: done_queue.put((i, s, f)))
                futures.append(future)
        done = 0
        if progress:
            progress(0, total)
        try:
            for _ in futures:
                while True:
                    if should_stop and should_stop():
                        raise SweepCancelled()
                    try:
                        i, s, future = done_queue.get(timeout=0.1)
                        break
                    except queue.Empty:
                        continue
                rows[i][s] = future.result()  # re-raises a task's error (e.g. a stalled run)
                done += specs[i].repeat
                if progress:
                    progress(done, total)
                missing[i] -= 1
                if missing[i] == 0:
                    on_cell(i, CellResult.from_rows(specs[i], rows[i]))
                    rows[i] = []
        except BaseException:
            if not caller().ending():  # a stop signal: the cluster is killed next, nothing to ask it
                self.client.cancel(futures)
            raise


def _local_cluster(local_cluster: Any, workers: int, scratch: str) -> Any:
    """A LocalCluster of single-threaded worker processes on loopback, without a dashboard, its
    files (the scheduler's and the workers') in ``scratch``, not in a shared folder of the
    system's temporary directory where a killed cluster would leave them."""
    import dask

    with dask.config.set({"temporary-directory": scratch}):
        return local_cluster(n_workers=workers, threads_per_worker=1, processes=True,
                             host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR,
                             local_directory=scratch)


def _in_quiet_thread(start: Callable[[], Any]) -> Any:
    """``start()`` in a thread of its own with the stop signals blocked, while this thread waits.

    Blocked, not ignored: the threads the cluster starts, and the worker processes they start,
    inherit the blocked mask, so Ctrl-C in the terminal (which reaches the whole process group)
    never reaches a worker (each would print a traceback); only this process acts on it. And
    this thread stays free to take the signal at once, instead of after the start (Ctrl-C was
    ignored while the cluster started), without raising inside Dask's start-up.
    """
    import threading

    outcome: list[Any] = []
    shield = caller().shield_thread

    def run() -> None:
        shield()
        try:
            outcome.append((True, start()))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="dask-start", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.1)
    except BaseException:
        # A stop while it starts: let the start finish (briefly), so that what it started can
        # be closed as a whole rather than raced while it is still being made. Dask is not
        # heard meanwhile: its scheduler, in this process, logs an error for each connection
        # its workers' end resets (seen once in CI as a second line after "interrupted").
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        thread.join(START_GRACE_SECONDS)
        if outcome and outcome[0][0]:
            _close_now(outcome[0][1])
        else:  # it may yet finish: forget it at exit, before Dask's own hook closes it noisily
            atexit.register(_forget_late, outcome)
        raise
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def _forget_late(outcome: list[Any]) -> None:
    if outcome and outcome[0][0]:
        kill(_worker_pids(outcome[0][1]))
        _forget_cluster(outcome[0][1])


def _kill_started_since(before: set[int]) -> None:
    """Kill every process below this one that was not there before the cluster started, until
    none is left (at most a few rounds): a worker the cluster was still starting when the stop
    came is in no list of its workers, and left alive it made its scratch folder anew after the
    folder was removed (a nanny forks it, so it can appear after the first look)."""
    for _ in range(10):
        started = set(descendants()) - before
        if not started:
            return
        kill(started)
        time.sleep(0.02)


def _close_now(cluster: Any) -> None:
    """Kill a cluster's worker processes, then close it (Dask's own bound) and forget it."""
    kill(_worker_pids(cluster))
    with contextlib.suppress(Exception):
        cluster.close(timeout=CLOSE_SECONDS)
    _forget_cluster(cluster)


def _worker_pids(thing: Any) -> list[int]:
    """The worker processes of a LocalCluster (none for a client or a remote cluster)."""
    workers = getattr(thing, "workers", None)
    if not isinstance(workers, dict):
        return []
    return [pid for w in workers.values() if isinstance(pid := getattr(w, "pid", None), int)]


def _forget_cluster(thing: Any) -> None:
    """Dask closes every cluster still open at exit, with a 10 s bound, and when a stop has
    already torn its workers down that fails with a traceback: ours was closed, or abandoned,
    here."""
    instances = getattr(type(thing), "_instances", None)
    if instances is not None and hasattr(instances, "discard"):
        instances.discard(thing)


def make_backend(dask: str | None, workers: int | None,
                 tasks: int | None = None) -> LocalBackend | DaskBackend:
    """The backend the command line asks for (``tasks``: how many there will be, if known)."""
    return DaskBackend(dask, workers=workers, tasks=tasks) if dask else LocalBackend(workers)
