"""Rich renderables for the terminal (the CLI prints them, the app shows some): a sweep's
metrics table and a run's event history (``tables``), the latency table of servers that reply
(``latency``), what retry policies did (``policies``); ``result_table`` picks the table a
server kind calls for."""

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
