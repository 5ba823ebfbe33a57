"""The attempt a portrait's calls are on by default: where the config's outage leaves them.

A backoff strategy remembers how many attempts of a call failed (its next delay depends on it),
so the state (work, orbit) alone does not say what its clients do next. The default is the
attempt a call that began as the config's first outage did would be on when it ends, every
attempt timing out: what the outage hands to the system at the resume. Delays are the
strategy's own with jitter at its middle (every uniform 0.5).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

from sim.settings.spec import SimulationSpec

MAX_ATTEMPT = 1000


def _delays(spec: SimulationSpec, label: str) -> Iterator[float]:
    """The strategy's delays after each failure of a call, jitter at its middle."""
    strategy = spec.strategy(label).chain.strategy
    if getattr(strategy, "FROM_THINK_TIME", False):
        think = float(getattr(spec.workload, "think_time", 0.0) or 0.0)
        return strategy.think_delays(lambda: 0.5, think)
    return strategy.delays(lambda: 0.5)


def delay_after(spec: SimulationSpec, label: str, attempt: int) -> float:
    """The backoff after attempt number ``attempt`` fails (jitter at its middle): how long a
    client of the orbit may wait before it sends again, which the time limit must cover."""
    return float(next(islice(_delays(spec, label), attempt - 1, None)))


def outage_attempt(spec: SimulationSpec, label: str) -> int:
    """The attempt in progress at the end of ``spec``'s first outage for a call that began with
    it (1 without an outage or a timeout)."""
    stops = spec.stops
    if not stops or not spec.timeout:
        return 1
    delays = _delays(spec, label)
    elapsed, timeout, duration = 0.0, float(spec.timeout), float(stops[0].duration)
    attempt = 1
    for delay in islice(delays, MAX_ATTEMPT - 1):
        elapsed += timeout + delay  # when the next attempt starts
        if elapsed > duration:
            break
        attempt += 1
    return attempt
