"""The ★ of a latency table: which strategies are best at one client count, and the rule in words.

One rule, stated once (``star_rule``), which every table's caption quotes (the CLI's latency
table, the app's, an explore cell's runs) and the help texts too (``backoff-sim run --help``, the
app's help screen):

- a ★ goes only to a strategy that served at least ``SERVED_SHARE`` (90%) as many successes as
  the one that served most: latency percentiles cover successful requests only, and a strategy
  that leaves most clients unserved is fast over the few it served;
- where the simulation has an outage or an incident, only to a strategy that recovered in every
  run judged (``RecoverySummary.all_recovered``; not judged counts as no failure): a strategy
  that did not recover is no one's best, however few requests it got through. When none did,
  no strategy has a ★;
- among those: the ★ for requests goes to the fewest requests, the ★ for p50 to the lowest p50.
  Where a strategy hedges, "requests" counts every copy sent, the hedges too
  (``metrics.copies_sent``): a strategy that sends fewer attempts but more copies in all
  loads the servers more, and the caption says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from sim.analysis.metrics import copies_sent

BEST = "★"
# A ★ goes only to strategies that served at least this share of the most served (as the
# recovery verdict's 90% of the pre-outage level).
SERVED_SHARE = 0.9
MARKED = ("requests", "p50")  # the columns a ★ marks

Row = Mapping[str, Any]  # a strategy's cells by column: requests, hedges, successes, p50, recovery


def star_rule(has_outage: bool | None, hedges: bool = False) -> str:
    """The rule in words, as every caption gives it: for a simulation with an outage or an
    incident (True) or without (False), whose strategies hedge (``hedges``: requests then
    count every copy sent) or not; None: for any simulation (the help texts, which describe
    every table at once)."""
    recovered = {True: " and recovered in every run", False: "",
                 None: " and, where there is an outage or an incident, recovered in every run"}[has_outage]
    copies = ("; with hedging, requests count every copy sent, hedges too" if has_outage is None
              else "; requests count every copy sent, hedges too" if hedges else "")
    return (f"{BEST} fewest requests, lowest p50: among strategies that served "
            f"≥ {SERVED_SHARE:.0%} of the most served{recovered}{copies}")


def served_enough(section: Sequence[Row]) -> list[bool]:
    """Per row: did the strategy serve at least ``SERVED_SHARE`` of the most any strategy
    served? Rows with nothing to compare pass."""
    most = max((row["successes"] for row in section if not math.isnan(row["successes"])), default=0)
    return [not most > 0 or row["successes"] >= SERVED_SHARE * most for row in section]


def recovered_every_time(row: Row) -> bool:
    """No run of the strategy failed to recover (none judged, or no outage: True)."""
    recovery = row.get("recovery")
    return recovery is None or recovery.all_recovered


def _lowest(values: list[float]) -> int | None:
    """Index of the smallest non-NaN value (the first one on ties), or None."""
    finite = [(v, i) for i, v in enumerate(values) if not math.isnan(v)]
    return min(finite)[1] if finite else None


def _marked_value(row: Row, column: str) -> float:
    """What a ★ compares in ``column``: the p50, or for requests every copy sent (the requests
    and, in a table with a ``hedges`` column, the hedges)."""
    if column == "requests":
        return copies_sent(row["requests"], row.get("hedges", 0.0))
    return row[column]


def best_rows(section: Sequence[Row]) -> dict[str, int | None]:
    """The row with the ★ for requests and the one with the ★ for p50 (``star_rule``); None
    where no row may have it."""
    eligible = [recovered_every_time(row) and served
                for row, served in zip(section, served_enough(section))]
    return {column: _lowest([_marked_value(row, column) if ok else math.nan
                             for row, ok in zip(section, eligible)])
            for column in MARKED}
