"""Per-bucket counters of a run against a replying server, filled by the handlers as events happen."""

from __future__ import annotations

import math

SERIES_NAMES = ("offered", "retries", "accepted", "rejected", "timed_out", "in_service", "queued", "goodput")
# Counters only some server kinds fill (they name them in ``Capabilities.series``): a run keeps,
# and its timeseries file shows, only those its server declares, so other kinds' files keep
# their columns. ``server_drops``: requests the server dropped unserved (``server_drops`` events).
SERVER_SERIES = ("server_drops", "hedges")
# ``hedges``: copies a fleet's balancer sent as hedges (``sim.models.fleet``), kept by a fleet
# that hedges (``SimulationSpec.series_declared``).


def extra_series(declared: tuple[str, ...]) -> tuple[str, ...]:
    """The ``SERVER_SERIES`` among a server kind's declared counters, in their fixed order."""
    return tuple(name for name in SERVER_SERIES if name in declared)


def bucket_count(horizon: float, width: float) -> int:
    """Buckets of ``width`` over a run to ``horizon`` (the last may be cut short by it)."""
    return max(1, math.ceil(horizon / width - 1e-9))


class Series:
    """Per-bucket counters filled by the handlers as events happen (no history needed):
    every ``SERIES_NAMES`` counter, and the ``extra`` ones a server kind declares."""

    def __init__(self, horizon: float, width: float, extra: tuple[str, ...] = ()) -> None:
        self.width = width
        self.inverse_width = 1.0 / width
        self.buckets = bucket_count(horizon, width)
        self.names = SERIES_NAMES + tuple(extra)
        size = self.buckets + 1  # an event exactly at the horizon lands in the spare slot
        for name in self.names:
            setattr(self, name, [0] * size)

    def arrays(self) -> dict[str, list[int]]:
        return {name: getattr(self, name)[:self.buckets] for name in self.names}

