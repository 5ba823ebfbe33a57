"""backoff-sim's public Python API: load a config, run it, record one run, explore and tune.

Re-exported by ``sim/__init__.py``. Every entry goes through ``sim.pipeline``, as the commands
and the app do, so a notebook meets the same checks and gets the same numbers and files.
Imports are deferred: ``import sim`` stays light for the command line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from sim import arguments
from sim.vocabulary.bounds import MAX_CLIENT_ID
from sim.vocabulary.errors import ArgumentTypeError, UserError
from sim.pipeline import Progress, Source, load, prepare, sweep

if TYPE_CHECKING:  # pragma: no cover
    from sim.exploration.backends import DaskBackend, LocalBackend
    from sim.recording import Recording
    from sim.results import ExploreResults, ReplayResults, Results, TuneResults
    from sim.settings.spec import Config

__all__ = ["load", "run", "record", "replay", "explore", "tune"]


def run(source: Source | None = None, *, seed: int | None = None, workers: int | None = None,
        progress: Progress | None = None, force: bool = False) -> Results:
    """Run every simulation of a config (the bundled sample for ``None``), as ``backoff-sim run``.

    ``workers``: processes (default all cores; results never depend on it); ``progress(done,
    total)`` is called as runs finish; ``force`` lifts the soft limits. The results give every
    table the command writes as rows (``.rows("metrics")``...) and write its files
    (``.export(directory)``).
    """
    from sim.results import Results

    seed, workers = arguments.seed(seed), arguments.workers(workers)
    progress, force = arguments.callback("progress", progress), arguments.flag("force", force)
    config = prepare(source, seed=seed, force=force, workers=workers)
    return Results(config, tuple(sweep(config, workers=workers, progress=progress)))


def record(source: Source | None = None, *, simulation: str, strategy: str, clients: int,
           repetition: int = 0, seed: int | None = None, force: bool = False) -> Recording:
    """Every event of one run (simulation title, strategy label, client count, repetition), as
    columns: the run the app plays, and the rows its events file holds. The run is held to the
    limits a sweep is (``force`` lifts the soft ones)."""
    from sim.pipeline import record as record_run
    from sim.recording import Recording

    simulation, strategy = arguments.text("simulation", simulation, False), arguments.text("strategy", strategy, False)
    clients = arguments.whole("clients", clients, 1, MAX_CLIENT_ID)
    repetition = arguments.whole("repetition", repetition, 0)
    seed, force = arguments.seed(seed), arguments.flag("force", force)
    return Recording.of(record_run(source, simulation=simulation, strategy=strategy, clients=clients,
                                   repetition=repetition, seed=seed, force=force))


def _plan_arguments(simulation, workers, progress, force, cache, dask) -> tuple[str | None, int | None, bool]:
    """``explore``'s and ``tune``'s common arguments, checked (``sim.arguments``)."""
    arguments.callback("progress", progress)
    if cache is not None and not isinstance(cache, (str, os.PathLike)):
        raise ArgumentTypeError(f"cache must be a directory's path or None, got {cache!r}")
    arguments.text("dask", dask)
    return (arguments.text("simulation", simulation), arguments.workers(workers),
            arguments.flag("force", force))


def replay(path: str | Path) -> ReplayResults:
    """The runs of an events file (``<title>_events.csv``, the sweep's or the app's export),
    rebuilt from their events: ``.rows("latency")`` and ``.rows("timeseries")`` give the rows
    the run that wrote the file gives for each of them (``sim.export.replay``), the same p50,
    p99 and recovery time. Runs against servers that keep no series have no such tables."""
    from sim.export.replay import replay as replay_file
    from sim.results import ReplayResults

    return ReplayResults(replay_file(path))


def _plans_of(config: Config, kind: str, simulation: str | None) -> tuple:
    plans = config.explores if kind == "explore" else config.tunes
    if simulation is not None:
        plans = tuple(p for p in plans if p.title == simulation)
    if not plans:
        if simulation is None:
            raise UserError(f"{config.path}: no simulation has a [simulation.{kind}] table "
                            "(add one under a [[simulation]]; see README, \"Explore\")")
        raise UserError(f"{config.path}: simulation {simulation!r} has no [simulation.{kind}] table")
    return plans


def _backend(workers: int | None, tasks: int | None, dask: str | None) -> LocalBackend | DaskBackend:
    from sim.exploration.backends import make_backend

    return make_backend(dask, workers, tasks)


def explore(source: Source, *, simulation: str | None = None, workers: int | None = None,
            cache: str | Path | None = None, progress: Progress | None = None,
            force: bool = False, dask: str | None = None, method: str | None = None) -> ExploreResults:
    """Compute the maps of a config's ``[simulation.explore]`` tables (of one ``simulation``, or
    all), as ``backoff-sim explore``: ``method`` ``"simulate"`` (every cell a full sweep),
    ``"fluid"`` or ``"adaptive"``, by default the command's (adaptive for maps with a
    recover/collapse verdict, else simulate); ``cache`` a directory of finished cells (none by
    default); ``dask`` a scheduler address or ``"local"``."""
    from sim.exploration.cache import CellCache
    from sim.exploration.methods import METHODS
    from sim.pipeline import check_plans, explore_maps
    from sim.results import ExploreResults

    simulation, workers, force = _plan_arguments(simulation, workers, progress, force, cache, dask)
    method = arguments.text("method", method)
    config = load(source)
    if force:
        config = config.with_soft_limits(False)
    plans = _plans_of(config, "explore", simulation)
    if method is not None and method not in METHODS:
        raise UserError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    check_plans(plans, (), workers=workers, force=force)
    tasks = sum(len(c.spec.strategies) for p in plans for c in p.cells)
    cells = CellCache(Path(cache) if cache is not None else None)
    with _backend(workers, tasks, dask) as backend:
        results, _ = explore_maps(plans, backend, cells, method=method, progress=progress)
    return ExploreResults(config, tuple(results))


def tune(source: Source, *, simulation: str | None = None, workers: int | None = None,
         cache: str | Path | None = None, progress: Progress | None = None,
         force: bool = False, dask: str | None = None) -> TuneResults:
    """Run the tunes of a config's ``[simulation.tune]`` tables (needs Optuna: the ``tune``
    extra), as ``backoff-sim explore`` does; the arguments as for ``explore``."""
    from sim.exploration.cache import CellCache
    from sim.pipeline import check_plans, tune as tune_plan
    from sim.results import TuneResults

    simulation, workers, force = _plan_arguments(simulation, workers, progress, force, cache, dask)
    config = load(source)
    if force:
        config = config.with_soft_limits(False)
    plans = _plans_of(config, "tune", simulation)
    check_plans((), plans, workers=workers, force=force)
    cells = CellCache(Path(cache) if cache is not None else None)
    with _backend(workers, None, dask) as backend:
        results = tuple(tune_plan(plan, backend, cells, progress=progress) for plan in plans)
    return TuneResults(config, results)
