"""The public API (``import sim``): README's examples, and the pipeline the commands share.

``sim.run(...).export(d)`` must write the files ``backoff-sim run`` writes, byte for byte; a
table's rows are the CSV's columns and values; ``sim.record`` is the run the events file holds.
"""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest

import sim
import sim.pipeline
from sim.export.csv_files import format_float
from sim.results import parse_rows

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _command(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim", *args], capture_output=True, text=True,
                          cwd=cwd, env={**__import__("os").environ, "CI": "1"}, timeout=600)


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
def test_readme_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testfile(str(ROOT / "README.md"), module_relative=False,
                              globs={"tmp": tmp_path / "out"}, optionflags=FLAGS)
    assert result.attempted >= 10 and result.failed == 0, result


def test_api_docstring_examples_run():
    result = doctest.testmod(sim.pipeline, optionflags=FLAGS)
    assert result.attempted >= 2 and result.failed == 0, result


def test_import_sim_is_light():
    """The commands import ``sim`` first: the public names must not pull numpy in until used."""
    code = "import sim, sys; print('numpy' in sys.modules, sorted(sim.__all__)[:3])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split(",")[0] == "(False" or out.startswith("False"), out
    assert callable(sim.run) and sim.Results.__module__ == "sim.results"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sim.nope  # noqa: B018


# A long end-to-end round trip (tiny_outage writes every kind of file, the overload ones too; tiny
# is a second config): under -m slow, the export's own tests stay in the default run.
@pytest.mark.slow
@pytest.mark.parametrize("config", ["tiny.toml", "tiny_outage.toml"])
def test_export_is_the_command_byte_for_byte(tmp_path, config):
    path = FIXTURES / config
    results = sim.run(path, workers=1)
    written = results.export(tmp_path / "api")
    proc = _command("run", str(path), "--out", str(tmp_path / "cli"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    api, cli = _files(tmp_path / "api"), _files(tmp_path / "cli")
    assert sorted(api) == sorted(cli) == sorted(p.name for p in written)
    assert any(name.endswith(".png") for name in api) and any(name.endswith(".csv") for name in api)
    for name in api:
        if name.endswith("_provenance.json"):  # all but the command that wrote it
            a, c = json.loads(api[name]), json.loads(cli[name])
            assert a.pop("command_line") != c.pop("command_line")
            assert a == c, name
            continue
        assert api[name] == cli[name], name


def _text_of(value) -> set[str]:
    """What a typed cell may have been written as."""
    if value is None:
        return {"", "n/a"}
    if isinstance(value, str):
        return {value}
    if isinstance(value, int):
        return {str(value)}
    return {format_float(value), repr(value)}


# tiny_outage has every kind of row; tiny, a second config of the same code path, is slow.
@pytest.mark.parametrize("config", [pytest.param("tiny.toml", marks=pytest.mark.slow), "tiny_outage.toml"])
def test_rows_are_the_csv_columns_and_values(tmp_path, config):
    import csv

    results = sim.run(FIXTURES / config, workers=1)
    results.export(tmp_path)
    expected_kinds = {"metrics", "runs", "events"} | ({"timeseries", "latency"} if "outage" in config else set())
    assert set(results.kinds) == expected_kinds
    from sim.export.names import safe_title

    for i, result in enumerate(results):
        for kind in results.kinds:
            file = tmp_path / f"{safe_title(result.spec.title)}_{kind}.csv"
            if not file.exists():
                continue
            with open(file, newline="") as f:
                lines = [row for row in csv.reader(f) if row and not row[0].startswith("# end:")]
            header, body = lines[0], lines[1:]
            rows = results.rows(kind, simulation=i)
            assert len(rows) == len(body) > 0, kind
            for row, cells in zip(rows, body):
                assert list(row) == header
                for (column, value), text in zip(row.items(), cells):
                    assert text in _text_of(value), (kind, column, value, text)
            frame = results.to_pandas(kind, simulation=result.spec.title)
            assert list(frame.columns) == header and len(frame) == len(body)
    every = results.rows("metrics")
    assert len(every) == sum(len(results.rows("metrics", simulation=i)) for i in range(len(results)))
    assert all(isinstance(r["clients"], int) and isinstance(r["cost_mean"], float)
               for r in results.rows("metrics"))
    title = results[0].spec.title
    assert results.rows("runs", simulation=title) == results.rows("runs", simulation=0)


def test_rows_of_an_unknown_table_name_the_choices():
    results = sim.run(FIXTURES / "tiny.toml", workers=1)
    with pytest.raises(sim.UserError, match="no table 'latency': choose one of 'metrics', 'runs', 'events'"):
        results.rows("latency")
    with pytest.raises(KeyError, match="no simulation titled 'nope'"):
        results["nope"]


def test_text_columns_stay_text():
    rows = parse_rows("simulation,strategy,clients,work_ci95,vs_best,event_detail\n"
                      "2024,7,3,n/a,tied,5\n")
    assert rows == [{"simulation": "2024", "strategy": "7", "clients": 3, "work_ci95": None,
                     "vs_best": "tied", "event_detail": "5"}]


def test_record_is_the_run_of_the_events_file(tmp_path):
    path = FIXTURES / "tiny_outage.toml"
    results = sim.run(path, workers=1)
    spec = results[0].spec
    label, clients = spec.labels[-1], spec.representative_clients()
    recording = sim.record(path, simulation=spec.title, strategy=label, clients=clients)
    assert recording.keys() == ("time", "client", "event", "code", "detail", "call") and len(recording) > 0
    events = [r for r in results.rows("events") if r["strategy"] == label]
    assert len(events) == len(recording)
    assert [format_float(t) for t in recording["time"]] == [
        format_float(r["time"]) for r in events]
    assert recording["client"].tolist() == [r["client_id"] for r in events]
    assert recording["event"].tolist() == [r["event_type"] for r in events]
    assert recording["call"].tolist() == [r["call"] for r in events]
    # The engine's own metrics of that run are the sweep's (repetition 0 at that client count).
    s, k = spec.labels.index(label), spec.clients.index(clients)
    assert recording.metrics.work == results[0].work[s, k, 0]
    assert recording.metrics.duration == pytest.approx(results[0].duration[s, k, 0], rel=0, abs=0)
    frame = recording.to_pandas()
    assert list(frame.columns) == list(recording.keys()) and len(frame) == len(recording)
    with pytest.raises(ValueError):
        recording["time"][0] = 1.0  # read-only: shared, never copied


def test_record_mistakes_are_one_line():
    path = FIXTURES / "tiny.toml"
    title = sim.load(path).simulations[0].title
    with pytest.raises(sim.UserError, match="no simulation titled 'nope': choose one of"):
        sim.record(path, simulation="nope", strategy="x", clients=3)
    with pytest.raises(sim.UserError, match="no strategy labelled 'x': choose one of"):
        sim.record(path, simulation=title, strategy="x", clients=3)
    label = sim.load(path).simulations[0].labels[0]
    with pytest.raises(sim.UserError, match="clients must be a whole number"):
        sim.record(path, simulation=title, strategy=label, clients=0)
    with pytest.raises(sim.UserError, match="repetition must be"):
        sim.record(path, simulation=title, strategy=label, clients=3, repetition=-1)


def test_load_takes_a_path_text_or_config():
    path = FIXTURES / "tiny.toml"
    by_path, by_str = sim.load(path), sim.load(str(path))
    by_text = sim.load(path.read_text())
    assert by_path.simulations == by_str.simulations == by_text.simulations
    assert sim.load(by_path) is by_path
    with pytest.raises(sim.ConfigError) as caught:
        sim.load("[[simulation]]\ntitle = 'x'\nmax_clients = -1\n")
    assert len(caught.value.lines()) >= 3  # every mistake at once, as the command
    with pytest.raises(sim.ConfigError, match="no such file"):
        sim.load("no/such/config.toml")
    with pytest.raises(TypeError, match="expected a path, TOML text or a sim.Config"):
        sim.load(42)


def test_to_pandas_without_pandas_says_how_to_get_it(monkeypatch):
    results = sim.run(FIXTURES / "tiny.toml", workers=1)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install .*\[pandas\]'"):
        results.to_pandas("metrics")


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
def test_explore_and_tune_are_the_command(tmp_path):
    """``sim.explore``/``sim.tune`` write what ``backoff-sim explore`` writes, and rows are its CSV."""
    for config, kinds in (("tiny_map.toml", ("explore",)), ("tiny_tune.toml", ("tune", "pareto"))):
        path = FIXTURES / config
        proc = _command("explore", str(path), "--out", str(tmp_path / f"cli-{config}"), "--quiet", "--no-cache")
        assert proc.returncode == 0, proc.stderr
        results = (sim.explore if kinds == ("explore",) else sim.tune)(path, workers=1)
        results.export(tmp_path / f"api-{config}")
        cli, api = _files(tmp_path / f"cli-{config}"), _files(tmp_path / f"api-{config}")
        assert sorted(cli) == sorted(api)
        for name in cli:
            if name.endswith(".csv"):
                assert cli[name] == api[name], name
        for kind in kinds:
            csv_name = next(n for n in cli if n.endswith(f"_{kind}.csv"))
            assert results.rows(kind) == parse_rows(cli[csv_name].decode())
    with pytest.raises(sim.UserError, match="no simulation has a \\[simulation.explore\\] table"):
        sim.explore(FIXTURES / "tiny.toml")
