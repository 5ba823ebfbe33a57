"""Snapshots of the app on a tiered simulation (issue 21): the tiers' lane groups under the
timeline (folded at 80x24, unfolded with k at 120x36), the log's tier column and the per-tier
amplification table (120x36, the analysis pane alone), mid-run."""

from __future__ import annotations

import pytest
from test_snapshots import at_event, make_app
from tui_support import FIXTURES

TINY_TIERS = FIXTURES / "tiny_tiers.toml"


def test_tiers_folded_80x24(snap_compare) -> None:
    assert snap_compare(make_app(TINY_TIERS), terminal_size=(80, 24),
                        run_before=at_event("right_curly_bracket", "right_curly_bracket"))


def test_tiers_unfolded_120x36(snap_compare) -> None:
    assert snap_compare(make_app(TINY_TIERS), terminal_size=(120, 36),
                        run_before=at_event("k", "right_curly_bracket", "right_curly_bracket"))


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
def test_tier_table_120x36(snap_compare) -> None:
    # The analysis pane alone: at 80x24 the tier table leaves the charts a row or two, whose
    # axis labels plotext draws differently from one layout pass to the next.
    assert snap_compare(make_app(TINY_TIERS), terminal_size=(120, 36), run_before=at_event("a"))
