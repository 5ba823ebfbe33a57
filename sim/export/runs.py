"""The recorded runs that exports and tables show (the reference's choices)."""

from __future__ import annotations

from collections.abc import Mapping

from sim.runs.engine import Run, record_run
from sim.settings.spec import SimulationSpec

Recorded = Mapping[tuple[str, int], Run]  # (label, clients) -> repetition 0, as a sweep kept it


def representative_runs(spec: SimulationSpec, recorded: Recorded | None = None) -> dict[str, Run]:
    """One recorded run per strategy at the smallest client count above 2, repetition 0.

    Small enough to read as a table, big enough to show contention: what the reference prints.
    ``recorded``: the runs a sweep already recorded (``SweepResult.recorded``), used as they are.
    """
    return _runs_at(spec, spec.representative_clients(), recorded)


def scatter_runs(spec: SimulationSpec, recorded: Recorded | None = None) -> dict[str, Run]:
    """One recorded run per strategy at the largest client count, repetition 0 (the scatter plot)."""
    return _runs_at(spec, spec.max_clients, recorded)


def _runs_at(spec: SimulationSpec, clients: int, recorded: Recorded | None) -> dict[str, Run]:
    recorded = recorded or {}
    return {label: recorded.get((label, clients)) or record_run(spec, label, clients, 0)
            for label in spec.labels}
