"""Every exported set carries ``<title>_provenance.json`` (issue 23, item 11): version, seed,
config file and its SHA-256, the command line, and a command that writes the set again; the
command in it does write the same CSVs, byte for byte."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

import pytest

import sim
from sim.commands import cli
from sim.export.provenance import command_line, spec_fingerprint
from sim.settings.config import load_config

TINY = Path(__file__).parent / "fixtures" / "tiny.toml"
ROOT = Path(__file__).resolve().parent.parent


def _sidecars(folder: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*_provenance.json"))}


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of the tiny config with seed 4 (the tests share it: each run writes PNGs)."""
    out = tmp_path_factory.mktemp("provenance") / "first"
    assert cli.main(["run", str(TINY), "--out", str(out), "--quiet", "--workers", "1", "--seed", "4"]) == 0
    return out


def test_a_run_writes_one_sidecar_per_simulation_that_names_its_set(first: Path) -> None:
    sidecars = _sidecars(first)
    config = sim.load(TINY)
    assert sorted(sidecars) == sorted(f"{s.title}_provenance.json" for s in config.simulations)
    for spec in config.with_seed(4).simulations:
        data = sidecars[f"{spec.title}_provenance.json"]
        assert data["simulation"] == spec.title and data["seed"] == 4
        assert data["config"] == str(TINY.resolve())
        assert data["config_sha256"] == hashlib.sha256(TINY.read_bytes()).hexdigest()
        assert data["simulation_sha256"] == spec_fingerprint(spec)
        assert data["backoff_sim_version"]
        for name in data["files"]:
            assert (first / name).is_file() and name.startswith(spec.title)
        assert f"{spec.title}_events.csv" in data["files"]


def test_the_reproduce_command_writes_the_same_csvs_and_sidecar(first: Path, tmp_path: Path) -> None:
    data = next(iter(_sidecars(first).values()))
    words = shlex.split(data["reproduce"])
    assert words[:2] == ["backoff-sim", "run"]
    again = tmp_path / "again"
    assert cli.main([*words[1:], "--out", str(again), "--quiet", "--workers", "2"]) == 0
    csvs = sorted(p.name for p in first.glob("*.csv"))
    assert csvs and csvs == sorted(p.name for p in again.glob("*.csv"))
    for name in csvs:
        assert (first / name).read_bytes() == (again / name).read_bytes()
    # No clock in the sidecar: only the command line (another --out, --workers) differs.
    a, b = _sidecars(first), _sidecars(again)
    for key in a:
        assert a[key].pop("command_line") != b[key].pop("command_line")
    assert a == b


def test_the_command_line_is_quoted_as_a_shell_takes_it() -> None:
    assert command_line(["/usr/bin/backoff-sim", "run", "my config.toml"]) == "backoff-sim run 'my config.toml'"
    assert command_line(["/x/sim/__main__.py", "run"]) == "python -m sim run"


def test_the_simulations_hash_does_not_depend_on_how_its_path_was_typed(tmp_path: Path, monkeypatch) -> None:
    # A config that reads a service-time file, read by a relative path from its folder and by an
    # absolute path from elsewhere: the spec holds the file's absolute path both times, and the
    # fingerprint counts the file by its bytes (another file's bytes give another fingerprint).
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "times.csv").write_text("service_time\n5\n7\n9\n")
    text = (ROOT / "examples" / "your_service.toml").read_text().replace('"service_times.csv"', '"times.csv"')
    (folder / "c.toml").write_text(text)
    monkeypatch.chdir(folder)
    relative = load_config("c.toml").simulations[0]
    monkeypatch.chdir(tmp_path)
    absolute = load_config(str(folder / "c.toml")).simulations[0]
    assert relative.control.service_file == absolute.control.service_file == str(folder / "times.csv")
    before = spec_fingerprint(absolute)
    assert spec_fingerprint(relative) == before
    (folder / "times.csv").write_text("service_time\n5\n7\n10\n")
    assert spec_fingerprint(load_config(str(folder / "c.toml")).simulations[0]) != before
