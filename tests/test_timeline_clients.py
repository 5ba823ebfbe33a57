"""The timeline's clients: picked by id and range (L), a lane group expanded to its clients (E),
one client followed (d: its lane marked ▸, its attempts highlighted; j/J jump between them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tui_support import FIXTURES, make_app, pilot_test, settle

from sim.analysis.client_trace import ClientTrace, attempt_indices
from sim.core import events as ev
from tui.screens.clients_prompt import ClientsPrompt
from tui.view.client_picks import describe_clients, parse_clients
from tui.view.rundata import RunData
from tui.view.timeline_grid import build_grid, lane_members
from tui.widgets.replay.timeline import FOLLOW_MARK, Timeline

ELEVEN = FIXTURES / "eleven.toml"  # 11 clients: two to a lane at 80x24
W, B, C = ev.CLIENT_REQUESTS_WRITE, ev.CLIENT_BACKS_OFF, ev.SERVER_COMMITS


def test_a_client_s_attempts_are_its_writes_and_refused_calls_in_order() -> None:
    clients = np.array([0, 1, 0, 0, 1, 0, -1, 0])
    codes = np.array([W, W, ev.SERVER_REJECTS, B, W, W, ev.SERVER_PAUSES, ev.CLIENT_CALL_REFUSED])
    assert attempt_indices(clients, codes, 0).tolist() == [0, 5, 7]
    trace = ClientTrace.of(clients, codes, 0)
    assert trace.total == 3 and trace.seen(4) == 1 and trace.seen(5) == 2
    assert trace.next(0, 1) == 5 and trace.next(5, 1) == 7 and trace.next(7, 1) is None
    assert trace.next(7, -1) == 5 and trace.next(5, -1) == 0 and trace.next(0, -1) is None
    assert trace.up_to(5).tolist() == [0, 5]


def test_picks_read_ids_ranges_and_lane_labels_and_say_what_is_wrong() -> None:
    assert parse_clients("3, 10-12 c7", 20).tolist() == [3, 7, 10, 11, 12]
    assert parse_clients("c4-c5,4", 20).tolist() == [4, 5]
    assert parse_clients("  ", 20) is None
    for text, words in (("x", "not a client id or range"), ("5-2", "write it as 2-5"),
                        ("3-25", "clients 0-19"), ("1-2-3", "not a client id")):
        with pytest.raises(ValueError, match=words):
            parse_clients(text, 20)
    assert describe_clients(np.array([3, 7, 10, 11, 12])) == "3, 7, 10-12"


def test_a_grid_of_picked_clients_gives_lanes_to_them_alone() -> None:
    times = np.arange(8, dtype=np.float64)
    clients = np.array([0, 1, 2, 3, 4, 5, 2, 4], dtype=np.int32)
    codes = np.array([W] * 6 + [C, B])
    packed = codes.astype(np.int64)  # no detail: the code alone
    data = RunData.from_columns(times, clients, packed | (np.int64(-1) << ev.DETAIL_SHIFT), 6)
    grid = build_grid(data, 6, 8, ids=np.array([2, 4]))
    assert grid.lanes == 2 and grid.lane_labels == ("c2", "c4")
    assert grid.lane_of_event.tolist() == [-1, -1, 0, -1, 1, -1, 0, 1]
    assert (grid.counts.sum(axis=1) == [2, 2]).all()
    shared = build_grid(data, 1, 8, ids=np.array([1, 2, 3]))
    assert shared.lane_labels == ("c1-3",)
    assert lane_members(6, 3, 1).tolist() == [2, 3]
    assert lane_members(6, 1, 0, np.array([1, 4])).tolist() == [1, 4]


async def pick_by_typing(pilot) -> None:
    """L: a range past the last client keeps the dialog open and says the run's range; ids and
    ranges pick those clients; an emptied line gives every client back."""
    app = pilot.app
    timeline = app.screen.query_one(Timeline)
    await pilot.press("L")
    await pilot.pause()
    assert isinstance(app.screen, ClientsPrompt)
    await pilot.press(*"3-99", "enter")
    await pilot.pause()
    assert isinstance(app.screen, ClientsPrompt)
    assert "clients 0-10" in str(app.screen.query_one("#prompt-hint").render())
    await pilot.press(*["backspace"] * 4, *"3, 7-9", "enter")
    await pilot.pause()
    assert not isinstance(app.screen, ClientsPrompt)
    assert timeline.picked.tolist() == [3, 7, 8, 9]
    assert timeline.grid.lane_labels == ("c3", "c7", "c8", "c9")
    await pilot.press("L")
    await pilot.pause()
    await pilot.press(*["backspace"] * 10, "enter")  # the dialog starts with "3, 7-9"
    await pilot.pause()
    assert timeline.picked is None and timeline.grid.lane_labels[-1] == "c10"


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_pick_expand_follow_and_jump_at_80x24(tmp_path: Path) -> None:
    """One app (its sweep is most of the time): L with a mistake then a pick, L emptied; E on a
    lane of two, E again; d, j, J, d."""
    app = make_app(tmp_path, ELEVEN)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await pick_by_typing(pilot)
        await pilot.press(*["right_square_bracket"] * 3)
        await settle(pilot)
        data, timeline = app.run_data, app.screen.query_one(Timeline)
        while int(data.clients[app.cursor]) < 0:  # a client's event
            await pilot.press("right")
        client = int(data.clients[app.cursor])
        assert timeline.grid.per_lane == 2  # 11 clients, two to a lane
        group = timeline.lane_clients(timeline.lane_of_client(client))
        assert client in group and len(group) == 2
        await pilot.press("E")
        await pilot.pause()
        assert timeline.picked.tolist() == group.tolist() and timeline.grid.lanes == 2
        assert f"clients {describe_clients(group)}" in str(timeline.border_title)
        await pilot.press("E")  # one client a lane: back to every client
        await pilot.pause()
        assert timeline.picked is None and timeline.grid.per_lane == 2
        await pilot.press("d")
        await pilot.pause()
        assert timeline.trace is not None and timeline.trace.client == client
        lane = timeline.lane_of_client(client)
        strip = timeline.render_line(1 + lane)
        assert FOLLOW_MARK in strip.text
        follow = timeline.get_component_rich_style("timeline--follow")
        assert any(seg.style is not None and seg.style.bgcolor == follow.bgcolor for seg in strip)
        trace = ClientTrace.of(data.clients, data.codes, client)
        start = app.cursor
        await pilot.press("j")
        await pilot.pause()
        assert app.cursor == trace.next(start, 1)
        assert int(data.clients[app.cursor]) == client and int(data.codes[app.cursor]) == W
        await pilot.press("J")
        await pilot.pause()
        assert app.cursor == trace.next(trace.next(start, 1), -1)
        await pilot.press("d")  # on its own event again: stop following
        await pilot.pause()
        assert timeline.trace is None and FOLLOW_MARK not in timeline.render_line(1 + lane).text
