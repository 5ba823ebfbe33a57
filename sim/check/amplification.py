"""The worst case of a stack, computed and simulated: each layer's attempts multiply, so a call
meeting a service that fails every attempt reaches it (product of the layers' attempts) times.

The simulation is that case: one call (a burst of one client) against the stack while the
service fails every attempt at once (``error_rate = 1.0`` for the whole run), with a horizon
long enough for every retry to end. Its attempts arriving at each tier per call are the
amplification after each layer (``sim.analysis.tiers``'s figure), the last one at the service.
A policy that denies retries (a budget, a breaker) or a deadline cuts it below the product.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.check.build import Settings, simulation
from sim.check.service import Service

HORIZON = 3_600_000.0  # ms: an hour, longer than any backoff of a handful of attempts takes
TITLE = "total_failure"


def worst_case(attempts: list[int]) -> list[int]:
    """Amplification after each layer: the running product of the layers' attempts."""
    return [math.prod(attempts[: i + 1]) for i in range(len(attempts))]


def total_failure_block(settings: Settings, service: Service, seed: int) -> dict:
    """The one-call run under total failure at the service."""
    block = simulation(TITLE, settings, service, [{"start": 0.0, "duration": HORIZON, "error_rate": 1.0}],
                       HORIZON, 1, seed)
    block.update({"clients": [1], "workload": "burst", "bucket": HORIZON / 10})
    del block["think_time"]
    return block


@dataclass(frozen=True)
class Simulated:
    """Attempts per call arriving after each layer, the last at the service."""

    per_layer: tuple[float, ...]

    @property
    def total(self) -> float:
        return self.per_layer[-1]


def simulated(result) -> Simulated:
    """From the total-failure sweep: per layer, the attempts that reached the tier below it per
    call (the service's own arrivals for the last)."""
    from sim.analysis.tiers import tier_summaries

    runs = [result.open_runs[key] for key in sorted(result.open_runs)]  # the one run
    tiers = tier_summaries(runs)
    if tiers:  # tier 1 is the first proxy: the app's attempts arrive there
        return Simulated(tuple(t.amplification.mean for t in tiers))
    return Simulated((float(result.amplification.mean()),))
