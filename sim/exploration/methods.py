"""``explore --method``: how a map's cells are computed.

- ``simulate``: every cell simulated (``runner.run_explores``), as always;
- ``fluid``: every (cell, strategy) from the fluid estimate (``sim.fluid``), one deterministic
  run each, in milliseconds; the pairs it cannot express are simulated, and said so in one line;
- ``adaptive``: the fluid estimate over the whole map, then the simulation of the pairs on its
  recover/collapse boundary (a pair whose verdict differs from a neighbour's along an axis),
  of those where the fluid is known to be weak (``sim.fluid.weak``: variable service, near
  saturation, a recovery within noise of the horizon), of a seeded sample of ``SAMPLE_SHARE``
  of the others, and of those without a fluid form;
  (5%: a region where the fluid estimate is wrong that holds a fifth of the off-boundary pairs
  is sampled at least once with probability 1 − 0.8^k, k the sample's size: 95% at the
  metastability map's 13 of 246; a wrong pair found there moves the boundary, and its
  neighbours are simulated in the next round);
  where a simulated pair's verdict moves the boundary, the new boundary's pairs are simulated
  in turn, round after round until none is left, so both sides of the final map's boundary are
  simulated. Disagreements between the two are counted for the summary line.

The CSV says per row which method produced it (``method``): ``fluid``, ``simulated`` (no fluid
form, or ``--method simulate`` has no such column), ``both`` (simulated; the fluid verdict
agrees) or ``both-disagree`` (simulated; the fluid verdict differs). A simulated pair's numbers
are always the simulation's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from sim.analysis.recovery import RecoverySummary
from sim.analysis.stats import Estimate
from sim.exploration.cache import CellCache
from sim.exploration.plan import ExplorePlan
from sim.exploration.runner import ExploreResult, Progress, run_cells
from sim.exploration.summary import CellResult, has_verdict
from sim.runs.procpool import worker_count
from sim.runs.sweep import ShouldStop

METHODS = ("simulate", "fluid", "adaptive")
SAMPLE_SHARE = 0.05  # adaptive: the share of off-boundary pairs simulated as a check (see the module)
SAMPLE_TAG = 0xADA  # the sample's stream: (seed, SAMPLE_TAG)
# _explore.csv's recovery_note of a row that is a fluid estimate (its run counts are empty)
FLUID_NOTE = "fluid estimate: no simulated runs"


def default_method(plans: Sequence[ExplorePlan]) -> str:
    """``explore``'s method when ``--method`` is not given: adaptive when some map has a
    recover/collapse verdict (the fluid estimate's boundary is what it refines), else simulate.

    Adaptive became the default once it agreed with full simulation on every shipped map
    (bench/fluid_maps.py: the same verdict in 288 of 288 (cell, strategy) pairs of
    examples/metastability.toml and 60 of 60 of bench/fluid_pool_map.toml, the same first
    collapse in every row); a map without a verdict has no boundary to refine."""
    return "adaptive" if any(has_verdict(plan.base) for plan in plans) else "simulate"


class MixedCell(CellResult):
    """A cell whose strategies' runs come from different sources (a fluid run, a simulated
    cell of that one strategy, or a strategy of a simulated full cell): each strategy's
    numbers, verdict and run count are its own source's."""

    def __init__(self, labels: tuple[str, ...], clients: int, parts: Sequence[tuple[CellResult, int]]) -> None:
        super().__init__(labels, clients, {})
        self.parts = list(parts)

    def estimate(self, name: str, s: int) -> Estimate:
        cr, i = self.parts[s]
        return cr.estimate(name, i)

    def verdict(self, s: int) -> RecoverySummary | None:
        cr, i = self.parts[s]
        return cr.verdict(i)

    def verdict_note(self, s: int) -> str:
        cr, i = self.parts[s]
        return cr.verdict_note(i)

    def runs(self, s: int) -> int:
        """How many runs strategy ``s``'s row rests on (1 for a fluid run)."""
        cr, i = self.parts[s]
        return int(np.asarray(cr.values["work"][i]).size)


@dataclass
class MethodStats:
    """What a fluid or adaptive map did, for its summary lines."""

    pairs: int = 0
    no_form: dict[str, int] = field(default_factory=dict)  # reason -> pairs simulated for it
    simulated: int = 0
    boundary: int = 0
    weak: dict[str, int] = field(default_factory=dict)  # reason -> pairs simulated for it (sim.fluid.weak)
    sample: int = 0
    rounds: int = 0
    compared: int = 0
    disagree: list[str] = field(default_factory=list)

    def lines(self, method: str, title: str) -> list[str]:
        out = []
        if self.no_form:
            reasons = "; ".join(f"{why} ({n})" for why, n in self.no_form.items())
            out.append(f"{title}: no fluid form, simulated instead: {reasons}")
        if method == "adaptive":
            agree = self.compared - len(self.disagree)
            where = f": {', '.join(self.disagree[:6])}{' …' if len(self.disagree) > 6 else ''}" if self.disagree else ""
            weak = "".join(f", {n} {why}" for why, n in self.weak.items())
            out.append(f"{title}: adaptive simulated {self.simulated} of {self.pairs} (cell, strategy) pairs "
                       f"({self.boundary} on the boundary{weak}, {self.sample} sampled; {self.rounds} "
                       f"round{'s' if self.rounds != 1 else ''}); fluid and simulation "
                       f"agree on {agree} of {self.compared}, disagree on {len(self.disagree)}{where}")
        return out


def fluid_cell(label: str, clients: int, values: dict[str, float]) -> CellResult:
    """One strategy's fluid run as a one-run cell."""
    return CellResult((label,), clients, {k: np.array([[v]], dtype=np.float64) for k, v in values.items()})


def recovered_state(summary: RecoverySummary | None) -> float:
    """1 recovered (in at least half the runs judged), 0 collapsed, nan no verdict."""
    if summary is None:
        return math.nan
    return 1.0 if summary.fraction >= 0.5 else 0.0


def boundary_pairs(plan: ExplorePlan, state: np.ndarray) -> set[tuple[int, int]]:
    """(cell position, strategy) pairs whose state differs from a neighbour's along an axis
    (both of them); ``state[position, strategy]``, nan where unknown (never a boundary)."""
    shape = plan.shape
    grid = state.reshape(*shape, state.shape[1])
    out: set[tuple[int, int]] = set()
    for axis in range(len(shape)):
        a = np.take(grid, range(shape[axis] - 1), axis=axis)
        b = np.take(grid, range(1, shape[axis]), axis=axis)
        differ = (a != b) & ~np.isnan(a) & ~np.isnan(b)
        for idx in zip(*np.nonzero(differ)):
            *cell, s = idx
            lo = tuple(cell)
            hi = tuple(c + (1 if k == axis else 0) for k, c in enumerate(cell))
            out.add((int(np.ravel_multi_index(lo, shape)), int(s)))
            out.add((int(np.ravel_multi_index(hi, shape)), int(s)))
    return out


def _simulate(plan: ExplorePlan, chosen: set[tuple[int, int]], backend, cache: CellCache, *,
              progress: Progress | None, should_stop: ShouldStop | None) -> dict[tuple[int, int], tuple[CellResult, int]]:
    """Simulate the chosen pairs: a cell whose every strategy is chosen as the full cell (the
    cache ``--method simulate`` fills), else one spec per strategy; a full cell already in the
    cache serves any of its strategies."""
    by_cell: dict[int, list[int]] = {}
    for position, s in sorted(chosen):
        by_cell.setdefault(position, []).append(s)
    out: dict[tuple[int, int], tuple[CellResult, int]] = {}
    specs, keys = [], []
    for position, strategies in by_cell.items():
        spec = plan.cells[position].spec
        full = cache.get(spec)
        if full is not None:
            for s in strategies:
                out[(position, s)] = (full, s)
        elif len(strategies) == len(spec.strategies):
            specs.append(spec)
            keys.append([(position, s, s) for s in strategies])
        else:
            for s in strategies:
                specs.append(replace(spec, strategies=(spec.strategies[s],)))
                keys.append([(position, s, 0)])
    results = run_cells(specs, backend, cache, progress=progress, should_stop=should_stop)
    for result, entries in zip(results, keys):
        for position, s, i in entries:
            out[(position, s)] = (result, i)
    return out


class _Rounds:
    """One progress for all of an adaptive map's rounds (and its plans): the runs done so far in
    all, out of those known so far, so the count never goes back (it went 153 of 159, then 2 of
    3, as each round started its own)."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._before = self._done = self._total = 0

    def next_round(self) -> None:
        self._before += self._total
        self._done = self._total = 0

    def __call__(self, done: int, total: int) -> None:
        self._done, self._total = done, total
        self._progress(self._before + done, self._before + total)


def run_explores_by(method: str, plans: Sequence[ExplorePlan], backend, cache: CellCache, *,
                    progress: Progress | None = None,
                    should_stop: ShouldStop | None = None) -> tuple[list[ExploreResult], list[str]]:
    """Every plan's map by ``method`` (fluid or adaptive), and the lines to print about it."""
    from sim.fluid.cells import fluid_runs
    from sim.fluid.weak import weak_reason

    results, notes = [], []
    rounds = _Rounds(progress) if progress is not None else None
    progress = rounds
    for plan in plans:
        stats = MethodStats()
        pairs = [(cell.spec, s) for cell in plan.cells for s in range(len(cell.spec.strategies))]
        runs = fluid_runs(pairs, cores=worker_count(backend.workers))  # --workers bounds its threads too
        count = len(plan.base.strategies)
        stats.pairs = len(pairs)
        fluid: dict[tuple[int, int], CellResult] = {}
        chosen: set[tuple[int, int]] = set()
        for k, run in enumerate(runs):
            key = (k // count, k % count)
            if run.values is None:
                stats.no_form[run.reason] = stats.no_form.get(run.reason, 0) + 1
                chosen.add(key)
            else:
                fluid[key] = fluid_cell(plan.base.labels[key[1]], plan.cells[key[0]].spec.clients[0], run.values)
        simulated: dict[tuple[int, int], tuple[CellResult, int]] = {}
        if method == "adaptive" and has_verdict(plan.base):
            state = np.full((len(plan.cells), count), np.nan)
            for (position, s), cr in fluid.items():
                state[position, s] = recovered_state(cr.verdict(0))
            boundary = boundary_pairs(plan, state) - chosen
            weak: set[tuple[int, int]] = set()
            for (position, s), run in ((k, runs[k[0] * count + k[1]]) for k in sorted(set(fluid) - boundary)):
                why = weak_reason(plan.cells[position].spec, run.values)
                if why is not None:
                    weak.add((position, s))
                    stats.weak[why] = stats.weak.get(why, 0) + 1
            rest = sorted(set(fluid) - boundary - weak)
            rng = np.random.default_rng([plan.base.seed, SAMPLE_TAG])
            take = math.ceil(SAMPLE_SHARE * len(rest)) if rest else 0
            sample = {rest[i] for i in rng.choice(len(rest), size=take, replace=False)} if take else set()
            stats.sample = len(sample)
            todo = chosen | boundary | weak | sample
            while todo:  # each round simulates new pairs: at most as many rounds as pairs
                stats.rounds += 1
                if rounds is not None:
                    rounds.next_round()
                simulated.update(_simulate(plan, todo, backend, cache, progress=progress, should_stop=should_stop))
                for (position, s), (cr, i) in simulated.items():
                    state[position, s] = recovered_state(cr.verdict(i))
                todo = boundary_pairs(plan, state) - set(simulated)
            stats.boundary = len(boundary_pairs(plan, state) | boundary)
        elif chosen:
            if method == "adaptive":
                notes.append(f"{plan.title}: no recover/collapse verdict (no outage or incident): adaptive "
                             "simulates every cell")
                chosen = set(fluid) | chosen
            if rounds is not None:
                rounds.next_round()
            simulated = _simulate(plan, chosen, backend, cache, progress=progress, should_stop=should_stop)
        stats.simulated = len(simulated)
        cells, methods = [], []
        for position, cell in enumerate(plan.cells):
            parts, tags = [], []
            for s in range(count):
                key = (position, s)
                if key in simulated:
                    cr, i = simulated[key]
                    parts.append((cr, i))
                    if key in fluid:
                        stats.compared += 1
                        same = recovered_state(fluid[key].verdict(0)) == recovered_state(cr.verdict(i))
                        if not same:
                            stats.disagree.append(f"{plan.base.labels[s]} @ {plan.cell_label(position)}")
                        tags.append("both" if same else "both-disagree")
                    else:
                        tags.append("simulated")
                else:
                    parts.append((fluid[key], 0))
                    tags.append("fluid")
            cells.append(MixedCell(plan.base.labels, cell.spec.clients[0], parts))
            methods.append(tuple(tags))
        results.append(ExploreResult(plan, cells, methods))
        notes += stats.lines(method, plan.title)
    return results, notes
