"""The worker processes (``sim.runs.procpool``): how many start (never more than cores nor
tasks, for every command and stage: issue 40, item 3), a pool kept from one sweep to the next
inside ``reusing_workers`` (issue 33, item 5: a worker loads the kernels once, not once per
sweep), and phase's runs on workers even with one (issue 40, item 4)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from support import make_spec, wait_for_exit

import sim.runs.procpool as procpool
from sim.runs.procpool import kept_pool, reusing_workers, worker_count
from sim.runs.sweep import run_sweeps


def test_worker_count_never_exceeds_the_cores_nor_the_tasks(monkeypatch) -> None:
    monkeypatch.setattr(procpool, "default_workers", lambda: 2)
    assert worker_count(64) == 2 and worker_count(None) == 2 and worker_count(1) == 1
    assert worker_count(64, 1) == 1 and worker_count(64, 36) == 2 and worker_count(None, 0) == 1


class _Pool:
    """A WorkerPool stand-in that runs its tasks here and remembers its size."""

    sizes: list[int] = []

    def __init__(self, processes: int, **_: object) -> None:
        self.processes = processes
        _Pool.sizes.append(processes)

    def imap_unordered(self, func, items, **_: object):
        return map(func, list(items))

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def test_phase_starts_no_more_workers_than_cores_or_cells(monkeypatch) -> None:
    """``phase --workers 64`` on 2 cores started 64 processes for 36 tasks."""
    import sim.phase.pool as pool

    monkeypatch.setattr(procpool, "default_workers", lambda: 2)
    monkeypatch.setattr(pool, "WorkerPool", _Pool)
    monkeypatch.setattr(pool, "run_cell", lambda task: task)
    _Pool.sizes = []
    with pool.cell_runner(64, in_process=False) as run_all:
        assert run_all(list(range(36))) == list(range(36))
        assert run_all.run_many(str, [1, 2]) == ["1", "2"]
    assert _Pool.sizes and max(_Pool.sizes) == 2


def test_the_files_workers_are_no_more_than_cores_or_files(monkeypatch) -> None:
    """``run --workers 64`` forked 10 processes to write one simulation's files."""
    import sim.export.parallel as parallel

    class Output:
        def __init__(self, kind: str) -> None:
            self.kind = kind

        def write(self, job: object, path: Path) -> Path:
            return path

    monkeypatch.setattr(procpool, "default_workers", lambda: 2)
    monkeypatch.setattr(parallel, "WorkerPool", _Pool)
    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    _Pool.sizes = []
    outputs = [Output(f"kind{i}") for i in range(10)]
    paths = {o.kind: Path(f"{o.kind}.csv") for o in outputs}
    assert parallel.write_outputs(None, outputs, paths, 64) == [paths[o.kind] for o in outputs]
    assert _Pool.sizes == [2]


SPEC = make_spec("LockingServer", clients=[2, 3, 4, 5], repeat=3)


def test_a_pool_is_kept_for_the_next_sweep_inside_a_reusing_scope(monkeypatch) -> None:
    """The app sweeps every seed and simulation it shows: the same workers serve them all (each
    loads the compiled kernels once), and leaving the scope ends them."""
    monkeypatch.setattr(procpool, "default_workers", lambda: 2)
    alone = run_sweeps([SPEC], workers=2)
    assert kept_pool() is None  # outside a scope: the sweep's pool ended with it
    with reusing_workers():
        first = run_sweeps([SPEC], workers=2)
        pool = kept_pool()
        assert pool is not None and pool.idle and len(pool.pids) == 2
        pids = pool.pids
        second = run_sweeps([SPEC], workers=2)
        assert kept_pool() is pool and pool.pids == pids  # the same processes, not new ones
    assert kept_pool() is None
    assert wait_for_exit(pids) == []
    for a, b in ((alone, first), (first, second)):
        assert (a[0].work == b[0].work).all() and (a[0].duration == b[0].duration).all()


def test_a_cancelled_sweep_s_pool_is_not_kept(monkeypatch) -> None:
    """A sweep stopped by its caller leaves tasks running: its pool is killed, never reused."""
    from sim.runs.sweep import SweepCancelled

    monkeypatch.setattr(procpool, "default_workers", lambda: 2)
    calls = [0]

    def stop_after_first_check() -> bool:
        calls[0] += 1
        return calls[0] > 1

    with reusing_workers():
        with pytest.raises(SweepCancelled):
            run_sweeps([SPEC], workers=2, should_stop=stop_after_first_check)
        assert kept_pool() is None


def _pid(_: object) -> int:
    return os.getpid()


def test_phase_s_runs_are_on_a_worker_even_with_one() -> None:
    """A stop to ``phase`` kills its workers by pid at once; run in the command's own process, a
    run of millions of clients held it for seconds past the exit deadline (40.4)."""
    from sim.phase.pool import cell_runner

    with cell_runner(1, in_process=False) as run_all:
        (pid,) = run_all.run_many(_pid, [None])
    assert pid != os.getpid()
    with cell_runner(1) as run_all:  # the app's pane: here, cancellable between cells
        assert run_all.run_many(_pid, [None]) == [os.getpid()]


def _nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_a_waiting_caller_ticks_even_when_every_wait_finds_a_task_done() -> None:
    """Tasks that each end within a poll (the sample's runs) still let the caller's tick run (the
    progress line, matplotlib's import ahead of the files, a cancel): at least once per
    ``POLL_SECONDS`` of waiting. 12 naps of 0.05 s on one worker last at least 0.6 s, six polls,
    however slow the machine."""
    from sim.runs.procpool import POLL_SECONDS, WorkerPool

    ticks: list[int] = []
    with WorkerPool(1) as pool:
        naps = list(pool.imap_unordered(_nap, [0.05] * 12, tick=lambda: ticks.append(1)))
    assert naps == [0.05] * 12 and 12 * 0.05 >= 6 * POLL_SECONDS - 1e-9
    assert len(ticks) >= 3  # six polls' worth of waiting; half of them, whatever the scheduling
