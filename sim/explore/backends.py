"""Where an explore's cells run: the local process pool (``sim.runs.sweep``), or a Dask cluster.

Both run the same tasks, one (cell, strategy) with all its repetitions, and hand back each
cell's ``CellResult`` as soon as the cell is complete. Every run depends only on its spec and
coordinates, and a cell's numbers are assembled the same way whichever backend ran them, so the
files are byte-identical. Progress counts runs; cancellation is cooperative (``should_stop``)
or Ctrl-C, and leaves no task running.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Sequence
from typing import Any

from sim.analysis.metrics import RunMetrics
from sim.runs.sweep import ShouldStop, SweepCancelled, SweepResult, default_workers, run_sweeps
from sim.runs.engine import run_metrics
from sim.errors import UserError
from sim.explore.summary import CellResult, run_values
from sim.spec import SimulationSpec

Progress = Callable[[int, int], None]
OnCell = Callable[[int, CellResult], None]
Rows = list[dict[str, float]]

DASK_EXTRA_HINT = "install the extra: pip install 'backoff-sim[dask]'"


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

    def __enter__(self) -> LocalBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, specs: Sequence[SimulationSpec], *, progress: Progress | None = None,
            should_stop: ShouldStop | None = None, on_cell: OnCell) -> None:
        def complete(i: int, result: SweepResult) -> None:
            on_cell(i, CellResult.from_rows(result.spec, _sweep_rows(result)))
            result.open_runs.clear()  # a cell keeps only its summary: free the latencies and series

        if specs:
            run_sweeps(list(specs), workers=self.workers, progress=progress,
                       should_stop=should_stop, on_complete=complete)


class DaskBackend:
    """The same tasks on a Dask distributed cluster: ``tcp://host:8786``, ``local`` (a
    LocalCluster of ``workers`` processes on this machine), or a ``distributed.Client``."""

    name = "dask"

    def __init__(self, address: str | None = None, *, workers: int | None = None, client: Any = None,
                 connect_timeout: float = 10.0) -> None:
        self.address = address
        self.workers = workers
        self.client = client
        self.connect_timeout = connect_timeout
        self._owned: list[Any] = []

    def __enter__(self) -> DaskBackend:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UserError(f"--dask needs dask's distributed scheduler, which is not installed "
                            f"({DASK_EXTRA_HINT})") from None
        if self.client is None:
            if self.address == "local":
                cluster = _local_cluster(LocalCluster, self.workers or default_workers())
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
        return self

    def _check_versions(self) -> None:
        """Workers must run the same simulator, or results would silently differ."""
        from sim.explore.cache import code_version

        ours = code_version()
        theirs = self.client.run(code_version)
        stale = sorted(w for w, v in theirs.items() if v != ours)
        if stale:
            raise UserError(f"--dask: {len(stale)} worker(s) run another version of backoff-sim "
                            f"(e.g. {stale[0]}); install this one on every worker")

    def __exit__(self, *exc: object) -> None:
        for thing in reversed(self._owned):
            thing.close()
        self._owned.clear()

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
            self.client.cancel(futures)
            raise


def _local_cluster(local_cluster: Any, workers: int) -> Any:
    """A LocalCluster of single-threaded worker processes on loopback, without a dashboard.

    Its worker processes start with SIGINT ignored (a disposition a new process inherits, and
    under which Python installs no KeyboardInterrupt handler): Ctrl-C in the terminal reaches
    the whole process group, and only this process should act on it (cancel, close the
    cluster), not every worker printing a traceback. Warnings of the shutdown are not shown.
    """
    import logging
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        return local_cluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                             dashboard_address=None, silence_logs=logging.ERROR)
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)


def make_backend(dask: str | None, workers: int | None) -> LocalBackend | DaskBackend:
    """The backend the command line asks for."""
    return DaskBackend(dask, workers=workers) if dask else LocalBackend(workers)
