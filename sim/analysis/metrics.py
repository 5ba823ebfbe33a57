"""What a sweep keeps of one run (shared by the engine and the overload metrics)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunMetrics:
    """Work (write requests), duration (time of the last event), cost and give-ups of one run."""

    work: int
    duration: float
    cost: float
    gave_up: int
    events: int
