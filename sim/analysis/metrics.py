"""What a sweep keeps of one run (shared by the engine and the overload metrics)."""

from __future__ import annotations

import math
from dataclasses import dataclass


def cost(work, duration, work_to_duration):
    """A run's cost, the reference's: its duration plus ``work_to_duration`` per write request
    (scalars or arrays alike: a sweep's are computed over its arrays at once)."""
    return work_to_duration * work + duration


def amplification(attempts: float, calls: float) -> float:
    """Attempts per unique call (1: no retries); NaN without calls."""
    return attempts / calls if calls else math.nan


def copies_sent(work: float, hedges: float) -> float:
    """Every copy of every attempt that went to a server: the attempts (``work``) and the hedged
    copies beside them (``sim.models.hedging``); what amplification counts."""
    return work + hedges


def share_of_calls(count: float, calls: float) -> float:
    """``count`` (calls that succeeded) as a share of the calls; NaN without calls."""
    return count / calls if calls else math.nan


def goodput(successes: float, horizon: float) -> float:
    """Successful requests per time unit over the horizon; NaN without one."""
    return successes / horizon if horizon else math.nan


@dataclass(frozen=True)
class RunMetrics:
    """Work (write requests), duration (time of the last event), cost and give-ups of one run;
    with retry policies, the retries they denied, the calls an open breaker refused at their first
    attempt and the mean time a breaker spent open."""

    work: int
    duration: float
    cost: float
    gave_up: int
    events: int
    retries_denied: int = 0
    breaker_open_time: float = 0.0  # mean over the run's breakers of the time not closed
    calls_refused: int = 0  # first attempts an open breaker refused (not retries)
    calls: int = 0  # unique calls: one per client of a burst, each new request of a workload
    hedges: int = 0  # hedged copies sent beside the attempts (sim.models.hedging); not in work

    @property
    def amplification(self) -> float:
        """Copies sent per unique call, every hedge counted (1: no retries, no hedges); NaN
        without calls."""
        return amplification(copies_sent(self.work, self.hedges), self.calls)

    @property
    def success_rate(self) -> float:
        """Share of the unique calls that succeeded in the end (whatever their retries): a call
        of a run that drains either succeeds or gives up (a call an open breaker refused gives
        up too); NaN without calls."""
        return share_of_calls(self.calls - self.gave_up, self.calls)
