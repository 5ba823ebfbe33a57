"""The strategy tables' sort: which column orders the rows, which way, and the rows' order.

The user cycles the sort column (``next_sort``) and flips its direction; the header of the
sorting column carries ▲ (smallest first) or ▼. Rows whose value is missing (no calls, no
latency) go last either way, and equal values keep the config's order, so the order is the
same every time. Nothing here imports Textual.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

ASCENDING, DESCENDING = "▲", "▼"

SortValue = float | str | None


@dataclass(frozen=True)
class Sort:
    """The rows ordered by ``column``'s values, largest first when ``descending``."""

    column: str
    descending: bool = False

    @property
    def glyph(self) -> str:
        return DESCENDING if self.descending else ASCENDING

    def describe(self, header: str) -> str:
        way = "largest first" if self.descending else "smallest first"
        return f"{header} {self.glyph} ({way})"


def _missing(value: SortValue) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def sort_order(values: Sequence[SortValue], descending: bool = False) -> list[int]:
    """Row indices in sorted order of ``values`` (numbers, or texts compared case-insensitively);
    missing values last, ties in the given order."""
    present = [i for i, v in enumerate(values) if not _missing(v)]
    missing = [i for i, v in enumerate(values) if _missing(v)]

    def key(i: int) -> tuple[int, float, str]:
        v = values[i]
        return (1, 0.0, v.casefold()) if isinstance(v, str) else (0, float(v), "")

    present.sort(key=key, reverse=descending)  # a stable sort, even reversed
    return present + missing


def next_sort(columns: Sequence[str], current: Sort | None) -> Sort | None:
    """The sort after ``current`` by the next of ``columns`` (keeping the direction); after the
    last column, None: the config's order again."""
    if not columns:
        return None
    if current is None or current.column not in columns:
        return Sort(columns[0], current.descending if current is not None else False)
    i = columns.index(current.column) + 1
    return Sort(columns[i], current.descending) if i < len(columns) else None
