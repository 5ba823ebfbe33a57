"""The app on a tiered simulation (issue 21): a lane group per tier under the timeline (folded
and unfolded), the event log's tier column and tN filter, the per-tier amplification table
(sim's numbers, as in ``_tiers.csv``), and a replayed tiered events file."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
import numpy as np
from tui_support import FIXTURES, make_app, pilot_test, settle

from sim.settings.config import load_config
from sim.export.csv_files import read_events_csv, write_events_csv
from sim.export.tiers_csv import tiers_csv_text
from sim.report.tiers import tier_cells
from sim.runs.engine import record_run
from sim.runs.sweep import run_sweep
from sim.runs.tiers import TierLayout
from tui.state.recorder import record_run_data
from tui.state.source import ReplaySource
from tui.view.log_filter import parse_filter
from tui.view.rundata import RunData
from tui.view.tier_rows import TIER_LANES
from tui.view.timeline_grid import even_lanes
from tui.widgets.analysis.tier_table import TierTable
from tui.widgets.replay.event_log import EventLog, header
from tui.widgets.replay.tier_lanes import TierLanes
from tui.widgets.replay.timeline import Timeline

TINY_TIERS = FIXTURES / "tiny_tiers.toml"
SPEC = load_config(TINY_TIERS).simulations[0]
CLIENTS = SPEC.clients[0]


def test_a_layout_gives_every_id_its_tier_at_once() -> None:
    layout = TierLayout(4, (4, 8), (8, 11))
    ids = np.array([-1, 0, 3, 4, 7, 8, 10])
    assert layout.tiers_of(ids).tolist() == [layout.tier_of(int(c)) if c >= 0 else 1 for c in ids]
    assert layout.tiers_of(ids).tolist() == [1, 1, 1, 2, 2, 3, 3]
    assert list(layout.callers(3)) == [8, 9, 10]


def test_a_layout_read_from_the_ids_an_events_file_shows() -> None:
    # Tier 2's range starts after the clients, ends where tier 3's lowest id seen begins.
    assert TierLayout.seen(4, {2: (5, 6), 3: (8, 10)}) == TierLayout(4, (4, 8), (8, 11))
    # A tier whose callers recorded nothing keeps its place (tier 3 stays tier 3).
    seen = TierLayout.seen(4, {3: (8, 10)})
    assert seen.tiers_of(np.array([5, 9])).tolist() == [2, 3]
    assert TierLayout.seen(4, {}).starts == ()


def test_a_tiered_run_keeps_every_tier_and_splits_them() -> None:
    run = record_run(SPEC, SPEC.labels[0], CLIENTS, 0)
    data = record_run_data(SPEC, SPEC.labels[0], CLIENTS, 0)
    assert data.tiers is not None and len(data) == len(run.history)
    tiers = data.tiers
    assert tiers.tier.tolist() == [run.layout.tier_of(int(c)) if c >= 0 else 1 for c in data.clients]
    # The clients' part is what the views showed before tiers had lanes: the clients' events.
    before = RunData.from_history(run.history, CLIENTS)
    assert np.array_equal(data.top.times, before.times)
    assert np.array_equal(data.top.clients, before.clients)
    assert np.array_equal(data.top.codes, before.codes)
    assert data.requests is data.top.requests and data.tiers.top.tiers is None
    # Each lower tier: its events, its callers numbered from 0, in the whole run's order.
    assert [g.tier for g in tiers.groups] == [2, 3]
    for group in tiers.groups:
        assert np.array_equal(group.index, np.flatnonzero(tiers.tier == group.tier))
        assert len(group.run) == len(group.index) > 0
        assert group.run.n_clients == len(group.ids) == len(run.layout.callers(group.tier))
        assert group.run.clients.min() >= -1 and group.run.clients.max() < group.run.n_clients
        assert np.array_equal(group.run.times, data.times[group.index])
    assert len(tiers.top_index) + sum(len(g.index) for g in tiers.groups) == len(data)
    # A cursor on a tier's event maps to the clients' part's last event before it.
    k = int(tiers.groups[1].index[5])
    top = data.top_cursor(k)
    assert tiers.top_index[top] < k and (top + 1 == len(tiers.top_index) or tiers.top_index[top + 1] > k)


def test_an_untiered_run_is_as_before() -> None:
    spec = load_config(FIXTURES / "tiny.toml").simulations[0]
    data = record_run_data(spec, spec.labels[0], spec.clients[0], 0)
    assert data.tiers is None and data.top is data and data.top_cursor(7) == 7
    assert header("ms") == header("ms", tiered=False) and "tier" not in header("ms")


def test_the_log_filter_takes_tiers() -> None:
    tiers = np.array([1, 2, 3, 2, 1])
    clients = np.array([0, 5, 9, 6, 1])
    codes = np.zeros(5, dtype=np.int8)
    assert parse_filter("t2").mask(clients, codes, tiers).tolist() == [False, True, False, True, False]
    assert parse_filter("t1 t3").mask(clients, codes, tiers).tolist() == [True, False, True, False, True]
    assert parse_filter("t2 6").mask(clients, codes, tiers).tolist() == [False, False, False, True, False]
    # An untiered run is all tier 1.
    assert parse_filter("t2").mask(clients, codes).tolist() == [False] * 5
    assert parse_filter("t1").mask(clients, codes).tolist() == [True] * 5


@pilot_test
@pytest.mark.slow  # the tier snapshots show both, folded and unfolded
async def test_the_tiers_lane_groups_fold_and_unfold(tmp_path: Path) -> None:
    app = make_app(tmp_path, TINY_TIERS)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        lanes = app.screen.query_one(TierLanes)
        timeline = app.screen.query_one(Timeline)
        assert lanes.display and lanes.size.height == 2  # a row per tier, folded
        assert [r.label() for r in lanes.rows()] == ["▸ t2", "▸ t3"]
        await pilot.press("k")  # every tier unfolds: its server lane and its callers' lanes
        await pilot.pause()
        rows = lanes.rows()
        data = app.run_data
        # A head and caller lanes per tier, as many as the rows allowed (max-height) hold.
        cap = lanes._height_cap()
        assert cap is not None and len(rows) == lanes.size.height <= cap
        assert [len(g.ids) for g in data.tiers.groups] == [4, 3]
        room = min(TIER_LANES, (cap - 2) // 2)  # two heads, the rest shared by two tiers
        per_tier = [even_lanes(4, room), even_lanes(3, room)]
        assert [r.lane for r in rows] == [None, *range(per_tier[0]), None, *range(per_tier[1])]
        assert rows[0].label() == "▾ t2 srv" and rows[1 + per_tier[0]].label() == "▾ t3 srv"
        await pilot.click(TierLanes, offset=(2, 0))  # a click on tier 2 folds it alone
        await pilot.pause()
        assert lanes.unfolded == frozenset({3})
        # Tier 3 alone unfolded gets every caller a lane of its own.
        assert [r.lane for r in lanes.rows()] == [None, None, 0, 1, 2]
        await pilot.press("k")
        await pilot.pause()
        assert lanes.unfolded == frozenset() and lanes.size.height == 2
        # The lanes share the timeline's columns: same label width, same span.
        grid = timeline.grid
        assert timeline.content_size.width - grid.columns == lanes.label_width()
        # At the end, every tier event is drawn; at the start, none of a later tier's.
        await pilot.press("end")
        await pilot.pause()
        group = data.tiers.groups[1]
        codes, _ = lanes.row_codes(lanes.rows()[1], lanes._grid(lanes.rows()[1], grid))
        assert (codes > 0).any()
        await pilot.press("home")
        await pilot.pause()
        codes, _ = lanes.row_codes(lanes.rows()[1], lanes._grid(lanes.rows()[1], grid))
        first = int(group.index[0])
        assert app.cursor < first and not (codes > 0).any()


@pilot_test
@pytest.mark.slow  # the tier snapshots show the log's tier column by default
async def test_the_log_says_which_tier(tmp_path: Path) -> None:
    app = make_app(tmp_path, TINY_TIERS)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        await settle(pilot)
        log = app.screen.query_one(EventLog)
        data = app.run_data
        assert "tier" in str(app.screen.query_one("#log-header").content)
        lines = [log._render_event(i, 80, log.rich_style, False).text for i in range(len(data))]
        calls = data.shows_calls  # open arrivals: a call column (blank for a server's event) first
        for i, line in enumerate(lines):
            words = line.split()
            tier = words[3] if calls and data.calls[i] >= 0 else words[2]
            assert tier == f"t{data.tier_at(i)}"
        await pilot.press("ampersand", "t", "3", "enter")
        await settle(pilot)
        matching = log.matching
        assert matching is not None and len(matching) == int((data.tiers.tier == 3).sum()) > 0


@pilot_test
async def test_the_tier_table_has_the_sweeps_numbers(tmp_path: Path) -> None:
    app = make_app(tmp_path, TINY_TIERS)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(TierTable)
        assert table.display and table.rows
        result = run_sweep(SPEC, workers=1)
        assert table.rows == tier_cells(result, 0)
        # The numbers of the _tiers.csv the run command writes.
        rows = list(csv.DictReader(io.StringIO(tiers_csv_text(result))))
        assert len(rows) == len(table.rows) == len(SPEC.labels) * 3
        for cells, row in zip(table.rows, rows):
            assert (cells.strategy, cells.tier) == (row["strategy"], int(row["tier"]))
            mean, ci = (float(x) for x in cells.amplification.split(" ± "))
            assert abs(mean - float(row["amplification"])) <= 0.005
            assert abs(ci - float(row["amplification_ci95"])) <= 0.005


@pilot_test
async def test_a_narrow_tier_table_leaves_columns_out_rather_than_cut_numbers(tmp_path: Path) -> None:
    # The walk-through of issue 39 (three_tiers.toml at 100 columns) read "175,…" and
    # "2.75 ± 0.…": a number cut says nothing. Now the least telling columns go, named.
    from rich.console import Console

    app = make_app(tmp_path, TINY_TIERS)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(TierTable)
        width = table.content_region.width
        shown = table.shown_columns()
        hidden = [name for name in table._columns() if name not in shown]
        assert hidden and "Amplif." in shown and "p99" in shown
        assert f"hidden: {', '.join(hidden)}" in str(table.border_title)
        console = Console(width=width, color_system=None, record=True)
        console.print(table.table)
        lines = console.export_text().splitlines()
        assert max(len(line) for line in lines) <= width
        tier_lines = [line for line in lines if line.lstrip().startswith("tier ")]
        assert len(tier_lines) == len(table.rows) and not any("…" in line for line in tier_lines)
        for line, row in zip(tier_lines, table.rows):
            for name in shown:  # every number shown whole
                value = dict(zip(table._columns(), (row.amplification, row.requests, row.successes,
                                                    row.p50, row.p99, row.denied)))[name]
                assert value in line
        await pilot.resize_terminal(160, 36)
        await settle(pilot)
        assert table.shown_columns() == table._columns()  # wide enough: every column, none named
        assert "hidden" not in str(table.border_title)


@pilot_test
async def test_a_replayed_tiered_events_file_shows_its_tiers(tmp_path: Path) -> None:
    path = tmp_path / "Tiny_Tiers_events.csv"
    runs = {label: record_run(SPEC, label, CLIENTS, 0) for label in SPEC.labels}
    write_events_csv(runs, path)
    layouts: dict = {}
    replayed = read_events_csv(path, layouts)
    # The file's tier column, as the layout read back gives it, row for row.
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if not r["simulation"].startswith("#")]
    for key, history in replayed.items():
        mine = [r for r in rows if r["strategy"] == key.strategy]
        tiers = layouts[key].tiers_of(np.asarray(history.clients))
        assert tiers.tolist() == [int(r["tier"]) for r in mine]
    app = make_app(tmp_path, source=ReplaySource(replayed, path, layouts=layouts))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        data = app.run_data
        simulated = record_run_data(SPEC, SPEC.labels[0], CLIENTS, 0)
        assert data.tiers is not None and len(data) == len(simulated)
        assert np.array_equal(data.tiers.tier, simulated.tiers.tier)
        assert app.screen.query_one(TierLanes).size.height == 2
        assert not app.screen.query_one(TierTable).display  # no sweep in an events file


def test_the_apps_export_of_a_tiered_run_reads_back_with_its_tiers(tmp_path: Path) -> None:
    from sim.export.csv_files import write_history_csv

    data = record_run_data(SPEC, SPEC.labels[0], CLIENTS, 0)
    assert data.tiers is not None
    path = write_history_csv(tmp_path / "run_events.csv", SPEC.title, SPEC.labels[0], CLIENTS, 0,
                             data.history, data.tiers.layout)
    layouts: dict = {}
    (key, history), = read_events_csv(path, layouts).items()
    assert len(history) == len(data)
    assert layouts[key].tiers_of(np.asarray(history.clients)).tolist() == data.tiers.tier.tolist()
