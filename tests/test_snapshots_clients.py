"""Pictures of what issue 23's timeline and strategy-table keys show, at 80×24 and 120×36: a
lane group expanded to its clients with one client followed (its lane marked ▸, its attempts
highlighted), clients picked by typing, the strategy table sorted (▼ in the header) and its
column picker. Notifications are cleared before the picture (they would fade while it is taken).

After a deliberate change: ``pytest -m "slow or not slow" --snapshot-update
tests/test_snapshots*.py``, then look at the new SVGs.
"""

from __future__ import annotations

import pytest
from tui_support import FIXTURES

from sim.settings.config import load_config
from tui.app import BackoffApp
from tui.state.source import ConfigSource

ELEVEN = FIXTURES / "eleven.toml"  # 11 clients: two to a lane at 80x24
SNAPSHOT = FIXTURES / "snapshot.toml"
SIZES = ((80, 24), (120, 36))
# An 80x24 picture of each kind in the default run, the larger one under -m slow (the keys themselves
# are pilot-tested in test_timeline_clients.py and test_tui_tables.py).
SIZES_80X24_BY_DEFAULT = ((80, 24), pytest.param((120, 36), marks=pytest.mark.slow))


def make_app(config) -> BackoffApp:
    return BackoffApp(ConfigSource(load_config(config)), sweep_workers=1, out_dir=".")


def pressing(*keys: str):
    """Wait for the sweep and the run, press ``keys``, wait again, clear the notifications."""
    async def run_before(pilot) -> None:
        for key in ("wait", *keys):
            if key != "wait":
                await pilot.press(key)
            await pilot.pause()
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
        pilot.app.clear_notifications()
        await pilot.pause()
    return run_before


@pytest.mark.parametrize("size", SIZES_80X24_BY_DEFAULT, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_lane_group_expanded_and_a_client_followed(snap_compare, size: tuple[int, int]) -> None:
    # Event 31's client followed (d), its lane group expanded (E: at 80x24 its lane of two; at
    # 120x36 every client has a lane already, nothing to expand), then its next attempt (j).
    keys = ("right_square_bracket", "right", "right", "right", "d", "E", "j")
    assert snap_compare(make_app(ELEVEN), terminal_size=size, run_before=pressing(*keys))


@pytest.mark.slow  # the typed pick pictured; its keys are pilot-tested in test_timeline_clients.py
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_clients_picked_by_typing(snap_compare, size: tuple[int, int]) -> None:
    keys = ("right_square_bracket", "right_square_bracket", "L", *"0, 5-7", "enter")
    assert snap_compare(make_app(ELEVEN), terminal_size=size, run_before=pressing(*keys))


@pytest.mark.slow  # the sorted table pictured; its keys are pilot-tested in test_tui_tables.py
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_strategy_table_sorted_by_cost_largest_first(snap_compare, size: tuple[int, int]) -> None:
    # The analysis pane alone (O brings it at 80x24; a at 120x36), O four times: Strategy,
    # Work, Duration, then Cost; D: largest first.
    keys = ("O", "O", "O", "O", "D") if size[0] < 100 else ("a", "O", "O", "O", "O", "D")
    assert snap_compare(make_app(SNAPSHOT), terminal_size=size, run_before=pressing(*keys))


@pytest.mark.parametrize("size", SIZES_80X24_BY_DEFAULT, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_column_picker_with_success_shown(snap_compare, size: tuple[int, int]) -> None:
    # T opens the picker over the table; the fifth entry (Success) is ticked or unticked.
    keys = ("T", "down", "down", "down", "down", "space")
    assert snap_compare(make_app(SNAPSHOT), terminal_size=size, run_before=pressing(*keys))
