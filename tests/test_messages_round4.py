"""Messages that said the wrong thing, or nothing (issue 40, item 16)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from support import one_error_line, sim_process, toml_text, write_config

import sim
from sim.commands import cli
from sim.settings.config import load_config
from sim.vocabulary.errors import ConfigError, UserError
from sim.export.csv_files import read_events_csv
from sim.export.names import safe_title
from test_pool_server import POOL

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("duration", [-5.0, 0.0])
def test_an_incident_s_duration_says_it_must_be_positive(tmp_path: Path, duration: float) -> None:
    table = {**POOL, "incidents": [{"start": 10.0, "duration": duration, "capacity": 0.5}]}
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path / "pool.toml", toml_text(table)))
    (line,) = info.value.lines()
    assert "key 'incidents[0].duration'" in line and "must be > 0" in line


def test_an_events_file_that_is_a_directory_says_an(tmp_path: Path) -> None:
    with pytest.raises(UserError) as info:
        read_events_csv(tmp_path)
    assert "not an events CSV file" in str(info.value) and "a events" not in str(info.value)


def test_cache_and_no_cache_together_are_refused(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["explore", str(FIXTURES / "tiny.toml"), "--cache", str(tmp_path), "--no-cache"])
    assert info.value.code == 2
    assert "--no-cache" in one_error_line(capsys.readouterr().err)


def test_an_unusable_cache_directory_is_named_as_the_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", "utf-8")
    config = write_config(tmp_path / "c.toml", toml_text(
        {**POOL, "clients": [2], "horizon": 500.0}) + '\n[simulation.explore]\naxes = [{ key = "think_time", values = [100.0] }]\n')
    result = sim_process("explore", str(config), "--out", str(tmp_path / "out"), "--cache", str(blocker / "sub"),
                         "-q", "-j", "1")
    line = one_error_line(result.stderr)
    assert result.returncode == 2 and "cache directory" in line and "output directory" not in line


def test_loading_an_empty_path_says_it_is_empty() -> None:
    with pytest.raises(ConfigError) as info:
        sim.load("")
    assert "empty" in str(info.value) and "directory" not in str(info.value)


def test_replay_at_an_event_past_the_last_is_refused(tmp_path: Path) -> None:
    from tui.state.source import ReplaySource
    from tui.state.start import resolve_start

    assert cli.main(["run", str(FIXTURES / "tiny.toml"), "--out", str(tmp_path), "-q", "-j", "1"]) == 0
    path = tmp_path / "Tiny_OCC_events.csv"
    source = ReplaySource(read_events_csv(path), path, "ms")
    args = argparse.Namespace(simulation=None, strategy=None, clients=None, repetition=None, at=None,
                              event=999_999_999)
    with pytest.raises(UserError, match=r"--event 999,999,999: the run has only [\d,]+ events"):
        resolve_start(source, args)
    args.event = 1
    assert resolve_start(source, args).event == 0


@pytest.mark.parametrize("title, stem", [(".hidden", "_hidden"), ("..", "_."), ("a.b", "a.b")])
def test_a_title_starting_with_a_dot_writes_no_hidden_file(title: str, stem: str) -> None:
    assert safe_title(title) == stem


def test_rows_of_a_simulation_index_out_of_range_says_which_there_are() -> None:
    results = sim.run(FIXTURES / "tiny.toml", workers=1)
    with pytest.raises(IndexError, match=r"simulation 99: there are 2 simulations, 0 to 1 \(or a title: 'Tiny_Locking', 'Tiny_OCC'\)"):
        results.rows("metrics", simulation=99)
    assert results.rows("metrics", simulation=-1) == results.rows("metrics", simulation=1)


def test_the_app_says_when_event_is_past_the_last_of_a_simulated_run(tmp_path: Path) -> None:
    import asyncio

    from test_copy_reproduction import SNAPSHOT, opened
    from tui_support import settle

    app = opened([str(SNAPSHOT), "--event", "999999999"], tmp_path)

    async def scenario() -> list[str]:
        async with app.run_test(size=(100, 30), notifications=True) as pilot:
            await settle(pilot)
            return [n.message for n in app._notifications]
    messages = asyncio.run(scenario())
    assert any("--event 999,999,999: this run has only" in m and "showing the last" in m for m in messages)
    assert app.cursor == len(app.run_data) - 1
