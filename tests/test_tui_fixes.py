"""What misled a new user of the app, each pinned by a Pilot test: exact seeds, the go-to-time
prompt's prefill, the log filter's messages, and panes that lay out again after a resize."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from textual.widgets import DataTable, Static
from tui_support import make_app, pilot_test, settle

from tui.app import BackoffApp
from tui.widgets.analysis.metrics_table import MetricsTable
from tui.widgets.replay.event_log import EventLog


# --- 1. seeds are exact integers ------------------------------------------------------------

# 2**53 + 1: the smallest whole number a float cannot hold (it reads back as 2**53).
BEYOND_FLOAT = 2**53 + 1


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_the_seed_dialog_keeps_every_digit(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("z", "ctrl+a", "ctrl+k", *str(BEYOND_FLOAT), "enter")
        await settle(pilot)
        assert app.selection.seed == BEYOND_FLOAT
        assert app.source.spec("Tiny_Locking").seed == BEYOND_FLOAT
        status = app.screen.query_one("#status")
        assert f"seed {BEYOND_FLOAT}" in str(status.render())


# --- 2. g, then Enter on the prefilled time, stays put ----------------------------------------

@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_go_to_time_prefilled_with_the_current_time_stays_on_the_current_event(
        tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        times = app.run_data.times
        # Event 0 shares its time with the next (every client's first request is at t = 0);
        # the other is an event whose time rounded to 0.1 ms reads lower than the event's.
        assert times[0] == times[1]
        rounds_down = next(k for k in range(2, len(times))
                           if float(f"{times[k]:.1f}") < times[k] and times[k - 1] < times[k])
        for k in (0, rounds_down):
            await pilot.press("home")
            for _ in range(k):
                await pilot.press("right")
            assert app.cursor == k
            await pilot.press("g")
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            assert app.cursor == k


# --- 3. the log filter --------------------------------------------------------------------

def log_title(app: BackoffApp) -> str:
    return str(app.screen.query_one("#log-pane").border_title)


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_an_invalid_filter_shows_no_stale_rows_and_its_whole_message(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await pilot.press("end", "ampersand", *"request")
        await pilot.pause()
        log = app.screen.query_one(EventLog)
        assert log.line_count > 0
        await pilot.press("space", *"zz")
        await pilot.pause()
        # The previous filter's rows are gone: the log says why it is empty instead.
        assert log.line_count == 0
        lines = [log.render_line(y).text.strip() for y in range(log.size.height)]
        assert not any(line[:1].isdigit() for line in lines)
        assert "not applied" not in log_title(app)
        # The whole message is on screen, wrapped inside the log's pane.
        error = app.screen.query_one("#filter-error", Static)
        message = str(error.render())
        assert "'zz'" in message and message.rstrip().endswith(")")
        pane = app.screen.query_one("#log-pane").region
        assert error.display and pane.contains_region(error.region)
        needed = sum(-(-len(line) // error.content_size.width) for line in message.splitlines())
        assert error.content_size.height >= needed
        # Closing the box with an invalid filter keeps the last one that worked, and says so.
        await pilot.press("escape")
        await pilot.pause()
        assert log.log_filter.text == "request" and log.line_count > 0
        assert not error.display
        assert any("not applied" in n.message for n in app._notifications)


@pilot_test
async def test_a_filter_without_matches_says_0_of_n(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("end", "ampersand", *"99")  # the run has 3 clients: 0, 1 and 2
        await pilot.pause()
        n = len(app.run_data)
        assert app.screen.query_one(EventLog).line_count == 0
        assert f"0 of {n:,}" in log_title(app)


# --- 4. every pane lays out again on every resize ------------------------------------------

def table_state(app: BackoffApp) -> tuple[list[str], list[list[str]]]:
    table = app.screen.query_one(MetricsTable)
    grid = table.query_one(DataTable)
    rows = [[str(cell) for cell in grid.get_row_at(i)] for i in range(grid.row_count)]
    return table.columns, rows


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_a_resize_round_trip_restores_the_strategy_table_and_every_pane(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("right", "right")
        await pilot.pause()
        before_table = table_state(app)
        before = app.export_screenshot()
        columns, rows = before_table
        cost = columns.index("Cost")
        assert all("±" in row[cost] for row in rows)
        await pilot.resize_terminal(200, 50)
        await settle(pilot)
        await pilot.resize_terminal(120, 36)
        await settle(pilot)
        assert table_state(app) == before_table
        assert app.export_screenshot() == before


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_a_sweep_that_lands_before_the_final_width_is_laid_out_again(tmp_path: Path) -> None:
    # The order a loaded machine can produce: the sweep lands while the analysis pane is
    # narrower than it ends up, with the same columns but strategy names cut shorter; once the
    # layout settles the table must read as if the sweep had landed at the final width.
    async def table_at(size: tuple[int, int], then: tuple[int, int] | None = None):
        app = make_app(tmp_path)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            if then is not None:
                await pilot.resize_terminal(*then)
                await settle(pilot)
            return table_state(app)

    final, interim = (120, 36), (110, 36)
    direct, early = await table_at(final), await table_at(interim)
    assert direct[0] == early[0] and direct[1] != early[1]  # the case at stake (see above)
    assert await table_at(interim, then=final) == direct
