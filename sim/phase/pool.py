"""Running a portrait's cells: on worker processes (``sim.runs.procpool``), or here with one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sim.phase.estimate import CellResult, CellTask, run_cell
from sim.commands.progress import ProgressLines
from sim.runs.sweep import SweepCancelled
from sim.runs.procpool import WorkerPool


@contextmanager
def cell_runner(workers: int, lines: ProgressLines | None = None,
                progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None,
                ) -> Iterator[Callable[[list[CellTask]], list[CellResult]]]:
    """A function that runs a list of cells' tasks and returns their results, reporting
    ``(done, total)`` cells to ``lines`` or ``progress``; the pool is stopped on the way out
    (an error or Ctrl-C included). With one worker, ``cancelled`` is asked before each cell:
    True stops the portrait with ``SweepCancelled`` (the app's pane, closed or moved on)."""
    def report(done: int, total: int) -> None:
        if lines is not None:
            lines.update(done, total)
        if progress is not None:
            progress(done, total)

    if workers <= 1:
        def run_here(tasks: list[CellTask]) -> list[CellResult]:
            results = []
            for task in tasks:
                if cancelled is not None and cancelled():
                    raise SweepCancelled("phase portrait cancelled")
                results.append(run_cell(task))
                report(len(results), len(tasks))
            return results
        yield run_here
        return
    pool = WorkerPool(workers)
    try:
        def run_pooled(tasks: list[CellTask]) -> list[CellResult]:
            results = []
            tick = lines.tick if lines is not None else None
            for result in pool.imap_unordered(run_cell, tasks, tick=tick):
                results.append(result)
                report(len(results), len(tasks))
            return results
        yield run_pooled
    finally:
        pool.stop()
