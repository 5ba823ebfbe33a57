"""``<title>_tiers.png``: amplification per tier of a tiered simulation, one panel per client
count, one line per strategy (mean ± 95% CI over repetitions), on a log scale: retries at every
layer multiply (4, 16, 64 under total failure) where a budget or the top alone keep it flat.
Built with the ``Figure`` object API in the theme's colours, like ``plots``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim.export.atomic import atomic_save_figure
from sim.export.figure_style import DPI, style_axes, style_figure, style_legend
from sim.export.palette import Palette, load_palette
from sim.runs.sweep import SweepResult

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

MAX_PANELS = 6  # client counts shown (the largest ones): more would make panels unreadable


def tiers_figure(result: SweepResult, palette: Palette | None = None) -> Figure:
    """Amplification (attempts arriving per client call) against the tier."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")  # 4, 16, 64 rather than 4×10⁰
    palette = palette or load_palette()
    spec = result.spec
    shown = list(range(len(spec.clients)))[-MAX_PANELS:]
    fig = Figure(figsize=(1 + 4 * len(shown), 4.5), dpi=DPI, layout="constrained")
    style_figure(fig, palette)
    axes = fig.subplots(1, len(shown), squeeze=False, sharey=True)[0]
    controls = [spec.control, *(t.control for t in spec.tiers)]
    for ax, k in zip(axes, shown):
        style_axes(ax, palette)
        for s, label in enumerate(spec.labels):
            summaries = result.tier_summaries(s, k)
            tiers = np.array([t.tier for t in summaries])
            mean = np.array([t.amplification.mean for t in summaries])
            ci = np.nan_to_num(np.array([t.amplification.ci95 for t in summaries]), nan=0.0)
            ax.errorbar(tiers, mean, yerr=ci, color=palette.series_color(s), label=label,
                        linewidth=1.6, marker="o", capsize=3)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
        ax.set_title(f"{spec.clients[k]:,} clients", fontsize=9)
        ax.set_xlabel("tier (1: called by the clients)")
        ax.set_xticks(range(1, len(controls) + 1),
                      [f"{i}\n{c.type_name}" for i, c in enumerate(controls, start=1)], fontsize=8)
    _log_labels(axes[0], plain)
    spread = "mean ± 95% CI" if spec.repeat > 1 else "1 run (no CI)"
    axes[0].set_ylabel(f"attempts arriving per client call, {spread}")
    style_legend(axes[0], palette)
    fig.suptitle(f"{spec.title}: amplification per tier", color=palette.foreground)
    return fig


WIDE_SPAN = 3.0  # a log axis spanning more than this factor labels 1, 2, 5 per decade only


def _log_labels(ax, plain) -> None:
    """Labels of the shared log axis that never overlap: over a wide span 1, 2 and 5 of each
    decade (every minor tick labelled ran 20, 30, 40, ... into each other); over a narrow one
    the minor ticks' labels, as there may be no decade mark at all."""
    from matplotlib.ticker import LogLocator, NullFormatter

    low, high = ax.get_ylim()
    if low > 0 and high / low > WIDE_SPAN:
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(NullFormatter())


def write_tiers_png(result: SweepResult, path: str | Path, palette: Palette | None = None) -> Path:
    return atomic_save_figure(tiers_figure(result, palette), path)
