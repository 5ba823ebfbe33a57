"""The strategy comparison's columns: which of a run's totals apply, and how they read.

Strategies share their random numbers at the same (clients, repetition) (see ``sim.core.streams``),
so their runs at one coordinate differ only by what the strategy did: stacked on one time axis
they show where one strategy pulls ahead. What each run adds up to (``RunSummary``) and the
shared clock's stops (``merged_times``, ``step_time``) are ``sim.analysis.replay``'s. Nothing
here imports Textual.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# merged_times and step_time (the shared clock) are for the compare screen, which reaches sim
# only through its public API.
from sim.analysis.recovery import NO_BASELINE, TOO_FEW, TOO_NOISY, TOO_SHORT, RecoverySummary
from sim.analysis.replay import RunSummary, merged_times, step_time  # noqa: F401
from sim.models.controls import Capabilities
from sim.vocabulary.units import DEFAULT_TIME_UNIT

from .latency_rows import format_recovery
from .ticks import format_duration


# Why a run was not judged, as short as a column allows (the series chart's title says it all).
SHORT_NOTES = {TOO_NOISY: "too noisy", TOO_SHORT: "too short", NO_BASELINE: "no baseline"}


def short_too_few(note: str) -> str:
    """``too few calls per window to judge (needs ≥ 3.5/s)`` as ``too few calls (needs ≥ 3.5/s)``
    (the rate kept: it is what the user acts on); any other note as it is."""
    if note.startswith(TOO_FEW):
        return "too few calls" + note[len(TOO_FEW):]
    return note


def _recovered(summary: RunSummary) -> str:
    """The run's verdict as the latency table's Recovery cell gives a strategy's (a run is a
    summary of one: ``1/1 · 7,792 ms``, ``✗ never (0/1)``), in the run's unit on every row (a
    column that read "7,792 ms" on one row and "17.1 s" on the next was hard to compare); not
    judged: ``—`` and why, as short as a column allows."""
    verdict = RecoverySummary.of([summary.recovery])
    if verdict is not None:
        return format_recovery(verdict, summary.time_unit)
    if summary.recovery_note:
        return f"— {SHORT_NOTES.get(summary.recovery_note, short_too_few(summary.recovery_note))}"
    return "—"


@dataclass(frozen=True)
class Column:
    """A column of the comparison: its header, the server kinds it applies to, its cell;
    ``hedging``: only where the simulation counts hedges (``Source.hedges``)."""

    header: str
    applies: Callable[[Capabilities], bool]
    cell: Callable[[RunSummary], str]
    hedging: bool = False


# In order. Runs that end when their clients are done are summed up by their work, length and
# give-ups; runs to a horizon (kinds that keep series) by their requests, latency and recovery.
# Where a strategy hedges, the hedged copies sent beside the requests follow them, counted from
# the run's record as the latency table counts them (``sim.analysis.replay.hedges_sent``).
COLUMNS = (
    Column("Work", lambda caps: not caps.keeps_series, lambda s: f"{s.work:,}"),
    Column("Requests", lambda caps: caps.keeps_series, lambda s: f"{s.work:,}"),
    Column("Hedges", lambda caps: caps.keeps_series, lambda s: f"{s.hedges:,}", hedging=True),
    Column("Duration", lambda caps: not caps.keeps_series,
           lambda s: format_duration(s.duration, s.time_unit)),
    Column("Gave up", lambda caps: not caps.keeps_series, lambda s: f"{s.gave_up:,}"),
    Column("p50", lambda caps: caps.latencies, lambda s: _latency(s.p50, s.time_unit)),
    Column("p99", lambda caps: caps.latencies, lambda s: _latency(s.p99, s.time_unit)),
    Column("Recovered", lambda caps: caps.recovery, _recovered),
)


def summary_columns(caps: Capabilities, hedges: bool = False) -> list[Column]:
    """The comparison's columns for a server kind offering ``caps``; ``hedges``: the
    simulation counts hedges (``Source.hedges``: a strategy hedges and its runs record them;
    an older events file's do not say, so it has no such column rather than a 0)."""
    return [column for column in COLUMNS if column.applies(caps) and (hedges or not column.hedging)]


def summary_cells(summary: RunSummary | None, caps: Capabilities, hedges: bool = False) -> list[str]:
    """The summary as the comparison's columns (``summary_columns``); dots before the run
    is loaded."""
    columns = summary_columns(caps, hedges)
    if summary is None:
        return ["…"] * len(columns)
    return [column.cell(summary) for column in columns]


def summary_headers(caps: Capabilities, hedges: bool = False) -> list[str]:
    return [column.header for column in summary_columns(caps, hedges)]


def summary_line(summary: RunSummary, hedges: bool = False) -> str:
    """The summary in words, for a timeline's title."""
    return " · ".join(f"{column.header.lower()} {column.cell(summary)}"
                      for column in summary_columns(summary.caps, hedges))


def _latency(value: float, unit: str = DEFAULT_TIME_UNIT) -> str:
    return "—" if math.isnan(value) else format_duration(value, unit)


def initial_picks(strategies: Sequence[str], current: str, most: int = 3) -> list[str]:
    """The strategies compared first: all of them when there are at most ``most``, else the
    current one and the next (in config order)."""
    if len(strategies) <= most:
        return list(strategies)
    i = strategies.index(current) if current in strategies else 0
    return [strategies[i], strategies[(i + 1) % len(strategies)]]
