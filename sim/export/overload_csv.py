"""CSV exports of runs against replying servers: per-bucket time series and latency summaries.

Same conventions as ``csv_files``: ``repr`` floats (byte-identical files for identical results),
empty cells for NaN, atomic writes. A recovery time is the literal ``never`` when any repetition
never recovered, and empty when the simulation has no outage.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..open_clients import SERIES_NAMES
from ..sweep import SweepResult
from .atomic import atomic_write_text
from .csv_files import csv_text, format_float

TIMESERIES_HEADER = ("simulation", "strategy", "clients", "repetition", "bucket_start",
                     *SERIES_NAMES)
LATENCY_HEADER = ("simulation", "strategy", "clients", "p50", "p75", "p90", "p99", "max",
                  "requests", "successes", "timeouts", "gave_up", "recovery_time")
NEVER = "never"


def format_recovery(value: float | None) -> str:
    """``""`` without an outage, ``never`` when a run never recovered, else the time."""
    if value is None:
        return ""
    return NEVER if math.isnan(value) else repr(float(value))


def timeseries_csv_text(result: SweepResult) -> str:
    """One row per bucket of every run, in (strategy, clients, repetition, time) order."""
    spec = result.spec
    rows = []
    for s, label in enumerate(spec.labels):
        for k, n in enumerate(spec.clients):
            for r in range(spec.repeat):
                m = result.open_run(s, k, r)
                if m is None:
                    continue
                columns = [m.series[name] for name in SERIES_NAMES]
                for i, values in enumerate(zip(*columns)):
                    rows.append([spec.title, label, str(n), str(r), repr(float(i * m.bucket)),
                                 *(str(int(v)) for v in values)])
    return csv_text(TIMESERIES_HEADER, rows)


def latency_csv_text(result: SweepResult) -> str:
    """One row per (strategy, client count): pooled percentiles, means over repetitions, recovery."""
    spec = result.spec
    rows = []
    for s, label in enumerate(spec.labels):
        for k, n in enumerate(spec.clients):
            pct = result.latency(s, k)
            rows.append([spec.title, label, str(n),
                         *(format_float(pct[p]) for p in ("p50", "p75", "p90", "p99", "max")),
                         *(format_float(result.open_mean(name, s, k))
                           for name in ("requests", "successes", "timeouts", "gave_up")),
                         format_recovery(result.recovery(s, k))])
    return csv_text(LATENCY_HEADER, rows)


def write_timeseries_csv(result: SweepResult, path: str | Path) -> Path:
    return atomic_write_text(path, timeseries_csv_text(result))


def write_latency_csv(result: SweepResult, path: str | Path) -> Path:
    return atomic_write_text(path, latency_csv_text(result))
