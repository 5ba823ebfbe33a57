"""An events file's runs as the tables the run that wrote it gives (``sim.replay``).

Each run of the file is rebuilt into its record (``sim.analysis.replayed``) and put, alone, in a
sweep's result of its own; its rows are then those of the very functions that write
``_latency.csv`` and ``_timeseries.csv`` (``overload_csv``), so a replay and the run agree by
construction: the same p50, p99 and recovery time, to the precision the file keeps (times to
12 significant digits). Runs against servers that keep no series (the contention controls) have
no such tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from sim.analysis.open_metrics import OpenRunMetrics
from sim.analysis.pool_state import records_pool
from sim.analysis.replay import present_codes, recorded_caps, records_hedges
from sim.analysis.replayed import replayed_metrics
from sim.export.csv_files import EventsKey, read_events_csv
from sim.export.overload_csv import latency_csv_text, timeseries_csv_text
from sim.core.series import extra_series
from sim.vocabulary.errors import UserError
from sim.models.controls import Capabilities
from sim.runs.sweep import SweepResult

KINDS = ("latency", "timeseries")


@dataclass(frozen=True)
class _RunSpec:
    """What the tables read of a spec, for one replayed run (an events file names no config):
    its title, its one strategy and client count, repetitions up to its own, its server kind's
    capabilities as its events show them."""

    title: str
    labels: tuple[str, ...]
    clients: tuple[int, ...]
    repeat: int
    caps: Capabilities
    warmup: float = 0.0  # an events file does not say the run's: every success counts
    # Whether the file's runs of this simulation record their hedges (``records_hedges``): the
    # tables then have a ``hedges`` column, as the run's had. An older file's do not say.
    hedges: bool = False

    @property
    def strategies(self) -> tuple[str, ...]:
        return self.labels

    @property
    def series_declared(self) -> tuple[str, ...]:
        """The server kind's own counters and ``hedges`` where the file records them
        (``SimulationSpec.series_declared``)."""
        return self.caps.series + (("hedges",) if self.hedges else ())


@dataclass(frozen=True, eq=False)
class ReplayedRuns:
    """The runs of one events file, rebuilt from their events: ``csv_text(kind)`` is the text of
    the run's ``_latency.csv`` or ``_timeseries.csv`` restricted to them (one latency row per
    run: a run pooled alone), ``metrics[key]`` each run's record, ``notes[key]`` what may be
    off (an older file's calls, derived)."""

    path: Path
    metrics: dict[EventsKey, OpenRunMetrics] = field(repr=False)
    notes: dict[EventsKey, str] = field(repr=False)
    results: dict[EventsKey, SweepResult] = field(repr=False)

    @property
    def kinds(self) -> tuple[str, ...]:
        return KINDS if self.metrics else ()

    def csv_texts(self, kind: str) -> list[str]:
        """Each run's rows of one table (``KINDS``), as CSV text with its header, in file order."""
        if kind not in KINDS:
            raise UserError(f"no table {kind!r}: a replay gives {', '.join(repr(k) for k in KINDS)}")
        text = latency_csv_text if kind == "latency" else timeseries_csv_text
        return [text(result) for result in self.results.values()]


def replay(path: str | Path) -> ReplayedRuns:
    """Read an ``*_events.csv`` and rebuild each of its runs (``ReplayedRuns``)."""
    histories = read_events_csv(path)
    # A simulation hedges where any of its runs recorded a hedge (``SimulationSpec.hedges``: a
    # strategy of it that hedges gives every strategy's rows the column).
    hedged = {key.simulation for key, history in histories.items() if records_hedges(present_codes(history.codes()))}
    metrics: dict[EventsKey, OpenRunMetrics] = {}
    notes: dict[EventsKey, str] = {}
    results: dict[EventsKey, SweepResult] = {}
    for key, history in histories.items():
        codes, details = history.codes(), history.details()
        caps = recorded_caps(codes)
        if not caps.keeps_series:
            continue
        if records_pool(codes, details):  # a worker pool: its series count its drops too
            caps = replace(caps, series=extra_series(("server_drops",)))
        m, note = replayed_metrics(history, key.clients)
        spec = _RunSpec(key.simulation, (key.strategy,), (key.clients,), key.repetition + 1, caps,
                        hedges=key.simulation in hedged)
        result = SweepResult.empty(spec)  # type: ignore[arg-type]  # what the tables read of a spec
        result.open_runs[(0, 0, key.repetition)] = m
        metrics[key], notes[key], results[key] = m, note, result
    return ReplayedRuns(Path(path), metrics, notes, results)
