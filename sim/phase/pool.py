"""Running a portrait's cells: on worker processes (``sim.runs.procpool``), or here with one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sim.phase.estimate import CellResult, CellTask, run_cell
from sim.runs.procpool import WorkerPool, worker_count
from sim.runs.sweep import SweepCancelled


def _indexed(job: tuple) -> tuple:
    func, index, item = job
    return index, func(item)


@contextmanager
def cell_runner(workers: int, progress: Callable[[int, int], None] | None = None,
                cancelled: Callable[[], bool] | None = None, tick: Callable[[], None] | None = None,
                *, in_process: bool | None = None,
                pilot_progress: Callable[[int, int], None] | None = None,
                ) -> Iterator[Callable[[list[CellTask]], list[CellResult]]]:
    """A function that runs a list of cells' tasks and returns their results, reporting
    ``(done, total)`` cells to ``progress`` (``tick()`` while it waits); the pool is stopped on
    the way out (an error or Ctrl-C included). Never more processes than cores nor than a
    list's cells (``worker_count``). ``cancelled`` is asked between cells: True stops the
    portrait with ``SweepCancelled`` (the app's pane, closed or moved on). Its ``run_many(func,
    items)`` runs other work (the pilot runs) the same way, reporting to ``pilot_progress``.

    ``in_process``: run here (the default with one worker: the app's pane), or on worker
    processes even with one (the command: a stop then kills a worker by pid at once, rather
    than wait for this process to unwind a run of millions of clients, which held the
    interpreter for seconds and outlasted the exit deadline)."""
    def report(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total)

    def check() -> None:
        if cancelled is not None and cancelled():
            raise SweepCancelled("phase portrait cancelled")
        if tick is not None:
            tick()

    pools: list[WorkerPool] = []

    def run_here(tasks: list[CellTask], done: int, total: int) -> list[CellResult]:
        results = []
        for task in tasks:
            check()
            results.append(run_cell(task))
            report(done + len(results), total)
        return results

    here = workers <= 1 if in_process is None else in_process

    def pool_for(items: list) -> WorkerPool:
        wanted = worker_count(workers, len(items))
        if pools and pools[-1].processes < wanted:
            pools.pop().close()
        if not pools:
            pools.append(WorkerPool(wanted))
        return pools[-1]

    def run(tasks: list[CellTask], done: int = 0, total: int | None = None) -> list[CellResult]:
        """``tasks``' results; progress counts from ``done`` of ``total`` (a portrait's cells
        run in parts: ``sim.phase.portrait.run_cells``)."""
        total = len(tasks) if total is None else total
        if here:
            return run_here(tasks, done, total)
        results = []
        for result in pool_for(tasks).imap_unordered(run_cell, tasks, tick=check):
            results.append(result)
            report(done + len(results), total)
        return results

    def run_many(func: Callable, items: list) -> list:
        done: dict[int, object] = {}
        if pilot_progress is not None:
            pilot_progress(0, len(items))
        if here:
            outcomes = ((i, func(x)) for i, x in enumerate(items) if check() is None)
        else:
            outcomes = pool_for(items).imap_unordered(_indexed, [(func, i, x) for i, x in enumerate(items)],
                                                      tick=check)
        for i, outcome in outcomes:
            done[i] = outcome
            if pilot_progress is not None:
                pilot_progress(len(done), len(items))
        return [done[i] for i in range(len(items))]

    run.run_many = run_many  # type: ignore[attr-defined]
    try:
        yield run
    finally:
        for pool in pools:
            pool.close()
