"""Spec-wide rules re-checked after an explore or tune changes a key.

Models validate their own parameters when ``dataclasses.replace`` rebuilds them; the rules that
``sim.config`` applies to the simulation table itself (minimums of simulation keys, outages in
order and before the horizon, keys only replying servers take) are repeated here for a spec.
A test keeps the two in step by feeding the same values through both.
"""

from __future__ import annotations

import math

from sim.errors import ParamError
from sim.spec import SimulationSpec

# Simulation keys: (lowest allowed value, whether the value itself may equal it).
_MINIMUMS: dict[str, tuple[float, bool]] = {
    "repeat": (1, True), "network_mu": (0, True), "network_sigma": (0, True),
    "work_to_duration": (0, True), "seed": (0, True),
    "horizon": (0, False), "timeout": (0, False), "bucket": (0, False),
}
_REPLYING_ONLY = ("horizon", "timeout", "bucket")


def _check_number(key: str, value: float | int, low: float, inclusive: bool) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ParamError(key, f"must be a finite number, got {value!r}")
    if inclusive and not value >= low:
        raise ParamError(key, f"must be >= {low:g}, got {value!r}")
    if not inclusive and not value > low:
        raise ParamError(key, f"must be > {low:g}, got {value!r}")


def check_spec(spec: SimulationSpec) -> None:
    """Raise ParamError (key named as in the config) if ``spec`` breaks a simulation-level rule."""
    for key, (low, inclusive) in _MINIMUMS.items():
        value = getattr(spec, key)
        if value is not None:
            _check_number(key, value, low, inclusive)
    for n in spec.clients:
        _check_number("clients", n, 1, True)
    if not spec.control.CAPS.replies:
        for key in _REPLYING_ONLY:
            if getattr(spec, key) is not None:
                raise ParamError(key, f"needs a server that replies; {spec.control.type_name} "
                                      "lets clients assume success")
    elif spec.bucket is not None and spec.horizon is not None and spec.bucket > spec.horizon:
        raise ParamError("bucket", f"must not exceed horizon ({spec.horizon:g}), got {spec.bucket:g}")
    previous_end = None
    for i, outage in enumerate(spec.outages):
        _check_number(f"outages[{i}].start", outage.start, 0, True)
        _check_number(f"outages[{i}].duration", outage.duration, 0, False)
        if previous_end is not None and outage.start < previous_end:
            raise ParamError(f"outages[{i}].start", f"overlaps or precedes the previous outage "
                                                     f"(ends at {previous_end:g})")
        if spec.horizon is not None and outage.start >= spec.horizon:
            raise ParamError(f"outages[{i}].start", f"is at or after the horizon ({spec.horizon:g})")
        previous_end = outage.end
