"""The app on a worker pool (issue 20): the pool's state at the cursor on a row under the
timeline (workers busy of how many, the queue, drops so far by reason), fitted to the pane
without wrapping, for simulated and replayed runs; and the latency table's ``mean`` column."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from tui_support import FIXTURES, TINY, WidgetApp, make_app, pilot_test, settle

from sim.analysis.pool_state import PoolSnapshot, PoolState, pool_capacity
from sim.settings.config import load_config
from sim.core import events as ev
from sim.export.csv_files import read_events_csv, write_events_csv
from sim.report.latency import format_value
from sim.runs.engine import record_run
from sim.runs.sweep import run_sweep
from tui.state.recorder import record_run_data
from tui.state.source import ReplaySource
from tui.view.latency_rows import latency_rows
from tui.view.pool_text import pool_forms, pool_line
from tui.widgets.analysis.latency_table import LatencyTable
from tui.widgets.replay.pool_line import PoolLine

TINY_POOL = FIXTURES / "tiny_pool.toml"
SPEC = load_config(TINY_POOL).simulations[0]
# 2 of 4 workers kept from 1,000 to 2,000 ms (tiny_pool.toml); 1,500 ms is inside the incident.
IN_INCIDENT = "1500"


def test_the_line_in_each_form_and_cut_to_fit() -> None:
    state = PoolSnapshot(busy=2, queued=1234, workers=2, full_workers=4, drops=(12, 0, 3, 0))
    forms = pool_forms(state)
    assert forms[0] == ("◆ pool: 2 of 2 workers busy (incident: 2 of 4 kept) · queue 1,234 · "
                        "dropped 15: 12 queue_timeout, 3 cancelled")
    assert forms[-1] == "◆ 2/2 busy ┈ of 4 · q 1,234 · drops 15"
    assert [len(f) for f in forms] == sorted((len(f) for f in forms), reverse=True)
    for width in (120, 80, 66, 40, 20):
        line = pool_line(state, width)
        assert len(line) <= width and (line in forms or line.endswith("…"))
    assert pool_line(state, 200) == forms[0]
    # An events file does not say the pool's size; no drops yet reads 0.
    unknown = PoolSnapshot(busy=3, queued=0, workers=None, full_workers=None, drops=(0, 0, 0, 0))
    assert pool_forms(unknown)[0] == "◆ pool: 3 workers busy · queue 0 · dropped 0"
    assert pool_forms(unknown)[-1] == "◆ 3 busy · q 0 · drops 0"


def test_the_line_follows_the_cursor_in_a_widget() -> None:
    data = record_run_data(SPEC, SPEC.labels[0], 12, 0)
    assert data.pool is not None and data.pool.capacity == pool_capacity(SPEC)

    async def body() -> None:
        line = PoolLine()
        app = WidgetApp(line)
        async with app.run_test(size=(80, 5)) as pilot:
            line.show(data, 0)
            await pilot.pause()
            assert line.display and line.text == "◆ pool: 0 of 4 workers busy · queue 0 · dropped 0"
            cursor = data.index_at_time(1500.0)
            line.set_cursor(cursor)
            await pilot.pause()
            assert line.text == pool_line(data.pool.at(cursor), line.content_size.width)
            busy = data.pool.at(cursor).busy
            assert line.text.startswith(f"◆ {busy}/2 busy ┈ of 4 · queue ")  # 2 of 4 kept
            line.show(None, 0)
            await pilot.pause()
            assert not line.display
            line.show(other, 0)  # a run of another server: no pool, no line
            await pilot.pause()
            assert not line.display
    other = record_run_data(load_config(TINY).simulations[0], "Constant", 3, 0)
    assert other.pool is None
    asyncio.run(body())


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_the_app_shows_the_pool_under_the_timeline(tmp_path: Path) -> None:
    app = make_app(tmp_path, TINY_POOL)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        line = app.screen.query_one(PoolLine)
        assert line.display and line.size.height == 1
        await pilot.press("g", *IN_INCIDENT, "enter")
        await settle(pilot)
        data, cursor = app.run_data, app.cursor
        state = data.pool.at(cursor)
        assert (state.workers, state.full_workers) == (2, 4)  # the incident keeps half
        assert state.queued > 0 and state.dropped > 0
        # Drops by reason: what the events up to the cursor say.
        drops = data.details[:cursor + 1][data.codes[:cursor + 1] == ev.SERVER_DROPS]
        assert state.drops == tuple(int((drops == r).sum()) for r in range(len(ev.DROP_REASONS)))
        for size in ((120, 36), (80, 24)):  # both panes; the timeline and log alone
            await pilot.resize_terminal(*size)
            await pilot.pause()
            text = line.text
            assert text == pool_line(state, line.content_size.width)
            assert f"{state.queued:,}" in text and f"{state.dropped:,}" in text
            assert len(text) <= line.content_size.width and "…" not in text  # whole, on one row
            assert line.size.height == 1
        await pilot.press("end")
        await pilot.pause()
        assert line.text == pool_line(data.pool.at(len(data) - 1), line.content_size.width)


@pilot_test
async def test_a_replayed_pool_shows_its_state_without_its_size(tmp_path: Path) -> None:
    path = tmp_path / "Tiny_pool_events.csv"
    runs = {label: record_run(SPEC, label, 12, 0) for label in SPEC.labels}
    write_events_csv(runs, path)
    app = make_app(tmp_path, source=ReplaySource(read_events_csv(path), path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("g", *IN_INCIDENT, "enter")
        await settle(pilot)
        line = app.screen.query_one(PoolLine)
        data = app.run_data
        assert line.display and data.pool.capacity is None
        state = data.pool.at(app.cursor)
        assert state.workers is None and "/" not in line.text.split("·")[0]
        # The counts are the simulated run's (away from a capacity change, as here).
        history = runs[SPEC.labels[0]].history
        simulated = PoolState(np.asarray(history.times), history.codes(), history.details(),
                              pool_capacity(SPEC)).at(app.cursor)
        assert (state.busy, state.queued, state.drops) == (simulated.busy, simulated.queued,
                                                            simulated.drops)


def test_the_latency_table_has_the_mean_of_successes() -> None:
    sweep = run_sweep(SPEC, workers=1)
    rows, _ = latency_rows(sweep, 0)
    for s, row in enumerate(rows):
        assert row.cells["mean"] == format_value("mean", sweep.latency(s, 0)["mean"])

    async def body() -> None:
        table = LatencyTable()
        app = WidgetApp(table)
        async with app.run_test(size=(160, 12)) as pilot:
            table.show(sweep, 0)
            await pilot.pause()
            assert "mean" in table.columns and table.header("mean") == "mean"
            await pilot.resize_terminal(80, 12)
            await pilot.pause()
            # Among the first to give way on a narrow pane, as in the CLI's table.
            assert "mean" not in table.columns and "p99" in table.columns
    asyncio.run(body())
