"""The standard incident battery a check runs: each incident at the service, with a calm
stretch before it (the recovery verdict's baseline) and room after it to recover."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

START = 10_000.0  # ms of calm first: the verdict's baseline is the second half of it
AFTER = 30_000.0  # ms after the incident's end to recover in (ten of the verdict's 3 s windows)
BUCKET = 250.0  # ms per series bucket: 20 buckets of baseline, a 3 s window is 12


@dataclass(frozen=True)
class Incident:
    """One incident of the battery: ``name`` (the CSV's), its words, and the service's
    ``incidents`` entry (without ``start``: the battery places it), or for a load spike the
    open workload's surge (``surge_factor``: arrivals that many times faster)."""

    name: str
    words: str
    duration: float
    change: dict[str, float]

    @property
    def is_surge(self) -> bool:
        return "surge_factor" in self.change

    def entry(self) -> dict[str, Any]:
        return {"start": START, "duration": self.duration, **self.change}

    def workload_keys(self) -> dict[str, float]:
        """The open workload's surge keys for a load spike; none for the others."""
        if not self.is_surge:
            return {}
        return {"surge_start": START, "surge_duration": self.duration, **self.change}

    @property
    def horizon(self) -> float:
        return START + self.duration + AFTER


BATTERY: tuple[Incident, ...] = (
    Incident("capacity_half_10s", "capacity halved for 10 s", 10_000.0, {"capacity": 0.5}),
    Incident("capacity_half_60s", "capacity halved for 60 s", 60_000.0, {"capacity": 0.5}),
    Incident("outage_10s", "a full outage of 10 s", 10_000.0, {"capacity": 0.0}),
    Incident("outage_60s", "a full outage of 60 s", 60_000.0, {"capacity": 0.0}),
    Incident("slowdown_2x_60s", "a 2x slowdown for 60 s", 60_000.0, {"slowdown": 2.0}),
    Incident("slowdown_5x_60s", "a 5x slowdown for 60 s", 60_000.0, {"slowdown": 5.0}),
    Incident("errors_20pct_60s", "20% errors for 60 s", 60_000.0, {"error_rate": 0.2}),
    Incident("load_spike_2x_30s", "a 2x load spike for 30 s", 30_000.0, {"surge_factor": 2.0}),
)


def incident(name: str) -> Incident:
    for item in BATTERY:
        if item.name == name:
            return item
    raise KeyError(name)
