"""A tiered run split for the views: the clients and tier 1 as one run, each tier below as a
run of its callers (issue 21).

A tiered run records every tier's events in one stream, a tier's with its callers' ids after
the clients' (``sim.runs.tiers.TierLayout``). The cursor, the log and the playback walk that
whole stream; the timeline's client lanes, the charts, the pool line and the policy state read
the clients' part as before, and each tier's lane group reads its own part. Each part keeps the
indices of its events in the whole run, so a cursor in the run maps to a cursor in the part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sim.runs.tiers import TierLayout

if TYPE_CHECKING:
    from .rundata import RunData


def part_cursor(index: np.ndarray, cursor: int) -> int:
    """The last event of a part (``index``: its events' indices in the whole run) at or before
    the run's event ``cursor``; -1 when none is."""
    return int(np.searchsorted(index, cursor, side="right")) - 1


@dataclass(frozen=True, eq=False)
class TierGroup:
    """One tier below the first: its callers' ids in the run, and its events as a run of those
    callers numbered from 0 (its pauses and incidents as server-wide events, id -1)."""

    tier: int
    ids: range
    index: np.ndarray   # indices in the whole run of the tier's events
    run: RunData

    def label(self, lo: int, hi: int) -> str:
        """A lane's label: the callers' ids in the whole run (as the log and the CSV give them)."""
        lo, hi = self.ids.start + lo, self.ids.start + hi
        return f"{lo}" if lo >= hi else f"{lo}-{hi}"


@dataclass(frozen=True, eq=False)
class TierParts:
    """A tiered run's parts: the tier of each event, the clients' part and every lower tier's."""

    layout: TierLayout
    tier: np.ndarray        # int8, the tier of each event of the run (1: the clients')
    top_index: np.ndarray   # indices of the clients' part's events in the run
    top: RunData            # the clients and the server they call, as an untiered run
    groups: tuple[TierGroup, ...]

    def top_cursor(self, cursor: int) -> int:
        """The clients' part's cursor for the run's ``cursor`` (0 before its first event)."""
        return max(part_cursor(self.top_index, cursor), 0)


# Lanes of callers an unfolded tier shows (its callers share them evenly, ``even_lanes``): a
# tier of a thousand workers stays a few rows, below the clients' lanes.
TIER_LANES = 4


@dataclass(frozen=True)
class TierRow:
    """One row of the tier lanes: a tier's head (folded: every event of the tier in one lane;
    unfolded: the tier's server lane) or one lane of its callers (``lane`` index)."""

    group: TierGroup
    lane: int | None
    folded: bool

    def label(self, grid_labels: tuple[str, ...] = ()) -> str:
        if self.lane is None:
            return f"▸ t{self.group.tier}" if self.folded else f"▾ t{self.group.tier} srv"
        return grid_labels[self.lane] if self.lane < len(grid_labels) else ""


def tier_rows(parts: TierParts | None, unfolded: frozenset[int],
              lanes: dict[int, int]) -> list[TierRow]:
    """Every row, tier 2 first: a head per tier, and its callers' ``lanes[tier]`` lanes when
    the tier is ``unfolded``."""
    rows: list[TierRow] = []
    for group in parts.groups if parts is not None else ():
        folded = group.tier not in unfolded
        rows.append(TierRow(group, None, folded))
        if not folded:
            rows += [TierRow(group, lane, False) for lane in range(lanes.get(group.tier, 1))]
    return rows


def caller_labels(group: TierGroup, lanes: int) -> tuple[str, ...]:
    """Each caller lane's label: the ids it holds, in the whole run's numbering."""
    n = max(len(group.ids), 1)
    per = -(-n // max(lanes, 1))
    return tuple(group.label(i * per, min((i + 1) * per, n) - 1)
                 for i in range(-(-n // per)))
