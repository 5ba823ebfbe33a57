"""``backoff-simulator --config-file FILE`` prints and writes what the reference package does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tabulate import tabulate

from sim.commands import compat
from sim.settings.config import load_config
from sim.export.runs import representative_runs

# Strategies deliberately out of alphabetical order: the reference prints them sorted.
CONFIG = """\
[[simulation]]
title = "My Example"
max_clients = 4
repeat = 2
network_mu = 10.0
network_sigma = 2.0
work_to_duration = 1.0
control = "WriteOnlyOCCServer"
write_mu = 2.0
write_sigma = 1.0
strategies = [
  { type = "FullJitteredExpo", base = 2.0, cap = 1000.0 },
  { type = "Constant", constant = 0.5 },
]
"""

HEADER = re.compile(r"^ +time +client_id  event_type +event_detail$")
ROW = re.compile(r"^ *\d+(\.\d+)? +\d+  [a-z_]+( +[a-z_]+=\d+)?$")


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "simulations.toml").write_text(CONFIG, "utf-8")
    return tmp_path


def test_stdout_layout_matches_the_reference(in_tmp: Path, capsys) -> None:
    assert compat.main([]) == 0
    out = capsys.readouterr().out

    # Exactly what the reference's loop prints, built the way it builds it.
    spec = load_config(in_tmp / "simulations.toml").simulations[0]
    runs = representative_runs(spec)
    expected = ""
    for label in sorted(runs):
        table = tabulate(((format(t, ".02f"), c, e, d) for t, c, e, d in runs[label].history.rows()),
                         headers=["time", "client_id", "event_type", "event_detail"])
        expected += f"\n{spec.title} + {label}\n\n" + table + "\n\n"
    assert out == expected

    lines = out.split("\n")
    assert lines[0] == "" and lines[1] == "My Example + Constant" and lines[2] == ""
    assert HEADER.match(lines[3]), lines[3]
    assert lines[3].startswith("  time    client_id  event_type")
    assert set(lines[4]) == {"-", " "}
    assert all(ROW.match(line) for line in lines[5:lines.index("", 5)])
    assert "\nMy Example + FullJitteredExpo\n" in out
    assert out.index("+ Constant") < out.index("+ FullJitteredExpo")


def test_writes_the_two_pngs_in_the_current_directory(in_tmp: Path, capsys) -> None:
    assert compat.main(["--config-file", "simulations.toml"]) == 0
    names = sorted(p.name for p in in_tmp.iterdir())
    assert names == ["My Example_metrics.png", "My Example_scatter.png", "simulations.toml"]
    for name in names[:2]:
        assert (in_tmp / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_missing_default_config_is_one_line_exit_2(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert compat.main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "simulations.toml" in err[0] and "no such file" in err[0]


def test_bad_config_is_one_line_exit_2(in_tmp: Path, capsys) -> None:
    (in_tmp / "bad.toml").write_text(CONFIG.replace("repeat = 2", "repeat = 0"), "utf-8")
    assert compat.main(["--config-file", "bad.toml"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count("\n") == 1 and "repeat" in err


@pytest.mark.parametrize(("title", "stem"), [("Locking_Example", "Locking_Example"),
                                             ("My Example", "My Example"), ("a/b", "a_b"),
                                             ("x\0y", "x_y"), ("..", "..")])
def test_file_stems_keep_plain_titles(title: str, stem: str) -> None:
    assert compat.compat_stem(title) == stem
