"""File names derived from simulation titles."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import UserError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

SUFFIXES = ("_metrics.png", "_scatter.png", "_metrics.csv", "_runs.csv", "_events.csv")
# Written in addition for simulations against servers that reply (``SimulationSpec.is_open``).
OPEN_SUFFIXES = ("_timeseries.png", "_latency.png", "_timeseries.csv", "_latency.csv")


def safe_title(title: str) -> str:
    """A filename-safe stem: keep ``[A-Za-z0-9._-]``, replace anything else with ``_``.

    Reference titles such as ``Locking_Example`` come out unchanged.
    """
    return _UNSAFE.sub("_", title)


def check_unique_stems(titles: Iterable[str]) -> None:
    """Raise UserError when two titles would write the same files (e.g. ``a b`` and ``a_b``)."""
    seen: dict[str, str] = {}
    for title in titles:
        stem = safe_title(title)
        if stem in seen:
            raise UserError(f"simulations {seen[stem]!r} and {title!r} would write the same files "
                            f"({stem}_*); give them titles that differ in letters or digits")
        seen[stem] = title
