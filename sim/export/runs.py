"""The recorded runs that exports and tables show (the reference's choices)."""

from __future__ import annotations

from sim.runs.engine import Run, record_run
from sim.spec import SimulationSpec


def representative_runs(spec: SimulationSpec) -> dict[str, Run]:
    """One recorded run per strategy at the smallest client count above 2, repetition 0.

    Small enough to read as a table, big enough to show contention: what the reference prints.
    """
    n = spec.representative_clients()
    return {label: record_run(spec, label, n, 0) for label in spec.labels}


def scatter_runs(spec: SimulationSpec) -> dict[str, Run]:
    """One recorded run per strategy at the largest client count, repetition 0 (the scatter plot)."""
    n = spec.max_clients
    return {label: record_run(spec, label, n, 0) for label in spec.labels}
