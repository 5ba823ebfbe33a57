"""Time units: what a simulation's times are in, and how labels say so.

Configs are in milliseconds by convention (the reference's), but a model may count in ticks or
seconds (study 004 is in ticks): ``time_unit`` says which, and every label, table, chart and
axis uses it, so nothing says "ms" or "per second" for a tick-based run. Only milliseconds are
rescaled for display (long spans read in seconds); any other unit is shown as given.
"""

from __future__ import annotations

import math
import re

DEFAULT_TIME_UNIT = "ms"
MAX_UNIT_LENGTH = 12
# A short word: letters (µ included), then letters or digits, no spaces or punctuation.
_WORD = re.compile(rf"[^\W\d_][^\W_]{{0,{MAX_UNIT_LENGTH - 1}}}")
# Abbreviations take no plural "s"; words do ("3 ticks", "3 ms").
_ABBREVIATIONS = frozenset({"ns", "us", "µs", "ms", "s", "sec", "min", "h", "hr", "d"})
SECONDS_FROM_MS = 10_000  # spans of ms this long or longer read in seconds

# Seconds in one of each unit a config may name; any other unit (ticks, steps) has no length.
UNIT_SECONDS: dict[str, float] = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "second": 1.0,
    "seconds": 1.0, "min": 60.0, "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0,
    "hour": 3600.0, "hours": 3600.0,
}


def seconds_per_unit(time_unit: str) -> float | None:
    """Seconds in one ``time_unit`` (None for units with no length in seconds, e.g. "tick")."""
    return UNIT_SECONDS.get(time_unit)


def goodput_unit(time_unit: str, values: list[float]) -> tuple[float, str]:
    """The factor and unit goodput reads best in: successes per second rather than 0.0025 per
    ms (below 1 per ms, in a simulation timed in ms); otherwise per ``time_unit`` as given.
    ``run``'s latency table, the metrics PNG and the app all read goodput in it."""
    finite = [v for v in values if not math.isnan(v)]
    if time_unit == "ms" and finite and max(finite) < 1.0:
        return 1000.0, "s"
    return 1.0, time_unit


def time_unit_problem(value: object) -> str | None:
    """Why ``value`` is not a usable ``time_unit`` (None when it is)."""
    if isinstance(value, str) and _WORD.fullmatch(value):
        return None
    return (f'must be a short word such as "ms", "s" or "tick" (letters and digits, at most '
            f"{MAX_UNIT_LENGTH}), got {value!r}")


def plural(unit: str, value: float) -> str:
    """``unit`` as it reads after ``value``: "1 tick", "2 ticks", "2 ms"."""
    if value == 1 or unit in _ABBREVIATIONS or unit.endswith("s"):
        return unit
    return unit + "s"


def display_scale(span: float, unit: str = DEFAULT_TIME_UNIT) -> tuple[str, float]:
    """The unit an axis or a duration of ``span`` reads best in, and the divisor to get there:
    milliseconds from ten seconds up read in seconds; other units as they are."""
    if unit == "ms" and span >= SECONDS_FROM_MS:
        return "s", 1000.0
    return unit, 1.0


def format_duration(value: float, unit: str = DEFAULT_TIME_UNIT) -> str:
    """A time span for a title or a note, three significant digits and never in exponent form:
    ``0.25 ms``, ``12.3 ms``, ``3,640 ms``, ``12.3 s``, ``15 ticks``."""
    label, scale = display_scale(value, unit)
    scaled = value / scale
    text = f"{scaled:,.0f}" if abs(scaled) >= 100 else f"{scaled:.3g}"
    return f"{text} {plural(label, float(text.replace(',', '')))}"


def per_unit(unit: str = DEFAULT_TIME_UNIT) -> str:
    """How rates read: ``per ms``, ``per tick``."""
    return f"per {unit}"


def format_speed(speed: float, unit: str = DEFAULT_TIME_UNIT) -> str:
    """A playback speed: simulated time per real second (``500 ms/s``, ``20 tick/s``)."""
    return f"{speed:g} {unit}/s"
