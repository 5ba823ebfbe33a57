"""The look every PNG figure shares: the theme's background, axes, grid and legend colours.

One place for the styling that the sweep's charts (``plots``, ``overload_plots``) and the
explore and tune figures (``sim.explore.figure``, ``sim.explore.pareto``) all apply, so a theme
changes every PNG alike. It only styles figures it is given: matplotlib is not imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sim.export.palette import Palette

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["DPI", "SECONDS_FROM", "style_axes", "style_figure", "style_legend", "time_axis"]

DPI = 100


def style_figure(fig: Figure, palette: Palette) -> None:
    """The figure's background in the theme's."""
    fig.set_facecolor(palette.background)


def style_axes(ax: Axes, palette: Palette) -> None:
    """Axes, ticks, labels and a light grid in the theme's colours."""
    fg = palette.foreground
    ax.set_facecolor(palette.base["surface"])
    ax.tick_params(colors=fg, which="both")
    for spine in ax.spines.values():
        spine.set_color(fg)
    ax.xaxis.label.set_color(fg)
    ax.yaxis.label.set_color(fg)
    ax.title.set_color(fg)
    ax.grid(True, color=palette.base["panel"], linewidth=0.6)
    ax.set_axisbelow(True)


def style_legend(ax: Axes, palette: Palette) -> None:
    """The axes' legend, on the theme's panel colour."""
    legend = ax.legend(facecolor=palette.base["panel"], edgecolor=palette.foreground,
                       labelcolor=palette.foreground, fontsize=8)
    legend.get_frame().set_alpha(0.9)


# Milliseconds read as seconds on an axis that spans this many or more (README, time_unit).
SECONDS_FROM = 10_000.0


def _number(value: float) -> str:
    """A tick label: thousands separators, no trailing ``.0`` (``12,000``, ``2.5``)."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.6g}"


def time_axis(ax: Axes, unit: str, span: float) -> str:
    """Label ``ax``'s x axis as time and format its ticks: milliseconds as seconds when the axis
    spans ten seconds or more, other units as given, every number with thousands separators.
    Returns the label."""
    from matplotlib.ticker import FuncFormatter

    if unit == "ms" and span >= SECONDS_FROM:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: _number(x / 1000.0)))
        label = "time (s)"
    else:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: _number(x)))
        label = f"time ({unit})"
    ax.set_xlabel(label)
    return label
