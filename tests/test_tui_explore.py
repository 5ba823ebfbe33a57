"""The app's explore view: p (or `backoff-sim explore CONFIG --app`) shows a simulation's map as
a cell grid per strategy, filled in by a worker that never blocks the keys; the cursor moves over
the cells; Enter opens that cell's runs in the normal view (its spec, its sweep); x cancels and
w resumes; the map reopens where it was left without computing a cell twice."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest
from support import CONSTANT, FULL_JITTER, section, sim_table, toml_text
from textual.widgets import Static
from tui_support import (FIXTURES, TINY, help_keys_text, pause_until, pilot_test, run_from_palette,
                         settle)

from sim.commands import cli
from sim.exploration.backends import LocalBackend
from sim.exploration.cache import CellCache
from sim.exploration.grid import grid_rows
from sim.exploration.runner import run_explores
from sim.report.latency import recovery_number
from sim.runs.sweep import SweepCancelled
from tui import main as tui_main
from tui.app import BackoffApp
from tui.keys import KEYS
from tui.screens.explore import ExploreScreen
from tui.screens.help import HelpScreen
from tui.state import explore_map
from tui.widgets.map_grid import MapGrid, compact_number
from tui.widgets.status import StatusLine

TINY_MAP = FIXTURES / "tiny_map.toml"


def make_app(tmp_path: Path, config: Path = TINY_MAP, **kwargs) -> BackoffApp:
    return BackoffApp(tui_main._config_source(config, None, tmp_path, 1, False), sweep_workers=1,
                      out_dir=tmp_path, **kwargs)


async def open_map(pilot) -> ExploreScreen:
    await settle(pilot)
    await pilot.press("p")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExploreScreen)
    return screen


def expected_map(app: BackoffApp):
    """The tiny map computed directly by sim.exploration, for comparison with what the view shows."""
    plan = app.source.explore_plan("Tiny map")
    (result,) = run_explores([plan], LocalBackend(1), CellCache(None))
    return plan, result


def test_the_cells_detail_gives_the_recovery_median_with_its_unit(tmp_path: Path) -> None:
    # The walk-through of issue 39 read "median 150.8 (150.7–150.9)" under the map, where the
    # strategy table says "3/3 · 7,805 ms".
    from sim.exploration.plan import load_document
    from tui.view.map_view import cell_detail

    (plan,) = load_document(TINY_MAP).explores
    (result,) = run_explores([plan], LocalBackend(1), CellCache(None))
    recovered = [(cell, result.cells[cell.position]) for row in grid_rows(plan, result.cells, 0)
                 for cell in row if cell.verdict is not None and cell.verdict.all_recovered]
    assert recovered  # the tiny map's short outages recover
    cell, cr = recovered[0]
    detail = cell_detail(plan, cell, cr, 0, "recovered").plain
    unit = plan.base.time_unit
    assert f"median {recovery_number(cr.verdict(0).median)} {unit}" in detail


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_p_shows_every_strategys_map_as_sim_explore_computes_it(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_map(pilot)
        plan, result = expected_map(app)
        assert screen.missing == 0 and not screen.has_class("-running")
        grid = screen.query_one(MapGrid)
        assert grid.shown() == [0, 1]  # both fit side by side at 100 columns
        text = grid.render().plain
        for s, label in enumerate(plan.base.labels):
            rows = grid_rows(plan, result.cells, s)
            assert [[c.text for c in row] for row in grid.view.grids[s]] == [[c.text for c in row] for row in rows]
            assert label in text
            for row in rows:  # glyph and text together in every cell, not colour alone
                for cell in row:
                    assert f"{cell.glyph}{cell.text}" in text
        # Larger second-axis values on top, as in the PNG.
        assert text.splitlines()[1].lstrip().startswith(compact_number(plan.axes[1].values[-1]))


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_the_cursor_moves_over_the_cells_and_the_detail_follows(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_map(pilot)
        plan = screen.plan
        assert screen.state.cursor == (0, 0)
        await pilot.press("right", "right", "right", "down", "down")
        assert screen.state.cursor == (2, 1)  # clamped at the last column and row
        cell = screen.cursor_cell()
        assert cell.values == (plan.axes[0].values[2], plan.axes[1].values[0])
        detail = str(screen.query_one("#map-detail", Static).render())
        assert plan.cell_label(cell.position) in detail
        verdict = screen.cells[cell.position].verdict(0)
        assert verdict.text(recovery_number, plan.base.time_unit) in detail
        await pilot.press("s")
        assert screen.state.strategy == 1
        await pilot.press("S", "S")
        assert screen.state.strategy == 1  # wraps
        await pilot.press("m")
        assert screen.metric != plan.metric and screen.query_one(MapGrid).view.grids[0][0][0].state == "value"


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_enter_opens_the_cells_runs_and_p_comes_back_to_it(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_map(pilot)
        plan = screen.plan
        await pilot.press("right", "s")
        cell = screen.cursor_cell()
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ExploreScreen)
        label = plan.cell_label(cell.position)
        spec = plan.cells[cell.position].spec
        assert app.selection.variant == label and app.selection.strategy == plan.base.labels[1]
        assert app.source.spec("Tiny map") == spec
        assert app.source.spec("Tiny map").outages[0].duration == plan.axes[0].values[1]
        assert app.run_data is not None and app.run_data.outages  # the cell's run is on screen
        assert label in app.screen.query_one(StatusLine).status.title
        # The sweep shown is the cell's, under its own key.
        main = app.screen
        assert main.sweeps.result(("Tiny map", 3, label)) is not None
        # Back to the map: same cursor and strategy, nothing computed again.
        await pilot.press("p")
        await pilot.pause()
        again = app.screen
        assert isinstance(again, ExploreScreen) and again is not screen
        assert again.missing == 0 and not again.workers_running()
        assert again.state.cursor == (1, 0) and again.state.strategy == 1
        await pilot.press("escape")
        assert not isinstance(app.screen, ExploreScreen)


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_the_map_runs_in_a_worker_that_x_cancels_and_w_resumes(tmp_path: Path, monkeypatch) -> None:
    release = threading.Event()
    real = explore_map.run_explores

    def one_cell_then_wait(plans, backend, cache, *, progress, should_stop, on_cell):
        """Finish the first cell, then run no further until cancelled (or released)."""
        (plan,) = plans
        first = run_explores([type(plan)(plan.file, plan.base, plan.axes, plan.metric, plan.cells[:1])],
                             backend, cache)[0].cells[0]
        on_cell(0, first)
        progress(1, len(plan.cells))
        while not release.wait(0.01):
            if should_stop():
                raise SweepCancelled()
        return real(plans, backend, cache, progress=progress, should_stop=should_stop, on_cell=on_cell)

    monkeypatch.setattr(explore_map, "run_explores", one_cell_then_wait)
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await pause_until(pilot, lambda: isinstance(app.screen, ExploreScreen)
                          and app.screen.cells[0] is not None, tries=50)
        screen = app.screen
        assert isinstance(screen, ExploreScreen) and screen.has_class("-running")
        assert screen.missing == len(screen.cells) - 1
        await pilot.press("right")  # the keys work while the map runs
        assert screen.state.cursor == (1, 0)
        assert screen.query_one(MapGrid).view.grids[0][-1][1].state == "pending"
        await pilot.press("x")
        await settle(pilot)
        assert not screen.has_class("-running") and screen.missing == len(screen.cells) - 1
        await pilot.press("enter")  # a pending cell does not open
        assert app.screen is screen
        release.set()
        await pilot.press("w")
        await settle(pilot)
        assert screen.missing == 0


@pilot_test
async def test_a_cancelled_map_says_what_is_not_computed_and_p_does_not_restart_it(
        tmp_path: Path, monkeypatch) -> None:
    # Issue 39, item 2: after x the cells left read as not computed (not ·… running), and
    # going back to the map from an opened cell leaves it cancelled.
    def one_cell_then_wait(plans, backend, cache, *, progress, should_stop, on_cell):
        (plan,) = plans
        first = run_explores([type(plan)(plan.file, plan.base, plan.axes, plan.metric, plan.cells[:1])],
                             backend, cache)[0].cells[0]
        on_cell(0, first)
        while not should_stop():
            threading.Event().wait(0.01)
        raise SweepCancelled()

    monkeypatch.setattr(explore_map, "run_explores", one_cell_then_wait)
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await pause_until(pilot, lambda: isinstance(app.screen, ExploreScreen)
                          and app.screen.cells[0] is not None, tries=50)
        screen = app.screen
        await pilot.press("x")
        await settle(pilot)
        left = [c for row in screen.query_one(MapGrid).view.grids[0] for c in row if c.position != 0]
        assert left and {(c.state, c.text) for c in left} == {("missing", "")}
        await pilot.press("right")
        detail = str(screen.query_one("#map-detail", Static).render())
        assert "running" not in detail and "not computed" in detail
        legend = str(screen.query_one("#map-legend", Static).render())
        assert "running" not in legend and "not computed" in legend
        missing = screen.missing
        grid = screen.query_one(MapGrid).view.grids[0]
        screen.state.cursor = next((column, row) for row, cells in enumerate(grid)
                                   for column, c in enumerate(cells) if c.position == 0)
        await pilot.press("enter")  # the one computed cell opens
        await settle(pilot)
        assert not isinstance(app.screen, ExploreScreen)
        await pilot.press("p")
        await settle(pilot)
        again = app.screen
        assert isinstance(again, ExploreScreen) and again is not screen
        assert not again.workers_running() and not again.has_class("-running")
        assert again.missing == missing and again.state.cancelled


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_the_seed_dialog_reseeds_the_map(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("z", *"7", "enter")
        await settle(pilot)
        screen = await open_map(pilot)
        assert screen.plan.base.seed == 7 and {c.spec.seed for c in screen.plan.cells} == {7}


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_a_click_on_a_cell_selects_it(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_map(pilot)
        grid = screen.query_one(MapGrid)
        lines = grid.render().plain.splitlines()
        # The second strategy's grid, bottom row, last column: find its cell text on screen.
        view = grid.view
        target = view.grids[1][1][2]
        row_line = lines[2]
        x = row_line.rindex(f"{target.glyph}{target.text}")
        await pilot.click(MapGrid, offset=(x + 1 + 1, 2))  # +1: the widget's left padding
        assert screen.state.strategy == 1 and screen.state.cursor == (2, 1)


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_the_map_is_in_the_palette_and_the_help(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert any(k.action == "screen.explore" for k in KEYS)
        await run_from_palette(pilot, "Explore map")
        assert isinstance(app.screen, ExploreScreen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = help_keys_text(app)
        assert "Explore map (p)" in text and "Open the cell's runs in the normal view" in text


def test_explore_app_option_errors_are_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    monkeypatch.setattr(tui_main, "has_terminal", lambda: True)
    monkeypatch.setattr(BackoffApp, "run", lambda self: pytest.fail("the app must not start"))
    assert tui_main.main(["explore", str(TINY_MAP), "--app", "--dask", "local"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--dask needs" in err and "[dask]" in err and "pip install" in err
    with pytest.raises(SystemExit) as info:  # an empty scheduler is no local run either
        tui_main.main(["explore", str(TINY_MAP), "--app", "--dask", ""])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--dask: must name a scheduler" in err
    monkeypatch.undo()
    assert tui_main.main(["explore", str(TINY), "--app"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no simulation has a [simulation.explore] table" in err
    # The headless entry point has no app: one line, exit 2.
    assert cli.main(["explore", str(TINY_MAP), "--app"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "backoff-sim explore CONFIG --app" in err


def test_an_axis_of_a_billion_steps_is_the_same_one_line_for_the_command_and_the_app(tmp_path: Path, capsys,
                                                                                   monkeypatch) -> None:
    path = tmp_path / "huge.toml"
    path.write_text(toml_text(sim_table(title="Huge", clients=[2], strategies=[CONSTANT]))
                    + section("explore", {"axes": [{"key": "write_mu", "from": 1, "to": 10, "steps": 10**9}]}),
                    "utf-8")
    monkeypatch.setattr(tui_main, "has_terminal", lambda: True)
    monkeypatch.setattr(BackoffApp, "run", lambda self: pytest.fail("the app must not start"))
    lines = []
    for main, argv in ((cli.main, ["explore", str(path), "--out", str(tmp_path / "out")]),
                       (tui_main.main, ["explore", str(path), "--app", "--out", str(tmp_path / "out")])):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        lines.append(err)
    assert lines[0] == lines[1]
    assert "would make 1,000,000,000 cells, more than the limit of 100,000 cells per map" in lines[0]
    assert not (tmp_path / "out").exists()


def test_explore_app_opens_the_first_map_with_the_commands_cache(tmp_path: Path, monkeypatch) -> None:
    seen = {}

    def fake_run(self) -> None:
        seen.update(open_map=self._open_map, cache=self.explore_cache.directory, out=self.out_dir,
                    workers=self.sweep_workers)

    monkeypatch.setattr(BackoffApp, "run", fake_run)
    monkeypatch.setattr(tui_main, "has_terminal", lambda: True)
    assert tui_main.main(["explore", str(TINY_MAP), "--app", "--out", str(tmp_path), "-j", "1"]) == 0
    assert seen == {"open_map": True, "cache": tmp_path / ".backoff-sim-cache", "out": tmp_path,
                    "workers": 1}
    assert tui_main.main(["explore", str(TINY_MAP), "--app", "--no-cache"]) == 0
    assert seen["cache"] is None


def test_explore_app_with_dask_hands_the_cluster_to_the_app_and_closes_it(tmp_path: Path,
                                                                          monkeypatch) -> None:
    import sim.exploration.backends as backends

    events = []

    class FakeDask:
        name = "dask"

        def __init__(self, address, *, workers=None, tasks=None):
            events.append(("open", address, workers))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            events.append(("closed",))

    def fake_run(self) -> None:
        events.append(("run", type(self.explore_backend).__name__, type(self.cell_backend()).__name__))

    monkeypatch.setattr(backends, "DaskBackend", FakeDask)
    monkeypatch.setattr(BackoffApp, "run", fake_run)
    monkeypatch.setattr(tui_main, "has_terminal", lambda: True)
    assert tui_main.main(["explore", str(TINY_MAP), "--app", "--dask", "tcp://host:8786", "-j", "2",
                          "--out", str(tmp_path)]) == 0
    assert events == [("open", "tcp://host:8786", 2), ("run", "FakeDask", "FakeDask"), ("closed",)]
    events.clear()
    assert tui_main.main(["explore", str(TINY_MAP), "--app", "--out", str(tmp_path)]) == 0
    assert events == [("run", "NoneType", "LocalBackend")]  # no --dask: the local pool


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_the_map_runs_on_dask_in_the_app_with_the_local_pools_cells(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    from sim.exploration.backends import DaskBackend

    # processes=False: workers are threads of this process, talking over inproc://, not TCP.
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client, DaskBackend(client=client) as backend:
        submitted = []
        real_submit = client.submit
        client.submit = lambda *a, **kw: submitted.append(a[1:]) or real_submit(*a, **kw)
        app = make_app(tmp_path, explore_backend=backend)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_map(pilot)
            plan, result = expected_map(app)
            assert screen.missing == 0
            # as JSON text: NaN (a recovery time that never came) equals itself there
            assert [json.dumps(c.to_json()) for c in screen.cells] == [json.dumps(c.to_json())
                                                                       for c in result.cells]
    # every (cell, strategy) task went to the cluster
    assert len(submitted) == len(plan.cells) * len(plan.base.strategies)


@pilot_test
async def test_explore_app_starts_on_the_map(tmp_path: Path) -> None:
    app = make_app(tmp_path, open_map=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await settle(pilot)
        assert isinstance(app.screen, ExploreScreen)


ONE_AXIS = (toml_text(sim_table(title="Lock map", clients=[5], strategies=[CONSTANT, FULL_JITTER]),
                      top={"seed": 3})
            + section("explore", {"axes": [{"key": "write_mu", "values": [1.0, 3.0, 9.0]}]}))


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
@pilot_test
async def test_a_one_axis_map_without_a_verdict_shows_the_metrics_mean(tmp_path: Path) -> None:
    config = tmp_path / "lock.toml"
    config.write_text(ONE_AXIS, "utf-8")
    app = make_app(tmp_path, config)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_map(pilot)
        plan, result = screen.plan, run_explores([screen.plan], LocalBackend(1), CellCache(None))[0]
        assert plan.metric == "cost" and len(screen.query_one(MapGrid).view.grids[0]) == 1
        for s in range(2):
            (row,) = screen.query_one(MapGrid).view.grids[s]
            assert [c.value for c in row] == [cr.estimate("cost", s).mean for cr in result.cells]
            assert all(c.state == "value" for c in row)
        await pilot.press("up", "right", "right", "enter")  # up: nowhere to go on one row
        await settle(pilot)
        assert app.selection.variant == "write_mu 9" and app.source.spec("Lock map").control.write_mu == 9.0
