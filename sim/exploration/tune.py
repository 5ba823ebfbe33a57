"""Tune a strategy: minimise a metric over its parameters with Optuna (TPE or CMA-ES, seeded).

Trials are asked in fixed-size batches and evaluated in parallel on the backend, then told in
trial order, so the search is the same for any number of workers. Each trial runs the tuned
strategy alone at the simulation's seed (common random numbers across trials: trials are
compared on the same draws). Constraints hold on means over the repetitions; TPE uses them as
constraints, CMA-ES (which has none) leaves infeasible trials out. The best trial, and the
trials on the front of the two Pareto metrics, are then evaluated again beside the original
strategies on fresh random numbers (the seed + 1), which gives the objective's CI without the
optimism of reusing the draws it was selected on.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from sim.analysis.stats import Estimate, estimate
from sim.runs.sweep import ShouldStop
from sim.vocabulary.errors import ParamError, UserError
from sim.vocabulary.extras import install_hint
from sim.exploration.cache import CellCache
from sim.exploration.checks import check_spec
from sim.exploration.front import non_dominated
from sim.exploration.runner import run_cells
from sim.exploration.summary import CellResult
from sim.exploration.tune_plan import TunePlan
from sim.settings.spec import SimulationSpec, StrategySpec

Progress = Callable[[int, int], None]
TUNE_EXTRA_HINT = install_hint("tune")
MAX_FRONT_VARIANTS = 4
HELD_OUT_SEED_OFFSET = 1


@dataclass(frozen=True)
class Trial:
    """One evaluated parameter set: objective and constraint metrics are means over repetitions."""

    number: int
    params: dict[str, float | int]
    means: dict[str, float]
    objective: float
    feasible: bool
    error: str = ""


@dataclass
class TuneResult:
    plan: TunePlan
    trials: list[Trial]
    best: Trial | None
    # The held-out evaluation: original strategies, then the tuned variants.
    final_spec: SimulationSpec | None
    final: CellResult | None
    variants: dict[str, Trial]

    def objective_estimate(self, s: int) -> Estimate:
        """The objective's mean and 95% CI for strategy ``s`` of the held-out evaluation."""
        return estimate(run_metric(self.plan, self.final, self.plan.objective, s))


def run_metric(plan: TunePlan, cell: CellResult, metric: str, s: int) -> np.ndarray:
    """Per-run values of a tune metric: ``recovery_time`` counts a run that never recovered as
    the rest of the horizon after the last outage (the most it could have been), so a collapse
    is never cheaper than a slow recovery."""
    if metric == "recovery_time":
        spec = plan.base
        censor = float(spec.horizon) - spec.disruptions[-1].end
        times = cell.values["recovery_time"][s]
        return np.where(np.isnan(times), censor, times)
    return cell.values[metric][s]


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan


def trial_spec(plan: TunePlan, params: dict[str, float | int], *, label: str | None = None) -> SimulationSpec:
    """The base simulation with the tuned strategy's parameters set, that strategy alone (with
    its policies: a tuned variant keeps the chain it was tuned with)."""
    spec = plan.base
    for p in plan.params:
        spec = p.path.set(spec, params[p.name])
    check_spec(spec)
    tuned = spec.strategies[plan.strategy]
    if label is not None:
        tuned = replace(tuned, label=label)
    return replace(spec, strategies=(tuned,))


def held_out_spec(plan: TunePlan, tuned: tuple[StrategySpec, ...]) -> SimulationSpec:
    """The held-out evaluation: the original strategies, then ``tuned`` (the best and at most
    ``MAX_FRONT_VARIANTS`` of the front), on fresh random numbers."""
    return replace(plan.base, strategies=plan.base.strategies + tuned,
                   seed=plan.base.seed + HELD_OUT_SEED_OFFSET)


OPTUNA_SEEDS = 2**32  # Optuna seeds numpy's legacy MT19937, which takes 0 to 2**32 - 1


def optuna_seed(seed: int) -> int:
    """Optuna's seed for a tune seed (any of ours: 0 to 2**64 - 1): the seed itself below 2**32,
    so tunes keep the trials they always had; above, the first 4 bytes of the SHA-256 of its
    decimal digits, which every platform and version computes alike (seed % 2**32 would give
    2**32 the trials of 0)."""
    if seed < OPTUNA_SEEDS:
        return seed
    digest = hashlib.sha256(str(seed).encode("ascii")).digest()
    return int.from_bytes(digest[:4], "big")


def _sampler(plan: TunePlan):
    import optuna

    seed = optuna_seed(plan.seed)
    if plan.sampler == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    # TPE reads each trial's constraint values (Trial.set_constraint: <= 0 is feasible).
    return optuna.samplers.TPESampler(seed=seed)


def _suggest(trial, plan: TunePlan) -> dict[str, float | int]:
    out: dict[str, float | int] = {}
    for p in plan.params:
        if p.path.integer:
            out[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
        else:
            out[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
    return out


def require_optuna(plan: TunePlan):
    """The optuna module, or a one-line UserError saying how to install it."""
    try:
        import optuna
    except ImportError:
        raise UserError(f"[simulation.tune] in {plan.file} needs Optuna, which is not installed "
                        f"({TUNE_EXTRA_HINT})") from None
    return optuna


def run_tune(plan: TunePlan, backend, cache: CellCache, *, progress: Progress | None = None,
             should_stop: ShouldStop | None = None) -> TuneResult:
    """Search, then evaluate the best and the front's variants beside the originals."""
    optuna = require_optuna(plan)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    from optuna.trial import TrialState

    study = optuna.create_study(direction="minimize", sampler=_sampler(plan))
    metrics = {plan.objective, *plan.pareto, *(c.metric for c in plan.constraints)}
    repeat = plan.base.repeat
    n_final = len(plan.base.strategies) + 1 + MAX_FRONT_VARIANTS
    total = (plan.trials + n_final) * repeat
    done_before = 0

    def step_progress(done: int, _total: int) -> None:
        if progress:
            progress(done_before + done, total)

    trials: list[Trial] = []
    while len(trials) < plan.trials:
        batch = [study.ask() for _ in range(min(plan.batch, plan.trials - len(trials)))]
        suggested = [_suggest(t, plan) for t in batch]
        specs: list[SimulationSpec | None] = []
        errors: list[str] = []
        for params in suggested:
            try:
                specs.append(trial_spec(plan, params))
                errors.append("")
            except ParamError as exc:  # e.g. a base above the cap
                specs.append(None)
                errors.append(f"{exc.key}: {exc.message}")
        valid = [s for s in specs if s is not None]
        cells = iter(run_cells(valid, backend, cache, progress=step_progress, should_stop=should_stop))
        done_before += len(valid) * repeat
        for t, params, spec, error in zip(batch, suggested, specs, errors):
            if spec is None:
                study.tell(t, state=TrialState.FAIL)
                trials.append(Trial(t.number, params, {}, math.nan, False, error))
                continue
            cell = next(cells)
            means = {m: _mean(run_metric(plan, cell, m, 0)) for m in metrics}
            violations = [c.violation(means[c.metric]) for c in plan.constraints]
            feasible = all(v == 0 for v in violations) and not math.isnan(means[plan.objective])
            for c, v in zip(plan.constraints, violations):
                t.set_constraint(str(c), v)
            if plan.sampler == "cmaes" and not feasible:
                study.tell(t, state=TrialState.PRUNED)
            elif math.isnan(means[plan.objective]):
                study.tell(t, state=TrialState.FAIL)
            else:
                study.tell(t, means[plan.objective])
            trials.append(Trial(t.number, params, means, means[plan.objective], feasible))
    feasible = [t for t in trials if t.feasible]
    best = min(feasible, key=lambda t: (t.objective, t.number)) if feasible else None
    if best is None:
        return TuneResult(plan, trials, None, None, None, {})

    # The variants: the best, then the feasible trials on the front of the two Pareto metrics.
    front = non_dominated([(t.means[plan.pareto[0]], t.means[plan.pareto[1]]) for t in feasible])
    extra = [feasible[i] for i in front if feasible[i] is not best][:MAX_FRONT_VARIANTS]
    label = plan.label
    taken = set(plan.base.labels)
    variants: dict[str, Trial] = {}
    for t in [best, *extra]:
        name = f"{label} tuned" if t is best else f"{label} trial {t.number}"
        while name in taken:
            name += "'"
        taken.add(name)
        variants[name] = t
    tuned = tuple(trial_spec(plan, t.params, label=name).strategies[0] for name, t in variants.items())
    final_spec = held_out_spec(plan, tuned)
    total = done_before + len(final_spec.strategies) * repeat
    final = run_cells([final_spec], backend, cache, progress=step_progress, should_stop=should_stop)[0]
    return TuneResult(plan, trials, best, final_spec, final, variants)
