"""The offered load of a simulation: how many calls a second its clients start, and how busy
that keeps the server (its utilisation), before any retry.

A user sets the load with ``clients`` and ``think_time`` and a server with ``workers`` and a
service time that may be a lognormal's median or a file of measurements; working out by hand
that 160 clients every 193 ms against 64 workers of a 61.8 ms mean service is 80% load is where
a study goes wrong first. ``offered_load`` does it once, for ``run``'s tables and the app:

- the call rate: ``open`` starts clients / think_time calls per time unit whatever happens;
  ``poisson`` clients wait for each call before thinking again, so clients / think_time is the
  most they start (``at_most``); a trace's rate is its calls before the horizon over the horizon. ``burst`` and
  ``spike`` start one call per client, no rate.
- the capacity: requests per time unit the server completes when fully busy: ``PoolServer``
  workers / mean service, ``QueueServer`` concurrency / service_time, ``LatencyServer``
  concurrency_limit / base_latency (at its base latency: it slows as it fills). The contention
  controls and ``FlakyServer`` have no such bound (None).
- in an incident the capacity is that times the incident's ``capacity``, or divided by its
  ``slowdown``: ``peak`` is the utilisation in the worst one.
- with ``[[simulation.tiers]]`` every tier serves each call once (before retries), so the tier
  of least capacity is the one the load is measured against (``tier``, counted from 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sim.vocabulary.units import seconds_per_unit

if TYPE_CHECKING:  # pragma: no cover
    from sim.settings.spec import SimulationSpec


@dataclass(frozen=True)
class OfferedLoad:
    """Calls started per time unit, the server's capacity per time unit, in ``unit``."""

    clients: int
    unit: str
    calls: float | None          # first attempts started per time unit; None: no rate (burst)
    capacity: float | None       # requests completed per time unit at full use; None: unbounded
    at_most: bool = False        # calls is an upper bound (closed-loop clients wait for replies)
    incident_factor: float = 1.0  # the lowest capacity factor of an incident (1: none lowers it)
    tier: int = 1                # the tier whose capacity this is (the least of a tiered run's)
    peak_capacity: float | None = None  # the least capacity any tier keeps in an incident

    @property
    def utilisation(self) -> float | None:
        """Calls over capacity (before retries); None when either is unknown."""
        if self.calls is None or not self.capacity:
            return None
        return self.calls / self.capacity

    @property
    def peak(self) -> float | None:
        """The utilisation in the worst incident (None without one that lowers capacity)."""
        if self.calls is None or self.peak_capacity is None or self.capacity is None:
            return None
        if self.peak_capacity >= self.capacity:
            return None
        return math.inf if self.peak_capacity <= 0 else self.calls / self.peak_capacity

    def text(self) -> str:
        """One line: ``offered load at 160 clients: 829 calls/s, server capacity 1,036/s,
        utilisation 80% (160% in the incident)``."""
        head = f"offered load at {self.clients:,} clients: "
        if self.calls is None:
            return head + "one call per client (no steady rate)"
        scale, per = _per_second(self.unit)
        parts = [f"{'at most ' if self.at_most else ''}{_rate(self.calls * scale)} calls{per}"]
        if self.capacity is None:
            parts.append("server capacity unbounded")
        else:
            where = f" (tier {self.tier})" if self.tier > 1 else ""
            parts.append(f"server capacity {_rate(self.capacity * scale)}{per}{where}")
            parts.append(f"utilisation {'at most ' if self.at_most else ''}{_percent(self.utilisation)}"
                         + (f" ({_percent(self.peak)} in the incident)" if self.peak is not None else ""))
        return head + ", ".join(parts)


    def short_text(self) -> str:
        """For a caption: ``829 calls/s · load 80% (160% in the incident)``; empty without a
        rate."""
        if self.calls is None:
            return ""
        scale, per = _per_second(self.unit)
        bound = "≤ " if self.at_most else ""
        text = f"{bound}{_rate(self.calls * scale)} calls{per}"
        if self.utilisation is not None:
            where = f" of tier {self.tier}" if self.tier > 1 else ""
            text += f" · load{where} {bound}{_percent(self.utilisation)}"
            if self.peak is not None:
                text += f" ({_percent(self.peak)} in the incident)"
        return text


def _per_second(unit: str) -> tuple[float, str]:
    """The factor from per ``unit`` to per second, and the suffix; per ``unit`` when a unit has
    no length in seconds (ticks)."""
    seconds = seconds_per_unit(unit)
    return (1.0 / seconds, "/s") if seconds else (1.0, f"/{unit}")


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _percent(value: float | None) -> str:
    if value is None:
        return "—"
    return "∞" if math.isinf(value) else f"{value:.0%}"


def server_capacity(control: object) -> float | None:
    """Requests per time unit the server completes when fully busy (None: no such bound)."""
    name = type(control).__name__
    if name == "PoolServer":
        mean = control.mean_service  # type: ignore[attr-defined]
        return control.workers / mean if mean > 0 else None  # type: ignore[attr-defined]
    if name == "QueueServer":
        s = control.service_time  # type: ignore[attr-defined]
        return control.concurrency / s if s > 0 else None  # type: ignore[attr-defined]
    if name == "LatencyServer":
        s = control.base_latency  # type: ignore[attr-defined]
        return control.concurrency_limit / s if s > 0 else None  # type: ignore[attr-defined]
    return None


def call_rate(spec: SimulationSpec, clients: int) -> tuple[float | None, bool]:
    """First attempts started per time unit at ``clients`` clients, and whether that is only an
    upper bound (clients that wait for each reply); None for a workload with no steady rate."""
    workload = spec.workload
    think = getattr(workload, "think_time", None)
    if workload.NAME == "open" and think:
        profile = getattr(workload, "rate_profile", ())
        if profile:  # a rate that changes: its peak, an upper bound (``sim.models.rate_profile``)
            return max(clients / think, max(p.rate for p in profile)), True
        return clients / think, False
    if workload.NAME == "poisson" and think:
        return clients / think, True
    if workload.NAME == "trace":  # the log's calls before the horizon, over the horizon
        horizon = float(spec.horizon or 0.0)
        if horizon > 0:
            return workload.calls_before(horizon) / horizon, False  # type: ignore[attr-defined]
    return None, False


def incident_factor(incidents: tuple) -> float:
    """The lowest share of its capacity a server keeps in ``incidents`` (1: none lowers it)."""
    factors = [1.0]
    for incident in incidents:
        if incident.kind == "capacity":
            factors.append(incident.level)
        elif incident.kind == "slowdown":
            factors.append(1.0 / incident.level)
    return min(factors)


def offered_load(spec: SimulationSpec, clients: int | None = None) -> OfferedLoad:
    """The offered load of ``spec`` at ``clients`` clients (default: its largest count)."""
    n = spec.max_clients if clients is None else clients
    calls, at_most = call_rate(spec, n)
    servers = [(spec.control, spec.incidents), *((t.control, t.incidents) for t in spec.tiers)]
    capacities = [(server_capacity(c), incident_factor(i)) for c, i in servers]
    known = [(cap, factor, tier) for tier, (cap, factor) in enumerate(capacities, start=1)
             if cap is not None]
    if not known:
        return OfferedLoad(n, spec.time_unit, calls, None, at_most)
    capacity, factor, tier = min(known, key=lambda k: k[0])
    peak = min(cap * f for cap, f, _ in known)
    return OfferedLoad(n, spec.time_unit, calls, capacity, at_most, factor, tier, peak)


def service_cv(control: object) -> float | None:
    """The coefficient of variation (sd / mean) of a server's service time: 0 for a constant
    (``QueueServer``, a constant ``PoolServer``), 1 for an exponential, sqrt(e^(σ²) − 1) for a
    lognormal of σ = ln(p99 / median) / z99; None where there is no such time (or a file's)."""
    name = type(control).__name__
    if name == "QueueServer":
        return 0.0
    if name != "PoolServer":
        return None
    dist = control.service_distribution  # type: ignore[attr-defined]
    if dist == "constant":
        return 0.0
    if dist == "exponential":
        return 1.0
    if dist == "lognormal":
        from sim.models.service_times import lognormal_sigma

        sigma = lognormal_sigma(float(control.service_time), float(control.service_p99))  # type: ignore[attr-defined]
        return math.sqrt(math.expm1(sigma * sigma)) if sigma * sigma < 700 else math.inf
    return None
