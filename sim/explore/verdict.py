"""The per-run recovery verdict an explore cell reports, in one place.

It reads ``OpenRunMetrics.recovery_time``, judged by ``sim.analysis.recovery`` per repetition: a time,
``nan`` for never, ``None`` when there is nothing to judge (no outage, or no baseline before it).
If that verdict changes shape, this is the only function of the explore package that changes.
"""

from __future__ import annotations

import math

from sim.analysis.metrics import RunMetrics
from sim.analysis.open_metrics import OpenRunMetrics


def run_verdict(metrics: RunMetrics) -> tuple[float, float]:
    """``(recovered, recovery_time)`` of one run: 1.0/0.0 and the time after the last outage's
    end; ``(nan, nan)`` when there is no verdict (no outage, no baseline, or a server that does
    not reply);
    a run that never recovered has ``(0.0, nan)``."""
    if not isinstance(metrics, OpenRunMetrics) or metrics.recovery_time is None:
        return math.nan, math.nan
    if math.isnan(metrics.recovery_time):
        return 0.0, math.nan
    return 1.0, float(metrics.recovery_time)
