"""What the explore view draws of a map: the grids (``MapView``, which ``MapGrid`` lays out), the
title, the legend and the cursor cell's detail line.

Nothing here computes a number: the cells' states, glyphs and texts are
``sim.exploration.grid``'s, the detail line's verdicts ``sim.analysis.recovery``'s (in the
wording of ``sim.report.latency``), the metric notes ``sim.exploration.summary``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from sim.exploration.axes import format_value
from sim.exploration.grid import COLLAPSED, GLYPHS, RECOVERED, MapCell, verdict_state
from sim.exploration.plan import ExplorePlan
from sim.exploration.summary import METRIC_HELP, CellResult
from sim.report.latency import recovery_number

from .plural import count


@dataclass(frozen=True)
class MapView:
    """What the grids show: per strategy its label and rows of cells (top row first), which
    strategy is selected, the cursor (column, row from the top), the axis labels."""

    labels: tuple[str, ...]
    grids: tuple[tuple[tuple[MapCell, ...], ...], ...]  # [strategy][row from top][column]
    selected: int
    cursor: tuple[int, int]
    x_name: str
    y_name: str  # "" for a one-axis map
    x_values: tuple[float | int, ...]
    y_values: tuple[float | int, ...]  # top to bottom; () for a one-axis map
    value_limits: tuple[float, float] | None = None  # colour scale of a metric map


def map_view(plan: ExplorePlan, rows: Sequence[Sequence[Sequence[MapCell]]], selected: int,
             cursor: tuple[int, int]) -> MapView:
    """The view of every strategy's ``rows`` (``[strategy][row from top][column]``); a metric
    map's colour scale spans the values shown."""
    grids = tuple(tuple(tuple(r) for r in g) for g in rows)
    y_values = tuple(reversed(plan.axes[1].values)) if len(plan.axes) > 1 else ()
    limits = None
    values = [c.value for g in grids for r in g for c in r if c.state == "value" and not math.isnan(c.value)]
    if values:
        limits = (min(values), max(values))
    return MapView(plan.base.labels, grids, selected, cursor,
                   plan.axes[0].name, plan.axes[1].name if len(plan.axes) > 1 else "",
                   plan.axes[0].values, y_values, limits)


def metric_help(metric: str) -> str:
    """What a metric is, in a few words (its name when there is no note)."""
    return METRIC_HELP.get(metric, metric)


def map_title(plan: ExplorePlan) -> Text:
    """The map's title line: the simulation, its control, clients, runs a cell, seed, axes."""
    base = plan.base
    axes = (f"columns {plan.axes[0].name}" + (f", rows {plan.axes[1].name}" if len(plan.axes) > 1 else ""))
    clients = "" if any(a.path.steps == ("clients",) for a in plan.axes) else f" · {count(base.clients[0], 'client')}"
    return Text.assemble((f"Explore map · {plan.title}", "bold"),
                         f" · {base.control.type_name}{clients} · {count(base.repeat, 'repetition')} a cell"
                         f" · seed {base.seed} · {axes}")


def map_legend(metric: str, running: bool = True, missing: int = 1) -> Text:
    """What the cells' glyphs (a verdict map) or shades (a metric map) mean; a cell not known
    reads as running while the map runs, as not computed once it stopped (nothing when every
    cell is known)."""
    waiting = ("" if not missing else f"{GLYPHS['pending']}… running" if running
               else f"{GLYPHS['missing']} not computed (w runs it)")
    if metric == "recovered":
        text = Text(f"runs recovered: {GLYPHS['recovered']} ≥ {RECOVERED:.0%}  "
                    f"{GLYPHS['partial']} some  {GLYPHS['collapsed']} ≤ {COLLAPSED:.0%} (collapsed)  "
                    f"{waiting}".rstrip())
    else:
        text = Text(f"{metric}: {metric_help(metric)} (mean over the "
                    "runs; the stronger the colour, the higher)")
    text.append(" · Enter: the cell's runs", style="dim")
    return text


def cell_detail(plan: ExplorePlan, cell: MapCell, result: CellResult | None, selected: int,
                metric: str, running: bool = True) -> Text:
    """The cursor cell: where it is, then each strategy's verdict and metric there (``running…``
    while the map computes it, ``not computed`` once the map stopped without it)."""
    out = Text(plan.cell_label(cell.position), style="bold")
    for s, label in enumerate(plan.base.labels):
        out.append("\n")
        marker = "▶ " if s == selected else "  "
        if result is None:
            waiting = "running…" if running else "not computed (the map was cancelled: w runs it)"
            out.append(f"{marker}{label}: {waiting}", style="dim")
            continue
        verdict = result.verdict(s)
        glyph = GLYPHS[verdict_state(verdict)]
        # The median with its unit, as the strategy table's Recovery column gives it.
        line = f"{marker}{glyph} {label}: " + (verdict.text(recovery_number, plan.base.time_unit) if verdict
                                                else result.verdict_note(s) or "no verdict")
        if metric != "recovered":
            e = result.estimate(metric, s)
            if not math.isnan(e.mean):
                ci = "" if math.isnan(e.ci95) else f" ± {format_value(e.ci95)}"
                line += f" · {metric} {format_value(e.mean)}{ci}"
        out.append(line, style="bold" if s == selected else "")
    return out
