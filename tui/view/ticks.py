"""Axis ticks and time labels shared by the timeline's ruler and the time-series charts.

Times are in the simulation's ``time_unit`` (``sim.vocabulary.units``): milliseconds by default, whose
spans of ten seconds or more read better in seconds. Ticks fall on round values (0 15 30 45 s,
never 0 15.25 30.51), and counts on whole numbers.
"""

from __future__ import annotations

import math

from sim.vocabulary.units import DEFAULT_TIME_UNIT, display_scale, format_duration  # noqa: F401 (re-exported)


def time_scale(span: float, unit: str = DEFAULT_TIME_UNIT) -> tuple[str, float]:
    """The unit for a time axis of ``span`` and the divisor to it (ms → s from 10 s up)."""
    return display_scale(span, unit)


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


STEPS = (1, 2, 2.5, 5, 10)


def round_step(span: float, count: int) -> float:
    """The smallest step of 1, 2, 2.5 or 5 times a power of ten that covers ``span`` in at most
    ``count - 1`` steps."""
    wanted = span / max(count - 1, 1)
    if wanted <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(wanted))
    return next(m * power for m in STEPS if m * power >= wanted * (1 - 1e-9))


def value_ticks(low: float, high: float, count: int) -> list[float]:
    """Round ticks from a multiple of the step at or below ``low`` to one at or above ``high``
    (at most ``count`` of them, about), for an axis whose limits are the first and the last."""
    if high <= low:
        high = low + (abs(low) or 1.0)
    step = round_step(high - low, count)
    start = math.floor(low / step + 1e-9)
    end = math.ceil(high / step - 1e-9)
    return [round(i * step, 10) for i in range(start, end + 1)]


def log_ticks(low: float, high: float, count: int) -> list[float]:
    """Round ticks for a log axis from ``low`` to ``high`` (both > 0): powers of ten, with 2 and
    5 between them when the data spans too few decades for ``count`` ticks."""
    first = math.floor(math.log10(low) + 1e-9)
    last = math.ceil(math.log10(high) - 1e-9)
    last = max(last, first + 1)
    decades = [10.0 ** e for e in range(first, last + 1)]
    if len(decades) * 3 - 2 <= count:
        fine = [d * m for d in decades for m in (1, 2, 5)]
        decades = [t for t in fine if t <= decades[-1]]
    # From the last tick at or below ``low`` to the first at or above ``high``.
    below = [t for t in decades if t <= low * (1 + 1e-9)]
    above = [t for t in decades if t >= high * (1 - 1e-9)]
    decades = [t for t in decades if below[-1] <= t <= above[0]]
    while len(decades) > max(count, 2):  # too many decades: every other one
        decades = decades[::2]
    return decades


def format_tick(value: float, step: float | None = None) -> str:
    """A tick label with thousands separators and only the decimals the step needs: 1,500 ·
    2.5 · 0.05, never 1500.0 or 1.2e+03."""
    if step is None:
        step = abs(value)
    decimals = 0
    if step and not float(step).is_integer():
        decimals = max(0, -math.floor(math.log10(abs(step)) + 1e-9))
        while decimals < 10 and abs(round(step, decimals) - step) > 1e-9 * abs(step):
            decimals += 1
    if float(value).is_integer() and decimals == 0:
        return f"{int(value):,}"
    return f"{value:,.{decimals}f}"
