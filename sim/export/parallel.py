"""One simulation's files written on all cores, each by a worker forked once the data exists.

A big open simulation's files are seconds of work after its sweep, done one after another on one
core while the others sat idle: server_outage's events file, four PNGs and their CSVs took 5.3 s
of its 7.8 s on an idle 2-core machine. Here workers forked from this process (so they hold the
sweep, the recorded runs and the palette already: nothing is pickled but an index) write one
file each, the costliest first, and send back its path; the files are the same bytes.

Only fork shares the data so, and forking is safe only with one thread: with others (the app's,
a progress bar's) or where fork does not exist, ``write_outputs`` says so (None) and the caller
writes the files itself. The workers are ``procpool``'s: killed by pid on an error or a stop
signal, never waited for without a bound.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from sim.export.outputs import Job, Output
from sim.runs.procpool import WorkerPool, worker_count

__all__ = ["can_fork", "write_outputs", "write_parts"]

# The files that take longest first (a file per worker at a time: the long ones must not start
# last), then the others in their order. Names are ``Output.kind``.
_COSTLIEST_FIRST = ("events_csv", "scatter_png", "timeseries_png", "metrics_png", "latency_png", "tiers_png")

# What the forked workers write from: set by ``write_outputs`` just before it forks them.
_shared: Sequence[tuple[Job, Sequence[Output], dict[str, Path]]] | None = None


def can_fork() -> bool:
    """Whether workers forked now would hold this process's data safely: fork exists and no other
    thread runs (one that held a lock at the fork would leave it held in the worker for good)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _write_one(task: tuple[int, int]) -> tuple[tuple[int, int], Path]:
    """In a worker: write output ``index`` of shared job ``part``."""
    assert _shared is not None, "a worker forked by write_outputs"
    part, index = task
    job, outputs, paths = _shared[part]
    output = outputs[index]
    return task, output.write(job, paths[output.kind])


def _order(parts: Sequence[tuple[Job, Sequence[Output], dict[str, Path]]]) -> list[tuple[int, int]]:
    rank = {kind: i for i, kind in enumerate(_COSTLIEST_FIRST)}
    tasks = [(p, i) for p, (_, outputs, _) in enumerate(parts) for i in range(len(outputs))]
    return sorted(tasks, key=lambda t: (rank.get(parts[t[0]][1][t[1]].kind, len(rank)), t))


def write_outputs(job: Job, outputs: Sequence[Output], paths: dict[str, Path], workers: int,
                  written_one: Callable[[Path], None] | None = None) -> list[Path] | None:
    """Write ``outputs`` (to ``paths``, by kind) on up to ``workers`` forked workers and return
    their paths in the order of ``outputs``; None, having written nothing, when fewer than two
    workers would help or forking is not safe here (``can_fork``). ``written_one`` is called with
    each path as its file is done."""
    written = write_parts([(job, outputs, paths)], workers, written_one)
    return None if written is None else written[0]


def write_parts(parts: Sequence[tuple[Job, Sequence[Output], dict[str, Path]]], workers: int,
                written_one: Callable[[Path], None] | None = None) -> list[list[Path]] | None:
    """``write_outputs`` for several simulations' files at once, on one set of workers, the
    costliest files of all first (the sample's four PNGs spread over both cores, not two by two):
    each part's paths in its order, or None as ``write_outputs``."""
    workers = worker_count(workers, sum(len(outputs) for _, outputs, _ in parts))  # never more than cores nor files
    if workers < 2 or not can_fork():
        return None
    global _shared
    _shared = parts
    written: dict[tuple[int, int], Path] = {}
    try:
        with WorkerPool(workers, context=multiprocessing.get_context("fork")) as pool:
            for task, path in pool.imap_unordered(_write_one, _order(parts)):
                written[task] = path
                if written_one is not None:
                    written_one(path)
    finally:
        _shared = None
    return [[written[(p, i)] for i in range(len(outputs))] for p, (_, outputs, _) in enumerate(parts)]
