"""``maybe_njit``: numba's ``njit`` when numba is importable and not switched off, else nothing.

So a kernel is one source: compiled where numba is installed, plain Python where it is not.
``BACKOFF_SIM_PURE=1`` in the environment turns the compiled fast paths off (the engine then
runs its reference models; see ``sim.runs.fast``).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

PURE_ENV = "BACKOFF_SIM_PURE"


def pure_requested() -> bool:
    """True when the environment asks for the reference engine only."""
    return os.environ.get(PURE_ENV, "") not in ("", "0")


# numba is an optional extra (the product runs without it); found without importing it, as its
# import alone takes ~0.3 s and most runs never need it.
COMPILED = importlib.util.find_spec("numba") is not None


def maybe_njit(function: F) -> F:
    """Compile ``function`` with numba (cached on disk beside its module) when numba is
    installed; otherwise return it unchanged. The plain function stays reachable as
    ``plain(function)`` for the tests."""
    if not COMPILED:
        return function
    import numba
    return numba.njit(cache=True, nogil=True)(function)


def plain(function: Callable) -> Callable:
    """The uncompiled source of a ``maybe_njit`` function (itself when numba is absent)."""
    return getattr(function, "py_func", function)
