"""CSV exports of runs against replying servers: per-bucket time series and latency summaries.

Same conventions as ``csv_files``: ``format_float`` numbers (byte-identical files for identical
results), empty cells for NaN, atomic writes. Recovery after an outage is four columns: how many
repetitions recovered, of how many judged, the median recovery time of those that recovered
(empty when none did), and ``recovery_note``: why repetitions were not judged (a baseline too
noisy to tell 80% from 90% of it, or none), with how many when not all; the first three are empty
when nothing was judged, the note when everything was (or there is no outage).
"""

from __future__ import annotations


from sim.analysis.recovery import RecoverySummary
from sim.runs.sweep import SweepResult
from sim.core.series import SERIES_NAMES, extra_series
from sim.export.csv_files import csv_text, format_float
from sim.settings.spec import SimulationSpec

TIMESERIES_HEADER = ("simulation", "strategy", "clients", "repetition", "bucket_start",
                     *SERIES_NAMES)
LATENCY_HEADER = ("simulation", "strategy", "clients", "p50", "p75", "p90", "p99", "max", "mean",
                  "requests", "successes", "timeouts", "gave_up", "unfinished", "goodput",
                  "recovered_runs", "runs", "recovery_time_median", "recovery_note")


def latency_header(spec: SimulationSpec) -> tuple[str, ...]:
    """``LATENCY_HEADER``, with ``hedges`` (hedged copies, beside the requests) when a strategy
    entry of the simulation hedges."""
    if not spec.hedges:
        return LATENCY_HEADER
    at = LATENCY_HEADER.index("requests") + 1
    return LATENCY_HEADER[:at] + ("hedges",) + LATENCY_HEADER[at:]


def recovery_cells(summary: RecoverySummary | None) -> list[str]:
    """``recovered_runs, runs, recovery_time_median``; empty cells when nothing was judged."""
    if summary is None:
        return ["", "", ""]
    return [str(summary.recovered), str(summary.runs), format_float(summary.median)]


def timeseries_header(spec: SimulationSpec) -> tuple[str, ...]:
    """``TIMESERIES_HEADER`` and the counters only the simulation's server kind keeps
    (``SERVER_SERIES``, e.g. PoolServer's ``server_drops``; a hedging fleet's ``hedges``)."""
    return TIMESERIES_HEADER + extra_series(spec.series_declared)


def timeseries_csv_text(result: SweepResult) -> str:
    """One row per bucket of every run, in (strategy, clients, repetition, time) order."""
    spec = result.spec
    names = SERIES_NAMES + extra_series(spec.series_declared)
    rows = []
    for s, label in enumerate(spec.labels):
        for k, n in enumerate(spec.clients):
            for r in range(spec.repeat):
                m = result.open_run(s, k, r)
                if m is None:
                    continue
                columns = [m.series[name] for name in names]
                for i, values in enumerate(zip(*columns)):
                    rows.append([spec.title, label, str(n), str(r), format_float(i * m.bucket),
                                 *(str(int(v)) for v in values)])
    return csv_text(timeseries_header(spec), rows)


def latency_csv_text(result: SweepResult) -> str:
    """One row per (strategy, client count): pooled percentiles (of successful requests only),
    means over repetitions (``unfinished``: clients still waiting at the horizon; ``goodput``:
    successes per time unit of the simulation's ``time_unit``), recovery."""
    spec = result.spec
    counts = ("requests", *(("hedges",) if spec.hedges else ()), "successes", "timeouts", "gave_up",
              "unfinished", "goodput")
    rows = []
    for s, label in enumerate(spec.labels):
        for k, n in enumerate(spec.clients):
            pct = result.latency(s, k)
            rows.append([spec.title, label, str(n),
                         *(format_float(pct[p]) for p in ("p50", "p75", "p90", "p99", "max", "mean")),
                         *(format_float(result.open_mean(name, s, k)) for name in counts),
                         *recovery_cells(result.recovery(s, k)), result.recovery_note(s, k)])
    return csv_text(latency_header(spec), rows)

