"""``<title>_phase.png``: each strategy's portrait, a panel each.

Shading is the return probability (the theme's success colour where runs return, its error
colour where they do not); arrows the drift, each scaled to the same length (direction only:
speeds differ by orders of magnitude); the line where half the runs return is the boundary; a
green circle ringed in the foreground colour marks the healthy equilibrium and a cross a
collapsed one on the grid (when the collapse lies beyond the grid, the panel says so).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim.export.atomic import atomic_save_figure
from sim.export.figure_style import DPI, style_axes, style_figure, style_legend
from sim.export.palette import Palette
from sim.phase.portrait import Portrait

PHASE_PNG_SUFFIX = "_phase.png"


def phase_figure(portraits: list[Portrait], palette: Palette):
    from matplotlib.colors import LinearSegmentedColormap
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5 * len(portraits), 5), dpi=DPI, layout="constrained")
    style_figure(fig, palette)
    cmap = LinearSegmentedColormap.from_list(
        "return", [palette.base["error"], palette.base["surface"], palette.base["success"]])
    mesh = None
    for i, p in enumerate(portraits):
        ax = fig.add_subplot(1, len(portraits), i + 1)
        style_axes(ax, palette)
        grid = p.settings.grid
        work, orbit = grid.work, grid.orbit
        prob = p.probabilities
        mesh = ax.pcolormesh(work, orbit, prob, cmap=cmap, vmin=0, vmax=1, shading="nearest")
        dw, do = p.drifts()
        sw, so = grid.steps
        u, v = dw / sw, do / so  # in grid steps, so both axes read alike
        norm = np.hypot(u, v)
        with np.errstate(invalid="ignore", divide="ignore"):
            uu, vv = np.where(norm > 0, u / norm, 0), np.where(norm > 0, v / norm, 0)
        ax.quiver(work, orbit, uu * sw, vv * so, angles="xy", scale_units="xy", scale=1 / 0.7,
                  color=palette.foreground, width=0.004)
        if (prob >= 0.5).any() and (prob < 0.5).any():
            ax.contour(work, orbit, prob, levels=[0.5], colors=[palette.base["warning"]], linewidths=2)
            ax.plot([], [], color=palette.base["warning"], linewidth=2, label="boundary (half return)")
        hw, ho = p.healthy_state
        # Filled green, ringed in the foreground colour: it reads the same on the green cells
        # it sits on (a green ring vanished there, leaving its dark fill) and in the legend.
        ax.plot([hw], [ho], "o", color=palette.base["success"], markeredgecolor=palette.foreground,
                markeredgewidth=2.0, markersize=11, zorder=5, clip_on=False,
                label=f"healthy ({hw:.0f}, {ho:.0f})")
        collapsed = p.collapsed_state()
        if collapsed is not None:
            ax.plot([collapsed[0]], [collapsed[1]], "X", color=palette.base["error"],
                    markeredgecolor=palette.foreground, markersize=11, label=f"collapsed {collapsed}")
        elif (prob < 0.5).any():
            ax.plot([], [], " ", label="collapsed: beyond the grid (work grows)")
        ax.set_xlim(work[0] - sw / 2, work[-1] + sw / 2)
        ax.set_ylim(orbit[0] - so / 2, orbit[-1] + so / 2)
        ax.set_xlabel("work at the server (queued + in service)")
        ax.set_ylabel(f"calls in backoff (attempt {p.settings.attempt})")
        ax.set_title(f"{p.title}: {p.label} (returns within {p.settings.limit:,.0f} {p.time_unit})",
                     fontsize=10)
        style_legend(ax, palette)
    if mesh is not None:
        bar = fig.colorbar(mesh, ax=fig.axes, shrink=0.9)
        bar.set_label("fraction of runs back to healthy within the time limit", color=palette.foreground)
        bar.ax.tick_params(colors=palette.foreground)
    return fig


def write_phase_png(title_stem: str, portraits: list[Portrait], directory: Path, palette: Palette) -> Path:
    return atomic_save_figure(phase_figure(portraits, palette), directory / f"{title_stem}{PHASE_PNG_SUFFIX}",
                              facecolor=palette.background)
