"""The app on a fleet (issue 35): the host panel holds the sweep's per-host numbers (those of
``_hosts.csv``), the app's export of a fleet run keeps each event's host."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import section, toml_text
from tui_support import make_app, pilot_test, settle

from sim.settings.config import load_config
from sim.export.csv_files import read_events_csv, write_history_csv
from sim.report.hosts import host_cells
from sim.runs.engine import record_run
from sim.runs.sweep import run_sweep
from tui.widgets.analysis.host_table import HostTable

TABLE = {"title": "Tiny_Fleet", "clients": [20], "repeat": 2, "network_mu": 1.0, "network_sigma": 0.2,
         "control": "PoolServer", "workers": 1, "service_time": 1.0, "service_distribution": "exponential",
         "workload": "open", "think_time": 40.0, "horizon": 400.0, "timeout": 20.0,
         "incidents": [{"start": 100.0, "duration": 200.0, "kind": "crash", "hosts": [0]}],
         "strategies": [{"type": "Constant", "constant": 1.0, "max_attempts": 3, "name": "retry"}]}
FLEET = {"hosts": 3, "balancer": "least_request", "retry_other_host": True}


def fleet_config(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_fleet.toml"
    path.write_text(toml_text(TABLE) + section("fleet", FLEET), encoding="utf-8")
    return path


@pilot_test
async def test_the_host_panel_has_the_sweeps_numbers(tmp_path: Path) -> None:
    path = fleet_config(tmp_path)
    app = make_app(tmp_path, path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(HostTable)
        assert table.display and table.rows
        result = run_sweep(load_config(path).simulations[0], workers=1)
        assert table.rows == host_cells(result, 0)
        assert [r.host for r in table.rows] == [0, 1, 2]
        assert float(table.rows[0].errors) > 0 and float(table.rows[1].errors) == 0


@pilot_test
async def test_no_host_panel_without_a_fleet(tmp_path: Path) -> None:
    path = tmp_path / "plain.toml"
    path.write_text(toml_text({k: v for k, v in TABLE.items() if k != "incidents"}), encoding="utf-8")
    app = make_app(tmp_path, path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert not app.screen.query_one(HostTable).display


def test_the_apps_export_of_a_fleet_run_keeps_its_hosts(tmp_path: Path) -> None:
    spec = load_config(fleet_config(tmp_path)).simulations[0]
    run = record_run(spec, spec.labels[0], 20, 0)
    out = write_history_csv(tmp_path / "run.csv", spec.title, spec.labels[0], 20, 0, run.history)
    assert out.read_text().splitlines()[0].endswith(",host")
    back = next(iter(read_events_csv(out).values()))
    assert back.packed == run.history.packed


@pilot_test
async def test_the_event_log_names_each_events_host(tmp_path: Path) -> None:
    from sim.core import events as ev
    from tui.widgets.replay.event_log import EventLog

    app = make_app(tmp_path, fleet_config(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        await settle(pilot)
        log, data = app.screen.query_one(EventLog), app.run_data
        assert data.hosts is not None and data.pool is None  # each host its own pool: none drawn
        for i in range(min(len(data), 400)):
            line = log._render_event(i, 120, log.rich_style, False).text
            host = int(data.hosts[i])
            assert (f"host={host}" in line) == (host != ev.NO_HOST)
        spec = load_config(fleet_config(tmp_path)).simulations[0]
        run = record_run(spec, spec.labels[0], 20, 0)  # the run on screen: the hosts its events name
        assert data.hosts.tolist() == [ev.host_of(p) for p in run.history.packed]


@pilot_test
@pytest.mark.slow  # a hedging fleet's panel; the host panel's numbers stay in the default run
async def test_the_app_shows_a_hedging_fleet(tmp_path: Path) -> None:
    # Its runs keep a hedges series beside the common ones: the panes take it as the others.
    path = tmp_path / "hedged.toml"
    hedged = [{**TABLE["strategies"][0], "hedging": {"max_attempts": 2, "delay": 2.0}}]
    path.write_text(toml_text({**TABLE, "strategies": hedged}) + section("fleet", FLEET), encoding="utf-8")
    app = make_app(tmp_path, path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        await settle(pilot)
        table = app.screen.query_one(HostTable)
        assert table.display and [r.host for r in table.rows] == [0, 1, 2]
        assert app.run_data is not None and app.run_data.hosts is not None
