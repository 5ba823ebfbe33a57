"""The non-dominated front of points on two minimised metrics (a tune's Pareto set)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def non_dominated(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point is at most equal to on both and below on one
    (both minimised); points with a NaN are never on the front. In index order."""
    front = []
    for i, (a, b) in enumerate(points):
        if math.isnan(a) or math.isnan(b):
            continue
        dominated = any(
            (c <= a and d <= b and (c < a or d < b))
            for j, (c, d) in enumerate(points) if j != i and not (math.isnan(c) or math.isnan(d)))
        if not dominated:
            front.append(i)
    return front
