"""The recovery verdict an explore cell reports, in one place: per run, and per cell × strategy.

Per run it reads ``OpenRunMetrics.recovery_time``, judged by ``sim.analysis.recovery``: a time,
``nan`` for never, ``None`` when there is nothing to judge (no outage, or no baseline before it)
or the run was too noisy to tell 80% from 90% of its baseline (``recovery_note``: undecided).
A cell keeps three plain floats per run (so the cache stores them as JSON), and aggregates its
repetitions with the same ``RecoverySummary`` the sweep's tables and ``_latency.csv`` use, so a
map's cell and the sweep of that cell's spec report the same recovered runs and median recovery
time. If the verdict changes shape, this is the only module of the explore package that changes.
"""

from __future__ import annotations

import math

import numpy as np

from sim.analysis.metrics import RunMetrics
from sim.analysis.open_metrics import OpenRunMetrics
from sim.analysis.recovery import UNDECIDED, RecoverySummary, summary_note, undecided_reason


def run_verdict(metrics: RunMetrics) -> tuple[float, float, float]:
    """``(recovered, recovery_time, undecided)`` of one run: 1.0/0.0 and the time after the last
    outage's end; ``(nan, nan, 0.0)`` when there is no verdict (no outage, no baseline, or a
    server that does not reply), ``(nan, nan, k)`` when the run was too noisy to judge (``k`` − 1
    indexes ``UNDECIDED``, the reason); a run that never recovered has ``(0.0, nan, 0.0)``."""
    if not isinstance(metrics, OpenRunMetrics) or metrics.recovery_time is None:
        note = metrics.recovery_note if isinstance(metrics, OpenRunMetrics) else ""
        reason = undecided_reason(note)  # TOO_FEW's rate is the run's note's, not the cell's
        return math.nan, math.nan, float(UNDECIDED.index(reason) + 1 if reason is not None else 0)
    if math.isnan(metrics.recovery_time):
        return 0.0, math.nan, 0.0
    return 1.0, float(metrics.recovery_time), 0.0


def cell_verdict(recovered: np.ndarray, times: np.ndarray,
                 undecided: np.ndarray) -> RecoverySummary | None:
    """The repetitions' verdict from their ``run_verdict`` values (one strategy of one cell):
    runs judged, recovered, median recovery time, undecided; None when no run could be judged."""
    values: list[float | None] = [
        None if math.isnan(r) else (float(t) if r == 1.0 else math.nan)
        for r, t in zip(np.asarray(recovered, dtype=np.float64).tolist(),
                        np.asarray(times, dtype=np.float64).tolist())]
    return RecoverySummary.of(values, int(np.count_nonzero(np.asarray(undecided) > 0)))


def cell_note(undecided: np.ndarray) -> str:
    """Why runs of the cell were not judged, as ``_latency.csv``'s ``recovery_note`` says it."""
    return summary_note([UNDECIDED[int(u) - 1] if u > 0 else "" for u in np.asarray(undecided).tolist()])
