"""Which columns of a table fit a width: the required ones always, then the others by priority.

Both strategy tables drop their least telling columns on narrow panes (and say which in their
caption) rather than being cut off at the right edge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

CELL_PADDING = 2  # a DataTable cell's padding, one cell each side


def column_width(header: str, cells: Sequence[str]) -> int:
    """Cells a column takes in a DataTable: its widest text plus padding."""
    return max([len(header), *(len(c) for c in cells)]) + CELL_PADDING


def fit_columns(widths: Mapping[str, int], required: Sequence[str], priority: Sequence[str],
                width: int) -> list[str]:
    """The columns to show, in ``widths``' order: ``required`` ones, then as many of
    ``priority`` (most wanted first) as fit in ``width`` cells."""
    chosen = set(required)
    used = sum(widths[c] for c in chosen)
    for column in priority:
        if column in widths and column not in chosen and used + widths[column] <= width:
            chosen.add(column)
            used += widths[column]
    return [c for c in widths if c in chosen]
