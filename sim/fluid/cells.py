"""Fluid runs of many (spec, strategy) pairs at once: grouped into batches the model integrates
together, each pair's numbers as one run's ``run_values`` (``sim.exploration.summary``), or the
reason it has no fluid form."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.analysis.metrics import amplification, cost, goodput, share_of_calls
from sim.fluid import compiled
from sim.fluid.delays import DelayTable, PackedTables, delay_table, pack
from sim.fluid.express import FluidCase, fluid_case
from sim.fluid.model import Batch, Series
from sim.fluid.verdict import fluid_recovery, weighted_quantiles
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
    p50, p99 = weighted_quantiles(lat, weights, (0.5, 0.99))
    recovered, when = fluid_recovery(first, series.first_latency[i], retried, series.retried_latency[i],
                                     series.step, case.network, case.bucket, case.horizon, case.disruptions)
    offered = t["offered"]
    return {"work": t["work"], "duration": case.horizon,
            "cost": cost(t["work"], case.horizon, case.work_to_duration), "gave_up": t["gave_up"],
            "successes": t["successes"], "timeouts": t["timeouts"], "rejections": t["rejections"],
            "unfinished": t["unfinished"], "goodput": goodput(t["successes"], case.horizon),
            "p50": p50, "p99": p99,
            "amplification": amplification(t["work"], offered),
            "success_rate": share_of_calls(t["successes"], offered),
            "retries_denied": t["retries_denied"], "calls_refused": 0.0, "breaker_open_time": 0.0,
            "recovered": recovered, "recovery_time": when, "undecided": 0.0}


def run_batch(cases: list[FluidCase], table: PackedTables, cores: int = 1) -> Series:
    """Integrate every case of one group (same kind, step and steps; a backoff table each):
    by the compiled step loop when it takes the batch and pays (``sim.fluid.compiled``; on up
    to ``cores`` threads where it can), the same numbers; else by the numpy loop
    (``sim.fluid.model.Batch``), the reference."""
    if compiled.worth_compiling(cases):
        series = compiled.run_compiled(cases, table, cores=cores)
        if series is not None:
            return series
    return Batch(cases, table).run()


def _integrate(members: list[tuple[int, FluidCase, DelayTable]], cores: int) -> list[tuple[int, FluidRun]]:
    """One batch: its cases integrated together, each case's run."""
    cases = [c for _, c, _ in members]
    packed = pack([t for _, _, t in members], np.array([c.timeout for c in cases]), cases[0].step)
    series = run_batch(cases, packed, cores)
    return [(i, FluidRun(_values(case, series, row))) for row, (i, case, _) in enumerate(members)]


def fluid_runs(pairs: Sequence[tuple[SimulationSpec, int]], cores: int = 1) -> list[FluidRun]:
    """Each (one-client-count spec, strategy index) pair's fluid run, in order: the pairs of a
    (kind, step, steps) integrated as one batch, in this process; on up to ``cores`` threads
    where the compiled loop releases the interpreter's lock (numba's jit, as ``sim.explore``
    takes it; not a module built ahead of time, as the commands take it)."""
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
    for members in groups.values():
        for i, run in _integrate(members, cores):
            out[i] = run
    return [r for r in out if r is not None]
