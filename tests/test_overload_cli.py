"""``backoff-sim run`` on a simulation against a replying server: ten files, the latency table with
``✗ never`` and ★ marks, a short history head instead of the whole history, identical CSVs for a
seed whatever the number of workers."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from support import PNG_MAGIC, file_bytes, sim_process

from sim.commands import cli
from sim.analysis.open_metrics import OpenRunMetrics
from sim.runs.sweep import SweepResult, run_sweep
from sim.settings.config import load_config, parse_config
from sim.runs.engine import record_run
from sim.vocabulary.errors import UserError
from sim.export.csv_files import EVENTS_HEADER, METRICS_HEADER, RUNS_HEADER, read_events_csv
from sim.export.overload_csv import LATENCY_HEADER, TIMESERIES_HEADER
from sim.report.latency import NEVER_MARK, LatencyReport

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_outage.toml"
STEM = "Tiny_outage"
KINDS = ("_metrics.png", "_scatter.png", "_metrics.csv", "_runs.csv", "_events.csv", "_provenance.json",
         "_timeseries.png", "_latency.png", "_timeseries.csv", "_latency.csv")
HEADERS = {"_metrics.csv": METRICS_HEADER, "_runs.csv": RUNS_HEADER, "_events.csv": EVENTS_HEADER,
           "_timeseries.csv": TIMESERIES_HEADER, "_latency.csv": LATENCY_HEADER}


def _csvs(out: Path) -> dict[str, bytes]:
    return file_bytes(out, [STEM + kind for kind in HEADERS])


def test_run_writes_ten_files_and_prints_the_latency_table(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert cli.main(["run", str(FIXTURE), "--out", str(out), "--workers", "1"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(STEM + kind for kind in KINDS)
    for kind, header in HEADERS.items():
        assert (out / f"{STEM}{kind}").read_text("utf-8").splitlines()[0] == ",".join(header)
    from matplotlib.image import imread
    for kind in KINDS:
        if kind.endswith(".png"):
            assert (out / f"{STEM}{kind}").read_bytes()[:8] == PNG_MAGIC
            assert imread(out / f"{STEM}{kind}").ndim == 3

    printed = capsys.readouterr().out
    assert "Tiny outage · LatencyServer · poisson workload · 2 repeats" in printed
    assert NEVER_MARK in printed and "★" in printed
    never = [line for line in printed.splitlines() if NEVER_MARK in line and "constant" in line]
    assert len(never) == 1  # 100 clients, constant retries
    assert "Tiny outage · constant · 30 clients, repetition 1 of 2 · first 20 of" in printed
    events_file = out / f"{STEM}_events.csv"
    assert f"more events; browse them with: backoff-sim replay {events_file}" in printed
    assert "wrote 10 files for 'Tiny outage'" in printed
    # A head of the history, not all of it: 20 events of each of the two strategies' runs.
    events = events_file.read_text("utf-8").count("\n") - 1
    assert events > 1000
    assert printed.count("client_requests_write") <= 2 * 20


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
def test_events_file_keeps_the_full_histories(tmp_path: Path) -> None:
    assert cli.main(["run", str(FIXTURE), "--out", str(tmp_path), "--quiet", "--workers", "1"]) == 0
    spec = load_config(FIXTURE).simulations[0]
    histories = read_events_csv(tmp_path / f"{STEM}_events.csv")
    assert [(k.strategy, k.clients, k.repetition) for k in histories] == [
        ("constant", 30, 0), ("expo", 30, 0)]
    for key, history in histories.items():
        original = record_run(spec, key.strategy, key.clients, key.repetition).history
        # times as the CSV writes numbers: rounded to 12 significant digits
        assert history.times == [float(f"{t:.12g}") for t in original.times]
        assert history.packed == original.packed


@pytest.mark.slow  # tests/test_cli.py checks the same across workers by default
def test_same_seed_gives_byte_identical_csvs_across_workers(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    assert cli.main(["run", str(FIXTURE), "--out", str(one), "--quiet", "--workers", "1"]) == 0
    done = sim_process("run", str(FIXTURE), "--out", str(two), "--quiet", "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(two / (STEM + kind)) for kind in KINDS]
    assert _csvs(one) == _csvs(two)


def _render(renderable, width: int) -> str:
    console = Console(record=True, width=width, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_report_marks_never_and_keeps_strategy_names_on_narrow_terminals() -> None:
    result = run_sweep(load_config(FIXTURE).simulations[0], workers=1)
    wide = _render(LatencyReport(result), 200)
    for column in ("requests", "successes", "timeouts", "unfinished", "p50", "p90", "p99", "max",
                   "goodput", "recovery"):
        assert column in wide
    assert "gave up" in wide  # named in the caption: zero in every run
    never = [line.split() for line in wide.splitlines() if NEVER_MARK in line and "none did" not in line]
    assert [words[:2] for words in never] == [["300", "constant"]]
    assert never[0][-2:] == ["never", "(0/2)"] and "2/2 recovered, median" in wide
    narrow = _render(LatencyReport(result), 60)
    assert max(map(len, narrow.splitlines())) <= 60
    assert "constant" in narrow and "expo" in narrow and NEVER_MARK in narrow
    assert "too narrow a terminal for: p90" in " ".join(narrow.split())


@pytest.mark.slow  # a navigation or regression check whose main path other default tests walk
def test_server_wide_events_alone_have_no_client(tmp_path: Path) -> None:
    """Outages pause the whole server: those rows carry client_id -1, and read back; no other may."""
    assert cli.main(["run", str(FIXTURE), "--out", str(tmp_path), "--quiet", "--workers", "1"]) == 0
    path = tmp_path / f"{STEM}_events.csv"
    lines = path.read_text("utf-8").splitlines(keepends=True)
    pauses = [i for i, line in enumerate(lines) if ",-1,server_pauses," in line]
    assert len(pauses) == 2  # one outage, two strategies
    first_request = next(i for i, line in enumerate(lines) if ",client_requests_write," in line)
    fields = lines[first_request].split(",")
    fields[5] = "-1"
    lines[first_request] = ",".join(fields)
    path.write_text("".join(lines), "utf-8")
    with pytest.raises(UserError) as info:
        read_events_csv(path)
    assert f"line {first_request + 1}:" in str(info.value)
    assert "client_id '-1' must be >= 0" in str(info.value)


def _two_strategies(recoveries: tuple[float, float]) -> SweepResult:
    """A hand-made sweep: 'stuck' sends fewer requests with lower latency than 'backs off'."""
    table = {"title": "hand", "clients": [5], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.0,
             "work_to_duration": 0.0, "control": "LatencyServer", "base_latency": 10.0,
             "concurrency_limit": 2, "factor": 1.1, "k": 1.0, "workload": "poisson",
             "think_time": 50.0, "horizon": 1000.0, "outages": [{"start": 200.0, "duration": 100.0}],
             "strategies": [{"type": "Constant", "constant": 1.0, "name": "stuck"},
                            {"type": "Expo", "base": 1.0, "cap": 9.0, "name": "backs off"}]}
    result = SweepResult.empty(parse_config({"simulation": [table]}).simulations[0])
    for s, (work, latency, recovery) in enumerate([(10, 1.0, recoveries[0]), (20, 2.0, recoveries[1])]):
        result.open_runs[(s, 0, 0)] = OpenRunMetrics(
            work, 1000.0, 1000.0, 0, 50, offered=5, successes=1, horizon=1000.0,
            latencies=np.array([latency]), latency_clients=np.zeros(1, np.int64),
            attempts_per_client=np.full(5, 2, np.int64), recovery_time=recovery)
    return result


def _starred(text: str) -> dict[str, int]:
    return {label: next(line for line in text.splitlines() if label in line).count("★")
            for label in ("stuck", "backs off")}


def test_a_strategy_that_never_recovers_gets_no_star() -> None:
    text = _render(LatencyReport(_two_strategies((math.nan, 50.0))), 200)
    assert _starred(text) == {"stuck": 0, "backs off": 2}
    assert NEVER_MARK in next(line for line in text.splitlines() if "stuck" in line)
    # When every strategy recovered, the fewest requests and lowest p50 win; when none did, no
    # strategy has a star (the caption says it goes to those that recovered in every run).
    assert _starred(_render(LatencyReport(_two_strategies((80.0, 50.0))), 200)) == {"stuck": 2, "backs off": 0}
    never = _render(LatencyReport(_two_strategies((math.nan, math.nan))), 200)
    assert _starred(never) == {"stuck": 0, "backs off": 0}
    assert "recovered in every run" in " ".join(never.split())


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
def test_a_piped_run_gets_the_whole_latency_table(tmp_path: Path) -> None:
    """stdout to a file or pipe with no COLUMNS: nothing left out for a screen that is not there,
    and each recovery verdict on one line."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = sim_process("run", str(FIXTURE), "--out", str(tmp_path), "--workers", "1", env=env)
    assert done.returncode == 0, done.stderr
    assert "too narrow" not in done.stdout
    header = next(line for line in done.stdout.splitlines() if line.lstrip().startswith("clients") and "p90" in line)
    for column in ("p90", "p99", "max", "mean", "recovery"):
        assert column in header
    assert any("recovered, median" in line and "(" in line and ")" in line
               for line in done.stdout.splitlines())


def test_a_terminal_table_leaves_out_p90_mean_max_before_wrapping_a_verdict() -> None:
    result = run_sweep(load_config(FIXTURE).simulations[0], workers=1)
    wide = _render(LatencyReport(result), 400)
    width = max(map(len, wide.splitlines()))
    # Just too narrow for every column: the soft columns go and the verdicts stay whole.
    text = _render(LatencyReport(result), width - 3)
    assert "too narrow a terminal for:" in " ".join(text.split())
    verdict_lines = [line for line in text.splitlines() if "recovered" in line and "(" in line]
    assert verdict_lines and all(")" in line for line in verdict_lines)
