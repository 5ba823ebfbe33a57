"""The offered load as ``run`` prints it, one line per client count (``sim.analysis.load``
computes it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sim.analysis.load import offered_load

if TYPE_CHECKING:  # pragma: no cover
    from sim.settings.spec import SimulationSpec


def load_lines(spec: SimulationSpec) -> list[str]:
    """The offered load at each client count of ``spec`` (the smallest and the largest when
    there are more than three), one line each."""
    counts = spec.clients if len(spec.clients) <= 3 else (spec.clients[0], spec.clients[-1])
    return [offered_load(spec, n).text() for n in counts]
