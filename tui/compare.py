"""The strategy comparison's arithmetic: what each run adds up to, and one clock over several runs.

Strategies share their random numbers at the same (clients, repetition) (see ``sim.core.streams``),
so their runs at one coordinate differ only by what the strategy did: stacked on one time axis
they show where one strategy pulls ahead. The shared clock steps through the merged event
times of every run shown, so a step never skips an event of any of them. Nothing here imports
Textual.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from sim.core import events as ev
from sim.models.controls import Capabilities
from sim.units import DEFAULT_TIME_UNIT

from .rundata import RunData
from .view.ticks import format_duration

PERCENTILES = (50, 99)


@dataclass(frozen=True)
class RunSummary:
    """One run's totals, counted from its events (the same numbers in replay)."""

    work: int  # write requests, every attempt (README: work)
    duration: float  # time of the last event
    gave_up: int
    caps: Capabilities  # what the run's server kind offers: the columns that apply
    successes: int = 0
    p50: float = math.nan
    p99: float = math.nan
    recovery: float | None = None  # None: no outage; nan: never recovered
    time_unit: str = DEFAULT_TIME_UNIT  # what duration, latencies and recovery are in

    @property
    def recovered(self) -> bool | None:
        """None without an outage."""
        if self.recovery is None:
            return None
        return not math.isnan(self.recovery)


def success_latencies(data: RunData) -> np.ndarray:
    """Each success's latency: from its request's first attempt (a write with attempt 1, the
    engine's detail) to the client hearing of the success, as the engine measures it."""
    codes, clients, times, details = data.codes, data.clients, data.times, data.details
    success = np.flatnonzero(codes == ev.CLIENT_SUCCEEDS)
    if not success.size:
        return np.zeros(0)
    first = np.flatnonzero((codes == ev.CLIENT_REQUESTS_WRITE) & (details == 1))
    # Per client, the last first attempt before each success (events are in time order).
    order = np.lexsort((first, clients[first]))
    first = first[order]
    keys = clients[first].astype(np.int64) * (len(codes) + 1) + first
    wanted = clients[success].astype(np.int64) * (len(codes) + 1) + success
    at = np.searchsorted(keys, wanted, side="left") - 1
    return times[success] - times[first[at]]


def summarize(data: RunData, caps: Capabilities) -> RunSummary:
    """Work, duration and give-ups; successes and latency percentiles where the server kind
    measures latencies, the recovery where it has recovery verdicts (``caps``)."""
    codes = data.codes
    work = int(np.count_nonzero(codes == ev.CLIENT_REQUESTS_WRITE))
    # A call ends without success when a limit runs out or a policy denies its retry.
    gave_up = int(np.count_nonzero((codes == ev.CLIENT_GIVES_UP) | (codes == ev.CLIENT_RETRY_DENIED)))
    summary = RunSummary(work, data.total_time, gave_up, caps, time_unit=data.time_unit)
    if caps.latencies:
        latencies = success_latencies(data)
        p50, p99 = (np.percentile(latencies, PERCENTILES) if latencies.size
                    else (math.nan, math.nan))
        summary = replace(summary, successes=int(latencies.size), p50=float(p50), p99=float(p99))
    if caps.recovery and data.series is not None:
        summary = replace(summary, recovery=data.series.recovery_time)
    return summary


def _recovered(summary: RunSummary) -> str:
    if summary.recovered:
        return f"✓ {format_duration(summary.recovery, summary.time_unit)}"
    return {None: "—", False: "✗ never"}[summary.recovered]


@dataclass(frozen=True)
class Column:
    """A column of the comparison: its header, the server kinds it applies to, its cell."""

    header: str
    applies: Callable[[Capabilities], bool]
    cell: Callable[[RunSummary], str]


# In order. Runs that end when their clients are done are summed up by their work, length and
# give-ups; runs to a horizon (kinds that keep series) by their requests, latency and recovery.
COLUMNS = (
    Column("Work", lambda caps: not caps.keeps_series, lambda s: f"{s.work:,}"),
    Column("Requests", lambda caps: caps.keeps_series, lambda s: f"{s.work:,}"),
    Column("Duration", lambda caps: not caps.keeps_series,
           lambda s: format_duration(s.duration, s.time_unit)),
    Column("Gave up", lambda caps: not caps.keeps_series, lambda s: f"{s.gave_up:,}"),
    Column("p50", lambda caps: caps.latencies, lambda s: _latency(s.p50, s.time_unit)),
    Column("p99", lambda caps: caps.latencies, lambda s: _latency(s.p99, s.time_unit)),
    Column("Recovered", lambda caps: caps.recovery, _recovered),
)


def summary_columns(caps: Capabilities) -> list[Column]:
    """The comparison's columns for a server kind offering ``caps``."""
    return [column for column in COLUMNS if column.applies(caps)]


def summary_cells(summary: RunSummary | None, caps: Capabilities) -> list[str]:
    """The summary as the comparison's columns (``summary_columns``); dots before the run
    is loaded."""
    columns = summary_columns(caps)
    if summary is None:
        return ["…"] * len(columns)
    return [column.cell(summary) for column in columns]


def summary_headers(caps: Capabilities) -> list[str]:
    return [column.header for column in summary_columns(caps)]


def summary_line(summary: RunSummary) -> str:
    """The summary in words, for a timeline's title."""
    return " · ".join(f"{column.header.lower()} {column.cell(summary)}"
                      for column in summary_columns(summary.caps))


def _latency(value: float, unit: str = DEFAULT_TIME_UNIT) -> str:
    return "—" if math.isnan(value) else format_duration(value, unit)


def merged_times(runs: Sequence[RunData]) -> np.ndarray:
    """Every distinct event time of the runs, in order: the stops of the shared clock."""
    if not runs:
        return np.zeros(0)
    return np.unique(np.concatenate([run.times for run in runs]))


def step_time(stops: np.ndarray, time: float, events: int) -> float:
    """The time ``events`` stops after (negative: before) the last stop at or before ``time``,
    kept within the first and the last stop."""
    if not stops.size:
        return 0.0
    index = int(np.searchsorted(stops, time, side="right")) - 1
    if index < 0 and events > 0:
        index, events = 0, events - 1  # before the first stop: the first step lands on it
    index = min(max(index + events, 0), stops.size - 1)
    return float(stops[index])


def initial_picks(strategies: Sequence[str], current: str, most: int = 3) -> list[str]:
    """The strategies compared first: all of them when there are at most ``most``, else the
    current one and the next (in config order)."""
    if len(strategies) <= most:
        return list(strategies)
    i = strategies.index(current) if current in strategies else 0
    return [strategies[i], strategies[(i + 1) % len(strategies)]]
