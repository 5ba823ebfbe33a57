"""The comparison view: strategies' runs at one (clients, repetition) stacked on one clock,
each with its totals, picked from a table by key or click."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tui_support import FIXTURES, TINY, TINY_OUTAGE, help_keys_text, pilot_test, run_from_palette, settle
from tui_support import make_app as make_tui_app

from sim.analysis.replay import merged_times
from sim.runs.sweep import run_sweep
from sim.runs.engine import record_run
from tui.app import BackoffApp
from tui.view.compare_columns import initial_picks
from tui.keys import KEYS
from tui.screens.compare import CompareScreen
from tui.screens.help import HelpScreen
from tui.view.timeline_grid import density_bounds
from tui.widgets.replay.timeline import DENSITY_BASE

SNAPSHOT = FIXTURES / "snapshot.toml"


def make_app(tmp_path: Path, config: Path = SNAPSHOT, **kwargs) -> BackoffApp:
    return make_tui_app(tmp_path, config, **kwargs)


async def open_compare(pilot) -> CompareScreen:
    await settle(pilot)
    await pilot.press("v")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    return screen


# The arithmetic ---------------------------------------------------------------------------------

def test_the_first_picks_are_every_strategy_or_the_current_and_the_next() -> None:
    assert initial_picks(["a", "b", "c"], "b") == ["a", "b", "c"]
    assert initial_picks(["a", "b", "c", "d"], "d") == ["d", "a"]


# The view ---------------------------------------------------------------------------------------

@pilot_test
async def test_v_stacks_every_strategy_at_the_current_coordinates(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        selection = app.selection
        screen = await open_compare(pilot)
        source = app.source
        labels = source.strategies(selection.simulation)
        assert screen.picked == labels  # three strategies: all of them
        sweep = run_sweep(source.spec(selection.simulation), workers=1)
        k = sweep.spec.clients.index(selection.clients)
        for pane in screen.panes:
            data = pane.timeline.data
            run = record_run(source.spec(selection.simulation), pane.strategy, selection.clients,
                             selection.repetition)
            assert data is not None and data.times.tolist() == run.history.times
            # The totals in the title are the sweep's for the same run.
            s = labels.index(pane.strategy)
            summary = data.summary(source.spec(selection.simulation).caps)
            assert summary.work == sweep.work[s, k, selection.repetition]
            assert summary.duration == pytest.approx(sweep.duration[s, k, selection.repetition])
            assert f"work {summary.work}" in str(pane.border_title)
        # One axis for all: the longest run's span, the same label width.
        spans = {pane.timeline.grid.span for pane in screen.panes}
        assert spans == {max(p.timeline.data.total_time for p in screen.panes)}
        assert len({pane.timeline.grid.lanes for pane in screen.panes}) == 1
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


@pilot_test
async def test_the_clock_starts_where_the_single_run_was(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("right_square_bracket")
        assert app.current_time > 0
        screen = await open_compare(pilot)
        assert screen.clock == app.current_time


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_the_place_is_kept_across_client_counts_and_leaving_the_view(tmp_path: Path) -> None:
    # Issue 23.4: C or c used to land at the first loaded run's end, and Esc then v at the
    # single run's time, not the comparison's.
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_compare(pilot)
        await pilot.press("end")
        end = screen.clock
        await pilot.press("C")  # fewer clients: shorter runs, the clock at the end of them all
        await settle(pilot)
        assert screen.clock == max(pane.timeline.data.total_time for pane in screen.panes) < end
        await pilot.press("c")  # and back where it was
        await settle(pilot)
        assert screen.clock == end
        await pilot.press("home", "right", "right", "right")
        place = screen.clock
        await pilot.press("escape")
        await settle(pilot)
        assert app.place_time == place  # the single run at the comparison's time
        assert app.cursor == app.run_data.index_at_time(place)
        await pilot.press("v")
        await settle(pilot)
        assert app.screen.clock == place


@pilot_test
async def test_one_clock_steps_and_plays_every_run(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(pilot)
        runs = [pane.timeline.data for pane in screen.panes]
        stops = merged_times([run.times for run in runs])
        visited = [screen.clock]
        for _ in range(12):
            await pilot.press("right")
            visited.append(screen.clock)
        assert visited == stops[:13].tolist()  # no event of any run skipped
        for pane in screen.panes:
            data = pane.timeline.data
            last = int(np.searchsorted(data.times, screen.clock, "right")) - 1
            assert pane.timeline.cursor == last
        await pilot.press("left_square_bracket")
        assert screen.clock == stops[2]
        await pilot.press("end")
        assert screen.clock == max(run.total_time for run in runs)
        assert all(pane.timeline.cursor == len(pane.timeline.data) - 1 for pane in screen.panes)
        assert all("ended" in str(pane.border_title) for pane in screen.panes
                   if pane.timeline.data.total_time < screen.clock)
        await pilot.press("home", "space")
        assert screen.playing
        await pilot.pause(0.3)
        await pilot.press("space")
        assert not screen.playing and screen.clock > 0
        assert app.cursor == 0  # the main view's cursor did not move


@pytest.mark.slow  # a help key walk (every walk runs with -m slow)
@pilot_test
async def test_strategies_are_picked_by_number_or_click(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(pilot)
        labels = app.source.strategies(app.selection.simulation)
        await pilot.press("2")
        await settle(pilot)
        assert screen.picked == [labels[0], labels[2]]
        assert [pane.strategy for pane in screen.panes] == screen.picked
        await pilot.press("3")  # at least two stay
        assert screen.picked == [labels[0], labels[2]]
        # A click on the second strategy's row (below the header) shows it again.
        await pilot.click("#compare-table", offset=(12, 2))
        await settle(pilot)
        assert screen.picked == labels
        await pilot.press("s")  # the main view's keys do not reach through
        assert app.selection.strategy == labels[0]


@pytest.mark.slow  # a help key walk (every walk runs with -m slow)
@pilot_test
async def test_clients_and_repetition_keys_move_every_run(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(pilot)
        before = app.selection
        await pilot.press("c")
        await settle(pilot)
        assert app.selection.clients > before.clients
        assert all(pane.timeline.data.n_clients == app.selection.clients for pane in screen.panes)
        await pilot.press("r")
        await settle(pilot)
        spec = app.source.spec(before.simulation)
        for pane in screen.panes:
            run = record_run(spec, pane.strategy, app.selection.clients, 1)
            assert pane.timeline.data.times.tolist() == run.history.times


@pilot_test
async def test_overload_comparison_shows_latency_and_recovery(tmp_path: Path) -> None:
    app = make_app(tmp_path, TINY_OUTAGE)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(pilot)
        headers = [str(c.label) for c in screen.query_one("#compare-table").columns.values()]
        assert headers[2:] == ["Requests", "p50", "p99", "Recovered"]
        for pane in screen.panes:
            title = str(pane.border_title)
            assert "requests" in title and "p50" in title and "recovered" in title


@pytest.mark.slow  # a help key walk (every walk runs with -m slow)
@pilot_test
async def test_compare_is_in_the_palette_and_the_help(tmp_path: Path) -> None:
    app = make_app(tmp_path, TINY)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert any(k.action == "screen.compare" for k in KEYS)
        await run_from_palette(pilot, "Compare strategies")
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = help_keys_text(app)  # the comparison's keys, not the single run's (issue 23.3)
        assert "Back to the single run" in text and "More clients" in text
        assert "Compare strategies side by side" not in text and "Zoom" not in text


@pilot_test
@pytest.mark.slow  # a shading detail of the comparison's lanes
async def test_crowded_lanes_share_one_shading_scale(tmp_path: Path) -> None:
    app = make_app(tmp_path, TINY_OUTAGE)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_compare(pilot)
        await pilot.pause()
        grids = [pane.timeline.grid for pane in screen.panes]
        assert all(grid is not None and grid.density for grid in grids)
        # The quartiles of every run's cells, not of each run's own: a bar means the same
        # number of events in every timeline.
        shared = density_bounds(np.concatenate([grid.counts.ravel() for grid in grids]))
        last = screen.panes[-1].timeline
        legend = last.render_line(last.size.height - 1).text
        assert " ".join(f"≤{b:,}" for b in shared) in legend
        for pane in screen.panes:
            timeline = pane.timeline
            lane = timeline.lane_codes(timeline.grid, 0)
            counts = timeline.grid.counts[0, :len(lane)]
            level = timeline.grid.density_level(counts, shared)
            bars = lane >= DENSITY_BASE
            bars[-1] = False  # the cursor's column counts only the events up to the clock
            assert ((lane[bars] - DENSITY_BASE) % 4 == level[bars] - 1).all()


@pilot_test
async def test_the_comparison_shows_the_clis_p50_p99_and_recovery_for_the_same_run(tmp_path: Path) -> None:
    # Open traffic (several calls of a client in flight) and an incident, one repetition and
    # one client count: the CLI's latency rows are the runs the view stacks.
    import sim
    from tui.view.compare_columns import summary_cells

    config = tmp_path / "tiny_pool.toml"
    config.write_text((FIXTURES / "tiny_pool.toml").read_text().replace("repeat = 2", "repeat = 1"))
    cli_rows = {row["strategy"]: row for row in sim.run(config, workers=1).rows("latency")}
    app = make_app(tmp_path, config)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compare(pilot)
        caps = app.source.spec(app.selection.simulation).caps
        table = screen.query_one("#compare-table")
        for pane in screen.panes:
            row = cli_rows[pane.strategy]
            summary = pane.timeline.data.summary(caps)
            # The CSV keeps 12 significant digits.
            assert summary.p50 == pytest.approx(row["p50"], rel=1e-11)
            assert summary.p99 == pytest.approx(row["p99"], rel=1e-11)
            if row["recovery_time_median"] is None:
                assert not summary.recovered
            else:
                assert summary.recovery == pytest.approx(row["recovery_time_median"], rel=1e-11)
            shown = [str(cell) for cell in table.get_row(pane.strategy)[2:]]
            assert shown == summary_cells(summary, caps)
