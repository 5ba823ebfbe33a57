"""One explore axis: a key path and the values it takes, listed or spaced over a range.

``{ key = "think_time", values = [5000, 10000] }`` lists values; ``{ key = "outages[0].duration",
from = 1000, to = 120000, steps = 12, scale = "log" }`` spaces ``steps`` values from ``from`` to
``to`` (both included), evenly or geometrically. Range values are rounded to 6 significant digits
(readable in files, and the same in every process); integer keys round to whole numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim.vocabulary.errors import ParamError
from sim.exploration.paths import KeyPath, PathError, resolve
from sim.settings.spec import SimulationSpec

SCALES = ("linear", "log")
# The most cells a map may have. Every cell's spec is built, re-validated and put through the
# resource estimate before anything runs (about 70 us a cell measured, so 7 s at this limit),
# and each is a full sweep of the simulation; an axis or a grid beyond it is refused before any
# value is allocated (numpy would need 8 bytes a step: 8 GB for 10^9 steps).
MAX_CELLS = 100_000
CELLS_HINT = "fewer steps or values: each cell is a full sweep of the simulation"


def too_many_cells(cells: int) -> str:
    """The refusal of a map of ``cells`` cells: the count and the limit."""
    return f"would make {cells:,} cells, more than the limit of {MAX_CELLS:,} cells per map"
_RANGE_KEYS = {"from", "to", "steps", "scale"}
AXIS_KEYS = {"key", "values", "label"} | _RANGE_KEYS


@dataclass(frozen=True)
class Axis:
    """A key path, its values in order, and the scale to draw it on."""

    path: KeyPath
    values: tuple[float | int, ...]
    scale: str = "linear"
    label: str = ""

    @property
    def name(self) -> str:
        """Column name and axis title: the label if given, else the key path."""
        return self.label or self.path.text


def format_value(value: float | int) -> str:
    """A short label for an axis value or a mean: three significant digits, whole numbers with
    thousands separators from 1,000 on (never e-notation)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _number(table: Mapping[str, Any], key: str) -> float:
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParamError(key, f"must be a finite number, got {value!r}")
    return float(value)


def _spaced(table: Mapping[str, Any]) -> tuple[list[float], str]:
    for key in ("from", "to", "steps"):
        if key not in table:
            raise ParamError(key, "is missing", "a range needs from, to and steps")
    low, high = _number(table, "from"), _number(table, "to")
    steps = table["steps"]
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 2:
        raise ParamError("steps", f"must be a whole number >= 2, got {steps!r}")
    if steps > MAX_CELLS:
        raise ParamError("steps", too_many_cells(steps), CELLS_HINT)
    scale = table.get("scale", "linear")
    if scale not in SCALES:
        raise ParamError("scale", f"must be \"linear\" or \"log\", got {scale!r}")
    if low == high:
        raise ParamError("to", f"must differ from from ({low:g})")
    if scale == "log":
        if low <= 0 or high <= 0:
            raise ParamError("from" if low <= 0 else "to", "must be > 0 on a log scale")
        raw = np.geomspace(low, high, steps)
    else:
        raw = np.linspace(low, high, steps)
    return [float(f"{v:.6g}") for v in raw.tolist()], scale


def parse_axis(table: Any, spec: SimulationSpec) -> Axis:
    """An Axis from its TOML table; ParamError (key relative to the table) for any mistake."""
    if not isinstance(table, Mapping):
        raise ParamError("", "must be a table like { key = \"think_time\", values = [1000, 2000] }")
    for key in table:
        if key not in AXIS_KEYS:
            raise ParamError(key, "is not an axis key", "an axis has key, and values or from/to/steps/scale")
    if "key" not in table:
        raise ParamError("key", "is missing", "name the key to vary, e.g. key = \"think_time\"")
    try:
        path = resolve(table["key"], spec)
    except PathError as exc:
        raise ParamError("key", exc.message, exc.hint) from None
    label = table.get("label", "")
    if not isinstance(label, str):
        raise ParamError("label", f"must be a string, got {label!r}")
    has_range = bool(_RANGE_KEYS & set(table) - {"scale"})
    if ("values" in table) == has_range:
        raise ParamError("values", "give either values = [...] or from, to and steps",
                         "e.g. values = [1, 2, 5] or from = 1, to = 100, steps = 5, scale = \"log\"")
    scale = table.get("scale", "linear")
    if "values" in table:
        raw = table["values"]
        if not isinstance(raw, list) or not raw:
            raise ParamError("values", f"must be a non-empty list of numbers, got {raw!r}")
        if len(raw) > MAX_CELLS:
            raise ParamError("values", f"has {len(raw):,} values: {too_many_cells(len(raw))}", CELLS_HINT)
        if scale not in SCALES:
            raise ParamError("scale", f"must be \"linear\" or \"log\", got {scale!r}")
        values = list(raw)
    else:
        values, scale = _spaced(table)
        if path.integer:
            values = [int(round(v)) for v in values]
    try:
        typed = tuple(path.coerce(v) for v in values)
    except ParamError as exc:
        raise ParamError("values", exc.message) from None
    if len(set(typed)) != len(typed):
        raise ParamError("values", f"has repeated values: {list(typed)!r}",
                         "fewer steps, or a wider range for a whole-number key")
    if scale == "log" and any(v <= 0 for v in typed):
        raise ParamError("scale", "a log scale needs values > 0")
    return Axis(path, typed, scale, label)
