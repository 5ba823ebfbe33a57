"""backoff-sim's public Python API: load a config, run it, record one run, explore and tune.

Re-exported by ``sim/__init__.py``. Every entry goes through ``sim.pipeline``, as the commands
and the app do, so a notebook meets the same checks and gets the same numbers and files.
Imports are deferred: ``import sim`` stays light for the command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sim.errors import UserError
from sim.pipeline import Progress, Source, load, prepare, sweep

if TYPE_CHECKING:  # pragma: no cover
    from sim.exploration.backends import DaskBackend, LocalBackend
    from sim.recording import Recording
    from sim.results import ExploreResults, Results, TuneResults
    from sim.spec import Config

__all__ = ["load", "run", "record", "explore", "tune"]


def run(source: Source | None = None, *, seed: int | None = None, workers: int | None = None,
        progress: Progress | None = None, force: bool = False) -> Results:
    """Run every simulation of a config (the bundled sample for ``None``), as ``backoff-sim run``.

    ``workers``: processes (default all cores; results never depend on it); ``progress(done,
    total)`` is called as runs finish; ``force`` lifts the soft limits. The results give every
    table the command writes as rows (``.rows("metrics")``...) and write its files
    (``.export(directory)``).
    """
    from sim.results import Results

    config = prepare(source, seed=seed, force=force, workers=workers)
    return Results(config, tuple(sweep(config, workers=workers, progress=progress)))


def record(source: Source | None = None, *, simulation: str, strategy: str, clients: int,
           repetition: int = 0, seed: int | None = None, force: bool = False) -> Recording:
    """Every event of one run (simulation title, strategy label, client count, repetition), as
    columns: the run the app plays, and the rows its events file holds. The run is held to the
    limits a sweep is (``force`` lifts the soft ones)."""
    from sim.pipeline import record as record_run
    from sim.recording import Recording

    return Recording.of(record_run(source, simulation=simulation, strategy=strategy, clients=clients,
                                   repetition=repetition, seed=seed, force=force))


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

    config = load(source)
    if force:
        config = config.with_soft_limits(False)
    plans = _plans_of(config, "tune", simulation)
    check_plans((), plans, workers=workers, force=force)
    cells = CellCache(Path(cache) if cache is not None else None)
    with _backend(workers, None, dask) as backend:
        results = tuple(tune_plan(plan, backend, cells, progress=progress) for plan in plans)
    return TuneResults(config, results)
