"""What latency percentiles cover: the latency table and ``_latency.csv`` say how many clients
were left unserved and the goodput, and a strategy that leaves most clients unserved does not
get the ★ for speed (its percentiles describe only the few it served)."""

from __future__ import annotations

import csv
import io

import numpy as np
from rich.console import Console

from sim.analysis.open_metrics import OpenRunMetrics
from sim.runs.sweep import SweepResult
from sim.settings.config import parse_config
from sim.export.overload_csv import latency_csv_text
from sim.report.latency import BEST, best_rows, latency_table, strategy_values
from tui.view.latency_rows import latency_rows

CLIENTS, HORIZON = 10, 1000.0


def _result() -> SweepResult:
    """Two strategies over 2 repetitions at 10 clients: "few" serves 2 clients fast (latency 5)
    and leaves 8 waiting; "all" serves all 10, slower (latency 50), with more requests."""
    spec = parse_config({"simulation": [{
        "title": "served", "clients": [CLIENTS], "repeat": 2, "network_mu": 1.0,
        "network_sigma": 0.0, "work_to_duration": 0.0, "control": "QueueServer", "concurrency": 1,
        "service_time": 5.0, "queue_size": 0, "reject_delay": 1.0, "overload_threshold": 5,
        "workload": "spike", "spike_fraction": 0.2, "spike_width": 10.0, "arrival_window": 100.0,
        "horizon": HORIZON, "time_unit": "tick",
        "strategies": [{"type": "NoBackoff", "name": "few"},
                       {"type": "Expo", "base": 1.0, "cap": 30.0, "name": "all"}]}]}).simulations[0]
    result = SweepResult.empty(spec)
    for r in range(spec.repeat):
        for s, (served, latency, requests) in enumerate([(2, 5.0, 300), (10, 50.0, 400)]):
            result.open_runs[(s, 0, r)] = OpenRunMetrics(
                requests, HORIZON, HORIZON, 0, 1000, offered=CLIENTS, successes=served,
                unfinished=CLIENTS - served, horizon=HORIZON, latencies=np.full(served, latency),
                latency_clients=np.arange(served), attempts_per_client=np.ones(CLIENTS, np.int64))
    return result


def test_few_served_gets_no_star_for_speed_or_requests() -> None:
    section = strategy_values(_result(), 0)
    assert section[0]["p50"] < section[1]["p50"]  # "few" looks fast over the 2 it served
    assert section[0]["requests"] < section[1]["requests"]
    assert best_rows(section) == {"requests": 1, "p50": 1}


def _row(requests: float, successes: float, p50: float, recovery=None) -> dict:
    return {"requests": requests, "successes": successes, "p50": p50, "recovery": recovery}


def test_the_star_for_requests_goes_to_the_fewest_of_those_that_may_have_one() -> None:
    # All served enough (95 of 100): the fewest requests has it, whether it retried or not.
    section = [_row(100.0, 95.0, 10.0), _row(130.0, 100.0, 12.0), _row(120.0, 99.0, 11.0)]
    assert best_rows(section) == {"requests": 0, "p50": 0}


def test_no_star_for_a_strategy_that_did_not_recover_every_time() -> None:
    from sim.analysis.recovery import RecoverySummary

    every = RecoverySummary.of([100.0, 120.0], 0)
    once = RecoverySummary.of([100.0, float("nan")], 0)
    never = RecoverySummary.of([float("nan"), float("nan")], 0)
    assert every.all_recovered and not once.all_recovered and not never.all_recovered
    section = [_row(90.0, 100.0, 5.0, once), _row(120.0, 100.0, 12.0, every), _row(80.0, 99.0, 4.0, never)]
    assert best_rows(section) == {"requests": 1, "p50": 1}
    # When none recovered every time, nobody has a star (the caption says so).
    nobody = [_row(90.0, 100.0, 5.0, once), _row(80.0, 99.0, 4.0, never)]
    assert best_rows(nobody) == {"requests": None, "p50": None}


def test_latency_csv_has_unfinished_and_goodput_per_time_unit() -> None:
    rows = list(csv.DictReader(io.StringIO(latency_csv_text(_result()))))
    assert [r["strategy"] for r in rows] == ["few", "all"]
    assert [r["unfinished"] for r in rows] == ["8.0", "0.0"]
    # goodput: successes per time unit over the horizon, no hidden ×1000: 2/1000 and 10/1000
    assert [float(r["goodput"]) for r in rows] == [2 / HORIZON, 10 / HORIZON]


def test_latency_tables_show_unfinished_goodput_per_unit_and_the_star() -> None:
    console = Console(record=True, width=200, color_system=None, file=io.StringIO())
    console.print(latency_table(_result()))
    text = console.export_text()
    assert "unfinished" in text and "goodput/tick" in text and "times in tick" in text
    line = {label: next(l for l in text.splitlines() if f" {label} " in l) for label in ("few", "all")}
    assert BEST not in line["few"] and line["all"].count(BEST) == 2
    rows, _ = latency_rows(_result(), 0)
    assert rows[0].best == frozenset() and rows[1].best == {"requests", "p50"}
    assert rows[0].cells["unfinished"] == "8" and rows[1].cells["goodput"] == "0.01"
