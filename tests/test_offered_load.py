"""The offered load (sim.analysis.load): calls per second and the server's utilisation, as
``run`` prints them and the app's latency caption shows them."""

from __future__ import annotations

import math

import numpy as np
from support import make_spec, sim_process, toml_text, write_config

from sim.analysis.load import offered_load
from sim.report.load import load_lines
from sim.settings.config import load_config
from sim.runs.engine import run_metrics
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
POOL = dict(clients=[16], repeat=1, network_mu=1.0, network_sigma=0.2, work_to_duration=0.0,
            workers=8, service_time=10.0, workload="open", think_time=25.0, horizon=20000.0,
            timeout=10000.0, strategies=[{"type": "Constant", "constant": 0.0, "max_attempts": 1}])


def test_open_traffic_against_a_pool_is_calls_over_workers_per_mean_service() -> None:
    load = offered_load(make_spec("PoolServer", **POOL))
    assert math.isclose(load.calls, 16 / 25.0)          # calls per ms
    assert math.isclose(load.capacity, 8 / 10.0)        # workers / service time
    assert math.isclose(load.utilisation, (16 / 25.0) / (8 / 10.0))
    assert load.peak is None
    assert "640 calls/s" in load.text() and "utilisation 80%" in load.text()


def test_a_lognormal_service_time_is_its_median_so_the_mean_is_larger() -> None:
    spec = make_spec("PoolServer", **{**POOL, "service_distribution": "lognormal",
                                      "service_p99": 40.0})
    sigma = math.log(40.0 / 10.0) / 2.3263478740408408  # p99 = median · exp(z99 σ)
    mean = 10.0 * math.exp(sigma ** 2 / 2)
    assert math.isclose(offered_load(spec).capacity, 8 / mean, rel_tol=1e-6)


def test_a_half_capacity_incident_doubles_the_utilisation_in_it() -> None:
    spec = make_spec("PoolServer", **POOL, incidents=[{"start": 100.0, "duration": 50.0,
                                                       "capacity": 0.5}])
    load = offered_load(spec)
    assert math.isclose(load.peak, 2 * load.utilisation)
    assert "(160% in the incident)" in load.text()


def test_the_pools_busy_workers_average_the_utilisation_times_workers() -> None:
    # Little's law at the workers: busy = arrival rate × mean service = utilisation × workers
    # (no timeouts, no retries, nothing dropped below full use: the queue absorbs bursts).
    spec = make_spec("PoolServer", **POOL)
    m = run_metrics(spec, spec.strategies[0].chain, 16, 0)
    busy = np.asarray(m.series["in_service"], dtype=float)
    expected = offered_load(spec).utilisation * 8
    # The busy count of M/D/8 at 80% has a standard deviation about sqrt(6.4) = 2.5; samples
    # 100 ms apart (ten service times) are close to independent, so the mean of 200 has a
    # standard error near 2.5 / sqrt(200) = 0.18: four of them, 0.72, bound the difference.
    assert abs(busy.mean() - expected) < 0.72


def test_closed_loop_clients_start_at_most_clients_over_think_time() -> None:
    spec = load_config(EXAMPLES / "retry_storm.toml").simulations[0]
    load = offered_load(spec)
    assert load.at_most and "at most" in load.text()


def test_tiers_measure_the_load_against_the_tier_of_least_capacity() -> None:
    every_layer = load_config(EXAMPLES / "three_tiers.toml").simulations[0]
    lines = load_lines(every_layer)
    # The example's comment: 64, 96 and 128 clients are 40%, 60% and 80% of the bottom's capacity.
    assert [f"utilisation {p}%" in line for line, p in zip(lines, (40, 60, 80))] == [True] * 3
    assert all("(tier 3)" in line for line in lines)


def test_a_burst_has_no_rate() -> None:
    load = offered_load(make_spec("LockingServer"))
    assert load.calls is None and load.utilisation is None and load.short_text() == ""


def test_run_prints_the_offered_load_of_each_simulation(tmp_path: Path) -> None:
    table = {"title": "Pool", "control": "PoolServer", **POOL, "horizon": 500.0}
    path = write_config(tmp_path / "c.toml", toml_text(table))
    done = sim_process("run", str(path), "--out", str(tmp_path / "out"), "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert "Pool · offered load at 16 clients: 640 calls/s, server capacity 800/s, utilisation 80%" in done.stdout
    # Written to a file or pipe, no line is padded with trailing spaces (issue 39, item 12).
    assert not [line for line in done.stdout.splitlines() if line.endswith(" ")]
