"""The app on simulations against replying servers: time series, outages, the latency table,
server-wide events, and runs recorded in a child process."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from rich.text import Text
from tui_support import TINY, TINY_OUTAGE, WidgetApp, pilot_test, settle
from tui_support import make_app as make_tui_app

from sim.analysis.recovery import RECOVERY_WINDOW, too_few_note, window_rate_needed
from sim.analysis.replay import outage_windows, recorded_caps
from sim.analysis.run_series import RunSeries
from sim.runs.sweep import SweepResult, run_sweep
from sim.settings.config import load_config
from sim.core import events as ev
from sim.runs.engine import record_run
from sim.export.csv_files import read_events_csv, write_events_csv
from sim.report.latency import NEVER_MARK, strategy_values
from tui.app import BackoffApp
from tui.view.rundata import RunData
from tui.screens.main import SERIES_REPLAY_NOTE
from tui.state.recorder import Cancelled, RunRecorder
from tui.state.source import ReplaySource
from tui.view.latency_rows import latency_rows
from tui.view.ticks import count_ticks, nice_ticks
from tui.widgets.analysis.chart_stack import ChartStack
from tui.widgets.analysis.latency_table import LatencyTable
from tui.widgets.analysis.metrics_table import MetricsTable
from tui.widgets.analysis.series_chart import PANEL_NAMES, SeriesChart, recovery_note
from tui.widgets.analysis.series_panels import SeriesPanels
from tui.widgets.replay.event_log import EventLog
from tui.widgets.replay.timeline import OUTAGE_GLYPH, Timeline


@pytest.fixture(scope="module")
def spec():
    return load_config(TINY_OUTAGE).simulations[0]


@pytest.fixture(scope="module")
def outage_run(spec):
    return record_run(spec, "constant", 300, 0)


@pytest.fixture(scope="module")
def outage_data(outage_run) -> RunData:
    return RunData.from_history(outage_run.history, 300, outage_run.open_metrics)


@pytest.fixture(scope="module")
def sweep(spec) -> SweepResult:
    return run_sweep(spec, workers=1)


# Data ------------------------------------------------------------------------------------------

def test_series_of_a_simulated_run_are_the_engines(outage_run, outage_data: RunData, spec) -> None:
    series = outage_data.series
    assert series is not None and not series.derived
    metrics = outage_run.open_metrics
    for name, values in metrics.series.items():
        assert np.array_equal(series.series[name], values)
    assert series.bucket == metrics.bucket
    outage = spec.outages[0]
    assert series.outages == outage_data.outages == ((outage.start, outage.end),)
    assert outage_data.in_outage(outage.start + 1) and not outage_data.in_outage(outage.end + 1)
    assert series.never_recovered and math.isnan(metrics.recovery_time)  # constant retries


def test_series_counted_back_from_events_match_the_totals(outage_run) -> None:
    history = outage_run.history
    data = RunData.from_history(history, 300)  # no metrics: a replay
    series = data.series
    assert series is not None and series.derived
    codes = history.codes()
    details = history.details()
    writes = codes == ev.CLIENT_REQUESTS_WRITE
    assert series.series["offered"].sum() == np.count_nonzero(writes & (details == 1))
    assert series.series["retries"].sum() == np.count_nonzero(writes & (details > 1))
    assert series.series["timed_out"].sum() == outage_run.open_metrics.timeouts
    assert series.series["goodput"].sum() == outage_run.open_metrics.successes
    assert (series.series["in_service"] >= 0).all() and series.series["in_service"].max() > 0
    assert series.outages == data.outages and len(series.outages) == 1
    assert series.recovery_time is not None


def test_contention_runs_have_no_series_and_outage_windows_need_a_pause() -> None:
    spec = load_config(TINY).simulations[0]
    data = RunData.from_history(record_run(spec, "Constant", 3, 0).history, 3)
    assert data.series is None and data.outages == ()
    assert not recorded_caps(data.codes).keeps_series
    times = np.array([0.0, 5.0, 9.0])
    clients = np.array([3, -1, 4])
    codes = np.array([ev.CLIENT_REQUESTS_WRITE, ev.SERVER_PAUSES, ev.CLIENT_BACKS_OFF])
    assert outage_windows(times, clients, codes) == ((5.0, 9.0),)  # never resumed: to the end


def test_history_rebuilt_from_columns(outage_run) -> None:
    history = outage_run.history
    data = RunData.from_history(history, 300)
    copy = RunData.from_columns(data.times, data.clients, np.asarray(history.packed), 300)
    assert copy.history.times == history.times and copy.history.packed == history.packed


def test_child_process_recorder_matches_and_a_newer_request_supersedes(spec, outage_data) -> None:
    recorder = RunRecorder()
    try:
        data = recorder.record(spec, "constant", 300, 0, geometry=(8, 50))
        assert np.array_equal(data.times, outage_data.times)
        assert np.array_equal(data.series.series["goodput"], outage_data.series.series["goodput"])
        assert (8, 50) in data.grids  # binned for the timeline in the child
        with pytest.raises(Cancelled):
            recorder.record(spec, "expo", 300, 0, should_stop=lambda: True)
    finally:
        recorder.close()


# Latency table ---------------------------------------------------------------------------------

def test_latency_rows_flag_runs_that_never_recover(sweep: SweepResult) -> None:
    k = sweep.spec.clients.index(300)
    rows, silent = latency_rows(sweep, k)
    values = strategy_values(sweep, k)
    assert [r.label for r in rows] == ["constant", "expo"]
    assert rows[0].never_recovered and values[0]["recovery"].never  # study 003's finding
    assert rows[0].cells["recovery"] == f"{NEVER_MARK} (0/2)"
    assert not rows[1].never_recovered and values[1]["recovery"].all_recovered
    assert rows[1].cells["recovery"].startswith("2/2 · ") and rows[1].cells["recovery"].endswith("ms")
    assert "gave up" in silent  # nobody gives up without max_attempts
    assert rows[1].cells["requests"].endswith("★") and "requests" in rows[1].best


def test_latency_rows_sort_values_and_success(sweep: SweepResult) -> None:
    """What the latency table's sort compares: a strategy that never recovered after one that
    did (recovery), the pooled p50, and the success rate: successes over the calls offered, as
    its cell says."""
    from tui.view.latency_rows import sort_values
    from tui.view.table_sort import sort_order

    k = sweep.spec.clients.index(300)
    values = sort_values(sweep, k)
    assert values[0]["recovery"] == math.inf and values[1]["recovery"] < math.inf
    assert sort_order([v["recovery"] for v in values]) == [1, 0]
    assert values[1]["p50"] == strategy_values(sweep, k)[1]["p50"]
    rates = [[sweep.open_run(s, k, r).successes / sweep.open_run(s, k, r).offered
              for r in range(sweep.spec.repeat)] for s in range(2)]
    assert [v["success"] for v in values] == pytest.approx([np.mean(r) for r in rates])
    rows, _ = latency_rows(sweep, k)
    assert [row.cells["success"] for row in rows] == [f"{np.mean(r):.1%}" for r in rates]


def test_runs_too_sparse_to_judge_read_as_a_dash_and_say_why(sweep: SweepResult) -> None:
    """At 30 clients the fixture's baseline has some 2.5 successes a second, under the 3.53 a
    window's test needs: no verdict (—), and the caption, like the CSV, says why and what rate
    would do; a run's chart title says it too."""
    k = sweep.spec.clients.index(30)
    rows, _ = latency_rows(sweep, k)
    TOO_FEW_NOTE = too_few_note(window_rate_needed(RECOVERY_WINDOW, sweep.spec.bucket_width), sweep.spec.time_unit)
    assert TOO_FEW_NOTE.endswith("(needs ≥ 3.53/s)")
    assert all(r.cells["recovery"] == "—" and r.recovery_note == TOO_FEW_NOTE for r in rows)
    metrics = sweep.open_run(0, k, 0)
    series = RunSeries.from_metrics(metrics, ())
    assert recovery_note(series) == f" · recovery —: {TOO_FEW_NOTE}"

    async def body() -> None:
        table = LatencyTable()
        app = WidgetApp(table)
        async with app.run_test(size=(120, 12)) as pilot:
            table.show(sweep, k)
            await pilot.pause()
            assert f"— {TOO_FEW_NOTE}" in str(table.query_one("#latency-caption").render())
    import asyncio
    asyncio.run(body())


def test_latency_table_fits_its_width_and_marks_with_glyphs(sweep: SweepResult) -> None:
    async def body() -> None:
        table = LatencyTable()
        app = WidgetApp(table)
        async with app.run_test(size=(130, 12)) as pilot:
            table.show(sweep, 1)
            await pilot.pause()
            wide = table.columns
            assert {"p90", "mean"} <= set(wide) and "gave up" not in wide  # zero everywhere: left out
            label = table.table.get_row_at(0)[0]
            assert isinstance(label, Text) and label.plain.startswith("✗ ")  # not colour alone
            await pilot.resize_terminal(50, 12)
            await pilot.pause()
            narrow = table.columns
            assert {"strategy", "requests", "p50", "recovery"} <= set(narrow) < set(wide)
            caption = str(table.query_one("#latency-caption").render())
            assert f"{len(table.column_widths()) - len(narrow)} more columns" in caption
            table.show(None, 0)
            await pilot.pause()
            assert table.table.row_count == 0
    import asyncio
    asyncio.run(body())


# Charts ----------------------------------------------------------------------------------------

def test_axis_ticks_are_round() -> None:
    assert nice_ticks(59.99, 5) == [0.0, 15.0, 30.0, 45.0]
    assert nice_ticks(120.0, 5) == [0.0, 30.0, 60.0, 90.0, 120.0]
    assert nice_ticks(3000.0, 5) == [0.0, 1000.0, 2000.0, 3000.0]
    assert count_ticks(374.0, 8) == [0, 100, 200, 300]
    assert count_ticks(1.08, 5) == [0, 1]
    assert all(t == int(t) for t in count_ticks(36_878.0, 6))


def test_series_chart_shows_outage_cursor_and_labels(outage_data: RunData) -> None:
    async def body() -> None:
        chart = SeriesChart("traffic")
        app = WidgetApp(chart)
        async with app.run_test(size=(70, 18)) as pilot:
            chart.show(None)
            await pilot.pause()
            assert "no time series" in chart.render().plain
            chart.show(outage_data.series)
            await pilot.pause()
            plain = chart.render().plain
            assert "requests per 300 ms" in plain and "never (0/1)" in plain
            assert "outage" in plain and OUTAGE_GLYPH in plain
            for label in ("new", "retries", "successes"):
                assert label in plain
            assert "time (s)" in plain
            before = chart.render().plain.count("│")
            chart.set_cursor(30_000.0)
            await pilot.pause()
            assert chart.render().plain.count("│") > before + 5  # a line across the plot
            chart.panel = "failures"
            assert "failures per 300 ms" in chart.render().plain
            with pytest.raises(ValueError, match="unknown panel"):
                chart.panel = "latency"
            await pilot.resize_terminal(12, 4)
            await pilot.pause()
            assert chart.render().plain.splitlines()[0].strip() == "failures"
    import asyncio
    asyncio.run(body())


def test_series_panels_show_what_fits_and_cycle(outage_data: RunData) -> None:
    async def body() -> None:
        panels = SeriesPanels()
        app = WidgetApp(panels)
        async with app.run_test(size=(80, 40)) as pilot:
            panels.show(outage_data.series)
            await pilot.pause()
            assert panels.shown == list(PANEL_NAMES)
            await pilot.resize_terminal(80, 12)
            await pilot.pause()
            assert panels.shown == ["traffic"]
            assert panels.cycle() == "server"
            await pilot.pause()
            assert panels.shown == ["server"]
            panels.set_cursor(100.0)
            assert all(chart.cursor == 100.0 for chart in panels.charts)
    import asyncio
    asyncio.run(body())


# Timeline and log -------------------------------------------------------------------------------

def test_timeline_draws_the_outage_on_the_server_lane(outage_data: RunData) -> None:
    async def body() -> None:
        timeline = Timeline()
        app = WidgetApp(timeline)
        async with app.run_test(size=(80, 14)) as pilot:
            timeline.show(outage_data, len(outage_data) - 1)
            await pilot.pause()
            lines = [timeline.render_line(y).text for y in range(timeline.size.height)]
            server = next(line for line in lines if line.startswith("server"))
            assert OUTAGE_GLYPH in server and "✗" in server  # the pause, then the quiet
            assert any(line.startswith("c0-") for line in lines)  # 100 clients share lanes
            legend = next(line for line in lines if "outage" in line)
            assert "░ outage" in legend and "✗ timeout" in legend
            timeline.show(outage_data, 0)  # before the outage nothing is shaded yet
            await pilot.pause()
            lines = [timeline.render_line(y).text for y in range(timeline.size.height)]
            assert OUTAGE_GLYPH not in next(line for line in lines if line.startswith("server"))
    import asyncio
    asyncio.run(body())


def test_log_shows_server_wide_events_without_a_client(outage_data: RunData) -> None:
    pause = int(np.flatnonzero(outage_data.codes == ev.SERVER_PAUSES)[0])

    async def body() -> None:
        log = EventLog()
        app = WidgetApp(log)
        async with app.run_test(size=(100, 10)) as pilot:
            log.show(outage_data, pause)
            await pilot.pause()
            lines = [log.render_line(y).text for y in range(log.size.height)]
            line = next(line for line in lines if "server_pauses" in line)
            assert " — " in line and "outage: the server stops" in line
    import asyncio
    asyncio.run(body())


# The app ---------------------------------------------------------------------------------------

def make_app(tmp_path: Path, source=None, **kwargs) -> BackoffApp:
    return make_tui_app(tmp_path, TINY_OUTAGE, source, **kwargs)


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_open_simulation_shows_latency_table_and_time_series(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.has_class("-series")
        for widget in (MetricsTable, ChartStack):  # the stack holds the metric and requests charts
            assert not screen.query_one(widget).display
        table = screen.query_one(LatencyTable)
        assert table.display and table.table.row_count == 2
        panels = screen.query_one(SeriesPanels)
        assert panels.display and panels.charts[0]._series is app.run_data.series
        await pilot.press("end")
        assert all(chart.cursor == app.run_data.total_time for chart in panels.charts)
        assert panels.shown == list(PANEL_NAMES)  # room for all three at 120×40
        await pilot.resize_terminal(120, 26)
        await pilot.pause()
        shown = panels.shown
        assert len(shown) < len(PANEL_NAMES)
        await pilot.press("m")
        await pilot.pause()
        assert panels.shown != shown
        await pilot.resize_terminal(120, 40)
        await pilot.press("s")
        await settle(pilot)
        assert app.selection.strategy == "expo" and table.table.cursor_row == 1
        await pilot.press("e")
        await settle(pilot)
    for suffix in ("timeseries.csv", "latency.csv", "screenshot.svg"):
        assert (tmp_path / f"Tiny_outage_{suffix}").is_file()


@pilot_test
async def test_open_replay_counts_series_from_the_events(tmp_path: Path) -> None:
    spec = load_config(TINY_OUTAGE).simulations[0]
    path = tmp_path / "Tiny_outage_events.csv"
    write_events_csv({label: record_run(spec, label, 30, 0) for label in spec.labels}, path)
    app = make_app(tmp_path, source=ReplaySource(read_events_csv(path), path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.has_class("-series") and screen.has_class("-noted")
        assert SERIES_REPLAY_NOTE in str(screen.query_one("#analysis-note").render())
        assert not screen.query_one(LatencyTable).display
        series = app.run_data.series
        assert isinstance(series, RunSeries) and series.derived and series.outages
        assert screen.query_one(SeriesPanels).display
