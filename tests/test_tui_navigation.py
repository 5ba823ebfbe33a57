"""Navigating like the best terminal apps, driven with Pilot: the mouse (click to seek, select a
strategy or an event; the wheel scrolls), a focusable event log, jumping between the events a
filter matches, zooming the timeline, and switching runs without losing one's place."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from textual import events
from textual.widgets import DataTable
from tui_support import TINY, make_app, pilot_test, settle

from sim.settings.config import load_config
from tui.app import BackoffApp
from tui.keys import KEYS, LOG_KEYS
from tui.state.source import ConfigSource, Selection
from tui.view.timeline_grid import build_grid
from tui.widgets.replay.event_log import EventLog
from tui.widgets.replay.timeline import Timeline


def messages(app: BackoffApp) -> list[str]:
    return [n.message for n in app._notifications]


def test_keys_do_not_clash() -> None:
    app_keys = [k for key in KEYS for k in key.keys.split(",")]
    log_keys = [k for key in LOG_KEYS for k in key.keys.split(",")]
    assert len(app_keys) == len(set(app_keys))
    assert len(log_keys) == len(set(log_keys))


# --- the mouse ------------------------------------------------------------------------------

@pilot_test
async def test_a_click_on_the_timeline_seeks_to_that_column(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        timeline = app.screen.query_one(Timeline)
        grid = timeline.grid
        labels = timeline._geometry()[2]
        data = app.run_data
        # A column holding an event in the middle of the run: everything up to it is shown.
        column = int(grid.column_of_event[len(data) // 2])
        await pilot.click(Timeline, offset=(labels + column, 2))
        await pilot.pause()
        assert app.cursor == int(np.flatnonzero(grid.column_of_event <= column)[-1])
        assert app.cursor >= len(data) // 2
        # The lane label column is not a time: clicking it does nothing.
        await pilot.click(Timeline, offset=(1, 2))
        await pilot.pause()
        assert app.cursor >= len(data) // 2


@pilot_test
async def test_a_click_on_a_table_row_selects_that_strategy(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.selection.strategy == "Constant"
        await pilot.click("#metrics DataTable", offset=(4, 2))  # header, Constant, FullJittered…
        await settle(pilot)
        assert app.selection.strategy == "FullJitteredExpo"
        assert app.run_data.n_clients == 3
        await pilot.click("#metrics DataTable", offset=(4, 1))
        await settle(pilot)
        assert app.selection.strategy == "Constant"
        # The key still moves the table's cursor with the selection.
        await pilot.press("s")
        await settle(pilot)
        assert app.screen.query_one("#metrics DataTable", DataTable).cursor_row == 1


@pilot_test
async def test_a_click_on_a_log_row_moves_the_cursor_to_that_event(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        log = app.screen.query_one(EventLog)
        wanted = log.event_index(int(log.scroll_y) + 2)
        await pilot.click(EventLog, offset=(5, 2))
        await pilot.pause()
        assert app.cursor == wanted and wanted < len(app.run_data) - 1
        assert log.upto_cursor == wanted + 1  # the events after it are listed, greyed
        assert log.line_count == len(app.run_data)


async def scroll(pilot, widget, down: bool, times: int = 1) -> None:
    """Turn the mouse wheel over ``widget`` (as the terminal reports it: at a screen cell)."""
    region = widget.region
    x, y = region.x + 2, region.y + 2
    kind = events.MouseScrollDown if down else events.MouseScrollUp
    for _ in range(times):
        pilot.app.post_message(kind(None, x, y, 0, 1 if down else -1, 0, False, False, False,
                                    screen_x=x, screen_y=y))
        await pilot.pause()


@pilot_test
@pytest.mark.slow  # the wheel's variant of the log's and the help's scrolling keys
async def test_the_wheel_scrolls_the_event_log_and_the_help(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 24)) as pilot:
        await settle(pilot)
        await pilot.press("c", "c")  # 5 clients: more events than the log has lines
        await settle(pilot)
        await pilot.press("end")
        log = app.screen.query_one(EventLog)
        assert log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y
        await scroll(pilot, log, down=False, times=3)
        assert log.scroll_y < log.max_scroll_y
        await scroll(pilot, log, down=True, times=10)
        assert log.scroll_y == log.max_scroll_y
        await pilot.press("question_mark")
        await pilot.pause()
        help_scroll = app.screen.query_one("VerticalScroll")
        assert help_scroll.max_scroll_y > 0
        await scroll(pilot, help_scroll, down=True, times=2)
        assert help_scroll.scroll_y > 0


# --- the focusable event log ----------------------------------------------------------------

@pilot_test
async def test_the_event_log_takes_the_focus_and_enter_goes_to_the_selected_event(
        tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        last = len(app.run_data) - 1
        log = app.screen.query_one(EventLog)
        await pilot.press("tab")
        assert app.focused is log and log.selected == last
        # The footer offers the log's keys while it has the focus.
        shown = {b.binding.description for b in app.screen.active_bindings.values()
                 if b.binding.show}
        assert {"Go to event", "Leave log"} <= shown
        await pilot.press("up", "up")
        assert log.selected == last - 2 and app.cursor == last  # selecting does not move
        await pilot.press("home")
        assert log.selected == 0
        await pilot.press("pagedown")
        assert log.selected == min(log.scrollable_content_region.height, last)
        await pilot.press("end", "up", "enter")
        await pilot.pause()
        assert app.cursor == last - 1
        assert log.selected == last - 1  # still on it: the last line listed
        await pilot.press("escape")
        assert app.focused is None and log.selected is None
        await pilot.press("home")  # the app's key again
        assert app.cursor == 0


# --- find the next / previous event the filter matches ---------------------------------------

@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_f_and_shift_f_jump_between_the_events_the_filter_matches(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        def footer() -> set[str]:
            return {b.binding.description for b in app.screen.active_bindings.values()
                    if b.binding.show}

        assert "Find" not in footer()  # offered once there is a filter to find
        await pilot.press("f")
        assert any("Set a filter first" in m for m in messages(app))
        assert app.cursor == 0
        await pilot.press("ampersand", *"commit", "enter")
        await pilot.pause()
        assert "Find" in footer()
        commits = [i for i, code in enumerate(app.run_data.codes)
                   if app.run_data.row(i)[3] == "server_commits"]
        assert len(commits) >= 2
        for index in commits:
            await pilot.press("f")
            assert app.cursor == index
        await pilot.press("f")
        assert app.cursor == commits[-1]
        assert any("No event after the cursor" in m for m in messages(app))
        for index in reversed(commits[:-1]):
            await pilot.press("F")
            assert app.cursor == index
        await pilot.press("F")
        assert app.cursor == commits[0]
        assert any("No event before the cursor" in m for m in messages(app))


# --- zoom -----------------------------------------------------------------------------------

@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_zoom_in_and_out_around_the_cursor_and_reset(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        timeline = app.screen.query_one(Timeline)
        data = app.run_data
        total = data.total_time
        await pilot.press(*["right"] * (len(data) // 2))  # an event inside the run
        t = app.current_time
        assert 0 < t < total
        assert timeline.grid.span == total and timeline.grid.start == 0
        await pilot.press("i")
        assert timeline.grid.span == pytest.approx(total / 2)
        await pilot.press("i")
        grid = timeline.grid
        assert grid.span == pytest.approx(total / 4)
        assert grid.start <= t <= grid.start + grid.span
        assert "zoom ×4" in str(timeline.border_title)
        # The cursor's event is drawn in the column its time falls in.
        column = int((t - grid.start) * grid.columns / grid.span)
        assert int(grid.column_of_event[app.cursor]) == min(column, grid.columns - 1)
        for y in range(timeline.size.height):  # every line draws
            timeline.render_line(y)
        # Zoomed in, the window follows the cursor.
        await pilot.press("end")
        grid = timeline.grid
        assert grid.start <= total <= grid.start + grid.span + 1e-9
        await pilot.press("o")
        assert timeline.grid.span == pytest.approx(total / 2)
        await pilot.press("0")
        assert timeline.grid.span == total and not timeline.window.zoomed
        assert "zoom" not in str(timeline.border_title)


def test_a_zoomed_grid_bins_the_window_only() -> None:
    app = BackoffApp(ConfigSource(load_config(TINY)))
    source = app.source
    data = source.run_data(Selection("Tiny_Locking", "Constant", 5, 0, 3))
    total = data.total_time
    start, end = total * 0.25, total * 0.5
    grid = build_grid(data, 5, 40, (start, end))
    inside = (data.times >= start) & (data.times <= end)
    assert inside.any() and not inside.all()
    assert (grid.column_of_event[data.times < start] == -1).all()
    assert (grid.column_of_event[data.times > end] == 40).all()
    expected = np.minimum(((data.times[inside] - start) * 40 / (end - start)).astype(int), 39)
    assert (grid.column_of_event[inside] == expected).all()
    cells = {(int(grid.lane_of_event[i]), int(grid.column_of_event[i]))
             for i in np.flatnonzero(inside) if data.clients[i] >= 0}
    assert {tuple(c) for c in np.argwhere(grid.clients > 0)} == cells


# --- switching keeps the place and the speed ------------------------------------------------

@pilot_test
@pytest.mark.slow  # switching runs keeps the place: test_compare_view's clock test stays
async def test_switching_runs_keeps_the_time_and_the_speed(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        times = app.run_data.times
        k = next(i for i in range(len(times) // 2, len(times)) if times[i] > times[i - 1])
        await pilot.press("home", *["right"] * k, "plus", "plus")
        t, speed, start = float(times[k]), app.speed, app.selection
        for key in ("s", "c", "r"):  # strategy, client count (5: another speed before), rep
            await pilot.press(key)
            await settle(pilot)
            new = app.run_data.times
            # The new run's last event at or before the time (its events are at other times).
            assert app.cursor == int(np.searchsorted(new, t, side="right")) - 1
            assert app.speed == speed
        await pilot.press("R", "C", "S")
        await settle(pilot)
        assert app.selection == start and app.cursor == k and app.speed == speed


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_n_then_shift_n_returns_to_the_same_run_and_event(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("s", "end", "left")  # FullJitteredExpo, 3 clients: not Tiny_OCC's
        await settle(pilot)
        where, k = app.selection, app.cursor
        await pilot.press("n")
        await settle(pilot)
        assert app.selection.simulation == "Tiny_OCC"
        await pilot.press("right", "N")
        await settle(pilot)
        assert app.selection == where and app.cursor == k


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_client_counts_stop_at_their_ends(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("c")  # 3 → 5, the most
        await settle(pilot)
        assert app.selection.clients == 5
        await pilot.press("c")
        await settle(pilot)
        assert app.selection.clients == 5
        assert any("Already at the most clients" in m for m in messages(app))
        await pilot.press("C", "C", "C")
        await settle(pilot)
        assert app.selection.clients == 1
        assert any("Already at the fewest clients" in m for m in messages(app))


@pilot_test
async def test_repetitions_and_counts_read_1_based_with_plurals(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert "3 clients" in status and "rep 1 of 2" in status
        await pilot.press("C", "r")  # one client, the second repetition
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert "1 client ·" in status and "rep 2 of 2" in status
        caption = str(app.screen.query_one("#metrics #caption").render())
        assert caption.startswith("1 client · 2 runs each")


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_without_animation_the_footer_does_not_offer_play(tmp_path: Path) -> None:
    app = make_app(tmp_path, animated=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = [b.binding.description for b in app.screen.active_bindings.values()
                 if b.binding.show]
        assert "Play" not in shown and "Step" in shown
        await pilot.press("home", "space")
        assert not app.playing and app.cursor == len(app.run_data) - 1
        assert any("Animation is off" in m for m in messages(app))
    animated = make_app(tmp_path)
    async with animated.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = [b.binding.description for b in animated.screen.active_bindings.values()
                 if b.binding.show]
        assert "Play" in shown
