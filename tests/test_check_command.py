"""``backoff-sim check``: the printed worst case, the CSVs' exact headers and rows, the battery's
verdicts equal to running its config by hand, determinism, ``--explain``, ``--app`` and one-line
mistakes (issue 36). Small services, one or two incidents, one or two repetitions."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from sim.commands.cli import main
from sim.check.files import INCIDENTS_HEADER, LAYERS_HEADER, RANGE_HEADER

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "settings" / "layers.toml"
SMALL = ["--workers", "2", "--service-time", "20", "--load", "0.5"]  # 0.05 calls/ms


def _layers(tmp_path: Path, knob: bool = False) -> list[Path]:
    """A resilience4j-like app (3 attempts, 500 ms apart) and an Envoy sidecar (num_retries 2),
    in files of their own; without a knob unless asked (the range is its own test)."""
    off = "" if knob else "knob = false\n"
    app = tmp_path / "app.toml"
    app.write_text('[[layer]]\nname = "app"\nstrategy = { type = "Constant", constant = 500.0, max_attempts = 3 }\n'
                   'timeout = 1000.0\n' + off)
    sidecar = tmp_path / "sidecar.toml"
    sidecar.write_text('[[layer]]\nname = "sidecar"\nstrategy = { preset = "envoy", num_retries = 2 }\n'
                       'timeout = 250.0\n' + off)
    return [app, sidecar]


def _rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


def _check(tmp_path, capsys, *extra: str, settings=None, out: str = "out") -> tuple[int, str, Path]:
    settings = _layers(tmp_path) if settings is None else settings
    status = main(["check", *map(str, settings), *SMALL, "--out", str(tmp_path / out), "--processes", "1",
                   *extra])
    return status, capsys.readouterr().out, tmp_path / out


def test_nine_attempts_printed_simulated_and_written_and_a_row_per_settings_and_incident(tmp_path, capsys):
    report = tmp_path / "report.html"
    status, printed, out = _check(tmp_path, capsys, "--incidents", "outage_10s,capacity_half_10s",
                                  "--repetitions", "1", "--report", str(report))
    assert status == 0
    assert "3 attempts (2 retries)" in printed
    assert "Worst-case amplification at the service: 9 attempts per call (3 × 3); " \
           "simulated under total failure: 9 (as computed)" in printed
    app, sidecar = _layers(tmp_path)
    assert _rows(out / "check_layers.csv") == [
        list(LAYERS_HEADER),
        ["app", str(app), "3", "2", "3", "3.0"],
        ["sidecar", str(sidecar), "3", "2", "9", "9.0"],
        ["total", "", "9", "8", "9", "9.0"],
    ]
    assert LAYERS_HEADER == ("layer", "source", "attempts", "retries", "amplification", "amplification_simulated")
    lines = printed.strip().splitlines()
    assert lines[-4].startswith("Your settings ")  # the verdict, then where the files went
    assert lines[-1] == f"wrote the report to {report.resolve()}"
    rows = _rows(out / "check_incidents.csv")
    assert rows[0] == list(INCIDENTS_HEADER) == ["settings", "incident", "recovered_runs", "runs",
                                                 "recovery_time_median", "extra_load", "p99", "goodput_lost"]
    # The sidecar holds Envoy's budget, so the budget goes to the app; fewer attempts and jitter
    # apply to the app too (3 attempts, a fixed 500 ms); no decorator order, no fleet.
    settings = ["as_given", "retry_budget", "fewer_attempts", "jitter"]
    assert [(r[0], r[1]) for r in rows[1:]] == [(s, i) for s in settings for i in ("capacity_half_10s", "outage_10s")]
    for r in rows[1:]:
        assert r[3] in ("", "1") and float(r[5]) >= 0 and 0 <= float(r[7]) <= 1
    assert "Alternative retry_budget (app: a retry budget of 10% of recent calls (shared))" in printed
    assert "Skipped alternative retry_other_host: the service is one host" in printed
    assert _rows(out / "check_range.csv") == [list(RANGE_HEADER)]  # no knob: no range
    # The report holds the verdict and every CSV's cells as the files hold them.
    import html

    page = html.unescape(report.read_text())
    assert lines[-4] in page
    for name in ("check_layers.csv", "check_incidents.csv"):
        for row in _rows(out / name):
            assert all(cell in page for cell in row)


@pytest.mark.parametrize("incidents, repetitions", [
    ("capacity_half_10s", "2"),
    # More incidents and runs: the same agreement; the default case keeps the path (slow: ~1 min).
    pytest.param("outage_10s,errors_20pct_60s,load_spike_2x_30s", "3", marks=pytest.mark.slow),
])
def test_the_battery_agrees_with_running_its_config_by_hand(tmp_path, capsys, incidents, repetitions):
    # check_config.toml is the battery as a config; `sim.run` on it must give the same recovery
    # verdicts and figures the check wrote (same titles, same seed: the same runs).
    import sim
    from sim.analysis.check import IncidentFigures
    from sim.check.files import format_float
    from sim.check.outcome import runs_of

    status, _, out = _check(tmp_path, capsys, "--incidents", incidents, "--repetitions", repetitions)
    assert status == 0
    by_hand = sim.run(out / "check_config.toml", workers=1)
    rows = {(r[0], r[1]): r for r in _rows(out / "check_incidents.csv")[1:]}
    assert len(by_hand) == len(rows)
    for result in by_hand:
        settings, incident = result.spec.title.split("__")
        row = rows[(settings, incident)]
        recovery = result.recovery(0, 0)
        figures = IncidentFigures.of(runs_of(result))
        assert row[2:5] == (["", "", ""] if recovery is None else
                            [str(recovery.recovered), str(recovery.runs), format_float(recovery.median)])
        assert row[5:] == [format_float(figures.extra_load), format_float(figures.p99),
                           format_float(figures.goodput_lost)]


def test_the_knob_range_and_determinism(tmp_path, capsys):
    # The app's max_attempts from 1 to 5 against one incident; the same check on two processes
    # writes the same bytes (runs depend on the seed and their coordinates, never the pool).
    app = tmp_path / "app.toml"
    app.write_text('[[layer]]\nname = "app"\nstrategy = { type = "Constant", constant = 0.0, max_attempts = 3 }\n'
                   'timeout = 1000.0\n')
    args = ("--incidents", "errors_20pct_60s", "--repetitions", "1")
    status, printed, one = _check(tmp_path, capsys, *args, settings=[app], out="one")
    assert status == 0
    rows = _rows(one / "check_range.csv")
    assert rows[0] == list(RANGE_HEADER)
    assert [(r[0], r[1], r[2]) for r in rows[1:]] == [("app", "max_attempts", str(v)) for v in range(1, 6)]
    good = [r[2] for r in rows[1:] if r[3] == "true"]
    assert all(r[3] == ("true" if r[4] == r[5] == "1" else "false") for r in rows[1:])
    assert "Range of max_attempts (app, 1 run per value and incident):" in printed
    status = main(["check", str(app), *SMALL, "--out", str(tmp_path / "two"), "--processes", "2", *args])
    assert status == 0
    for name in ("check_layers.csv", "check_incidents.csv", "check_range.csv", "check_config.toml"):
        assert (one / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    assert good == [r[2] for r in _rows(tmp_path / "two" / "check_range.csv")[1:] if r[3] == "true"]


def test_explain_prints_the_settings_toml_and_exits(tmp_path, capsys):
    import tomllib

    status = main(["check", str(EXAMPLE), "--explain", "--out", str(tmp_path / "none")])
    printed = capsys.readouterr().out
    assert status == 0
    tomllib.loads(printed)  # TOML: the readers' rendering (sim.settings.imported.explain)
    assert printed.count("3 attempts (2 retries)") >= 2 and "3 × 3 = 9 attempts per call" in printed
    assert not (tmp_path / "none").exists()  # nothing run, nothing written


def test_app_writes_the_comparison_config_and_opens_the_app_on_it(tmp_path, capsys):
    # Under pytest there is no terminal: the app refuses in one line, after the config it would
    # open is in place.
    from tui.main import main as app_main

    status = app_main(["check", *map(str, _layers(tmp_path)), *SMALL, "--incidents", "outage_10s",
                       "--out", str(tmp_path / "app"), "--app"])
    err = capsys.readouterr().err
    assert status == 2 and "needs a terminal" in err
    import tomllib

    titles = [s["title"] for s in tomllib.loads((tmp_path / "app" / "check_config.toml").read_text())["simulation"]]
    assert titles == ["as_given__outage_10s", "retry_budget__outage_10s", "fewer_attempts__outage_10s",
                      "jitter__outage_10s"]


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "sim", "check", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=env)


MISTAKES = [
    (["missing.toml"], "missing.toml: no such file"),
    (["{app}", "--service", "{service}", "--workers", "4"], "--service gives the service: drop --workers"),
    (["{app}", "--load", "-1"], "--load"),
    (["{app}", "--incidents", "outage_5s"], "unknown incident 'outage_5s'"),
    (["{app}", "--service", "{bad_service}"], "key 'workerz'"),
    (["{bad_layer}"], "key 'layer[0].retries'"),
]


def _mistake_files(tmp_path: Path) -> dict[str, Path]:
    service = tmp_path / "service.toml"
    service.write_text('control = "PoolServer"\nworkers = 2\nservice_time = 20.0\n')
    bad_service = tmp_path / "bad_service.toml"
    bad_service.write_text('control = "PoolServer"\nworkerz = 2\nservice_time = 20.0\n')
    bad_layer = tmp_path / "bad_layer.toml"
    bad_layer.write_text('[[layer]]\nname = "a"\nretries = 3\n')
    return {"app": _layers(tmp_path)[0], "service": service, "bad_service": bad_service, "bad_layer": bad_layer}


@pytest.mark.parametrize("args, words", MISTAKES)
def test_a_mistake_is_one_line_and_status_2(tmp_path, capsys, args, words):
    names = _mistake_files(tmp_path)
    try:
        status = main(["check", *[a.format(**names) for a in args], "--out", str(tmp_path / "out")])
    except SystemExit as exc:  # argparse's own mistakes
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # refused before any work, nothing written


@pytest.mark.parametrize("case", [0, pytest.param(4, marks=pytest.mark.slow)])  # each start costs seconds
def test_a_mistake_through_the_interpreter_is_one_line_and_status_2(tmp_path, case):
    args, words = MISTAKES[case]
    names = _mistake_files(tmp_path)
    done = _cli([a.format(**names) for a in args] + ["--out", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in done.stderr


def test_a_fleet_service_adds_retries_to_another_host(tmp_path, capsys):
    import tomllib

    service = tmp_path / "service.toml"
    service.write_text('control = "PoolServer"\nworkers = 2\nservice_time = 20.0\nload = 0.5\n\n'
                       '[fleet]\nhosts = 2\nbalancer = "round_robin"\n')
    status = main(["check", *map(str, _layers(tmp_path)), "--service", str(service), "--incidents", "outage_10s",
                   "--repetitions", "1", "--out", str(tmp_path / "out"), "--processes", "1"])
    printed = capsys.readouterr().out
    assert status == 0
    assert "Alternative retry_other_host (retries to another host of the fleet)" in printed
    blocks = {b["title"]: b for b in tomllib.loads((tmp_path / "out" / "check_config.toml").read_text())["simulation"]}
    # The fleet is the service's, the last tier; only the alternative retries to another host.
    assert blocks["as_given__outage_10s"]["tiers"][-1]["fleet"] == {"hosts": 2, "balancer": "round_robin"}
    assert blocks["retry_other_host__outage_10s"]["tiers"][-1]["fleet"]["retry_other_host"] is True
    assert "fleet" not in blocks["as_given__outage_10s"]  # the proxy in front is one host


@pytest.mark.slow  # a whole default check, stopped once its first progress line is out (~5 s)
def test_ctrl_c_stops_the_check_in_one_line_and_leaves_no_files(tmp_path):
    import os
    import signal

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "sim", "check", str(EXAMPLE), "--out", str(tmp_path / "out")],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    first = proc.stderr.readline()  # "checking: 3 of 137 runs done, ..." (every 5 s without a terminal)
    assert first.startswith("checking: ")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip().splitlines() == ["interrupted"]
    assert not list((tmp_path / "out").glob("check_*"))


SETTINGS_KINDS = ["envoy.yaml", "envoy.json", "istio.yaml", "grpc_service_config.json", "application.yml",
                  "appsettings.json", "aws_config"]


@pytest.mark.parametrize("name", SETTINGS_KINDS)
def test_a_check_of_each_kind_of_settings_file_runs_and_writes_its_files(name, tmp_path, capsys):
    # One example file of each kind, one incident, one run each: the layers file's attempts are
    # the reader's, the incidents file has the settings as given and the battery's incident.
    settings = ROOT / "examples" / "settings" / name
    out = tmp_path / "out"
    status = main(["check", str(settings), *SMALL, "--incidents", "outage_10s", "--repetitions", "1",
                   "--range-repetitions", "1", "--out", str(out), "--quiet"])
    assert status == 0, capsys.readouterr().err
    from sim.settings.imported import read_settings

    (layer,) = read_settings(settings)
    layers = _rows(out / "check_layers.csv")
    assert layers[0] == list(LAYERS_HEADER)
    assert layers[-1][0] == "total" and int(layers[-1][2]) == layer.attempts
    incidents = _rows(out / "check_incidents.csv")
    assert ["as_given", "outage_10s"] == incidents[1][:2]
