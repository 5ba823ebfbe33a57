"""PNG charts of a sweep, in the colours of a theme.

Figures are built with ``matplotlib.figure.Figure`` directly, never ``pyplot``: no global figure
registry, so the terminal app can export from a worker thread, and nothing needs closing. The
Agg renderer is chosen by ``savefig`` for PNG output. matplotlib is imported inside the functions
so ``import sim`` stays fast.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim.analysis.open_metrics import per_run
from sim.analysis.stats import Estimate, estimate
from sim.runs.sweep import SweepResult
from sim.core import events as ev
from sim.runs.engine import Run
from sim.export.atomic import atomic_save_figure
from sim.export.figure_style import DPI, style_axes, style_figure, style_legend, time_axis
from sim.export.palette import Palette, load_palette
from sim.vocabulary.repetitions import repetition_text
from sim.vocabulary.units import goodput_unit

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


def preload() -> None:
    """Import what drawing a PNG takes (~0.45 s) ahead of the first one: ``backoff-sim run`` does
    it while the sweep's workers run, so it is not in the time after the sweep, and the workers
    that write the last files (forked from it, ``sim.export.parallel``) start with it."""
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.ticker  # noqa: F401


METRIC_PANELS = (("work", "work (requests)"), ("duration", "duration ({unit})"), ("cost", "cost"))
# Traffic that runs to the horizon (open or Poisson clients against a server that replies): every
# run's duration is the horizon and its cost follows, so the panels that tell strategies apart
# are what the latency table says: goodput, p99 and amplification (attempts per call).
OPEN_PANELS = (("goodput", "goodput (successes/{rate})"), ("p99", "p99 latency ({unit})"),
               ("amplification", "amplification (attempts per call)"))
LABEL_WRAP = 14  # characters of a strategy's name per line under its bar


def runs_to_horizon(result: SweepResult) -> bool:
    """Whether every run lasts the horizon: repeating clients against a server that replies."""
    spec = result.spec
    return bool(spec.caps.keeps_series and getattr(spec.workload, "REPEATS", False))


def _estimates(result: SweepResult, name: str, s: int, rate: float) -> list[Estimate]:
    """Strategy ``s``'s mean and CI of panel ``name`` at each client count (goodput times
    ``rate``, to the unit its label says)."""
    spec = result.spec
    if name not in ("goodput", "p99"):
        return [result.summary(name, s, k) for k in range(len(spec.clients))]
    out = []
    for k in range(len(spec.clients)):
        runs = [m for r in range(spec.repeat) if (m := result.open_run(s, k, r)) is not None]
        values = per_run(runs, name)
        one = estimate(values[~np.isnan(values)])
        out.append(Estimate(one.mean * rate, one.ci95 * rate, one.n) if name == "goodput" else one)
    return out


def metrics_figure(result: SweepResult, palette: Palette | None = None) -> Figure:
    """Work, duration and cost against clients (goodput, p99 and amplification for runs that
    last the horizon): one line per strategy with its 95% CI band, or a bar per strategy at
    one client count."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    palette = palette or load_palette()
    spec = result.spec
    panels = OPEN_PANELS if runs_to_horizon(result) else METRIC_PANELS
    rate, rate_unit = 1.0, spec.time_unit
    if panels is OPEN_PANELS:
        rate, rate_unit = goodput_unit(spec.time_unit, [
            e.mean for s in range(len(spec.labels)) for e in _estimates(result, "goodput", s, 1.0)])
    fig = Figure(figsize=(5 * len(panels), 5), dpi=DPI, layout="constrained")
    style_figure(fig, palette)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    xs = np.asarray(spec.clients)
    for ax, (name, ylabel) in zip(axes, panels):
        style_axes(ax, palette)
        spread = "mean ± 95% CI" if spec.repeat > 1 else "1 run (no CI)"
        ax.set_ylabel(f"{ylabel.format(unit=spec.time_unit, rate=rate_unit)}, {spread}")
        if len(xs) == 1:  # one client count: a bar per strategy with its CI, not a row of dots
            _strategy_bars(ax, result, _estimates_at(result, name, rate), palette)
            continue
        for s, label in enumerate(spec.labels):
            color = palette.series_color(s)
            estimates = _estimates(result, name, s, rate)
            mean = np.array([e.mean for e in estimates])
            ci = np.nan_to_num(np.array([e.ci95 for e in estimates]), nan=0.0)
            ax.plot(xs, mean, color=color, label=label, linewidth=1.6,
                    marker="o" if len(xs) == 1 else None)
            ax.fill_between(xs, mean - ci, mean + ci, color=color, alpha=0.15, linewidth=0)
        ax.set_xlabel("number of clients")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        style_legend(ax, palette)
    fig.suptitle(f"{spec.control.type_name} · {spec.title}", color=palette.foreground)
    return fig


def _estimates_at(result: SweepResult, name: str, rate: float) -> list[Estimate]:
    """Each strategy's estimate of panel ``name`` at the one client count."""
    return [_estimates(result, name, s, rate)[0] for s in range(len(result.spec.labels))]


def bar_labels(labels: tuple[str, ...] | list[str]) -> list[str]:
    """Strategy names under their bars, wrapped at word boundaries so neighbours never overlap."""
    return [textwrap.fill(label, LABEL_WRAP, break_long_words=False) for label in labels]


def _strategy_bars(ax, result: SweepResult, estimates: list[Estimate], palette: Palette) -> None:
    """One bar per strategy at the simulation's one client count, its 95% CI as an error bar."""
    spec = result.spec
    positions = np.arange(len(spec.labels))
    ci = np.nan_to_num(np.array([e.ci95 for e in estimates]), nan=0.0)
    ax.bar(positions, [e.mean for e in estimates], yerr=ci if spec.repeat > 1 else None,
           color=[palette.series_color(s) for s in range(len(spec.labels))], alpha=0.85,
           error_kw={"ecolor": palette.foreground, "capsize": 4, "linewidth": 1.2})
    many = len(spec.labels) > 4  # five or more wrapped names still crowd a panel: slant them
    ax.set_xticks(positions, bar_labels(spec.labels), rotation=30 if many else 0,
                  ha="right" if many else "center", fontsize=8 if many else None)
    ax.set_xlabel(f"strategy, at {spec.clients[0]:,} clients")


def scatter_figure(result: SweepResult, runs: Mapping[str, Run], palette: Palette | None = None) -> Figure:
    """When each client sent each write, for one run per strategy: one panel per strategy."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    palette = palette or load_palette()
    spec = result.spec
    labels = list(runs)
    fig = Figure(figsize=(10, 1.0 + 3.5 * len(labels)), dpi=DPI, layout="constrained")
    style_figure(fig, palette)
    axes = fig.subplots(len(labels), 1, squeeze=False, sharex=True)[:, 0]
    for ax, label in zip(axes, labels):
        run = runs[label]
        s = spec.labels.index(label)
        codes = run.history.codes()
        ids = np.asarray(run.history.clients)
        writes = (codes == ev.CLIENT_REQUESTS_WRITE) & (ids < run.clients)  # the clients' (not a tier's)
        times = np.asarray(run.history.times)[writes]
        clients = ids[writes]
        style_axes(ax, palette)
        ax.scatter(times, clients, s=6, alpha=0.6, color=palette.series_color(s), linewidths=0)
        ax.set_title(f"{label}: {int(writes.sum()):,} writes by {run.clients:,} clients "
                     f"({repetition_text(run.repetition, spec.repeat)})",
                     fontsize=9)
        ax.set_ylabel("client id")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    span = max((float(np.max(r.history.times)) for r in runs.values() if len(r.history)), default=0.0)
    time_axis(axes[-1], spec.time_unit, span)
    fig.suptitle(f"{spec.control.type_name} · {spec.title}: client write requests over time",
                 color=palette.foreground)
    return fig


def write_metrics_png(result: SweepResult, path: str | Path, palette: Palette | None = None) -> Path:
    return atomic_save_figure(metrics_figure(result, palette), path)


def write_scatter_png(result: SweepResult, runs: Mapping[str, Run], path: str | Path,
                      palette: Palette | None = None) -> Path:
    return atomic_save_figure(scatter_figure(result, runs, palette), path)
