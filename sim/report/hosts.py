"""The per-host table of a fleet (issue 35): for a client count and each strategy, what each host
behind the balancer got and answered (the ``_hosts.csv`` numbers, ``sim.analysis.hosts``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.report.tiers import number_cell as _number
from sim.runs.sweep import SweepResult


@dataclass(frozen=True)
class HostCells:
    """One strategy × host row of the table as text (the app's host panel shows it)."""

    strategy: str
    host: int
    requests: str
    share: str
    errors: str
    ejections: str
    ejected_time: str
    p99: str


def host_cells(result: SweepResult, k: int) -> list[HostCells]:
    """Every strategy's hosts at the ``k``-th client count, host 0 first ([] without a fleet)."""
    rows = []
    for s, label in enumerate(result.spec.labels):
        for h in result.host_summaries(s, k):
            share = "—" if math.isnan(h.share) else f"{100 * h.share:.1f}%"
            rows.append(HostCells(label, h.host, _number(h.requests), share, _number(h.errors + h.timeouts),
                                  _number(h.ejections), _number(h.ejected_time), _number(h.p99)))
    return rows
