"""The event log with a 1,000,000-event history: only visible lines are built, it follows the
cursor to the end, and filters run over numpy arrays (the history is built with numpy, not
simulated)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from textual.app import App, ComposeResult

from sim.core import events as ev
from sim.core.history import History
from sim.export.palette import CODE_KINDS, KIND_SERVER
from tui.view.rundata import RunData
from tui.theme import register_themes
from tui.view.log_filter import FilterError, parse_filter
from tui.widgets.replay.event_log import CURSOR_MARK, EventLog

N_EVENTS = 1_000_000
N_CLIENTS = 1_000


@pytest.fixture(scope="module")
def big_run() -> RunData:
    rng = np.random.default_rng(0)
    history = History()
    history.times = np.cumsum(rng.exponential(0.01, N_EVENTS))
    history.clients = rng.integers(0, N_CLIENTS, N_EVENTS)
    codes = rng.choice([ev.CLIENT_REQUESTS_WRITE, ev.SERVER_REJECTS, ev.CLIENT_BACKS_OFF,
                        ev.SERVER_ACCEPTS, ev.SERVER_COMMITS], N_EVENTS)
    history.packed = codes | ((np.where(codes == ev.SERVER_ACCEPTS, 1, -1) + 1) << ev.DETAIL_SHIFT)
    return RunData.from_history(history, N_CLIENTS)


class LogApp(App):
    AUTO_FOCUS = ""  # as on the main screen: the log is not focused until the user asks

    def compose(self) -> ComposeResult:
        yield EventLog()

    def on_mount(self) -> None:
        register_themes(self)


def visible_lines(log: EventLog) -> list[str]:
    return [log.render_line(y).text for y in range(log.size.height)]


def test_a_million_events_render_and_scroll_to_the_end(big_run: RunData) -> None:
    async def scenario() -> None:
        app = LogApp()
        async with app.run_test(size=(80, 20)) as pilot:
            log = app.query_one(EventLog)
            log.show(big_run, 0)
            await pilot.pause()
            # The whole run is listed from the start; only the first event has happened.
            assert log.line_count == log.virtual_size.height == N_EVENTS
            assert log.upto_cursor == 1 and log.cursor_line == 0
            first = visible_lines(log)
            assert first[0].startswith(CURSOR_MARK)
            assert float(first[0].split()[1]) == pytest.approx(big_run.times[0], abs=1e-3)
            assert float(first[1].split()[0]) == pytest.approx(big_run.times[1], abs=1e-3)
            ahead = app.query_one(EventLog).get_component_rich_style("event-log--ahead").color
            assert {seg.style.color for seg in log.render_line(1) if seg.text.strip()} == {ahead}
            assert ahead not in {seg.style.color for seg in log.render_line(0)}

            log.set_cursor(N_EVENTS - 1)
            await pilot.pause()
            assert log.scroll_y == log.max_scroll_y > 0
            lines = visible_lines(log)
            last = lines[-1].split()
            assert last[0] == CURSOR_MARK
            assert float(last[1]) == pytest.approx(big_run.times[-1], abs=1e-3)
            assert int(last[2]) == big_run.clients[-1]
            assert last[4] == ev.EVENT_NAMES[big_run.codes[-1]]
            # Only what was on screen was ever rendered (the strip cache holds visible lines).
            assert len(log._cache) <= 2 * log.size.height

            log.set_cursor(N_EVENTS // 2)
            await pilot.pause()
            # Stepping back keeps the current event in view, a few events ahead under it.
            shown = [log.event_index(int(log.scroll_y) + y) for y in range(log.size.height)]
            assert N_EVENTS // 2 in shown and shown[-1] > N_EVENTS // 2
    asyncio.run(scenario())


def test_filtering_a_million_events(big_run: RunData) -> None:
    async def scenario() -> None:
        app = LogApp()
        async with app.run_test(size=(80, 20)) as pilot:
            log = app.query_one(EventLog)
            log.show(big_run, N_EVENTS - 1)
            log.set_filter(parse_filter("7 10-12 reject"))
            await pilot.pause()
            wanted = np.isin(big_run.clients, [7, 10, 11, 12]) & (big_run.codes == ev.SERVER_REJECTS)
            assert log.line_count == np.count_nonzero(wanted) > 0
            for line in visible_lines(log):
                fields = line.lstrip(CURSOR_MARK).split()
                assert int(fields[1]) in (7, 10, 11, 12) and fields[3] == "server_rejects"
            log.set_cursor(1000)
            assert log.line_count == np.count_nonzero(wanted)  # the whole run's, still
            assert log.upto_cursor == np.count_nonzero(wanted[:1001])
    asyncio.run(scenario())


def test_searching_a_million_events_selects_and_highlights_the_matches(big_run: RunData) -> None:
    async def scenario() -> None:
        app = LogApp()
        async with app.run_test(size=(80, 20)) as pilot:
            log = app.query_one(EventLog)
            log.show(big_run, 5000)
            log.set_search("ACCEPTS")  # any case, in the event's name or its detail
            accepts = np.flatnonzero(big_run.codes == ev.SERVER_ACCEPTS)
            assert np.array_equal(log.hits, accepts)
            found = log.find(1)
            assert found == accepts[np.searchsorted(accepts, 5000, side="right")]
            assert log.selected == found and log.hit_number(found) == \
                np.searchsorted(accepts, found) + 1
            assert log.find(-1) < found
            await pilot.pause()
            line = log.render_line(log.line_of(log.selected) - int(log.scroll_y))
            match = log.get_component_rich_style("event-log--match").bgcolor
            assert [seg.text for seg in line if seg.style.bgcolor == match] == ["accepts"]
            # Under a filter, only the matches it lists.
            log.set_filter(parse_filter("7"))
            assert np.array_equal(log.hits, accepts[big_run.clients[accepts] == 7])
            log.set_search("")
            assert not len(log.hits) and log.find(1) is None
    asyncio.run(scenario())


def test_jumps_to_the_next_event_of_the_selected_type_or_client(big_run: RunData) -> None:
    async def scenario() -> None:
        app = LogApp()
        async with app.run_test(size=(80, 20)) as pilot:
            log = app.query_one(EventLog)
            log.show(big_run, 100)
            log.select_event(100)
            client, code = big_run.clients[100], big_run.codes[100]
            after = np.flatnonzero(big_run.clients[101:] == client)[0] + 101
            assert log.jump_alike("clients", 1) == after == log.selected
            assert log.jump_alike("clients", -1) == 100
            same = np.flatnonzero(big_run.codes[:100] == code)
            assert log.jump_alike("codes", -1) == same[-1]
            log.select_event(int(np.flatnonzero(big_run.codes == code)[0]))
            assert log.jump_alike("codes", -1) is None  # none before the first
            await pilot.pause()
    asyncio.run(scenario())


def test_filter_syntax() -> None:
    f = parse_filter("c3, 5-6 give_up commits")
    assert f.client_ranges == ((3, 3), (5, 6))
    # "give_up" is the kind: limits running out and retries a policy denied.
    assert f.codes == {ev.CLIENT_GIVES_UP, ev.CLIENT_RETRY_DENIED, ev.SERVER_COMMITS}
    assert parse_filter("denied").codes == {ev.CLIENT_RETRY_DENIED}
    assert parse_filter("breaker").codes == {ev.BREAKER_OPENS, ev.BREAKER_HALF_OPENS, ev.BREAKER_CLOSES}
    assert parse_filter("backoff").codes == {ev.CLIENT_BACKS_OFF}
    assert parse_filter("server").codes == {code for code, kind in CODE_KINDS.items()
                                            if kind == KIND_SERVER}
    assert ev.SERVER_REPORTS_VERSION in parse_filter("server").codes
    assert not parse_filter("  ").active
    with pytest.raises(FilterError, match="runs backwards"):
        parse_filter("9-3")
    with pytest.raises(FilterError, match="'zz'"):
        parse_filter("zz")


def test_server_only_events_match_no_client() -> None:
    clients = np.array([0, -1, 3, -1])
    codes = np.array([ev.CLIENT_REQUESTS_WRITE, ev.SERVER_PAUSES, ev.SERVER_REJECTS,
                      ev.SERVER_RESUMES])
    assert parse_filter("0-3").mask(clients, codes).tolist() == [True, False, True, False]
    assert parse_filter("pauses").mask(clients, codes).tolist() == [False, True, False, False]


def test_the_log_shows_each_events_call_where_a_clients_calls_overlap() -> None:
    # Open arrivals: a client has several calls in flight, so the log says which call each of
    # its events belongs to; a closed workload's (one call at a time) needs no column.
    from pathlib import Path

    from sim.settings.config import load_config
    from sim.runs.engine import record_run
    from tui.widgets.replay.event_log import header

    fixtures = Path(__file__).parent / "fixtures"
    spec = load_config(fixtures / "tiny_pool.toml").simulations[0]
    run = record_run(spec, spec.labels[0], spec.clients[0], 0)
    data = RunData.from_history(run.history, spec.clients[0])
    assert data.shows_calls and "call" in header("ms", False, data.shows_calls)
    client_events = np.isin(data.codes, sorted(ev.CLIENT_EVENTS))
    assert (data.calls[client_events] >= 0).all() and (data.calls[~client_events] == -1).all()

    async def scenario() -> None:
        app = LogApp()
        async with app.run_test(size=(100, 20)) as pilot:
            log = app.query_one(EventLog)
            log.show(data, 0)
            await pilot.pause()
            i = int(np.flatnonzero(client_events[1:])[0]) + 1  # a client's event past the cursor's
            words = log.render_line(i).text.split()
            assert words[:3] == [f"{data.times[i]:.3f}", str(int(data.clients[i])), str(int(data.calls[i]))]
    asyncio.run(scenario())

    closed = load_config(fixtures / "tiny.toml").simulations[0]
    run = record_run(closed, closed.labels[0], closed.clients[-1], 0)
    assert not RunData.from_history(run.history, closed.clients[-1]).shows_calls
