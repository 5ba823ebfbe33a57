"""``<title>_explore.png``: a metric across the explored values.

One axis: the metric against the parameter, one line per strategy with its 95% CI band (and,
where a verdict exists, a second panel with the fraction of runs that recovered). Two axes: one
heatmap per strategy, cells placed by their index (so log and uneven axes read alike) and
labelled with the values, each cell with its text (recovered runs ``2/3``, or the mean; see
``grid``); where a verdict exists the recover/collapse boundary (recovered fraction 0.5) is
drawn over it. Figures use the object API, no pyplot (as sim.export.plots).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim.exploration.axes import format_value
from sim.exploration.grid import BOUNDARY, map_cells
from sim.exploration.runner import ExploreResult
from sim.exploration.summary import METRIC_HELP, has_verdict
from sim.export.atomic import atomic_save_figure
from sim.export.names import safe_title
from sim.export.figure_style import DPI, style_axes, style_figure, style_legend
from sim.export.palette import Palette, load_palette

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

_ANNOTATE_MAX_CELLS = 100
# Cell labels at a size that reads at the PNG's 100 dpi (7 pt did not), in cells sized for them:
# a panel gets CELL_INCHES per column and row beyond its axes and colour bar (PANEL_MARGIN).
CELL_FONT = 10
CELL_INCHES = (0.8, 0.5)
PANEL_MARGIN = (2.8, 2.2)


def heatmap_size(columns: int, rows: int, strategies: int) -> tuple[float, float]:
    """The figure's size in inches for ``strategies`` heat maps of columns × rows cells."""
    width = max(5.5, PANEL_MARGIN[0] + CELL_INCHES[0] * columns)
    height = max(5.0, PANEL_MARGIN[1] + CELL_INCHES[1] * rows)
    return width * strategies, height


def metric_grid(result: ExploreResult, metric: str, s: int) -> np.ndarray:
    """The metric's mean (``recovered``: recovered fraction) per cell for strategy ``s``,
    shaped like the plan's grid."""
    values = [c.value for c in map_cells(result.plan, result.cells, s, metric)]
    return np.array(values, dtype=np.float64).reshape(result.plan.shape)


def _text_grid(result: ExploreResult, metric: str, s: int) -> np.ndarray:
    """Each cell's label (``2/3`` for recovered runs, else the mean), shaped like the plan."""
    texts = [c.text for c in map_cells(result.plan, result.cells, s, metric, methods=result.methods)]
    return np.array(texts, dtype=object).reshape(result.plan.shape)


def _ci_grid(result: ExploreResult, metric: str, s: int) -> np.ndarray:
    return np.array([cr.estimate(metric, s).ci95 for cr in result.cells],
                    dtype=np.float64).reshape(result.plan.shape)


def boundary_segments(recovered: np.ndarray) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Cell edges between a recovered cell (fraction >= 0.5) and a collapsed one, on a grid
    indexed [row, column] with cells centred on integers; cells without a verdict have none."""
    ok = recovered >= BOUNDARY
    known = ~np.isnan(recovered)
    segments = []
    rows, cols = recovered.shape
    for r in range(rows):
        for c in range(cols):
            if c + 1 < cols and known[r, c] and known[r, c + 1] and ok[r, c] != ok[r, c + 1]:
                segments.append(((c + 0.5, r - 0.5), (c + 0.5, r + 0.5)))
            if r + 1 < rows and known[r, c] and known[r + 1, c] and ok[r, c] != ok[r + 1, c]:
                segments.append(((c - 0.5, r + 0.5), (c + 0.5, r + 0.5)))
    return segments


def _axis_ticks(values: tuple) -> list[str]:
    return [format_value(v) for v in values]


def _line_panel(ax, result: ExploreResult, metric: str, palette: Palette) -> None:
    axis = result.plan.axes[0]
    xs = np.asarray(axis.values, dtype=np.float64)
    for s, label in enumerate(result.plan.base.labels):
        color = palette.series_color(s)
        mean = metric_grid(result, metric, s)
        ax.plot(xs, mean, color=color, label=label, linewidth=1.6, marker="o", markersize=3)
        if metric != "recovered":
            ci = np.nan_to_num(_ci_grid(result, metric, s), nan=0.0)
            ax.fill_between(xs, mean - ci, mean + ci, color=color, alpha=0.15, linewidth=0)
    if axis.scale == "log":
        ax.set_xscale("log")
    ax.set_xlabel(axis.name)
    ax.set_ylabel("recovered fraction of runs" if metric == "recovered" else f"{metric}, mean ± 95% CI")
    if metric == "recovered":
        ax.set_ylim(-0.05, 1.05)
    ax.set_title(METRIC_HELP.get(metric, metric), fontsize=9)
    style_legend(ax, palette)


def _heatmap(fig, ax, result: ExploreResult, metric: str, s: int, palette: Palette,
             limits: tuple[float, float]) -> None:
    plan = result.plan
    x_axis, y_axis = plan.axes
    grid = metric_grid(result, metric, s).T  # rows: y values, columns: x values
    cmap = "RdYlGn" if metric == "recovered" else "viridis"
    mesh = ax.pcolormesh(np.arange(grid.shape[1] + 1) - 0.5, np.arange(grid.shape[0] + 1) - 0.5,
                         np.ma.masked_invalid(grid), cmap=cmap, vmin=limits[0], vmax=limits[1])
    ax.set_xticks(range(len(x_axis.values)), _axis_ticks(x_axis.values), rotation=45, ha="right")
    ax.set_yticks(range(len(y_axis.values)), _axis_ticks(y_axis.values))
    ax.set_xlabel(x_axis.name)
    ax.set_ylabel(y_axis.name)
    ax.grid(False)
    if grid.size <= _ANNOTATE_MAX_CELLS:
        texts = _text_grid(result, metric, s).T
        for (row, col), value in np.ndenumerate(grid):
            if not math.isnan(value):
                ax.text(col, row, texts[row, col], ha="center", va="center", fontsize=CELL_FONT, in_layout=False,
                        color="black",
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.7, "linewidth": 0})
    if has_verdict(plan.base):
        from matplotlib.collections import LineCollection

        segments = boundary_segments(metric_grid(result, "recovered", s).T)
        if segments:
            ax.add_collection(LineCollection(segments, colors=palette.foreground, linewidths=2.5))
    ax.set_title(plan.base.labels[s], fontsize=10)
    colorbar = fig.colorbar(mesh, ax=ax, shrink=0.85)
    colorbar.set_label("recovered fraction" if metric == "recovered" else f"{metric} (mean)",
                       color=palette.foreground)
    colorbar.ax.tick_params(colors=palette.foreground)


def explore_figure(result: ExploreResult, palette: Palette | None = None) -> Figure:
    """The explore map of ``result`` (see the module docstring)."""
    from matplotlib.figure import Figure

    palette = palette or load_palette()
    plan = result.plan
    metric = plan.metric
    n_strategies = len(plan.base.labels)
    if len(plan.axes) == 1:
        panels = [metric, *(m for m in plan.also if m != metric)]
        if has_verdict(plan.base) and "recovered" not in panels:
            panels.append("recovered")
        fig = Figure(figsize=(6.5 * len(panels), 5), dpi=DPI, layout="constrained")
        style_figure(fig, palette)
        for ax, name in zip(fig.subplots(1, len(panels), squeeze=False)[0], panels):
            style_axes(ax, palette)
            _line_panel(ax, result, name, palette)
    else:
        fig = Figure(figsize=heatmap_size(*plan.shape, n_strategies), dpi=DPI, layout="constrained")
        style_figure(fig, palette)
        grids = np.stack([metric_grid(result, metric, s) for s in range(n_strategies)])
        finite = grids[np.isfinite(grids)]
        limits = (0.0, 1.0) if metric == "recovered" else (
            (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0))
        for s, ax in enumerate(fig.subplots(1, n_strategies, squeeze=False)[0]):
            style_axes(ax, palette)
            _heatmap(fig, ax, result, metric, s, palette, limits)
    boundary = (" · line: recovered in ≥ half the runs | fewer"
                if len(plan.axes) == 2 and has_verdict(plan.base) else "")
    clients = "" if any(a.path.steps == ("clients",) for a in plan.axes) else f" · {plan.base.clients[0]} clients"
    fig.suptitle(f"{plan.base.control.type_name} · {plan.title}{clients} · {_runs_text(result)}"
                 f"{boundary}", color=palette.foreground)
    return fig


def _runs_text(result: ExploreResult) -> str:
    """``3 repetitions``; a map made by ``--method fluid`` or ``adaptive`` says which cells are
    fluid estimates (one deterministic run each)."""
    text = f"{result.plan.base.repeat} repetitions"
    if result.methods is None:
        return text
    tags = [m for cell in result.methods for m in cell]
    fluid = sum(m == "fluid" for m in tags)
    if fluid == len(tags):
        return "fluid estimate"
    return f"{text} · {fluid} of {len(tags)} fluid estimates" if fluid else text


def explore_png_path(title: str, out_dir: str | Path) -> Path:
    return Path(out_dir) / f"{safe_title(title)}_explore.png"


def write_explore_png(result: ExploreResult, out_dir: str | Path, palette: Palette | None = None) -> Path:
    return atomic_save_figure(explore_figure(result, palette), explore_png_path(result.plan.title, out_dir))
