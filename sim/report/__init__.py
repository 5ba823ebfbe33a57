"""Rich renderables for the terminal: the metrics and history tables (``tables``), the latency
table of replying servers (``latency``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim.runs.sweep import SweepResult
    from sim.export.palette import Palette


def result_table(result: SweepResult, palette: Palette | None = None):
    """The table a sweep's kind of server calls for: latencies and goodput for servers that keep
    series (``Capabilities.keeps_series``), work and duration otherwise."""
    if result.spec.caps.keeps_series:
        from sim.report.latency import LatencyReport

        return LatencyReport(result, palette)
    from sim.report.tables import metrics_table

    return metrics_table(result, palette)
