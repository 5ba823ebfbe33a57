"""What ``backoff-sim explore`` prints: the map as tables, and a tune's best parameters."""

from __future__ import annotations

import math

from rich.console import Group
from rich.table import Table
from rich.text import Text

from sim.exploration.axes import format_value
from sim.exploration.grid import FLUID, FLUID_MARK, FLUID_NOTE, fluid_text, fraction_grid, is_fluid, row_story
from sim.exploration.pareto import held_out_violations
from sim.exploration.runner import ExploreResult
from sim.exploration.summary import has_verdict
from sim.exploration.tune import TuneResult


MAX_DECIMALS = 6


def decimals_for(means: list[float], cis: list[float]) -> int:
    """One number of decimals for a whole table, so its columns line up: three significant
    digits of its largest mean, or more where that shows its typical 95% CI as 0 (at most two
    more, and at most MAX_DECIMALS)."""
    finite = [abs(m) for m in means if not math.isnan(m)]
    largest = max(finite, default=0.0)
    by_mean = 2 - math.floor(math.log10(largest)) if largest > 0 else 0
    nonzero = sorted(c for c in cis if not math.isnan(c) and c > 0)
    by_ci = 1 - math.floor(math.log10(nonzero[len(nonzero) // 2])) if nonzero else by_mean
    return max(0, min(MAX_DECIMALS, by_mean + 2, max(by_mean, by_ci)))


def _estimates(result: ExploreResult, metric: str, s_count: int) -> tuple[list[float], list[float]]:
    """Every mean and CI of ``metric`` in the map (for ``decimals_for``)."""
    means: list[float] = []
    cis: list[float] = []
    for cell in result.cells:
        for s in range(s_count):
            e = cell.estimate(metric, s)
            means.append(e.mean)
            cis.append(e.ci95)
    return means, cis


def _cell_text(result: ExploreResult, index: tuple[int, ...], metric: str, s: int, decimals: int = 3) -> str:
    """A cell as the tables print it: ``2/3`` recovered runs, or the mean ± 95% CI; a fluid
    estimate as one (``fluid ✓``, ``≈1.234``), not as a simulated repetition."""
    position = [c.index for c in result.plan.cells].index(tuple(index))
    cr = result.cells[position]
    fluid = is_fluid(result.methods, position, s)
    if metric == "recovered":
        v = cr.verdict(s)
        if fluid:
            return fluid_text(v)
        return "" if v is None else f"{v.recovered}/{v.runs}"
    e = cr.estimate(metric, s)
    if math.isnan(e.mean):
        return "n/a"
    mean = f"{e.mean:,.{decimals}f}"
    if fluid:
        return FLUID_MARK + mean
    return mean if math.isnan(e.ci95) else f"{mean} ± {e.ci95:,.{decimals}f}"


def _fluid_note(result: ExploreResult) -> list[Text]:
    """The note that says how fluid cells read, when the map has any."""
    if result.methods and any(m == FLUID for cell in result.methods for m in cell):
        return [Text(FLUID_NOTE, style="dim")]
    return []


def boundary_lines(result: ExploreResult, s: int) -> list[str]:
    """Strategy ``s``'s map along the first axis, one line per value of the second, as runs of
    states (``✓ 1,000–1,545 · ✗ 2,388–120,000``); none without a verdict."""
    plan = result.plan
    if not has_verdict(plan.base):
        return []
    fractions = fraction_grid(plan, result.cells, s).reshape(plan.shape[0], -1)
    if len(plan.axes) == 1:
        return [row_story(plan, fractions[:, 0])]
    y_axis = plan.axes[1]
    return [f"{y_axis.name} {format_value(y)}: {row_story(plan, fractions[:, j])}"
            for j, y in enumerate(y_axis.values)]


LEGEND = "✓ recovered in ≥ 90% of the runs · ◐ some · ✗ in ≤ 10%"


def explore_summary(result: ExploreResult) -> Group:
    """One axis: a table of values × strategies; two axes: a grid per strategy, with its
    boundary lines (where it recovers and where it collapses) as the caption."""
    plan = result.plan
    metric = plan.metric
    labels = plan.base.labels
    if len(plan.axes) == 1:  # the metric, then each of `also`, a table each
        return Group(*(_one_axis_table(result, name) for name in (metric, *plan.also)),
                     *_fluid_note(result))
    what = _what(metric)
    decimals = _decimals(result, metric)
    x_axis, y_axis = plan.axes
    tables: list = []
    for s, label in enumerate(labels):
        table = Table(title_justify="left")
        table.add_column("", justify="right")
        for x in x_axis.values:
            table.add_column(format_value(x), justify="right")
        for j, y in enumerate(y_axis.values):
            table.add_row(format_value(y), *(_cell_text(result, (i, j), metric, s, decimals)
                                             for i in range(len(x_axis.values))))
        tables.append(Text(f"{plan.title} · {label}: {what} (rows {y_axis.name}, columns {x_axis.name})",
                           style="bold"))
        tables.append(table)
        lines = boundary_lines(result, s)
        if lines:
            tables.append(Text(f"along {x_axis.name} ({LEGEND}):\n" + "\n".join(f"  {line}" for line in lines)))
    return Group(*tables, *_fluid_note(result))


def _what(metric: str) -> str:
    return "recovered runs" if metric == "recovered" else f"{metric}, mean ± 95% CI"


def _decimals(result: ExploreResult, metric: str) -> int:
    if metric == "recovered":
        return 0
    return decimals_for(*_estimates(result, metric, len(result.plan.base.labels)))


def _one_axis_table(result: ExploreResult, metric: str) -> Table:
    """Values of the one axis × strategies, for ``metric``."""
    plan = result.plan
    axis = plan.axes[0]
    labels = plan.base.labels
    decimals = _decimals(result, metric)
    table = Table(title=f"{plan.title}: {_what(metric)}", title_justify="left")
    table.add_column(axis.name, justify="right")
    for label in labels:
        table.add_column(label, justify="right")
    for i, value in enumerate(axis.values):
        table.add_row(format_value(value), *(_cell_text(result, (i,), metric, s, decimals)
                                             for s in range(len(labels))))
    return table


def tune_summary(result: TuneResult) -> Group:
    """The best parameters and every candidate's objective on fresh random numbers."""
    plan = result.plan
    feasible = sum(t.feasible for t in result.trials)
    head = (f"{plan.title}: tuned {plan.label!r} for {plan.objective} over {len(result.trials)} trials "
            f"({plan.sampler}, seed {plan.seed}); {feasible} met the constraints"
            + (f" ({', '.join(map(str, plan.constraints))})" if plan.constraints else ""))
    if result.best is None:
        trials = result.trials
        why = [f"{c}: broken by {sum(not c.holds(t.means.get(c.metric, math.nan)) for t in trials)} of "
               f"{len(trials)} trials" for c in plan.constraints]
        return Group(head, "no trial met the constraints: widen the bounds or relax the constraints"
                     + (f" ({'; '.join(why)})" if why else ""))
    params = ", ".join(f"{k} = {v:g}" for k, v in result.best.params.items())
    table = Table(title=f"held out (seed {result.final_spec.seed}, {result.final_spec.repeat} repetitions)",
                  title_justify="left")
    table.add_column("strategy")
    table.add_column(f"{plan.objective}, mean ± 95% CI", justify="right")
    broken = []
    for s, label in enumerate(result.final.labels):
        e = result.objective_estimate(s)
        violations = held_out_violations(result, s)
        table.add_row(label + (" ✗" if violations else ""), e.format(3) if not math.isnan(e.mean) else "n/a")
        if violations:
            broken.append(f"✗ {label} breaks {'; '.join(violations)} on these draws")
    return Group(head, f"best: {params}", table, *broken)
