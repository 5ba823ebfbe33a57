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

__all__ = ["can_fork", "write_outputs"]

# The files that take longest first (a file per worker at a time: the long ones must not start
# last), then the others in their order. Names are ``Output.kind``.
_COSTLIEST_FIRST = ("events_csv", "scatter_png", "timeseries_png", "metrics_png", "latency_png", "tiers_png")

# What the forked workers write from: set by ``write_outputs`` just before it forks them.
_shared: tuple[Job, Sequence[Output], dict[str, Path]] | None = None


def can_fork() -> bool:
    """Whether workers forked now would hold this process's data safely: fork exists and no other
    thread runs (one that held a lock at the fork would leave it held in the worker for good)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _write_one(index: int) -> tuple[int, Path]:
    """In a worker: write output ``index`` of the shared job."""
    assert _shared is not None, "a worker forked by write_outputs"
    job, outputs, paths = _shared
    output = outputs[index]
    return index, output.write(job, paths[output.kind])


def _order(outputs: Sequence[Output]) -> list[int]:
    rank = {kind: i for i, kind in enumerate(_COSTLIEST_FIRST)}
    return sorted(range(len(outputs)), key=lambda i: (rank.get(outputs[i].kind, len(rank)), i))


def write_outputs(job: Job, outputs: Sequence[Output], paths: dict[str, Path], workers: int,
                  written_one: Callable[[Path], None] | None = None) -> list[Path] | None:
    """Write ``outputs`` (to ``paths``, by kind) on up to ``workers`` forked workers and return
    their paths in the order of ``outputs``; None, having written nothing, when fewer than two
    workers would help or forking is not safe here (``can_fork``). ``written_one`` is called with
    each path as its file is done."""
    workers = worker_count(workers, len(outputs))  # never more than cores nor files
    if workers < 2 or not can_fork():
        return None
    global _shared
    _shared = (job, outputs, paths)
    written: dict[int, Path] = {}
    try:
        with WorkerPool(workers, context=multiprocessing.get_context("fork")) as pool:
            for index, path in pool.imap_unordered(_write_one, _order(outputs)):
                written[index] = path
                if written_one is not None:
                    written_one(path)
    finally:
        _shared = None
    return [written[i] for i in range(len(outputs))]
