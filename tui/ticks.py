"""Axis ticks and time labels shared by the timeline's ruler and the time-series charts.

Times are simulated milliseconds; spans of ten seconds or more read better in seconds. Ticks
fall on round values (0 15 30 45 s, never 0 15.25 30.51), and counts on whole numbers.
"""

from __future__ import annotations

import math


def time_scale(span: float) -> tuple[str, float]:
    """The unit for a time axis and the divisor from ms: seconds from 10 s up, as the timeline."""
    return ("s", 1000.0) if span >= 10_000 else ("ms", 1.0)


def format_duration(ms: float) -> str:
    unit, scale = time_scale(ms)
    return f"{ms / scale:.3g} {unit}"


def nice_ticks(end: float, count: int, start: float = 0.0) -> list[float]:
    """At most ``count`` round ticks from ``start`` (0) to at most ``end`` (steps of 1, 1.5, 2,
    2.5, 3, 5 times a power of ten, on multiples of the step), so a run of 59.99 s is labelled
    0 15 30 45, not 0 15 29.99 44.99, and a zoomed-in 1234-1290 ms 1240 1260 1280."""
    if end <= start:
        return [start]
    wanted = (end - start) / max(count - 1, 1)
    power = 10.0 ** math.floor(math.log10(wanted))
    step = next(m * power for m in (1, 1.5, 2, 2.5, 3, 5, 10) if m * power >= wanted * (1 - 1e-9))
    first = math.ceil(start / step - 1e-9)
    n = int(end / step + 1e-9) - first
    return [round((first + i) * step, 10) for i in range(n + 1)]


def count_ticks(top: float, rows: int) -> list[int]:
    """Whole-number ticks from 0 below ``top``, on a 1-2-5 step, at most one per two rows."""
    most = max(1, rows // 2)
    steps = (m * 10**e for e in range(15) for m in (1, 2, 5))
    step = next(st for st in steps if top <= (most + 1) * st)
    return list(range(0, int(top) + 1, step))
