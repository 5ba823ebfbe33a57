"""A rate profile for open traffic: ``rate_profile = [{ at, rate }, { at, rate, ramp = true }, ...]``.

A spike or a diurnal swing without a trace file. The workload's own rate (``rate``, ``load`` or
``think_time``) holds from t = 0 to the first point; each point then sets the rate of the whole
workload (calls per time unit, as ``rate``) from its ``at`` on:

- ``{ at, rate }``: a step, the rate jumps to ``rate`` at ``at``;
- ``{ at, rate, ramp = true }``: a ramp that ends at this point, the rate going linearly from the
  previous point's (its ``at`` and rate; t = 0 and the workload's own rate for the first) to
  ``rate`` at ``at``.

The last point's rate holds to the horizon. A rate may be 0 (no calls while it lasts).

Arrivals stay a Poisson process, now of intensity rate(t): each client's exponential gaps, the
same draws as without a profile (mean ``think_time`` = clients / the workload's own rate), are
laid out on the profile's clock by the time change T = M⁻¹(M(t) + gap), M(t) = ∫₀ᵗ rate(s) /
rate₀ ds (Çinlar's inversion of a non-homogeneous Poisson process): a unit of M holds as many
calls on average as a unit of time at the own rate. Up to the first point M(t) = t and every
arrival is the one of the run without the profile; so a run is seeded and deterministic as
any other, and a profile changes only the arrivals from its first point on.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass

from sim.vocabulary.errors import ParamError


@dataclass(frozen=True)
class RatePoint:
    """One point of a ``rate_profile``: the rate from ``at`` on (``ramp``: reached linearly from
    the previous point)."""

    at: float
    rate: float
    ramp: bool = False

    def __post_init__(self) -> None:
        for name in ("at", "rate"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ParamError(name, f"must be a finite number, got {value!r}")
        if self.at < 0:
            raise ParamError("at", f"must be >= 0, got {self.at!r}")
        if self.rate < 0:
            raise ParamError("rate", f"must be >= 0 (calls per second), got {self.rate!r}")
        if not isinstance(self.ramp, bool):
            raise ParamError("ramp", f"must be true or false, got {self.ramp!r}")


def order_problem(points: tuple[RatePoint, ...]) -> tuple[int, str] | None:
    """The first point out of time order (its index and why), or None: each ``at`` after the
    previous one (a ramp needs a span; two steps at one time would leave the first unused)."""
    for i in range(1, len(points)):
        if not points[i].at > points[i - 1].at:
            return i, f"must be after the previous point's at ({points[i - 1].at:g}), got {points[i].at:g}"
    return None


class RateClock:
    """The profile's clock: ``after(t, gap)`` is the arrival a ``gap`` (drawn at the own rate)
    after ``t``, laid out on the profile (the module's time change)."""

    def __init__(self, base_rate: float, points: tuple[RatePoint, ...]) -> None:
        # The relative intensity m = rate / base_rate, piecewise linear between knots (a step is
        # two knots at one time), and M at each knot.
        times, levels = [0.0], [1.0]
        for p in points:
            level = p.rate / base_rate
            if not p.ramp:
                times.append(float(p.at))
                levels.append(levels[-1])
            times.append(float(p.at))
            levels.append(level)
        cumulative = [0.0]
        for i in range(1, len(times)):
            cumulative.append(cumulative[-1] + (times[i] - times[i - 1]) * (levels[i] + levels[i - 1]) / 2)
        self.times, self.levels, self.cumulative = times, levels, cumulative

    def integral(self, t: float) -> float:
        """M(t) = ∫₀ᵗ m(s) ds."""
        times, levels = self.times, self.levels
        i = bisect_right(times, t) - 1
        if i == len(times) - 1:
            return self.cumulative[i] + (t - times[i]) * levels[i]
        span = times[i + 1] - times[i]
        u = t - times[i]
        slope = (levels[i + 1] - levels[i]) / span
        return self.cumulative[i] + u * (levels[i] + slope * u / 2)

    def inverse(self, y: float) -> float:
        """The time at which M reaches ``y`` (inf when the profile ends at rate 0 below it)."""
        times, levels, cumulative = self.times, self.levels, self.cumulative
        i = bisect_right(cumulative, y) - 1
        d = y - cumulative[i]
        if i == len(times) - 1:
            return math.inf if levels[i] == 0 else times[i] + d / levels[i]
        if d <= 0:
            return times[i]
        slope = (levels[i + 1] - levels[i]) / (times[i + 1] - times[i])
        # m_i·u + slope·u²/2 = d, the root in the segment, written so that it stays exact for a
        # flat segment and loses no digits as slope → 0.
        return times[i] + 2 * d / (levels[i] + math.sqrt(max(levels[i] ** 2 + 2 * slope * d, 0.0)))

    def after(self, t: float, gap: float) -> float:
        """The arrival ``gap`` of the own rate's time after ``t`` on the profile's clock."""
        if t < self.times[1] and t + gap <= self.times[1] and self.levels[1] == 1.0:
            return t + gap  # before the first point: the run without the profile, bit for bit
        return self.inverse(self.integral(t) + gap)


def above_windows(points: tuple[RatePoint, ...], base_rate: float) -> tuple[tuple[float, float], ...]:
    """The spans in which the profile offers more than the workload's own rate (a spike the
    server must recover from, judged as an incident is), each ``(start, end)``: from where it
    rises above the own rate (a ramp's start) to where it is back at or below it. A profile
    that ends above its own rate has a new normal, not a spike: its last rise is not a window."""
    clock = RateClock(base_rate, points)
    windows: list[tuple[float, float]] = []
    start: float | None = None
    knots = list(zip(clock.times, clock.levels))
    for (t0, l0), (t1, l1) in zip(knots, knots[1:]):
        if start is None and l1 > 1.0 and t1 >= t0:
            # A step (t0 == t1) rises at its time; a ramp from at or below 1 rises where it
            # crosses 1: t0 + (1 - l0) / slope, its start when it begins above.
            start = t0 if l0 > 1.0 or t1 == t0 else t0 + (t1 - t0) * (1.0 - l0) / (l1 - l0)
        elif start is not None and l1 <= 1.0:
            end = t1 if t1 == t0 or l0 <= 1.0 else t0 + (t1 - t0) * (l0 - 1.0) / (l0 - l1)
            windows.append((start, end))
            start = None
    return tuple(windows)

