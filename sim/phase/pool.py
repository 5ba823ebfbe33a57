"""Running a portrait's cells: on worker processes (``sim.runs.procpool``), or here with one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sim.phase.estimate import CellResult, CellTask, run_cell
from sim.runs.procpool import WorkerPool, worker_count
from sim.runs.sweep import SweepCancelled


@contextmanager
def cell_runner(workers: int, progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None, tick: Callable[[], None] | None = None,
                ) -> Iterator[Callable[[list[CellTask]], list[CellResult]]]:
    """A function that runs a list of cells' tasks and returns their results, reporting
    ``(done, total)`` cells to ``progress`` (``tick()`` while it waits); the pool is stopped on
    the way out (an error or Ctrl-C included). Never more processes than cores nor than a
    list's cells (``worker_count``). ``cancelled`` is asked between cells: True stops the
    portrait with ``SweepCancelled`` (the app's pane, closed or moved on)."""
    def report(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total)

    def check() -> None:
        if cancelled is not None and cancelled():
            raise SweepCancelled("phase portrait cancelled")
        if tick is not None:
            tick()

    pools: list[WorkerPool] = []

    def run_here(tasks: list[CellTask]) -> list[CellResult]:
        results = []
        for task in tasks:
            check()
            results.append(run_cell(task))
            report(len(results), len(tasks))
        return results

    def run(tasks: list[CellTask]) -> list[CellResult]:
        wanted = worker_count(workers, len(tasks))
        if wanted <= 1:
            return run_here(tasks)
        if pools and pools[-1].processes < wanted:
            pools.pop().close()
        if not pools:
            pools.append(WorkerPool(wanted))
        results = []
        for result in pools[-1].imap_unordered(run_cell, tasks, tick=check):
            results.append(result)
            report(len(results), len(tasks))
        return results

    try:
        yield run
    finally:
        for pool in pools:
            pool.close()
