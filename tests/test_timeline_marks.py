"""The timeline explains itself: a glyph per kind of step (accept vs commit, version read vs
write), a backoff drawn over its whole wait, crowded lanes shaded by how many events a cell
holds, lanes that each hold the same number of clients, and a legend for exactly what the run
shows."""

from __future__ import annotations

import numpy as np
import pytest
from support import make_spec
from tui_support import TINY_OUTAGE, WidgetApp, pilot_test

from sim.settings.config import load_config
from sim.core import events as ev
from sim.runs.engine import record_run
from sim.core.history import History
from tui.view.rundata import RunData
from tui.view.legend import DENSITY_GLYPHS, WAIT_GLYPH, fit_legend, legend_width, timeline_legend
from tui.view.marks import CODE_GLYPHS, MARKS
from tui.view.timeline_grid import build_grid, density_bounds, even_lanes, lane_labels
from tui.widgets.replay.event_log import EventLog
from tui.widgets.replay.timeline import Timeline, geometry_for


def history(events: list[tuple[float, int, int]]) -> History:
    h = History()
    for t, client, code in events:
        h.append(t, client, ev.pack(code))
    return h


def lines_of(timeline: Timeline) -> list[str]:
    return [timeline.render_line(y).text for y in range(timeline.size.height)]


def test_each_step_of_a_write_has_its_own_glyph() -> None:
    glyphs = {mark.glyph for mark in MARKS}
    assert len(glyphs) == len(MARKS)
    assert CODE_GLYPHS[ev.SERVER_ACCEPTS] != CODE_GLYPHS[ev.SERVER_COMMITS]
    assert CODE_GLYPHS[ev.CLIENT_REQUESTS_VERSION] != CODE_GLYPHS[ev.CLIENT_REQUESTS_WRITE]
    assert CODE_GLYPHS[ev.SERVER_REPORTS_VERSION] != CODE_GLYPHS[ev.SERVER_TENTATIVELY_WRITES]


@pytest.mark.parametrize("control, expected", [
    ("LockingServer", ("● write", "+ accept", "✓ commit", "✗ reject")),
    ("ReadWriteOCCServer", ("● write", "○ read", "✓ commit", "◇ version")),
])
@pilot_test
async def test_lanes_and_legend_tell_the_steps_apart(control: str,
                                                      expected: tuple[str, ...]) -> None:
    spec = make_spec(control, clients=[4], repeat=1)
    run = record_run(spec, spec.labels[0], 4, 0)
    data = RunData.from_history(run.history, 4)
    timeline = Timeline()
    async with WidgetApp(timeline).run_test(size=(120, 12)) as pilot:
        timeline.show(data, len(data) - 1)
        await pilot.pause()
        lines = lines_of(timeline)
        legend = next(line for line in lines if "write" in line)
        for entry in expected:
            assert entry in legend
        lanes = "".join(line for line in lines if line.startswith("c"))
        for entry in expected:
            assert entry.split()[0] in lanes  # each glyph the legend explains is drawn


@pilot_test
async def test_a_backoff_is_drawn_over_its_wait() -> None:
    # Client 0 is rejected, backs off at t=10 for 40 ms and retries at t=50; 100 columns span
    # the 100 ms of the run, so each column is 1 ms.
    data = RunData.from_history(history([
        (0.0, 0, ev.CLIENT_REQUESTS_WRITE), (1.0, 0, ev.SERVER_REJECTS),
        (10.0, 0, ev.CLIENT_BACKS_OFF), (50.0, 0, ev.CLIENT_REQUESTS_WRITE),
        (60.0, 0, ev.SERVER_ACCEPTS), (100.0, 0, ev.SERVER_COMMITS)]), 1)
    timeline = Timeline()
    async with WidgetApp(timeline).run_test(size=(107, 6)) as pilot:
        timeline.show(data, len(data) - 1)
        await pilot.pause()
        assert timeline.grid is not None and timeline.grid.columns == 100
        lane = lines_of(timeline)[1][7:]
        assert lane[10] == "·" and lane[50] == "●"
        assert lane[11:50] == WAIT_GLYPH * 39
        # Mid-wait (the clock at 30 ms, playing): the span reaches the cursor and no further.
        timeline.set_cursor(2, 30.0)
        await pilot.pause()
        lane = lines_of(timeline)[1][7:]
        assert lane[11:31] == WAIT_GLYPH * 20 and lane[31:].strip() == ""


def test_waits_match_each_clients_next_event() -> None:
    rng = np.random.default_rng(5)
    n = 3000
    h = History()
    h.times = np.sort(rng.uniform(0, 500, n)).tolist()
    h.clients = rng.integers(0, 40, n).tolist()
    h.packed = [ev.pack(int(c)) for c in rng.integers(0, 4, n)]  # writes, reads, backoffs, give-ups
    data = RunData.from_history(h, 40)
    grid = build_grid(data, 8, 60)
    expected = np.zeros((8, 60), dtype=bool)
    scale = 60 / data.total_time
    for i in range(n):
        if data.codes[i] != ev.CLIENT_BACKS_OFF:
            continue
        client = data.clients[i]
        later = [j for j in range(i + 1, n) if data.clients[j] == client]
        end = data.times[later[0]] if later else data.total_time
        first = min(int(data.times[i] * scale), 59) + 1
        last = min(int(end * scale), 59)
        expected[client // 5, first:last + 1] = True
    assert (grid.waiting == expected).all()


@pilot_test
async def test_crowded_lanes_are_shaded_by_how_many_events_each_cell_holds() -> None:
    spec = load_config(TINY_OUTAGE).simulations[0]
    run = record_run(spec, spec.labels[0], 100, 0)
    data = RunData.from_history(run.history, 100, run.open_metrics)
    timeline = Timeline()
    async with WidgetApp(timeline).run_test(size=(90, 14)) as pilot:
        timeline.show(data, len(data) - 1)
        await pilot.pause()
        grid = timeline.grid
        assert grid is not None and grid.per_lane == 10 and grid.density
        lines = lines_of(timeline)
        lanes = [line[7:] for line in lines if line.startswith("c")]
        assert lanes and not any("✗" in lane for lane in lanes)  # no wall of ✗
        # Each cell's bar is its count's quartile level: the busiest cells are full blocks,
        # the quietest the lowest bar.
        for lane, (row, counts) in enumerate(zip(lanes, grid.counts)):
            for column, count in enumerate(counts[:len(row)]):
                if count and grid.clients[lane, column] != len(MARKS):  # a give-up keeps ⊘
                    level = int(grid.density_level(np.array([count]))[0])
                    assert row[column] == DENSITY_GLYPHS[level - 1]
        busiest = np.unravel_index(np.argmax(grid.counts), grid.counts.shape)
        assert lanes[busiest[0]][busiest[1]] == "█"
        legend = next(line for line in lines if DENSITY_GLYPHS in line)
        assert "events/cell" in legend


def test_lanes_hold_the_same_number_of_clients() -> None:
    # 11 clients in 9 rows: 6 lanes of 2 (the last of 1), not a mix of 1s and 2s.
    assert even_lanes(11, 9) == 6
    assert lane_labels(11, 6) == ("c0-1", "c2-3", "c4-5", "c6-7", "c8-9", "c10")
    assert even_lanes(11, 11) == 11 and even_lanes(100, 20) == 20 and even_lanes(100, 30) == 25
    lanes, _, _ = geometry_for(11, 80, 12)
    assert lanes == 6
    data = RunData.from_history(history([(float(c), c, ev.CLIENT_REQUESTS_WRITE)
                                         for c in range(11)]), 11)
    grid = build_grid(data, lanes, 40)
    sizes = np.bincount(grid.lane_of_event, minlength=lanes)
    assert set(sizes[:-1]) == {2} and sizes[-1] == 1


def test_the_legend_gives_way_in_steps_and_keeps_failures() -> None:
    spec = load_config(TINY_OUTAGE).simulations[0]
    run = record_run(spec, spec.labels[0], 100, 0)
    data = RunData.from_history(run.history, 100, run.open_metrics)
    grid = build_grid(data, 10, 80)
    entries = timeline_legend(data, grid)
    names = [e.name for e in entries]
    assert names[:1] == ["write"] and "density" in names and names[-1] == "outage"
    for width in (120, 80, 60):
        fitted = fit_legend(entries, width)
        labels = {e.name: e.label for e in fitted}
        assert legend_width(fitted) <= width
        if width >= 80:  # what a reader looks for keeps its word longest
            assert labels["failure"] == "timeout" and labels["outage"] == "outage"


@pilot_test
async def test_the_log_uses_the_timelines_glyphs() -> None:
    data = RunData.from_history(history([
        (0.0, 0, ev.CLIENT_REQUESTS_VERSION), (1.0, 0, ev.CLIENT_REQUESTS_WRITE),
        (2.0, 0, ev.SERVER_ACCEPTS), (3.0, 0, ev.SERVER_COMMITS)]), 1)
    log = EventLog()
    async with WidgetApp(log).run_test(size=(80, 8)) as pilot:
        log.show(data, 3)
        await pilot.pause()
        rows = [log.render_line(y).text for y in range(4)]
        glyphs = [CODE_GLYPHS[code] for code in (ev.CLIENT_REQUESTS_VERSION,
                                                  ev.CLIENT_REQUESTS_WRITE, ev.SERVER_ACCEPTS,
                                                  ev.SERVER_COMMITS)]
        assert [f" {g} " in row for g, row in zip(glyphs, rows)] == [True] * 4


def test_density_bounds_are_quartiles_and_strictly_increasing() -> None:
    counts = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8]])
    assert density_bounds(counts) == (2, 4, 6)  # the lower quartiles of 1..8
    # Few distinct counts: every shade still stands for a count of its own.
    assert density_bounds(np.array([3, 4, 4, 4, 4, 4, 9])) == (4, 5, 6)
    assert density_bounds(np.zeros(5, dtype=int)) == (1, 2, 3)


@pilot_test
async def test_policy_state_shows_on_the_lanes_and_in_the_log() -> None:
    """A breaker's transitions are marks on the client's lane (◉) and lines of the log; a denied
    retry is ⊖ with the policy's name; a back-off shows the tokens its budget has left."""
    from sim.settings.config import parse_config
    from sim.runs.engine import record_run

    from support import sim_table

    table = sim_table("FlakyServer", [{"type": "Constant", "constant": 0.0, "max_attempts": 3, "policies": [
        {"type": "TokenBucket", "capacity": 3},
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 300.0}]}],
        failure_rate=0.8, workload="poisson", think_time=50.0, horizon=2000.0, clients=[2], repeat=1)
    spec = parse_config({"simulation": [table]}).simulations[0]
    run = record_run(spec, spec.labels[0], 2, 0)
    data = RunData.from_history(run.history, 2, run.open_metrics)
    codes = set(data.codes.tolist())
    assert {ev.BREAKER_OPENS, ev.CLIENT_RETRY_DENIED} <= codes
    timeline, log = Timeline(), EventLog()
    async with WidgetApp(timeline).run_test(size=(100, 10)) as pilot:
        timeline.show(data, len(data) - 1)
        await pilot.pause()
        lines = [timeline.render_line(y).text for y in range(timeline.size.height)]
        assert any(line.startswith("c0") and "◉" in line for line in lines)
        legend = " ".join(lines)
        assert "◉ breaker" in legend and "⊖ retry denied" in legend
    opened = int(np.flatnonzero(data.codes == ev.BREAKER_OPENS)[0])
    denied = int(np.flatnonzero(data.codes == ev.CLIENT_RETRY_DENIED)[0])
    backoff = int(np.flatnonzero(data.codes == ev.CLIENT_BACKS_OFF)[0])
    async with WidgetApp(log).run_test(size=(100, 8)) as pilot:
        for index, expected in ((opened, "breaker_opens"), (denied, "policy="), (backoff, "tokens=")):
            log.show(data, index)
            await pilot.pause()
            rows = [log.render_line(y).text for y in range(log.size.height)]
            assert any(expected in row for row in rows), (expected, rows)
