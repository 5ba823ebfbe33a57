"""The strategy comparison's arithmetic: what each run adds up to, and one clock over several runs.

Strategies share their random numbers at the same (clients, repetition) (see ``sim.core.streams``),
so their runs at one coordinate differ only by what the strategy did: stacked on one time axis
they show where one strategy pulls ahead. The shared clock steps through the merged event
times of every run shown, so a step never skips an event of any of them. Nothing here imports
Textual.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.core import events as ev
from sim.units import DEFAULT_TIME_UNIT

from .rundata import RunData
from .ticks import format_duration

PERCENTILES = (50, 99)


@dataclass(frozen=True)
class RunSummary:
    """One run's totals, counted from its events (the same numbers in replay)."""

    work: int  # write requests, every attempt (README: work)
    duration: float  # time of the last event
    gave_up: int
    open: bool = False  # a replying server: the latency figures below apply
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


def summarize(data: RunData) -> RunSummary:
    """Work, duration and give-ups; against a replying server also successes, latency
    percentiles and recovery."""
    codes = data.codes
    work = int(np.count_nonzero(codes == ev.CLIENT_REQUESTS_WRITE))
    # A call ends without success when a limit runs out or a policy denies its retry.
    gave_up = int(np.count_nonzero((codes == ev.CLIENT_GIVES_UP) | (codes == ev.CLIENT_RETRY_DENIED)))
    if data.series is None:
        return RunSummary(work, data.total_time, gave_up, time_unit=data.time_unit)
    latencies = success_latencies(data)
    p50, p99 = (np.percentile(latencies, PERCENTILES) if latencies.size
                else (math.nan, math.nan))
    return RunSummary(work, data.total_time, gave_up, open=True, successes=int(latencies.size),
                      p50=float(p50), p99=float(p99), recovery=data.series.recovery_time,
                      time_unit=data.time_unit)


def summary_cells(summary: RunSummary | None, open_server: bool) -> list[str]:
    """The summary as the comparison's columns (``summary_headers``); dashes before the run
    is loaded."""
    if summary is None:
        return ["…"] * len(summary_headers(open_server))
    if not open_server:
        return [f"{summary.work:,}", format_duration(summary.duration, summary.time_unit),
                f"{summary.gave_up:,}"]
    recovered = {None: "—", True: "✓", False: "✗ never"}[summary.recovered]
    if summary.recovered:
        recovered = f"✓ {format_duration(summary.recovery, summary.time_unit)}"
    unit = summary.time_unit
    return [f"{summary.work:,}", _latency(summary.p50, unit), _latency(summary.p99, unit), recovered]


def summary_headers(open_server: bool) -> list[str]:
    if open_server:
        return ["Requests", "p50", "p99", "Recovered"]
    return ["Work", "Duration", "Gave up"]


def summary_line(summary: RunSummary) -> str:
    """The summary in words, for a timeline's title."""
    names = [name.lower() for name in summary_headers(summary.open)]
    return " · ".join(f"{name} {cell}" for name, cell in
                      zip(names, summary_cells(summary, summary.open)))


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
