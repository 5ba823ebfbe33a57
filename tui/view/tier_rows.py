"""A tiered run's lane groups: which rows the tiers take under the timeline and their labels
(issue 21). The run's parts themselves are ``rundata``'s (``TierParts``, ``TierGroup``)."""

from __future__ import annotations

from dataclasses import dataclass

from .rundata import TierGroup, TierParts


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
