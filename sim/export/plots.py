"""PNG charts of a sweep, in the colours of a theme.

Figures are built with ``matplotlib.figure.Figure`` directly, never ``pyplot``: no global figure
registry, so the terminal app can export from a worker thread, and nothing needs closing. The
Agg renderer is chosen by ``savefig`` for PNG output. matplotlib is imported inside the functions
so ``import sim`` stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim.runs.sweep import SweepResult
from sim.core import events as ev
from sim.runs.engine import Run
from sim.export.atomic import atomic_save_figure
from sim.export.figure_style import DPI, style_axes, style_figure, style_legend, time_axis
from sim.export.palette import Palette, load_palette

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


def metrics_figure(result: SweepResult, palette: Palette | None = None) -> Figure:
    """Work, duration and cost against clients: one line per strategy with its 95% CI band."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    palette = palette or load_palette()
    spec = result.spec
    fig = Figure(figsize=(5 * len(METRIC_PANELS), 5), dpi=DPI, layout="constrained")
    style_figure(fig, palette)
    axes = fig.subplots(1, len(METRIC_PANELS), squeeze=False)[0]
    xs = np.asarray(spec.clients)
    for ax, (name, ylabel) in zip(axes, METRIC_PANELS):
        style_axes(ax, palette)
        spread = "mean ± 95% CI" if spec.repeat > 1 else "1 run (no CI)"
        ax.set_ylabel(f"{ylabel.format(unit=spec.time_unit)}, {spread}")
        if len(xs) == 1:  # one client count: a bar per strategy with its CI, not a row of dots
            _strategy_bars(ax, result, name, palette)
            continue
        for s, label in enumerate(spec.labels):
            color = palette.series_color(s)
            estimates = [result.summary(name, s, k) for k in range(len(xs))]
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


def _strategy_bars(ax, result: SweepResult, name: str, palette: Palette) -> None:
    """One bar per strategy at the simulation's one client count, its 95% CI as an error bar."""
    spec = result.spec
    estimates = [result.summary(name, s, 0) for s in range(len(spec.labels))]
    positions = np.arange(len(spec.labels))
    ci = np.nan_to_num(np.array([e.ci95 for e in estimates]), nan=0.0)
    ax.bar(positions, [e.mean for e in estimates], yerr=ci if spec.repeat > 1 else None,
           color=[palette.series_color(s) for s in range(len(spec.labels))], alpha=0.85,
           error_kw={"ecolor": palette.foreground, "capsize": 4, "linewidth": 1.2})
    ax.set_xticks(positions, spec.labels, rotation=20 if len(spec.labels) > 3 else 0, ha="right"
                  if len(spec.labels) > 3 else "center")
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
        ax.set_title(f"{label}: {int(writes.sum())} writes by {run.clients} clients (repetition {run.repetition})",
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
