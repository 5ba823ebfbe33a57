"""``backoff-sim run`` prints a head of each example history (20 events unless ``--events`` says
otherwise) and where the rest is; ``backoff-simulator --config-file`` keeps the reference's full
tables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sim.commands import cli, compat
from sim.commands.cli import HISTORY_HEAD
from sim.export.csv_files import read_events_csv
from support import CONSTANT, FULL_JITTER, sim_table, toml_text, write_config

# Ten clients contending for a lock: every history is well over 20 events long (each client at
# least requests and is accepted, with network events between).
CONFIG = toml_text(sim_table(title="Busy lock", clients=[10], strategies=[CONSTANT, FULL_JITTER]),
                   top={"seed": 5})

EVENT_ROW = re.compile(r"^│ +\d+\.\d\d │ +\d+ │ (client|server)_")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "busy.toml", CONFIG)


def run(config: Path, out: Path, capsys, *extra: str) -> tuple[str, dict[str, int]]:
    """Printed text, and each strategy's history length as the events file holds it."""
    assert cli.main(["run", str(config), "--out", str(out), "--workers", "1", *extra]) == 0
    printed = capsys.readouterr().out
    histories = read_events_csv(out / "Busy_lock_events.csv")
    return printed, {key.strategy: len(h) for key, h in histories.items()}


def history_rows(printed: str, strategy: str) -> list[str]:
    """The event rows printed under one strategy's history title."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"Busy lock · {strategy} ·"))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("└"):
            break
        if EVENT_ROW.match(line):
            rows.append(line)
    return rows


def test_run_prints_the_first_20_events_and_where_the_rest_are(config: Path, tmp_path: Path,
                                                               capsys) -> None:
    out = tmp_path / "out"
    printed, lengths = run(config, out, capsys)
    events_file = out / "Busy_lock_events.csv"
    for strategy, total in lengths.items():
        assert total > HISTORY_HEAD
        assert len(history_rows(printed, strategy)) == HISTORY_HEAD
        assert f"first {HISTORY_HEAD} of {total:,} events" in printed
        assert (f"… {total - HISTORY_HEAD:,} more events; browse them with: "
                f"backoff-sim replay {events_file}") in printed


def test_events_all_prints_every_event_and_a_number_that_many(config: Path, tmp_path: Path,
                                                               capsys) -> None:
    printed, lengths = run(config, tmp_path / "all", capsys, "--show-events", "all")
    for strategy, total in lengths.items():
        assert len(history_rows(printed, strategy)) == total
    assert "more events" not in printed
    printed, lengths = run(config, tmp_path / "five", capsys, "--events", "5")
    for strategy, total in lengths.items():
        assert len(history_rows(printed, strategy)) == 5
        assert f"… {total - 5:,} more events" in printed


def test_events_0_prints_no_event_table_only_where_the_events_are(config: Path, tmp_path: Path,
                                                                   capsys) -> None:
    printed, lengths = run(config, tmp_path / "none", capsys, "--events", "0")
    assert "time (" not in printed and "event_type" not in printed  # no empty table's header
    for strategy, total in lengths.items():
        assert f"first 0 of {total:,} events" in printed
        assert f"… {total:,} more events; browse them with" in printed


@pytest.mark.parametrize("value", ["-1", "some", "2.5"])
def test_a_bad_events_value_is_a_usage_error(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["run", "--events", value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--events" in err and "Traceback" not in err


def test_backoff_simulator_keeps_the_full_tables(config: Path, tmp_path: Path, monkeypatch,
                                                  capsys) -> None:
    monkeypatch.chdir(tmp_path)
    _, lengths = run(config, tmp_path / "out", capsys)
    assert compat.main(["--config-file", str(config)]) == 0
    printed = capsys.readouterr().out
    for strategy, total in lengths.items():
        block = printed.split(f"Busy lock + {strategy}\n")[1].strip().split("\n\n")[0]
        rows = block.splitlines()[2:]  # after the header and its rule
        assert len(rows) == total > HISTORY_HEAD
