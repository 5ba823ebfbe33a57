"""Fluid runs of many (spec, strategy) pairs at once: grouped into batches the model integrates
together, each pair's numbers as one run's ``run_values`` (``sim.exploration.summary``), or the
reason it has no fluid form."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.analysis.metrics import amplification, cost, goodput, share_of_calls
from sim.fluid.delays import DelayTable, delay_table, pack
from sim.fluid.express import FluidCase, fluid_case
from sim.fluid.model import Series, run_batch
from sim.fluid.verdict import fluid_recovery, weighted_quantile
from sim.settings.spec import SimulationSpec


@dataclass(frozen=True)
class FluidRun:
    """One pair's fluid numbers (``values``, as ``run_values`` names them), or ``reason``."""

    values: dict[str, float] | None
    reason: str = ""


def _table(case: FluidCase, tables: dict) -> DelayTable:
    strategy = case.strategy.strategy
    key = (repr(strategy), case.seed, case.step, case.timeout if strategy.max_elapsed is not None else None)
    if key not in tables:
        tables[key] = delay_table(strategy, case.seed, case.step, case.timeout)
    return tables[key]


def _values(case: FluidCase, series: Series, i: int) -> dict[str, float]:
    t = {k: float(v[i]) for k, v in series.totals.items()}
    first, retried = series.first[i], series.retried[i]
    lat = np.concatenate([series.first_latency[i], series.retried_latency[i]])
    weights = np.concatenate([first, retried])
    recovered, when = fluid_recovery(first, series.first_latency[i], retried, series.retried_latency[i],
                                     series.step, case.network, case.bucket, case.horizon, case.disruptions)
    offered = t["offered"]
    return {"work": t["work"], "duration": case.horizon,
            "cost": cost(t["work"], case.horizon, case.work_to_duration), "gave_up": t["gave_up"],
            "successes": t["successes"], "timeouts": t["timeouts"], "rejections": t["rejections"],
            "unfinished": t["unfinished"], "goodput": goodput(t["successes"], case.horizon),
            "p50": weighted_quantile(lat, weights, 0.5), "p99": weighted_quantile(lat, weights, 0.99),
            "amplification": amplification(t["work"], offered),
            "success_rate": share_of_calls(t["successes"], offered),
            "retries_denied": t["retries_denied"], "calls_refused": 0.0, "breaker_open_time": 0.0,
            "recovered": recovered, "recovery_time": when, "undecided": 0.0}


# A group is split over processes only from this many case-steps on: below, forking and
# gathering cost more than the integration (an 80-cell map of 6,000 steps is 960,000).
PARALLEL_MIN = 200_000
_JOBS: list[list[tuple[int, FluidCase, DelayTable]]] = []  # the forked workers' parts (see _part)
_LEVELS: list[int] = []


def _integrate(members: list[tuple[int, FluidCase, DelayTable]], levels: int) -> list[tuple[int, FluidRun]]:
    """One batch: its cases integrated together, each case's run."""
    cases = [c for _, c, _ in members]
    packed = pack([t for _, _, t in members], np.array([c.timeout for c in cases]), cases[0].step, levels)
    series = run_batch(cases, packed)
    return [(i, FluidRun(_values(case, series, row))) for row, (i, case, _) in enumerate(members)]


def _part(k: int) -> list[tuple[int, FluidRun]]:
    """Part ``k`` of the batches, in a forked worker (its inputs inherited, not sent)."""
    return _integrate(_JOBS[k], _LEVELS[k])


def fluid_runs(pairs: Sequence[tuple[SimulationSpec, int]], workers: int = 1) -> list[FluidRun]:
    """Each (one-client-count spec, strategy index) pair's fluid run, in order. With
    ``workers`` > 1 a large batch is split over that many forked processes; each part keeps the
    whole batch's levels, and every other quantity is per case, so the numbers are the same."""
    out: list[FluidRun | None] = [None] * len(pairs)
    tables: dict = {}
    groups: dict[tuple, list[tuple[int, FluidCase, DelayTable]]] = {}
    for i, (spec, s) in enumerate(pairs):
        case = fluid_case(spec, s)
        if isinstance(case, str):
            out[i] = FluidRun(None, case)
            continue
        table = _table(case, tables)
        groups.setdefault((case.kind, case.step, case.steps), []).append((i, case, table))
    jobs: list[tuple[list[tuple[int, FluidCase, DelayTable]], int]] = []
    for (_, _, steps), members in groups.items():
        levels = max(t.levels for _, _, t in members)
        parts = min(workers, len(members)) if len(members) * steps >= PARALLEL_MIN else 1
        for rows in np.array_split(np.arange(len(members)), parts):
            if rows.size:
                jobs.append(([members[j] for j in rows], levels))
    for i, run in _run_jobs(jobs, workers):
        out[i] = run
    return [r for r in out if r is not None]


def _run_jobs(jobs: list[tuple[list, int]], workers: int) -> list[tuple[int, FluidRun]]:
    """Every job's runs: here, or over ``workers`` forked processes when there are several
    jobs and ``fork`` exists."""
    import multiprocessing

    if (workers <= 1 or len(jobs) <= 1 or "fork" not in multiprocessing.get_all_start_methods()
            or multiprocessing.current_process().daemon):  # a pool's worker has no children
        return [r for members, levels in jobs for r in _integrate(members, levels)]
    _JOBS[:] = [members for members, _ in jobs]
    _LEVELS[:] = [levels for _, levels in jobs]
    pool = multiprocessing.get_context("fork").Pool(min(workers, len(jobs)), initializer=_worker_signals)
    try:
        parts = pool.map(_part, range(len(jobs)), chunksize=1)
        pool.close()  # the workers end on their own, not by a signal
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        _JOBS.clear()
        _LEVELS.clear()
    return [r for part in parts for r in part]


def _worker_signals() -> None:
    """A forked worker leaves Ctrl-C to the command (which ends the pool) and dies quietly on
    SIGTERM or SIGHUP, instead of running the command's handlers it inherited."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
