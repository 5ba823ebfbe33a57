"""The event log's search (issue 23), pressed as a user does: ``/`` text Enter selects the first
match from the cursor and focuses the log, ``n``/``N`` go on, the line under the log says which
match or that there is none; the help screen's search box narrows its keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from textual.widgets import Static
from tui_support import FIXTURES, help_keys_text, make_app, pilot_test, settle

from sim.core import events as ev
from tui.screens.help import HelpScreen
from tui.widgets.replay.event_log import EventLog
from tui.view.log_search import search_mask

SNAPSHOT = FIXTURES / "snapshot.toml"


def status_line(app) -> str:
    line = app.screen.query_one("#search-status", Static)
    return str(line.render()) if line.display and line.parent.has_class("-search-status") else ""


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_slash_searches_n_goes_on_and_enter_moves_the_cursor(tmp_path: Path) -> None:
    app = make_app(tmp_path, SNAPSHOT)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press(*["right"] * 3)
        data = app.run_data
        commits = np.flatnonzero(data.codes == ev.SERVER_COMMITS)
        await pilot.press("slash", *"Commit", "enter")
        await settle(pilot)
        log = app.screen.query_one(EventLog)
        assert app.focused is log and app.cursor == 3  # the selection moved, not the cursor
        first = int(commits[commits >= 3][0])
        assert log.selected == first
        number = int(np.searchsorted(commits, first)) + 1
        assert status_line(app).startswith(f"/Commit: match {number} of {len(commits)}")
        await pilot.press("n")
        assert log.selected == commits[number]
        await pilot.press("N")
        assert log.selected == commits[number - 1] == first
        await pilot.press("enter")
        await settle(pilot)
        assert app.cursor == first
        await pilot.press("home", "N")  # the first event: no match before it
        assert log.selected == 0 and "no match before this event" in status_line(app)
        # A search that matches nothing says so; an empty one ends the search.
        await pilot.press("slash", *"zzz", "enter")
        await settle(pilot)
        assert status_line(app) == "/zzz: no match among the events listed"
        await pilot.press("slash", *["backspace"] * 3, "enter")
        await settle(pilot)
        assert not log.search and status_line(app) == "" and app.focused is None


@pilot_test
async def test_the_search_counts_only_what_the_filter_lists(tmp_path: Path) -> None:
    app = make_app(tmp_path, SNAPSHOT)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ampersand", "1", "enter", "slash", *"server", "enter")
        await settle(pilot)
        data = app.run_data
        wanted = np.flatnonzero(search_mask(data.codes, data.details, data.clients, "server")
                                & (data.clients == 1))
        log = app.screen.query_one(EventLog)
        assert np.array_equal(log.hits, wanted) and len(wanted) < len(
            np.flatnonzero(search_mask(data.codes, data.details, data.clients, "server")))
        assert f"of {len(wanted)}" in status_line(app)


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_typing_in_the_help_narrows_its_keys(tmp_path: Path) -> None:
    app = make_app(tmp_path, SNAPSHOT)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        everything = help_keys_text(app)
        await pilot.press(*"zoom")
        narrowed = help_keys_text(app)
        assert "Zoom the timeline out" in narrowed and "Play/pause" not in narrowed
        assert len(narrowed.splitlines()) < len(everything.splitlines())
        await pilot.press("q")  # typed, not closing: the box is not empty
        assert isinstance(app.screen, HelpScreen)
        assert "No key of this view matches 'zoomq'" in help_keys_text(app)
        await pilot.press(*["backspace"] * 5)
        assert help_keys_text(app) == everything
        await pilot.press("q")  # the box empty: q closes
        assert not isinstance(app.screen, HelpScreen)


@pilot_test
async def test_the_search_follows_the_user_to_another_run(tmp_path: Path) -> None:
    app = make_app(tmp_path, SNAPSHOT)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"accept", "enter", "escape", "s")
        await settle(pilot)  # the new run loaded, then its matches searched in a worker
        data = app.run_data
        assert app.selection.strategy != "Constant"
        log = app.screen.query_one(EventLog)
        assert log.data is data and log.search == "accept"
        assert np.array_equal(log.hits, np.flatnonzero(data.codes == ev.SERVER_ACCEPTS))
        assert status_line(app).startswith(f"/accept: {len(log.hits)} matches")
