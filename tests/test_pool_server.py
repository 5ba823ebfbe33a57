"""PoolServer and open arrivals: config mistakes (one line naming the key, or the service file
and its line), each defence's behaviour in the event log, and how the server fits the rest
(outages, policies, determinism, the CLI). The queueing-theory checks are in
``test_queueing_theory.py``."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from queueing import pool_spec, runs
from support import toml_text, write_config

from sim.settings.config import load_config
from sim.core import events as ev
from sim.vocabulary.errors import ConfigError
from sim.export.csv_files import read_events_csv
from sim.runs.engine import record_run, run_metrics

POOL: dict[str, Any] = {
    "title": "Busy", "clients": [20], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.2,
    "control": "PoolServer", "workers": 2, "service_time": 10.0, "workload": "open",
    "think_time": 200.0, "horizon": 5000.0, "timeout": 100.0,
    "strategies": [{"type": "Constant", "constant": 5.0, "max_attempts": 3}],
}


def load(tmp_path: Path, **changes: Any):
    table = {k: v for k, v in {**POOL, **changes}.items() if v is not None}
    return load_config(write_config(tmp_path / "pool.toml", toml_text(table)))


def error(tmp_path: Path, key: str, contains: str = "", **changes: Any) -> str:
    """One line naming the file, simulation 'Busy' and ``key``."""
    with pytest.raises(ConfigError) as info:
        load(tmp_path, **changes)
    message = str(info.value)
    assert "\n" not in message, message
    assert str(tmp_path / "pool.toml") in message and "simulation 'Busy'" in message
    assert f"key {key!r}" in message and contains in message, message
    return message


def codes_of(run) -> Counter:
    packed = np.asarray(run.history.packed)
    return Counter(ev.EVENT_NAMES[c] for c in (packed & ev.CODE_MASK))


def drop_reasons(run) -> Counter:
    packed = np.asarray(run.history.packed)
    drops = packed[(packed & ev.CODE_MASK) == ev.SERVER_DROPS]
    return Counter(ev.DROP_REASONS[d] for d in (drops >> ev.DETAIL_SHIFT) - 1)


# --- config ----------------------------------------------------------------------------------

def test_the_base_loads(tmp_path: Path) -> None:
    spec = load(tmp_path).simulations[0]
    assert spec.control.type_name == "PoolServer" and spec.workload.NAME == "open"


@pytest.mark.parametrize("key, value, contains", [
    ("workers", 0, ">= 1"),
    ("service_time", 0.0, "> 0"),
    ("service_distribution", "gamma", "'constant', 'exponential', 'lognormal', 'empirical'"),
    ("discipline", "random", "'fifo', 'lifo', 'adaptive_lifo'"),
    ("cancel", "always", "'none', 'dequeue', 'immediate'"),
    ("queue_size", -1, ">= 0"),
    ("queue_timeout", 0.0, "> 0"),
    ("codel_interval", -5.0, "> 0"),
    ("service_p99", 50.0, 'service_distribution = "lognormal"'),
    ("service_file", "t.csv", 'service_distribution = "empirical"'),
    ("codel_target", 5.0, "codel_interval"),
])
def test_a_bad_key_is_one_line(tmp_path: Path, key: str, value: Any, contains: str) -> None:
    reported = "codel_interval" if key == "codel_target" else key
    error(tmp_path, reported, contains, **{key: value})


def test_service_time_is_required_except_for_an_empirical_file(tmp_path: Path) -> None:
    error(tmp_path, "service_time", "is missing", service_time=None)
    (tmp_path / "t.csv").write_text("1.0\n", "utf-8")
    error(tmp_path, "service_time", "service_file gives the times", service_distribution="empirical",
          service_file="t.csv")


def test_lognormal_needs_a_p99_above_its_median(tmp_path: Path) -> None:
    error(tmp_path, "service_p99", "is missing", service_distribution="lognormal")
    error(tmp_path, "service_p99", "must be > service_time", service_distribution="lognormal",
          service_p99=10.0)


def test_adaptive_lifo_needs_its_interval(tmp_path: Path) -> None:
    error(tmp_path, "codel_interval", "adaptive_lifo", discipline="adaptive_lifo")
    assert load(tmp_path, discipline="adaptive_lifo", codel_interval=50.0).simulations


def test_a_pool_key_on_another_server_and_open_with_a_contention_control(tmp_path: Path) -> None:
    error(tmp_path, "workers", "not a simulation key", control="QueueServer", concurrency=2)
    error(tmp_path, "workload", "only servers that reply keep", control="LockingServer", write_mu=1.0, write_sigma=0.1,
          service_time=None, workers=None, horizon=None, timeout=None)


def test_think_time_without_a_repeating_workload_names_poisson(tmp_path: Path) -> None:
    """Two workloads take think_time: the message names the first, as before open existed."""
    error(tmp_path, "think_time", "workload 'poisson'", workload="burst")


@pytest.mark.parametrize("content, contains", [
    (None, "no such file"),
    ("", "has no service times"),
    ("# only a comment\n\n", "has no service times"),
    ("1.0\n2.0\nabc\n", "line 3: 'abc' is not a number"),
    ("1.0\n-2.0\n", "line 2: -2 is negative"),
    ("1.0\nnan\n", "line 2: 'nan' is not a finite number"),
    ("id,latency\n1,2.0\n", "line 1: a CSV header without a 'service_time' column"),
    ("1.0,2.0\n", "line 1: 2 cells"),
    ("id,service_time\n1,2.0\n2,x\n", "line 3: 'x' is not a number"),
])
def test_a_bad_service_file_is_one_line_naming_the_file_and_line(tmp_path: Path, content: str | None,
                                                                  contains: str) -> None:
    if content is not None:
        (tmp_path / "times.csv").write_text(content, "utf-8")
    message = error(tmp_path, "service_file", contains, service_distribution="empirical",
                    service_file="times.csv", service_time=None)
    assert str(tmp_path / "times.csv") in message


def test_a_huge_service_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sim.models.service_times as st
    monkeypatch.setattr(st, "MAX_SERVICE_FILE_BYTES", 1000)
    (tmp_path / "times.csv").write_text("1.5\n" * 500, "utf-8")
    error(tmp_path, "service_file", "larger than", service_distribution="empirical",
          service_file="times.csv", service_time=None)


def test_an_empirical_file_is_read_relative_to_the_config_and_resampled(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "times.csv").write_text("when,service_time\n0,4.0\n1,8.0\n2,16.0\n", "utf-8")
    spec = load(tmp_path, service_distribution="empirical", service_file="data/times.csv",
                workers=50, timeout=None, network_sigma=0.0, service_time=None).simulations[0]
    assert spec.control.samples.tolist() == [4.0, 8.0, 16.0]
    assert spec.control.mean_service == pytest.approx(28 / 3)
    m = run_metrics(spec, spec.strategies[0].chain, 20, 0)
    # No queueing (50 workers), so latency = 2 network legs of 1 + one of the three times.
    services = np.round(m.latencies - 2.0, 9)
    assert set(np.unique(services)) == {4.0, 8.0, 16.0}
    assert all(abs((services == v).mean() - 1 / 3) < 0.05 for v in (4.0, 8.0, 16.0))


# --- behaviour -------------------------------------------------------------------------------

def test_open_clients_keep_several_calls_in_flight(tmp_path: Path) -> None:
    """10 clients with a mean gap of 100 against a server that takes 1000: each client has ~10
    calls in flight at once, and arrivals do not wait for replies (rate clients/think_time)."""
    spec = load(tmp_path, clients=[10], think_time=100.0, service_time=1000.0, workers=200,
                horizon=20_000.0, timeout=None, network_sigma=0.0).simulations[0]
    m = run_metrics(spec, spec.strategies[0].chain, 10, 0)
    assert m.series["in_service"][-20:].mean() > 80  # ≈ λ·S = 0.1 · 1000 = 100
    assert abs(m.offered / (10 / 100.0 * 20_000) - 1) < 0.1  # 2,000 expected: Poisson s.d. 2.2%
    assert m.successes == pytest.approx(m.offered - m.unfinished, abs=0)


def test_a_queue_timeout_drops_at_dequeue_and_the_client_hears_an_error(tmp_path: Path) -> None:
    spec = load(tmp_path, clients=[40], think_time=100.0, queue_timeout=20.0, timeout=1000.0,
                strategies=[{"type": "Constant", "constant": 5.0, "max_attempts": 1}]).simulations[0]
    run = record_run(spec, spec.labels[0], 40, 0)
    reasons = drop_reasons(run)
    assert set(reasons) == {"queue_timeout"} and reasons["queue_timeout"] > 50
    m = run.metrics()
    assert m.series["server_drops"].sum() == reasons["queue_timeout"]
    assert m.rejections >= reasons["queue_timeout"] - 5  # each drop replied (a few in flight at the end)
    assert m.latencies.max() < 20.0 + 10.0 + 5.0  # nobody served after waiting longer


def test_cancel_dequeue_drops_requests_whose_client_gave_up(tmp_path: Path) -> None:
    base = dict(clients=[40], think_time=100.0, timeout=30.0,
                strategies=[{"type": "Constant", "constant": 5.0, "max_attempts": 1}])
    wasted = record_run(load(tmp_path, **base).simulations[0], "Constant", 40, 0)
    spec = load(tmp_path, cancel="dequeue", **base).simulations[0]
    saved = record_run(spec, "Constant", 40, 0)
    assert drop_reasons(wasted) == Counter()
    assert set(drop_reasons(saved)) == {"cancelled"}
    # The server no longer spends its workers on requests nobody waits for: more successes.
    assert saved.metrics().successes > 1.2 * wasted.metrics().successes


def test_cancel_immediate_frees_the_queue_and_aborts_service(tmp_path: Path) -> None:
    """A service of 50 against a timeout of 30, no network delay: every request in service when
    its client times out is aborted then, so no work is done for a client that left (with a
    network delay, a reply on its way when the client times out is still wasted)."""
    base = dict(clients=[40], think_time=100.0, timeout=30.0, service_time=50.0, network_mu=0.0,
                network_sigma=0.0,
                service_distribution="exponential",
                strategies=[{"type": "Constant", "constant": 5.0, "max_attempts": 1}])
    run = record_run(load(tmp_path, cancel="immediate", **base).simulations[0], "Constant", 40, 0)
    m = run.metrics()
    assert drop_reasons(run)["cancelled"] > 100
    wasted = codes_of(run)["server_completes"] - m.successes
    never = record_run(load(tmp_path, **base).simulations[0], "Constant", 40, 0)
    wasted_without = codes_of(never)["server_completes"] - never.metrics().successes
    assert wasted_without > 150 and wasted == 0


def test_codel_drops_only_under_a_standing_queue(tmp_path: Path) -> None:
    light = load(tmp_path, think_time=2000.0, codel_target=5.0, codel_interval=100.0, timeout=None)
    heavy = load(tmp_path, think_time=80.0, codel_target=5.0, codel_interval=100.0, timeout=None)
    assert drop_reasons(record_run(light.simulations[0], "Constant", 20, 0)) == Counter()
    dropped = drop_reasons(record_run(heavy.simulations[0], "Constant", 20, 0))
    assert set(dropped) == {"codel"} and dropped["codel"] > 20


def test_adaptive_lifo_is_fifo_while_the_queue_empties_and_lifo_under_a_standing_queue() -> None:
    """At ρ = 0.5 the queue empties every few services: adaptive LIFO serves exactly as FIFO
    (same seeds, same latencies) when its interval is long. At ρ = 1.3 the queue never empties
    after the first interval: from then on it serves as LIFO (98.8% of latencies identical to
    LIFO's in this run; FIFO's median is 2,150, LIFO's 18)."""
    def latencies(rho: float, discipline: str, interval: float) -> np.ndarray:
        spec = pool_spec(rho / 10.0, 20_000.0, workers=1, service_time=10.0,
                         service_distribution="exponential", discipline=discipline,
                         **({"codel_interval": interval} if interval else {}))
        return runs(spec, 1)[0].latencies
    assert np.array_equal(latencies(0.5, "adaptive_lifo", 1e9), latencies(0.5, "fifo", 0))
    adaptive, lifo = latencies(1.3, "adaptive_lifo", 50.0), latencies(1.3, "lifo", 0)
    assert adaptive.size == lifo.size and (adaptive == lifo).mean() > 0.95
    assert np.median(adaptive) < 0.02 * np.median(latencies(1.3, "fifo", 0))
    assert not np.array_equal(latencies(0.5, "adaptive_lifo", 1e-3), latencies(0.5, "fifo", 0))


@pytest.mark.parametrize("discipline", ["adaptive_lifo", "lifo"])
def test_codel_under_lifo_is_refused_in_one_line(tmp_path: Path, discipline: str) -> None:
    """CoDel judges the wait of the request it dequeues; LIFO dequeues the newest, so it would
    never act (issue 34: 0 drops under adaptive LIFO)."""
    message = error(tmp_path, "codel_target", "CoDel never acts", discipline=discipline,
                    codel_target=5.0, codel_interval=100.0)
    assert "controlled_delay" in message


def test_controlled_delay_refuses_a_second_queue_limit_and_a_bad_table(tmp_path: Path) -> None:
    delay = {"short": 5.0, "long": 100.0, "interval": 100.0}
    error(tmp_path, "queue_timeout", "both limit a request's wait", controlled_delay=delay, queue_timeout=50.0)
    error(tmp_path, "controlled_delay.short", "must be at most long", controlled_delay={**delay, "short": 200.0})
    error(tmp_path, "controlled_delay.interval", "must be a time > 0", controlled_delay={**delay, "interval": 0.0})
    error(tmp_path, "controlled_delay.short", "is missing", controlled_delay={"long": 100.0, "interval": 100.0})


def test_controlled_delay_is_a_queue_timeout_when_one_limit_applies(tmp_path: Path) -> None:
    """With an interval no queue outlasts (or short = long) every request gets the long limit:
    the runs are a queue_timeout of that length, event for event."""
    base = dict(clients=[40], think_time=100.0, timeout=1000.0,
                strategies=[{"type": "Constant", "constant": 5.0, "max_attempts": 1}])
    timeout = record_run(load(tmp_path, queue_timeout=20.0, **base).simulations[0], "Constant", 40, 0)
    for delay in ({"short": 1.0, "long": 20.0, "interval": 1e12}, {"short": 20.0, "long": 20.0, "interval": 1.0}):
        run = record_run(load(tmp_path, controlled_delay=delay, **base).simulations[0], "Constant", 40, 0)
        assert np.array_equal(np.asarray(run.history.packed), np.asarray(timeout.history.packed)), delay
        assert np.array_equal(np.asarray(run.history.times), np.asarray(timeout.history.times)), delay


def test_controlled_delay_sheds_a_standing_queue_harder_than_its_long_limit() -> None:
    """Fail at Scale's rule at ρ = 1.3 (one worker, exponential service of 10): a request that
    joins a queue not empty for the last 100 may wait 5, else 100. The queue stands, so most
    requests get the short limit: more drops than the long limit alone (queue_timeout = 100),
    and no success waited past the long one (its latency is its wait plus a service, so the
    successes above 100 are at most those whose service alone exceeded what was left)."""
    def run(**keys):
        spec = pool_spec(1.3 / 10.0, 20_000.0, workers=1, service_time=10.0,
                         service_distribution="exponential", **keys)
        return runs(spec, 1)[0]
    shed = run(controlled_delay={"short": 5.0, "long": 100.0, "interval": 100.0})
    long_only = run(queue_timeout=100.0)
    assert shed.series["server_drops"].sum() > long_only.series["server_drops"].sum() > 0
    assert np.percentile(shed.latencies, 99) < np.percentile(long_only.latencies, 99) + 10.0


def test_a_bounded_queue_rejects_beyond_it_and_zero_means_no_waiting_room(tmp_path: Path) -> None:
    spec = load(tmp_path, think_time=50.0, queue_size=0, timeout=None).simulations[0]
    run = record_run(spec, "Constant", 20, 0)
    codes = codes_of(run)
    assert codes["server_queues"] == 0 and codes["server_rejects"] > 100
    assert max(run.metrics().series["in_service"]) <= 2


def test_an_outage_pauses_service_and_the_pool_resumes(tmp_path: Path) -> None:
    spec = load(tmp_path, outages=[{"start": 2000.0, "duration": 500.0}], think_time=100.0,
                timeout=None, horizon=6000.0).simulations[0]
    m = run_metrics(spec, spec.strategies[0].chain, 20, 0)
    width = spec.bucket_width
    during = m.series["goodput"][int(2050 / width):int(2450 / width)]
    assert during.sum() == 0 and m.series["goodput"][int(3000 / width):].sum() > 0
    assert m.recovery_time is not None


def test_open_arrivals_with_policies_and_presets(tmp_path: Path) -> None:
    """Policies hold per client across its overlapping calls; each call keeps its own attempt
    count: with max_attempts = 3 no call sends a fourth attempt."""
    spec = load(tmp_path, think_time=40.0, timeout=30.0, strategies=[
        {"type": "Expo", "base": 5.0, "cap": 100.0, "max_attempts": 3,
         "policies": [{"type": "TokenBucket", "capacity": 10.0, "refill": 0.5, "cost": 1.0}]},
        {"preset": "botocore-standard"}]).simulations[0]
    for label in spec.labels:
        run = record_run(spec, label, 20, 0)
        packed = np.asarray(run.history.packed)
        writes = packed[(packed & ev.CODE_MASK) == ev.CLIENT_REQUESTS_WRITE]
        assert ((writes >> ev.DETAIL_SHIFT) - 1).max() <= 3
        m = run.metrics()
        assert m.successes > 0 and m.work >= m.offered


def test_same_seed_same_outputs_and_metrics_equal_recording(tmp_path: Path) -> None:
    spec = load(tmp_path, cancel="immediate", discipline="adaptive_lifo", codel_interval=30.0,
                controlled_delay={"short": 3.0, "long": 40.0, "interval": 30.0}, think_time=60.0,
                service_distribution="lognormal", service_p99=40.0).simulations[0]
    a = record_run(spec, spec.labels[0], 20, 0)
    b = record_run(spec, spec.labels[0], 20, 0)
    assert a.history.packed == b.history.packed and a.history.times == b.history.times
    m = run_metrics(spec, spec.strategies[0].chain, 20, 0)
    assert m.events == len(a.history) and m.successes == a.metrics().successes


def test_the_cli_writes_mean_and_server_drops(tmp_path: Path) -> None:
    path = write_config(tmp_path / "pool.toml", toml_text({**POOL, "queue_timeout": 20.0,
                                                            "think_time": 100.0}))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "sim", "run", str(path), "--out", str(out), "--quiet"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    latency = (out / "Busy_latency.csv").read_text().splitlines()
    assert latency[0].split(",")[8] == "mean" and latency[1].split(",")[8]
    series = (out / "Busy_timeseries.csv").read_text().splitlines()
    assert series[0].endswith(",goodput,server_drops")
    assert sum(int(line.rsplit(",", 1)[1]) for line in series[1:]) > 0
    events = (out / "Busy_events.csv").read_text()
    assert "server_drops,reason=queue_timeout" in events
    (history,) = read_events_csv(out / "Busy_events.csv").values()  # replay reads it back
    assert ev.pack(ev.SERVER_DROPS, ev.DROP_REASON_INDEX["queue_timeout"]) in history.packed
