"""The Python API's argument checks: each one a ``TypeError`` or ``ValueError`` naming the
argument, the value and the range, before any work.

``bool`` is no whole number (``True`` would silently be seed 1), nor is ``1.5`` or ``"1"``;
numpy's integers are. The ranges are the command line's (``--seed``, ``--workers``), so a
result's provenance always gives a command the CLI accepts.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from sim.vocabulary.bounds import MAX_SEED, MAX_WORKERS
from sim.vocabulary.errors import ArgumentTypeError, ArgumentValueError


def whole(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` as an ``int`` from ``low`` to ``high`` (no top: ``None``)."""
    accepted = f"a whole number from {low} to {high}" if high is not None else f"a whole number, {low} or more"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name} must be {accepted}, got {value!r} ({type(value).__name__})")
    number = int(value)
    if number < low or (high is not None and number > high):
        raise ArgumentValueError(f"{name} must be {accepted}, got {number!r}")
    return number


def seed(value: Any) -> int | None:
    """A seed, as ``--seed`` takes it (0 to 2^64 - 1), or None (the config's)."""
    return None if value is None else whole("seed", value, 0, MAX_SEED)


def workers(value: Any) -> int | None:
    """A worker count, as ``--workers`` takes it (1 to ``MAX_WORKERS``), or None (all cores)."""
    return None if value is None else whole("workers", value, 1, MAX_WORKERS)


def flag(name: str, value: Any) -> bool:
    """A switch: ``True`` or ``False`` only (``"no"`` is a true string)."""
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be True or False, got {value!r}")
    return value


def callback(name: str, value: Any) -> Callable | None:
    """A function to call (``progress(done, total)``), or None."""
    if value is not None and not callable(value):
        raise ArgumentTypeError(f"{name} must be a function or None, got {value!r}")
    return value


def text(name: str, value: Any, optional: bool = True) -> str | None:
    """A name (a simulation's title, a strategy's label, a method), or None where optional."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a string{' or None' if optional else ''}, got {value!r}")
    return value
