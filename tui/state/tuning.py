"""A simulation's ``[simulation.tune]`` run from the app: the tuned variant as a strategy.

Blocking (the main screen calls it from a thread worker) and free of Textual. The tune is the
headless command's (``sim.exploration.tune.run_tune``, same cache), so after ``backoff-sim explore
CONFIG`` with the same output directory every trial reads back from the cache. The best trial
becomes a ``StrategySpec`` the source appends to the simulation (``ConfigSource.with_tuned``):
a row of the strategy table that is selected and replayed like any other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.runs.procpool import worker_count
from sim.runs.sweep import Progress, ShouldStop
from sim.exploration.backends import DaskBackend, LocalBackend
from sim.exploration.cache import CellCache
from sim.exploration.tune_checks import check_tunes
from sim.exploration.tune import run_tune
from sim.exploration.tune_plan import TunePlan
from sim.settings.spec import StrategySpec


@dataclass(frozen=True)
class TuneOutcome:
    """The tuned variant (None when no trial met the constraints) and a line saying what it is."""

    simulation: str
    strategy: StrategySpec | None
    summary: str


def tune_variant(plan: TunePlan, *, backend: LocalBackend | DaskBackend, cache: CellCache,
                 progress: Progress | None = None, should_stop: ShouldStop | None = None) -> TuneOutcome:
    """Run ``plan`` on ``backend`` (the app's: the local pool, or Dask); the best trial as a
    strategy, labelled as the command's ``_pareto.csv`` labels it (``jitter tuned``)."""
    # The limits the headless command checks before any work (--force: soft_limits off).
    check_tunes([plan], workers=worker_count(getattr(backend, "workers", None)),
                force=not plan.base.soft_limits)
    hits = cache.hits
    result = run_tune(plan, backend, cache, progress=progress, should_stop=should_stop)
    from_cache = cache.hits - hits
    cached = f"; {from_cache} cells from the cache" if from_cache else ""
    if result.best is None:
        return TuneOutcome(plan.title, None, f"No trial of {len(result.trials)} met the constraints "
                           f"({', '.join(map(str, plan.constraints))}): widen the bounds or relax them{cached}.")
    name = next(n for n, t in result.variants.items() if t is result.best)
    labels = result.final.labels
    e = result.objective_estimate(labels.index(name))
    objective = "n/a" if math.isnan(e.mean) else e.format(3)
    params = ", ".join(f"{k} = {v:g}" for k, v in result.best.params.items())
    summary = (f"{name}: {params} · {plan.objective} {objective} on fresh draws (seed "
               f"{result.final_spec.seed}) · best of {len(result.trials)} trials{cached}")
    return TuneOutcome(plan.title, result.final_spec.strategy(name), summary)
