"""``<title>_hosts.csv``: per strategy, client count and host of a fleet, what the host got and
answered (``sim.analysis.hosts``). Same conventions as ``csv_files``: ``format_float`` numbers,
empty cells for NaN."""

from __future__ import annotations

from sim.export.csv_files import csv_text, format_float
from sim.runs.sweep import SweepResult

HOSTS_HEADER = ("simulation", "strategy", "clients", "host", "requests", "hedges", "successes", "errors",
                "timeouts", "ejections", "ejected_time", "share", "p50", "p99")


def hosts_csv_text(result: SweepResult) -> str:
    """One row per strategy × clients × host (means over the repetitions)."""
    spec = result.spec
    rows = []
    for s, label in enumerate(spec.labels):
        for k, n in enumerate(spec.clients):
            for h in result.host_summaries(s, k):
                rows.append([spec.title, label, str(n), str(h.host),
                             *(format_float(v) for v in (h.requests, h.hedges, h.successes, h.errors, h.timeouts,
                                                          h.ejections, h.ejected_time, h.share, h.p50, h.p99))])
    return csv_text(HOSTS_HEADER, rows)
