"""Per-bucket counters of a run against a replying server, filled by the handlers as events happen."""

from __future__ import annotations

import math

SERIES_NAMES = ("offered", "retries", "accepted", "rejected", "timed_out", "in_service", "queued", "goodput")


class Series:
    """Per-bucket counters filled by the handlers as events happen (no history needed)."""

    def __init__(self, horizon: float, width: float) -> None:
        self.width = width
        self.inverse_width = 1.0 / width
        self.buckets = max(1, math.ceil(horizon / width - 1e-9))
        size = self.buckets + 1  # an event exactly at the horizon lands in the spare slot
        for name in SERIES_NAMES:
            setattr(self, name, [0] * size)

    def arrays(self) -> dict[str, list[int]]:
        return {name: getattr(self, name)[:self.buckets] for name in SERIES_NAMES}

