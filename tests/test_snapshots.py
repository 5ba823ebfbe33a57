"""Pictures of the app (pytest-textual-snapshot): the main screen at 80×24 and 120×40 in each
theme, an overload simulation, a tick-based one, the help screen, the strategy comparison,
80×24 with a single client count (lanes of two clients, the bar chart), and a worker pool's state
under the timeline. Each waits for the sweep
and the run to load, then steps the cursor to a fixed event, so the picture is the same on every machine.

After a deliberate change to the screen: ``pytest tests/test_snapshots.py --snapshot-update``,
then look at the new SVGs in ``tests/__snapshots__/`` before committing them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_support import FIXTURES, TINY_OUTAGE

from sim.settings.config import load_config
from sim.export.palette import available_themes
from tui.app import BackoffApp
from tui.state.source import ConfigSource

SNAPSHOT = FIXTURES / "snapshot.toml"
TICKS = FIXTURES / "tiny_ticks.toml"  # time_unit = "tick"
THEMES = ("backoff-dark", "backoff-light", "backoff-contrast")
SIZES = ((80, 24), (120, 40))


def make_app(config=SNAPSHOT, theme: str = "backoff-dark") -> BackoffApp:
    return BackoffApp(ConfigSource(load_config(config)), theme=theme, sweep_workers=1,
                      out_dir=".")


def at_event(*keys: str):
    """Wait for the sweep and the run, then press ``keys`` (to put the cursor mid-run)."""
    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    return run_before


def test_the_bundled_themes_are_the_ones_pictured() -> None:
    assert sorted(available_themes()) == sorted(THEMES)


# The dark theme at 80x24 in the default run; the other themes and the larger size under -m slow.
@pytest.mark.parametrize("size", [s if s == (80, 24) else pytest.param(s, marks=pytest.mark.slow) for s in SIZES],
                         ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("theme", [t if t == "backoff-dark" else pytest.param(t, marks=pytest.mark.slow)
                                   for t in THEMES])
def test_main_screen(snap_compare, theme: str, size: tuple[int, int]) -> None:
    assert snap_compare(make_app(theme=theme), terminal_size=size,
                        run_before=at_event("right_square_bracket", "right", "right"))


def test_overload_simulation(snap_compare) -> None:
    # 100 clients (lanes shared), the cursor inside the outage window (15-19 s).
    assert snap_compare(make_app(TINY_OUTAGE), terminal_size=(120, 40),
                        run_before=at_event("c", "g", *"17000", "enter"))


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
def test_tick_based_simulation(snap_compare) -> None:
    # A spike against a queue, in ticks: every label says tick, goodput is per tick.
    assert snap_compare(make_app(TICKS), terminal_size=(120, 40),
                        run_before=at_event(*["right_square_bracket"] * 3))


def test_help_screen(snap_compare) -> None:
    assert snap_compare(make_app(), terminal_size=(100, 40), run_before=at_event("question_mark"))


@pytest.mark.slow  # the comparison view's larger picture; its 80x24 stays in the default run
def test_comparison_view(snap_compare) -> None:
    # Three strategies at 4 clients, repetition 1, a few steps of the shared clock in.
    assert snap_compare(make_app(), terminal_size=(120, 36),
                        run_before=at_event("v", "right_square_bracket", "right", "right"))


def test_comparison_view_80x24(snap_compare) -> None:
    assert snap_compare(make_app(TINY_OUTAGE), terminal_size=(80, 24),
                        run_before=at_event("v", "g", *"30000", "enter"))


# The analysis pane's picture in the default run; the replay pane's, a second of the same layout, slow.
@pytest.mark.parametrize("keys", [pytest.param(("right_square_bracket",), marks=pytest.mark.slow), ("a",)],
                         ids=["replay", "analysis"])
def test_80x24_single_client_count(snap_compare, keys: tuple[str, ...]) -> None:
    # 11 clients: even lanes of two; one client count: a bar per strategy; one status row.
    assert snap_compare(make_app(FIXTURES / "eleven.toml"), terminal_size=(80, 24),
                        run_before=at_event(*keys))


def test_explore_map_80x24(snap_compare) -> None:
    # The tiny map (3 outages × 2 loads, two strategies side by side), the cursor moved to the
    # middle column of the top row, the second strategy selected.
    from tui.main import _config_source

    app = BackoffApp(_config_source(FIXTURES / "tiny_map.toml", None, Path("."), 1, False),
                     sweep_workers=1, out_dir=".", open_map=True)
    assert snap_compare(app, terminal_size=(80, 24), run_before=at_event("right", "s"))


def test_policy_state_on_the_lanes(snap_compare) -> None:
    # gRPC's throttle shared by 6 clients: its tokens beside the server lane; a ratio breaker per
    # client: ◉ open / ◐ half-open beside each client's lane, as they are at 1 s.
    assert snap_compare(make_app(FIXTURES / "policy_lanes.toml"), terminal_size=(120, 30),
                        run_before=at_event("g", *"1000", "enter"))


def test_pool_state_under_the_timeline_80x24(snap_compare) -> None:
    # A PoolServer at 1.5 s, inside its capacity incident (2 of 4 workers kept): the row under
    # the timeline says the workers busy, the queue and the drops so far by reason.
    assert snap_compare(make_app(FIXTURES / "tiny_pool.toml"), terminal_size=(80, 24),
                        run_before=at_event("g", *"1500", "enter"))


# Issue 23's second pass: each view it touched at 80×24 and 120×36.

def test_status_line_inside_an_outage_80x24(snap_compare) -> None:
    # 300 clients inside the outage (15-30 s): the status line on one row.
    assert snap_compare(make_app(TINY_OUTAGE), terminal_size=(80, 24),
                        run_before=at_event("c", "g", *"17000", "enter"))


def test_event_log_focused_80x24(snap_compare) -> None:
    # The log's keys first in the footer, then as many of the others as fit, Help kept.
    assert snap_compare(make_app(), terminal_size=(80, 24),
                        run_before=at_event("right_square_bracket", "tab", "up"))


# 80x24 in the default run; the larger size under -m slow.
@pytest.mark.parametrize("size", ((80, 24), pytest.param((120, 36), marks=pytest.mark.slow)),
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_event_log_whole_run_and_a_search(snap_compare, size: tuple[int, int]) -> None:
    # The whole run listed, the events ahead of the cursor (event 11) greyed; / then Enter
    # selects the first match from the cursor (ahead of it: greyed), highlighted, its number
    # in the status line.
    assert snap_compare(make_app(), terminal_size=size,
                        run_before=at_event("right_square_bracket", "slash", *"commit",
                                            "enter"))


def test_log_scale_chart_120x36(snap_compare) -> None:
    # The duration chart (m twice from cost) on a log scale: every marker over the lines;
    # without the notifications m and l show (they would fade while the picture is taken).
    keys = at_event("m", "m", "l", "right_square_bracket")

    async def run_before(pilot) -> None:
        await keys(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()
    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=run_before)


# The main view's help at 80x24 in the default run; the comparison view's and the larger size slow.
@pytest.mark.parametrize("size", ((80, 24), pytest.param((120, 36), marks=pytest.mark.slow)),
                         ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("view", ("main", pytest.param("compare", marks=pytest.mark.slow)))
def test_help_of_each_view(snap_compare, view: str, size: tuple[int, int]) -> None:
    keys = ("question_mark",) if view == "main" else ("v", "question_mark")
    assert snap_compare(make_app(), terminal_size=size, run_before=at_event(*keys))


@pytest.mark.slow  # the explore map's larger picture; 80x24 stays in the default run
def test_explore_map_120x36(snap_compare) -> None:
    from tui.main import _config_source

    app = BackoffApp(_config_source(FIXTURES / "tiny_map.toml", None, Path("."), 1, False),
                     sweep_workers=1, out_dir=".", open_map=True)
    assert snap_compare(app, terminal_size=(120, 36), run_before=at_event("right", "s"))
