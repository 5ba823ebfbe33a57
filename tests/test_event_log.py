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
from tui.widgets.replay.event_log import EventLog

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
            assert log.line_count == 1
            first = visible_lines(log)
            assert first[0].split()[:2] == ["0.001", str(big_run.clients[0])] or \
                float(first[0].split()[0]) == pytest.approx(big_run.times[0], abs=1e-3)
            assert first[1].strip() == ""

            log.set_cursor(N_EVENTS - 1)
            await pilot.pause()
            assert log.line_count == N_EVENTS
            assert log.virtual_size.height == N_EVENTS
            assert log.scroll_y == log.max_scroll_y > 0
            lines = visible_lines(log)
            last = lines[-1].split()
            assert float(last[0]) == pytest.approx(big_run.times[-1], abs=1e-3)
            assert int(last[1]) == big_run.clients[-1]
            assert last[3] == ev.EVENT_NAMES[big_run.codes[-1]]
            # Only what was on screen was ever rendered (the strip cache holds visible lines).
            assert len(log._cache) <= 2 * log.size.height

            log.set_cursor(N_EVENTS // 2)
            await pilot.pause()
            index = log.event_index(int(log.scroll_y) + log.size.height - 1)
            assert index == N_EVENTS // 2  # stepping back keeps the current event in view
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
                fields = line.split()
                assert int(fields[1]) in (7, 10, 11, 12) and fields[3] == "server_rejects"
            log.set_cursor(1000)
            assert log.line_count == np.count_nonzero(wanted[:1001])
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
