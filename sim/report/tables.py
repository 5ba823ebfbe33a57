"""Rich renderables for the terminal: a sweep's metrics table and a run's event history.

Colour is never the only signal: the best strategy carries a ★ and strategies statistically tied
with it a "≈" before their difference, so the tables read the same over SSH without colour. The
"vs best" cell is ``sim.analysis.versus``'s text, the same as in the app and the metrics CSV.
"""

from __future__ import annotations

import math

from rich.table import Table
from rich.text import Text

from sim.runs.sweep import SweepResult
from sim.analysis.versus import BEST, TIED, ci_note, cost_versus_best
from sim.core import events as ev
from sim.core.history import History
from sim.export.palette import CODE_KINDS, Palette
from sim.vocabulary.units import DEFAULT_TIME_UNIT


def mean_ci(mean: float, ci: float, digits: int = 1) -> str:
    """``12.3 ± 4.5`` as the metrics table prints an estimate; the mean alone without a CI."""
    if math.isnan(ci):
        return f"{mean:,.{digits}f}"
    return f"{mean:,.{digits}f} ± {ci:,.{digits}f}"


def versus_best(result: SweepResult, s: int, k: int) -> str:
    """The "vs best" cell of strategy ``s`` at client-count index ``k`` (``sim.analysis.versus``)."""
    return cost_versus_best(result, s, k).text


def metrics_table(result: SweepResult, palette: Palette | None = None) -> Table:
    """Mean ± 95% CI of work, duration and cost per strategy, grouped by client count."""
    spec = result.spec
    accent = palette.base["accent"] if palette else "yellow"
    table = Table(title=f"{spec.title} · {spec.control.type_name} · {spec.repeat} repeats, "
                        f"{ci_note(spec.repeat)}",
                  title_justify="left", header_style="bold")
    table.add_column("clients", justify="right")
    table.add_column("strategy")
    table.add_column("work", justify="right")
    table.add_column(f"duration ({spec.time_unit})", justify="right")
    table.add_column("cost", justify="right")
    table.add_column("gave up", justify="right")
    table.add_column("cost vs best", justify="left")
    for k, n in enumerate(spec.clients):
        if k:
            table.add_section()
        for s, label in enumerate(spec.labels):
            cells = [mean_ci(e.mean, e.ci95) for e in
                     (result.summary(name, s, k) for name in ("work", "duration", "cost"))]
            gave_up = result.summary("gave_up", s, k).mean
            versus = cost_versus_best(result, s, k)  # the app's marks come from it too
            best = versus.verdict == BEST
            style = f"bold {accent}" if best else ("" if versus.verdict == TIED else "dim")
            table.add_row(str(n) if s == 0 else "", label, *cells, f"{gave_up:,.1f}",
                          Text(versus.text, style=style), style="bold" if best else None)
    return table


def history_table(history: History, title: str | None = None, palette: Palette | None = None,
                  limit: int | None = None, time_unit: str = DEFAULT_TIME_UNIT) -> Table:
    """A recorded run's events: time (2 decimals, in ``time_unit``), client id, event type and
    detail; only the first ``limit`` of them when given (see ``more_events_note`` for the rest)."""
    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column(f"time ({time_unit})", justify="right")
    table.add_column("client_id", justify="right")
    table.add_column("event_type")
    table.add_column("event_detail")
    colours = palette.events if palette else {}
    end = len(history) if limit is None else min(limit, len(history))
    for t, c, packed in zip(history.times[:end], history.clients[:end], history.packed[:end]):
        code, detail = ev.unpack(packed)
        name = ev.EVENT_NAMES[code]
        colour = colours.get(CODE_KINDS[code], "")
        table.add_row(f"{t:.2f}", str(c), Text(name, style=colour), ev.shown_detail(code, detail))
    return table


def more_events_note(total: int, shown: int, events_file: str | None,
                     time_unit: str = DEFAULT_TIME_UNIT) -> str | None:
    """Where the events a head of ``shown`` out of ``total`` left out are; None if none were.
    An events file does not record its time unit: the replay command names it unless ms.
    ``events_file`` None: none was written (``--events none``)."""
    if shown >= total:
        return None
    if events_file is None:
        return f"… {total - shown:,} more events (no events file with --events none)"
    option = f" --time-unit {time_unit}" if time_unit != DEFAULT_TIME_UNIT else ""
    return (f"… {total - shown:,} more events; browse them with: "
            f"backoff-sim replay{option} {events_file}")
