"""What the main screen's views show, driven with Pilot: the status line on one row at 80×24,
the requests chart's cursor on the playback cursor, charts that get readable room."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static
from tui_support import FIXTURES, TINY_OUTAGE, WidgetApp, fake_clock, make_app, pilot_test, settle

from sim.settings.config import load_config
from sim.runs.sweep import run_sweep

from tui.screens.main import CHART_INTERVAL
from tui.widgets.analysis.chart_stack import MIN_CHART_ROWS, ChartStack
from tui.widgets.analysis.charts import MetricsChart, RequestsChart, axis_ticks, series_marker
from tui.widgets.status import Status, StatusLine, layout

ELEVEN = FIXTURES / "eleven.toml"
SAMPLE = Path(__file__).parent.parent / "sim" / "sample.toml"


# Status line -----------------------------------------------------------------------------------

LONG = Status("Read_Write_OCC_Example", "ReadWriteOCCServer", "FullJitteredExpo(base=2, cap=1000)",
              clients=100, repetition=29, repetitions=30, seed=12345, time=1234.5, total=15000.25,
              index=120532, count=600000, playing=True, speed=500.0, outage=True)
SHORT = Status("Locking_Example", "LockingServer", "Constant", clients=6, repetition=0,
               repetitions=20, seed=0, time=25.2, total=79.0, index=20, count=39, speed=2.0)


def test_status_keeps_every_word_when_it_fits_and_abbreviates_to_one_line() -> None:
    wide = layout(SHORT, 200)
    assert len(wide) == 1 and "LockingServer" in wide[0].plain and "seed 0" in wide[0].plain
    for status in (SHORT, LONG):
        for width in (78, 98, 118):  # an 80, 100 and 120 column terminal, less the padding
            lines = layout(status, width)
            assert len(lines) == 1 and lines[0].cell_len == width
            text = lines[0].plain
            # What the run is and where the cursor is, always there: the clients, the
            # repetition and the time (the outage too, when there is one).
            assert f"{status.clients} cl" in text and f"/{status.repetitions}" in text
            assert f"{status.time:,.1f}/{status.total:,.0f}" in text
            # The speed too, except at 80 columns for the long title and strategy in an outage:
            # with the clock's thousands separators (issue 39) it is the one word too many
            # there, and the speed gives way before the strategy is cut further (``_forms``).
            assert "ms/s" in text or (status is LONG and width == 78)
            assert ("outage" in text) == status.outage
    assert "Constant" in layout(SHORT, 78)[0].plain  # the strategy whole when it can be


# examples/server_outage.toml inside its outage: a run of 300 s, a million events (issue 23.2:
# four rows at 80x24).
OUTAGE = Status("Server_Outage", "LatencyServer", "constant 100ms", clients=1000, repetition=0,
                repetitions=3, seed=3, time=45123.4, total=300000.0, index=123456,
                count=1234567, speed=1000.0, outage=True)


def test_status_stays_one_row_in_a_long_outage_giving_way_by_priority() -> None:
    texts = {}
    for width in range(118, 1, -1):
        lines = layout(OUTAGE, width)
        assert len(lines) == 1 and lines[0].cell_len <= width
        texts[width] = lines[0].plain
    # At 80 columns: the clients, repetition, time and the outage, in words; the speed and
    # the run length's tenths have given way.
    at_80 = texts[78]
    assert "1,000 cl" in at_80 and "rep 1/3" in at_80 and "░ outage" in at_80
    assert "45,123.4/300,000 ms" in at_80 and "ms/s" not in at_80
    assert "outage" in texts[98] and "1000 ms/s" in texts[98]  # 100 columns: the speed too
    for width in range(118, 60, -1):  # the outage's glyph stays until the time has to go
        assert "░" in texts[width] and "45,123.4/" in texts[width]
    incident = layout(replace(OUTAGE, outage=False, incidents=("capacity",)), 78)[0].plain
    assert "┈ incident" in incident


@pilot_test
async def test_status_line_is_one_row_at_80x24(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        status = app.screen.query_one(StatusLine)
        assert status.size.height == 1
        line = status.render().plain
        assert "Constant" in line and "rep " in line


@pilot_test
@pytest.mark.slow  # a narrow status line's variant of the speed keys
async def test_speed_keys_say_the_speed_when_the_status_line_has_dropped_it(tmp_path: Path) -> None:
    # 300 clients inside the outage, 60 columns: the status line gives the speed up first.
    app = make_app(tmp_path, TINY_OUTAGE)
    async with app.run_test(size=(60, 24), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("c", "g", *"17000", "enter")
        await settle(pilot)
        status = app.screen.query_one(StatusLine)
        assert "░" in status.render().plain and not status.shows_speed
        await pilot.press("plus")
        await pilot.pause()
        assert "Speed:" in app.export_screenshot().replace("&#160;", " ")


# Requests chart cursor -------------------------------------------------------------------------

@pilot_test
@pytest.mark.slow  # the chart cursor's variant of the clock the timeline follows
async def test_requests_chart_cursor_follows_the_playback_clock(tmp_path: Path,
                                                                  monkeypatch) -> None:
    now = fake_clock(monkeypatch)
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        chart = app.screen.query_one(RequestsChart)
        await pilot.press("plus", "plus", "plus", "plus", "space")  # 10 ms/s
        now[0] += 0.2
        await pilot.pause(CHART_INTERVAL + 0.1)
        # Between two events the clock moves on and the cursor index does not: the chart
        # follows the clock, as the timeline's cursor line does.
        first = app.run_data.times[app.cursor + 1]
        assert 4.0 < first  # no event between 2 and 4 ms in this run
        now[0] += 0.2
        await pilot.pause(CHART_INTERVAL + 0.1)
        assert app.playing and app.clock == pytest.approx(4.0)
        assert chart.cursor == app.clock
        await pilot.press("space")  # paused: on the cursor's event, at once
        assert not app.playing
        assert chart.cursor == app.current_time == app.run_data.times[app.cursor]


# Charts ----------------------------------------------------------------------------------------

def test_axis_ticks_are_round_and_use_thousands_separators() -> None:
    # Steps of 1, 2, 2.5 or 5 times a power of ten; the axis starts and ends on a tick.
    positions, labels = axis_ticks(13.2, 1434.5, 12, log=False)
    assert labels == ["0", "500", "1,000", "1,500"]
    assert positions[0] <= 13.2 <= 1434.5 <= positions[-1]
    positions, labels = axis_ticks(13.2, 1434.5, 12, log=True)
    assert labels == ["10", "100", "1,000", "10,000"]
    assert positions == pytest.approx([1.0, 2.0, 3.0, 4.0])  # log10 of the values
    assert axis_ticks(61.4, 64.4, 12, log=False)[1] == ["61", "62", "63", "64", "65"]
    assert axis_ticks(0.0, 0.37, 8, log=False)[1] == ["0.0", "0.1", "0.2", "0.3", "0.4"]


def plot_rows(text: str) -> tuple[list[str], list[str]]:
    """The lines of a rendered plot (top border to bottom border) and the lines below it."""
    lines = text.splitlines()
    bottom = max(i for i, line in enumerate(lines) if "└" in line)
    return lines[:bottom + 1], lines[bottom + 1:]


@pilot_test
async def test_legends_sit_below_the_plot_not_over_the_data(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        chart = app.screen.query_one(MetricsChart)
        inside, below = plot_rows(chart.render().plain)
        for label in app.source.strategies(app.selection.simulation):
            assert not any(label in line for line in inside)
            assert any(label in line for line in below)
        # The y axis labels are the round ticks of the plotted range.
        ticks = [line.split("┤")[0].strip() for line in inside if "┤" in line]
        assert ticks and all(t.replace(",", "").replace(".", "").isdigit() for t in ticks)


@pilot_test
async def test_log_scale_toggle(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        chart = app.screen.query_one(MetricsChart)
        await pilot.press("l")
        assert chart.log and "(log scale)" in chart.render().plain
        inside, _ = plot_rows(chart.render().plain)
        ticks = [line.split("┤")[0].strip().replace(",", "") for line in inside if "┤" in line]
        assert ticks and all(set(t[1:]) <= {"0"} and t[0] in "125" for t in ticks)
        await pilot.press("l")
        assert not chart.log and "(log scale)" not in chart.render().plain


@pilot_test
@pytest.mark.slow  # the log-scale chart's snapshot stays
async def test_lines_never_hide_the_markers_on_a_log_scale(monkeypatch) -> None:
    # sim/sample.toml's Locking_Example (3 repetitions): on a log axis the three strategies'
    # work bunches up and a later strategy's line used to run over the earlier ones' markers,
    # leaving only ■ (issue 23.7). Markers are drawn over every line: as many of each show as
    # with no lines drawn at all.
    spec = replace(load_config(SAMPLE).simulations[0], repeat=3)
    chart = MetricsChart(metric="work")
    async with WidgetApp(chart).run_test(size=(60, 20)) as pilot:
        chart.show(run_sweep(spec, workers=1), "work")
        counts = {}
        for lines in (True, False):
            if not lines:
                monkeypatch.setattr(chart.plt, "plot", lambda *args, **kwargs: None)
            for log in (False, True):
                chart.log = log
                await pilot.pause()
                inside, _ = plot_rows(chart.render().plain)
                counts[lines, log] = [sum(row.count(series_marker(s)) for row in inside)
                                      for s in range(3)]
        assert counts[True, True] == counts[False, True] and counts[True, True][0] > 0
        assert counts[True, False] == counts[False, False]


@pilot_test
async def test_one_client_count_is_charted_as_a_bar_per_strategy(tmp_path: Path) -> None:
    app = make_app(tmp_path, ELEVEN)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        chart = app.screen.query_one(MetricsChart)
        assert chart.bars
        text = chart.render().plain
        assert "mean cost at 11 clients" in text and "█" in text
        inside, _ = plot_rows(text)
        axis = inside[-1:] + [line for line in text.splitlines() if "●" in line and "▲" in line]
        assert any("●" in line and "▲" in line and "■" in line for line in axis)


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_charts_get_readable_room_or_a_compact_table(tmp_path: Path) -> None:
    app = make_app(tmp_path, ELEVEN)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        stack = app.screen.query_one(ChartStack)
        assert stack.shown == ["metrics", "requests"]  # room for both
        await pilot.resize_terminal(80, 24)
        await pilot.press("a")  # narrow: the analysis pane alone
        await pilot.pause()
        # 80×24 left about seven rows per chart, three of them data: one chart at a time.
        assert stack.shown == ["metrics"]
        assert stack.metrics.size.height >= MIN_CHART_ROWS
        seen = []
        for _ in range(4):  # m: the other metrics, then the requests chart, then back
            await pilot.press("m")
            await pilot.pause()
            seen.append((tuple(stack.shown), stack.metrics.metric))
        assert seen == [(("metrics",), "work"), (("metrics",), "duration"),
                        (("requests",), "duration"), (("metrics",), "cost")]
        assert stack.requests.size.height == 0  # folded away again
        await pilot.resize_terminal(80, 17)  # not enough for one chart: the compact table
        await pilot.pause()
        assert stack.shown == ["table"]
        table = stack.query_one("#compact-metric", Static).content
        console = Console(width=80, file=io.StringIO(), record=True)
        console.print(table)
        text = console.export_text()
        assert "mean cost by clients" in text and "11" in text
        assert "EqualJitteredExpo" in text
