"""Durations in each syntax the formats use, to milliseconds (the check's time unit).

- ``proto``: protobuf's JSON mapping of ``google.protobuf.Duration``, seconds with an ``s``
  ("0.025s", "15s"), as Envoy and gRPC service configs write them; Envoy's YAML also takes
  ``{seconds, nanos}``.
- ``go``: Go's ``time.ParseDuration`` ("25ms", "1.5s", "1m30s"), as Istio writes them.
- ``spring``: Spring Boot's ``Duration`` binding: ISO 8601 ("PT2S", "PT0.5S", "P1DT2H"), the
  simple form ("500ms", "2s", "1m", units ns us ms s m h d) or a bare number of milliseconds.
- ``timespan``: .NET ``TimeSpan`` as the configuration binder parses it ("00:00:02",
  "00:00:00.500", "1.02:03:04").
"""

from __future__ import annotations

import re
from typing import Any

from sim.settings.imported.source import Document, Path

_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "μs": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0,
       "h": 3_600_000.0, "d": 86_400_000.0}
_PROTO = re.compile(r"(-?\d+(?:\.\d+)?)s")
_GO = re.compile(r"(?:(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+")
_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_SIMPLE = re.compile(r"([-+]?\d+(?:\.\d+)?)\s*(ns|us|ms|s|m|h|d)?", re.IGNORECASE)
_ISO = re.compile(r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+(?:[.,]\d+)?)S)?)?",
                  re.IGNORECASE)
_TIMESPAN = re.compile(r"(-)?(?:(\d+)\.)?(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,7}))?)?")

EXAMPLES = {"proto": '"0.025s"', "go": '"25ms" or "1.5s"', "spring": '"500ms", "2s" or "PT2S"',
            "timespan": '"00:00:02" (hh:mm:ss) or "00:00:00.500"'}


def to_ms(doc: Document, path: Path, value: Any, syntax: str) -> float:
    """``value`` in milliseconds, or the one-line error naming the file, line and key."""
    ms = _parse(value, syntax)
    if ms is None:
        raise doc.error(path, f"is not a duration: {value!r}", f"write it like {EXAMPLES[syntax]}")
    if ms < 0:
        raise doc.error(path, f"must not be negative, got {value!r}")
    return ms


def _parse(value: Any, syntax: str) -> float | None:
    if syntax == "proto" and isinstance(value, dict) and set(value) <= {"seconds", "nanos"} and value:
        seconds, nanos = value.get("seconds", 0), value.get("nanos", 0)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in (seconds, nanos)):
            return seconds * 1000.0 + nanos / 1e6
        return None
    if syntax == "spring" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)  # a bare number binds as milliseconds
    if not isinstance(value, str):
        return None
    text = value.strip()
    if syntax == "proto":
        m = _PROTO.fullmatch(text)
        return float(m.group(1)) * 1000.0 if m else None
    if syntax == "go":
        if text == "0":
            return 0.0
        if not _GO.fullmatch(text):
            return None
        return sum(float(n) * _MS[unit] for n, unit in _GO_PART.findall(text))
    if syntax == "spring":
        m = _SIMPLE.fullmatch(text)
        if m:
            return float(m.group(1)) * _MS[(m.group(2) or "ms").lower()]
        m = _ISO.fullmatch(text)
        if m and any(m.group(i) for i in range(2, 6)):
            sign = -1.0 if m.group(1) == "-" else 1.0
            d, h, mi = (float(m.group(i) or 0) for i in (2, 3, 4))
            s = float((m.group(5) or "0").replace(",", "."))
            return sign * (d * 86_400_000.0 + h * 3_600_000.0 + mi * 60_000.0 + s * 1000.0)
        return None
    if syntax == "timespan":
        m = _TIMESPAN.fullmatch(text)
        if not m:
            return None
        days, hours, minutes, seconds = (int(m.group(i) or 0) for i in (2, 3, 4, 5))
        if hours > 23 or minutes > 59 or seconds > 59:
            return None
        fraction = float("0." + m.group(6)) if m.group(6) else 0.0
        ms = ((days * 24 + hours) * 60 + minutes) * 60_000.0 + (seconds + fraction) * 1000.0
        return -ms if m.group(1) else ms
    raise ValueError(f"unknown duration syntax {syntax!r}")
