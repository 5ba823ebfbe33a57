"""Parameter checks shared by strategies, controls, servers and workloads.

Each raises ``ParamError`` naming the parameter, so the config loader can add the file and
simulation; impossible values (negative delays, zero caps) are refused at construction.
"""

from __future__ import annotations

import math
from dataclasses import fields

from sim.vocabulary.errors import ParamError


def at_least(obj: object, low: float, *names: str) -> None:
    """Each named field must be >= ``low``."""
    for name in names:
        value = getattr(obj, name)
        if not value >= low:
            raise ParamError(name, f"must be >= {low:g}, got {value!r}")


def above(obj: object, low: float, *names: str) -> None:
    """Each named field must be > ``low``."""
    for name in names:
        value = getattr(obj, name)
        if not value > low:
            raise ParamError(name, f"must be > {low:g}, got {value!r}")


def fraction(obj: object, *names: str) -> None:
    """Each named field must be in [0, 1) (a jitter's share of the delay)."""
    for name in names:
        value = getattr(obj, name)
        if not 0 <= value < 1:
            raise ParamError(name, f"must be in [0, 1), got {value!r}")


def int_at_least(obj: object, name: str, low: int = 1) -> None:
    """The named field must be an integer (not a bool) >= ``low``."""
    value = getattr(obj, name)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ParamError(name, f"must be an integer >= {low}, got {value!r}")


def finite_fields(obj: object) -> None:
    """No float field may be NaN or infinite."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ParamError(f.name, f"must be a finite number, got {value!r}")


def describe_params(type_name: str, params: dict[str, object]) -> str:
    """``Type(a=1, b=2)``: the label that tells two models of one type apart (whole floats
    printed without ``.0``)."""
    def fmt(value: object) -> str:
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)
    return f"{type_name}({', '.join(f'{k}={fmt(v)}' for k, v in params.items())})"
