"""``<title>_tiers.csv``: per strategy, client count and tier of a tiered simulation, what the
tier saw (``sim.analysis.tiers``). Same conventions as ``csv_files``: ``format_float`` numbers,
``n/a`` for the CI of one repetition, empty cells for NaN."""

from __future__ import annotations

from sim.export.csv_files import csv_text, format_ci, format_float
from sim.runs.sweep import SweepResult

TIERS_HEADER = ("simulation", "strategy", "clients", "tier", "control", "amplification",
                "amplification_ci95", "requests", "successes", "p50", "p99", "retries_denied")


def tiers_csv_text(result: SweepResult) -> str:
    """One row per strategy × clients × tier (tier 1 = the server the clients call)."""
    spec = result.spec
    controls = [spec.control, *(t.control for t in spec.tiers)]
    rows = []
    for s, label in enumerate(spec.labels):
        for k, n in enumerate(spec.clients):
            for summary in result.tier_summaries(s, k):
                rows.append([spec.title, label, str(n), str(summary.tier),
                             controls[summary.tier - 1].type_name,
                             format_float(summary.amplification.mean),
                             format_ci(summary.amplification.ci95, spec.repeat),
                             format_float(summary.requests), format_float(summary.successes),
                             format_float(summary.p50), format_float(summary.p99),
                             format_float(summary.retries_denied)])
    return csv_text(TIERS_HEADER, rows)
