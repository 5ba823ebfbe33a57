"""``sim.replay``: an events file's runs give the rows the run that wrote it gives, p50, p99 and
recovery time included, under open traffic (several calls of a client in flight) and past the
latency sample (the one sampling rule, live and in replay)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sim
from sim.analysis.calls import DERIVED_NOTE
from sim.core import latency_sample

FIXTURES = Path(__file__).parent / "fixtures"
# The events file keeps times to 12 significant digits (``format_float``): a latency or a
# recovery time, a difference of two such times of up to ~3000 ms, is off by at most
# 2 * 0.5e-12 * 3000 = 3e-9 ms, and each CSV figure is itself rounded to 12 digits.
REL = 1e-9
ABS = 1e-8
COUNTS = ("requests", "successes", "timeouts", "gave_up", "unfinished", "goodput", "recovered_runs", "runs")
FIGURES = ("p50", "p75", "p90", "p99", "max", "mean", "recovery_time_median")
FLOWS = ("bucket_start", "offered", "retries", "accepted", "rejected", "timed_out", "goodput", "server_drops")


def _one_run_config(tmp_path: Path) -> Path:
    """The tiny pool (open arrivals, an incident) with one repetition: each CSV row is one run's."""
    text = (FIXTURES / "tiny_pool.toml").read_text().replace("repeat = 2", "repeat = 1")
    path = tmp_path / "tiny_pool.toml"
    path.write_text(text)
    return path


def _same(live: dict, replayed: dict) -> None:
    assert replayed["strategy"] == live["strategy"] and replayed["clients"] == live["clients"]
    for name in COUNTS:
        assert replayed[name] == live[name], name
    for name in FIGURES:
        if live[name] is None:
            assert replayed[name] is None, name
        else:
            assert replayed[name] == pytest.approx(live[name], rel=REL, abs=ABS), name


def _events_file(results: sim.Results, tmp_path: Path) -> Path:
    """The run's events file, as ``results.export`` writes it (without the slower PNGs)."""
    path = tmp_path / "Tiny_pool_events.csv"
    path.write_text(results.csv_text("events"), encoding="utf-8")
    return path


def _check(tmp_path: Path, export: bool = False) -> sim.ReplayResults:
    """Run the config, write its events file (``export``: every file, as ``backoff-sim run``),
    replay it and hold the rows equal."""
    results = sim.run(_one_run_config(tmp_path), workers=1)
    if export:
        results.export(tmp_path / "out")
        replayed = sim.replay(tmp_path / "out" / "Tiny_pool_events.csv")
    else:
        replayed = sim.replay(_events_file(results, tmp_path))
    live = results.rows("latency")
    assert len(replayed.rows("latency")) == len(live) == 2
    for a, b in zip(live, replayed.rows("latency")):
        _same(a, b)
    live_series, replayed_series = results.rows("timeseries"), replayed.rows("timeseries")
    assert len(live_series) == len(replayed_series) > 0
    for a, b in zip(live_series, replayed_series):
        assert {k: b[k] for k in FLOWS} == {k: a[k] for k in FLOWS}
    return replayed


def test_a_replay_gives_the_runs_rows(tmp_path: Path) -> None:
    replayed = _check(tmp_path, export=True)
    assert all(note == "" for note in replayed.notes.values())  # the file carries its calls


def test_an_older_file_without_calls_says_its_latencies_are_paired_by_client(tmp_path: Path) -> None:
    # Open traffic: clients have several calls in flight, where the latest call start of the
    # client is not the call a success ends; a file without the call column says so.
    results = sim.run(_one_run_config(tmp_path), workers=1)
    path = _events_file(results, tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    old = [lines[0].replace(",call\n", "\n")] + [line.rsplit(",", 1)[0] + "\n" for line in lines[1:-1]]
    path.write_text("".join(old + lines[-1:]))
    replayed = sim.replay(path)
    assert all(note == DERIVED_NOTE for note in replayed.notes.values())
    # The app's replay says so too, in the comparison's titles (``RunSummary.latency_note``).
    from sim.export.csv_files import read_events_csv
    from tui.view.rundata import RunData

    spec = sim.load(_one_run_config(tmp_path)).simulations[0]
    for key, history in read_events_csv(path).items():
        assert RunData.from_history(history, key.clients).summary(spec.caps).latency_note == DERIVED_NOTE
    live = {row["strategy"]: row["p50"] for row in results.rows("latency")}
    # Paired by client, some latency is shorter than its call's (a later start): the p50 differs.
    assert any(row["p50"] != pytest.approx(live[row["strategy"]], rel=REL)
               for row in replayed.rows("latency"))


def test_past_the_latency_sample_the_replay_keeps_what_the_run_kept(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # A sample of 64 latencies, far fewer than the runs' successes: the run keeps an even share
    # as it goes, the replay the same share of every success (``latency_sample.sampled``).
    monkeypatch.setattr(latency_sample, "LATENCY_SAMPLE", 64)
    replayed = _check(tmp_path)
    for m in replayed.metrics.values():
        assert m.successes > 4 * 64 and 32 <= m.latencies.size <= 64
