"""Non-dominated points (both metrics minimised) and a tune's files.

``<title>_pareto.csv``/``.png``: the original strategies and the tuned variants, evaluated
together on fresh random numbers, on the tune's two Pareto metrics (mean and 95% CI), marking
those no other candidate beats on both. ``<title>_tune.csv``: every trial, its parameters, the
means of the metrics it was judged on, and whether it met the constraints.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sim.analysis.stats import estimate
from sim.exploration.front import non_dominated
from sim.export.atomic import atomic_save_figure, atomic_write_text
from sim.export.csv_files import csv_text, format_float
from sim.export.names import safe_title
from sim.export.palette import Palette, load_palette

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from sim.exploration.paths import Step
    from sim.exploration.tune import TuneResult
    from sim.settings.spec import StrategySpec


def _candidates(result: TuneResult) -> list[tuple[str, str, list[float], list[float]]]:
    """(label, kind, means, ci95s) of each held-out strategy on the two Pareto metrics."""
    from sim.exploration.tune import run_metric

    plan, final = result.plan, result.final
    rows = []
    for s, label in enumerate(final.labels):
        kind = "tuned" if label in result.variants else "original"
        ests = [estimate(run_metric(plan, final, m, s)) for m in plan.pareto]
        rows.append((label, kind, [e.mean for e in ests], [e.ci95 for e in ests]))
    return rows


def held_out_violations(result: TuneResult, s: int) -> list[str]:
    """The constraints held-out candidate ``s`` breaks, each with its mean
    (``gave_up == 0 (mean 3.5)``); empty when it meets them all."""
    from sim.exploration.tune import run_metric

    plan = result.plan
    broken = []
    for c in plan.constraints:
        mean = float(np.mean(run_metric(plan, result.final, c.metric, s)))
        if not c.holds(mean):
            broken.append(f"{c} (mean {format_float(mean)})")
    return broken


def _front(rows: list[tuple[str, str, list[float], list[float]]], broken: list[list[str]]) -> list[int]:
    """The candidates no other feasible one beats on both Pareto metrics, among those that meet
    the constraints on the held-out draws (``broken[s]`` empty: an infeasible point is on no front)."""
    feasible = [s for s in range(len(rows)) if not broken[s]]
    front = non_dominated([(rows[s][2][0], rows[s][2][1]) for s in feasible])
    return [feasible[i] for i in front]


def _param_text(entry: StrategySpec, steps: tuple[Step, ...]) -> str:
    """A tuned parameter's value in one candidate, read along the parameter's path below its
    strategy entry (``strategy.max_attempts``, ``policies[0].percent``): whole numbers as
    written, empty where the entry has no such key or leaves it unset (a limit of None), so a
    tuned limit beside an original without one is not a crash."""
    value: Any = entry
    try:
        for step in steps:
            value = value[step] if isinstance(step, int) else getattr(value, step)
    except (AttributeError, IndexError, TypeError):
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    return str(value) if isinstance(value, int) else format_float(value)


def pareto_csv_text(result: TuneResult) -> str:
    from sim.exploration.tune import run_metric

    plan = result.plan
    a, b = plan.pareto
    # The objective's columns once: not again when it is one of the Pareto metrics.
    objective = () if plan.objective in plan.pareto else (f"{plan.objective}_mean", f"{plan.objective}_ci95")
    header = ("simulation", "strategy", "kind", "clients", "repeats", "seed", f"{a}_mean", f"{a}_ci95",
              f"{b}_mean", f"{b}_ci95", *objective, "feasible", "pareto", *(p.name for p in plan.params))
    rows = _candidates(result)
    broken = [held_out_violations(result, s) for s in range(len(rows))]
    front = set(_front(rows, broken))
    lines = []
    for s, (label, kind, means, cis) in enumerate(rows):
        spec = result.final_spec
        obj = estimate(run_metric(plan, result.final, plan.objective, s))
        params = [_param_text(spec.strategies[s], p.path.steps[2:]) for p in plan.params]
        lines.append([plan.title, label, kind, str(spec.clients[0]), str(spec.repeat), str(spec.seed),
                      format_float(means[0]), format_float(cis[0]), format_float(means[1]), format_float(cis[1]),
                      *((format_float(obj.mean), format_float(obj.ci95)) if objective else ()),
                      "no" if broken[s] else "yes", "yes" if s in front else "no", *params])
    return csv_text(header, lines)


def tune_csv_text(result: TuneResult) -> str:
    plan = result.plan
    metrics = sorted({plan.objective, *plan.pareto, *(c.metric for c in plan.constraints)})
    header = ("simulation", "trial", *(p.name for p in plan.params), *(f"{m}_mean" for m in metrics),
              "feasible", "best", "error")
    lines = []
    for t in result.trials:
        lines.append([plan.title, str(t.number),
                      *(str(t.params[p.name]) if p.path.integer else format_float(t.params[p.name])
                        for p in plan.params),
                      *(format_float(t.means.get(m, math.nan)) for m in metrics),
                      "yes" if t.feasible else "no", "yes" if t is result.best else "no", t.error])
    return csv_text(header, lines)


def pareto_figure(result: TuneResult, palette: Palette | None = None) -> Figure:
    """The candidates on the two Pareto metrics with 95% CI bars; the front joined by a line."""
    from matplotlib.figure import Figure

    from sim.export.figure_style import DPI, style_axes, style_figure

    palette = palette or load_palette()
    plan = result.plan
    rows = _candidates(result)
    broken = [held_out_violations(result, s) for s in range(len(rows))]
    front = _front(rows, broken)
    fig = Figure(figsize=(7.5, 5.5), dpi=DPI, layout="constrained")
    style_figure(fig, palette)
    ax = fig.subplots()
    style_axes(ax, palette)
    for s, (label, kind, means, cis) in enumerate(rows):
        color = palette.series_color(s)
        ax.errorbar([means[0]], [means[1]], xerr=[np.nan_to_num(cis[0])], yerr=[np.nan_to_num(cis[1])],
                    fmt="*" if kind == "tuned" else "o", markersize=11 if kind == "tuned" else 7,
                    color=color, ecolor=color, capsize=3,
                    label=f"{label}{' ◆ front' if s in front else ''}"
                          f"{' (breaks a constraint)' if broken[s] else ''}",
                    alpha=0.45 if broken[s] else 1.0)
    if len(front) > 1:
        pts = sorted((rows[i][2][0], rows[i][2][1]) for i in front)
        ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=palette.foreground,
                linewidth=1.0, linestyle="--")
    ax.set_xlabel(f"{plan.pareto[0]}, mean ± 95% CI")
    ax.set_ylabel(f"{plan.pareto[1]}, mean ± 95% CI")
    legend = ax.legend(facecolor=palette.base["panel"], edgecolor=palette.foreground,
                       labelcolor=palette.foreground, fontsize=8)
    legend.get_frame().set_alpha(0.9)
    fig.suptitle(f"{plan.title}: original strategies and tuned {plan.label!r} "
                 f"(fresh seed {result.final_spec.seed}, {result.final_spec.repeat} repetitions)",
                 color=palette.foreground, fontsize=10)
    return fig


TUNE_SUFFIXES = ("_tune.csv", "_pareto.csv", "_pareto.png")


def write_tune_files(result: TuneResult, out_dir: str | Path, palette: Palette | None = None) -> list[Path]:
    """``<title>_tune.csv`` always; ``<title>_pareto.csv`` and ``.png`` when a trial was feasible."""
    stem = Path(out_dir) / safe_title(result.plan.title)
    written = [atomic_write_text(f"{stem}_tune.csv", tune_csv_text(result))]
    if result.final is not None:
        written.append(atomic_write_text(f"{stem}_pareto.csv", pareto_csv_text(result)))
        written.append(atomic_save_figure(pareto_figure(result, palette), f"{stem}_pareto.png"))
    return written


def stale_tune_names(title: str, written: list[Path]) -> list[str]:
    """Files of an earlier tune of ``title`` that this one does not replace (the Pareto files,
    when no trial was feasible this time): removed with the new set, so no old front is left
    beside new trials."""
    names = {p.name for p in written}
    return [name for name in (f"{safe_title(title)}{suffix}" for suffix in TUNE_SUFFIXES) if name not in names]
