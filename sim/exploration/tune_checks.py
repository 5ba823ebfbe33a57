"""The resource limits a tune is held to before any work, as a map's cells are (``checks``).

A tune runs trials of one strategy and then a held-out evaluation with more strategies than the
simulation has, so checking the simulation alone is not enough: the trial at the costliest
corner of the bounds, the evaluation, and all of them together are checked instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

from sim.runs.resources import EVENTS_LIMIT, check_resources, estimate
from sim.vocabulary.errors import ConfigError, ParamError
from sim.exploration.tune import MAX_FRONT_VARIANTS, held_out_spec, trial_spec
from sim.settings.spec import SimulationSpec

MAX_CORNERS = 256  # corners of the bounds built to find the costliest (8 tuned parameters)


def _costliest_corner(plan, workers: int) -> tuple[str, SimulationSpec]:
    """The trial spec at the corner of the bounds with the most events (then memory), and the
    corner as ``base = 50, cap = 2000``; the base spec's strategy when no corner is valid (a
    corner that breaks a rule, e.g. a base above the cap, is a failed trial, never a run)."""
    best: tuple[tuple[float, float], str, SimulationSpec] | None = None
    edges = [(p.low, p.high) for p in plan.params]
    for corner in itertools.islice(itertools.product(*edges), MAX_CORNERS):
        params = {p.name: int(v) if p.path.integer else v for p, v in zip(plan.params, corner)}
        try:
            spec = trial_spec(plan, params)
        except ParamError:
            continue
        cost = estimate(spec, workers)
        where = ", ".join(f"{name} = {value:g}" for name, value in params.items())
        if best is None or (cost.events, cost.memory) > best[0]:
            best = ((cost.events, cost.memory), where, spec)
    if best is None:
        base = plan.base
        alone = replace(base, strategies=(base.strategies[plan.strategy],))
        return "the strategy's own values (no corner of the bounds is valid)", alone
    return best[1], best[2]


def _originals(n: int) -> str:
    return "the original strategy" if n == 1 else f"the {n} original strategies"


def check_tunes(plans: Sequence, *, workers: int, force: bool = False,
                memory: tuple[int | None, int | None] | None = None) -> None:
    """Refuse (ConfigError, one line per tune) tunes the machine cannot hold or finish, before any
    work: a trial at the costliest corner of the bounds, the held-out evaluation (the original
    strategies and up to ``1 + MAX_FRONT_VARIANTS`` variants at that corner: more strategies than
    the simulation has), each through ``check_resources`` as a simulation of ``backoff-sim run``;
    and, unless ``force``, every trial and the evaluation together under the events limit."""
    errors: list[ConfigError] = []
    for plan in plans:
        where, trial = _costliest_corner(plan, workers)
        tuned = trial.strategies[0]
        variants = tuple(replace(tuned, label=f"{tuned.label} {i}") for i in range(1 + MAX_FRONT_VARIANTS))
        final = held_out_spec(plan, variants)
        checks = ((f"a trial at {where} (the costliest corner of the bounds)", trial),
                  (f"its held-out evaluation ({_originals(len(plan.base.strategies))} and up to "
                   f"{len(variants)} tuned variants)", final))
        refused = False
        for what, spec in checks:
            try:
                check_resources([spec], workers=workers, force=force, memory=memory)
            except ConfigError as exc:
                errors.append(ConfigError(f"tune: {what}: {exc.message}", file=plan.file,
                                          simulation=plan.title, key=exc.key, hint=exc.hint))
                refused = True
                break
        if refused or force:
            continue
        events = plan.trials * estimate(trial, workers).events + estimate(final, workers).events
        if events > EVENTS_LIMIT:
            errors.append(ConfigError(
                f"the tune's {plan.trials} trials and its held-out evaluation would simulate at least "
                f"{events:.2g} events, more than the limit of {EVENTS_LIMIT:.0e} (about an hour on 2 "
                "cores)", file=plan.file, simulation=plan.title, key="tune.trials",
                hint="fewer trials, repetitions or clients, or pass --force to run it anyway"))
    if errors:
        raise ConfigError.combine(errors)
