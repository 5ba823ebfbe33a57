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
    factor on the open workload's rate (``rate_factor``: a ``rate_profile`` step up, then back)."""

    name: str
    words: str
    duration: float
    change: dict[str, float]

    @property
    def is_surge(self) -> bool:
        return "rate_factor" in self.change

    def entry(self) -> dict[str, Any]:
        return {"start": START, "duration": self.duration, **self.change}

    def workload_keys(self, rate: float) -> dict[str, Any]:
        """For a load spike, the open workload's ``rate_profile`` (``rate``: its own calls per
        second): ``rate_factor`` times the rate from START for ``duration``, then the own rate
        again; the span above it is judged as an incident is. None for the others."""
        if not self.is_surge:
            return {}
        return {"rate_profile": [{"at": START, "rate": rate * self.change["rate_factor"]},
                                 {"at": START + self.duration, "rate": rate}]}

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
    Incident("load_spike_2x_30s", "a 2x load spike for 30 s", 30_000.0, {"rate_factor": 2.0}),
)


def incident(name: str) -> Incident:
    for item in BATTERY:
        if item.name == name:
            return item
    raise KeyError(name)
