"""Exports of runs against replying servers: exact CSV headers, one row per bucket of every run,
recovery as repetitions recovered / judged and their median time, readable PNGs, byte-identical
files for a seed."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from support import PNG_MAGIC, make_spec

from sim.analysis.open_metrics import OpenRunMetrics
from sim.analysis.recovery import RECOVERY_WINDOW, TOO_NOISY, too_few_note, window_rate_needed
from sim.runs.sweep import SweepResult, run_sweep
from sim.settings.config import load_config, parse_config
from sim.core.series import SERIES_NAMES
from sim.export import export_simulation, spec_output_paths
from sim.export.csv_files import format_float
from sim.export.overload_csv import LATENCY_HEADER, TIMESERIES_HEADER, latency_csv_text, timeseries_csv_text
from sim.export.overload_plots import per_client_latency, write_latency_png, write_timeseries_png
from sim.export.palette import load_palette
from sim.settings.spec import SimulationSpec

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_outage.toml"

SPIKE = {"title": "Tiny spike", "clients": [10, 40], "repeat": 2, "network_mu": 0.0,
         "network_sigma": 0.0, "work_to_duration": 1.0, "control": "QueueServer", "concurrency": 2,
         "service_time": 5.0, "queue_size": 0, "reject_delay": 1.0, "overload_threshold": 8,
         "workload": "spike", "spike_fraction": 0.3, "spike_width": 5.0, "arrival_window": 100.0,
         "horizon": 600.0, "bucket": 20.0,
         "strategies": [{"type": "NoBackoff", "name": "none"},
                        {"type": "FullJitteredExpo", "base": 1.0, "cap": 30.0, "name": "jitter"}]}


def _spec(table: dict, seed: int = 4) -> SimulationSpec:
    return parse_config({"seed": seed, "simulation": [table]}).simulations[0]


@pytest.fixture(scope="module")
def outage() -> SweepResult:
    return run_sweep(load_config(FIXTURE).simulations[0], workers=1)


@pytest.fixture(scope="module")
def spike() -> SweepResult:
    return run_sweep(_spec(SPIKE), workers=1)


def _rows(text: str) -> list[list[str]]:
    import csv
    import io

    return list(csv.reader(io.StringIO(text)))


def test_timeseries_csv_has_one_row_per_bucket_of_every_run(outage: SweepResult) -> None:
    spec = outage.spec
    rows = _rows(timeseries_csv_text(outage))
    assert tuple(rows[0]) == TIMESERIES_HEADER
    assert TIMESERIES_HEADER == ("simulation", "strategy", "clients", "repetition", "bucket_start",
                                 "offered", "retries", "accepted", "rejected", "timed_out",
                                 "in_service", "queued", "goodput")
    buckets = round(spec.horizon / spec.bucket_width)
    assert buckets == 200
    assert len(rows) == 1 + len(spec.labels) * len(spec.clients) * spec.repeat * buckets
    at = 1
    for s, label in enumerate(spec.labels):
        for k, n in enumerate(spec.clients):
            for r in range(spec.repeat):
                m = outage.open_run(s, k, r)
                block = rows[at:at + buckets]
                at += buckets
                assert {tuple(row[:4]) for row in block} == {(spec.title, label, str(n), str(r))}
                assert [float(row[4]) for row in block] == [i * spec.bucket_width for i in range(buckets)]
                for j, name in enumerate(SERIES_NAMES):
                    assert [int(row[5 + j]) for row in block] == m.series[name].tolist()


def test_latency_csv_one_row_per_strategy_and_clients(outage: SweepResult) -> None:
    spec = outage.spec
    rows = _rows(latency_csv_text(outage))
    assert tuple(rows[0]) == LATENCY_HEADER
    assert LATENCY_HEADER == ("simulation", "strategy", "clients", "p50", "p75", "p90", "p99", "max",
                              "mean", "requests", "successes", "timeouts", "gave_up", "unfinished",
                              "goodput", "recovered_runs", "runs", "recovery_time_median",
                              "recovery_note")
    body = rows[1:]
    assert [(row[1], row[2]) for row in body] == [(label, str(n)) for label in spec.labels
                                                   for n in spec.clients]
    for row in body:
        s, k = spec.labels.index(row[1]), spec.clients.index(int(row[2]))
        pct = outage.latency(s, k)
        assert row[3:9] == [format_float(pct[p]) for p in ("p50", "p75", "p90", "p99", "max", "mean")]
        # mean: of the successes' latencies, pooled over the repetitions
        pooled = np.concatenate([outage.open_run(s, k, r).latencies for r in range(spec.repeat)])
        assert float(row[8]) == pytest.approx(float(pooled.mean()), rel=1e-11)
        assert row[9:15] == [format_float(outage.open_mean(name, s, k))
                             for name in ("requests", "successes", "timeouts", "gave_up",
                                          "unfinished", "goodput")]


def test_a_run_that_never_recovers_reads_never(outage: SweepResult) -> None:
    """The fixture's finding: at 300 clients constant retries stay collapsed, backoff recovers."""
    by_key = {(row[1], row[2]): row[-4:] for row in _rows(latency_csv_text(outage))[1:]}
    k = outage.spec.clients.index(300)
    assert outage.recovery(0, k).never
    assert by_key[("constant", "300")] == ["0", "2", "", ""]
    recovered = outage.recovery(1, k)
    assert recovered.all_recovered and recovered.median >= 0
    assert by_key[("expo", "300")] == ["2", "2", format_float(recovered.median), ""]


def test_runs_too_sparse_to_judge_say_why(outage: SweepResult) -> None:
    """At 30 clients the fixture's baseline has some 2.5 successes a second, under the 3.53 a
    3 s window's test needs (``WINDOW_SUCCESSES``, sim.analysis.recovery: a window without a
    success would pass), so nothing is judged and the note says why, with the rate it needs."""
    by_key = {(row[1], row[2]): row[-4:] for row in _rows(latency_csv_text(outage))[1:]}
    needed = window_rate_needed(RECOVERY_WINDOW, outage.spec.bucket_width)
    for label in outage.spec.labels:
        assert by_key[(label, "30")] == ["", "", "", too_few_note(needed, outage.spec.time_unit)]
        assert by_key[(label, "30")][3].endswith("(needs ≥ 3.53/s)")


def _hand_made(recoveries: list[float | None], latencies: list[np.ndarray], outages: bool = True,
               notes: list[str] | None = None) -> SweepResult:
    table = {"title": "hand", "clients": [5], "repeat": len(recoveries), "network_mu": 1.0,
             "network_sigma": 0.0, "work_to_duration": 0.0, "control": "LatencyServer",
             "base_latency": 10.0, "concurrency_limit": 2, "factor": 1.1, "k": 1.0,
             "workload": "poisson", "think_time": 50.0, "horizon": 1000.0,
             "strategies": [{"type": "Constant", "constant": 1.0}]}
    if outages:
        table["outages"] = [{"start": 200.0, "duration": 100.0}]
    result = SweepResult.empty(_spec(table))
    for r, (recovery, lat) in enumerate(zip(recoveries, latencies)):
        result.open_runs[(0, 0, r)] = OpenRunMetrics(
            10 + r, 1000.0, 1000.0, r, 50, offered=10, successes=lat.size, timeouts=1, horizon=1000.0,
            latencies=lat, latency_clients=np.zeros(lat.size, np.int64),
            attempts_per_client=np.full(5, 2, np.int64), recovery_time=recovery,
            recovery_note=notes[r] if notes else "")
    return result


def test_recovery_cells_count_runs_and_give_the_median_of_those_that_recovered() -> None:
    """One repetition that never recovered is no veto: 2 of 3 recovered, their median time."""
    three = [np.array([1.0, 3.0]), np.array([2.0]), np.array([4.0])]
    assert _rows(latency_csv_text(_hand_made([100.0, 300.0, 200.0], three)))[1][-4:] == ["3", "3", "200.0", ""]
    assert _rows(latency_csv_text(_hand_made([100.0, math.nan, 300.0], three)))[1][-4:] == ["2", "3", "200.0", ""]
    assert _rows(latency_csv_text(_hand_made([math.nan] * 3, three)))[1][-4:] == ["0", "3", "", ""]
    # Nothing judged (no outage, or no baseline): empty.
    row = _rows(latency_csv_text(_hand_made([None, None], three[:2], outages=False)))[1]
    assert row[-4:] == ["", "", "", ""]
    # Too noisy to judge: the runs judged, and the note says why and for how many.
    noisy = _hand_made([100.0, None, None], three, notes=["", TOO_NOISY, TOO_NOISY])
    assert _rows(latency_csv_text(noisy))[1][-4:] == ["1", "1", "100.0", f"{TOO_NOISY} (2 of 3 runs)"]
    noisy = _hand_made([None, None], three[:2], notes=[TOO_NOISY, TOO_NOISY])
    assert _rows(latency_csv_text(noisy))[1][-4:] == ["", "", "", TOO_NOISY]
    # Means over repetitions; percentiles pooled over them: 1, 2, 3 -> p50 2.
    assert row[3] == "2.0" and row[7] == "3.0" and row[8] == "2.0"  # mean of 1, 2, 3
    assert row[9:13] == ["10.5", "1.5", "1.0", "0.5"]


def test_no_successful_request_leaves_latency_cells_empty() -> None:
    row = _rows(latency_csv_text(_hand_made([math.nan], [np.zeros(0)])))[1]
    assert row[3:8] == ["", "", "", "", ""]
    assert row[-4:] == ["0", "1", "", ""]


def test_per_client_latency_is_the_mean_and_nan_without_success() -> None:
    m = OpenRunMetrics(6, 10.0, 10.0, 0, 12, latencies=np.array([2.0, 4.0, 5.0]),
                       latency_clients=np.array([0, 0, 2]), attempts_per_client=np.array([3, 2, 1]))
    got = per_client_latency(m)
    assert got[0] == 3.0 and math.isnan(got[1]) and got[2] == 5.0


# The spike's PNGs in the dark theme: a second case of the same drawing, under -m slow.
@pytest.mark.parametrize(("which", "theme"), [("outage", "backoff-light"),
                                              pytest.param("spike", "backoff-dark", marks=pytest.mark.slow)])
def test_pngs_open(which: str, theme: str, request, tmp_path: Path) -> None:
    from matplotlib.image import imread

    result = request.getfixturevalue(which)
    palette = load_palette(theme)
    for path in (write_timeseries_png(result, tmp_path / "t_timeseries.png", palette),
                 write_latency_png(result, tmp_path / "t_latency.png", palette)):
        assert path.read_bytes()[:8] == PNG_MAGIC
        image = imread(path)
        assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 500
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t_latency.png", "t_timeseries.png"]


def test_export_writes_ten_files_for_open_simulations_and_six_otherwise(spike: SweepResult,
                                                                          tmp_path: Path) -> None:
    written = export_simulation(spike, tmp_path / "open")
    assert written == list(spec_output_paths(spike.spec, tmp_path / "open").values())
    assert [p.name for p in written] == [f"Tiny_spike{kind}" for kind in (
        "_metrics.png", "_scatter.png", "_metrics.csv", "_runs.csv", "_events.csv", "_provenance.json",
        "_timeseries.png", "_latency.png", "_timeseries.csv", "_latency.csv")]
    assert sorted(p.name for p in (tmp_path / "open").iterdir()) == sorted(p.name for p in written)
    # No outage: the recovery columns are empty.
    assert {tuple(row[-3:]) for row in _rows((tmp_path / "open" / "Tiny_spike_latency.csv").read_text())[1:]} == {("", "", "")}

    closed = run_sweep(make_spec(clients=[2, 3], repeat=1), workers=1)
    assert len(export_simulation(closed, tmp_path / "closed")) == 6
    assert not any(p.name.endswith(("_timeseries.csv", "_latency.png")) for p in (tmp_path / "closed").iterdir())


def test_same_seed_gives_byte_identical_csvs_and_another_seed_does_not(spike: SweepResult) -> None:
    again = run_sweep(_spec(SPIKE), workers=1)
    assert timeseries_csv_text(again) == timeseries_csv_text(spike)
    assert latency_csv_text(again) == latency_csv_text(spike)
    other = run_sweep(_spec(SPIKE, seed=5), workers=1)
    assert timeseries_csv_text(other) != timeseries_csv_text(spike)
