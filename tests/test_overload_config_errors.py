"""Config validation of the overload keys: one test per mistake, each a single-line ConfigError
that names the file, the simulation and the key; plus the two study examples, which must load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import toml_text, write_config

from sim.commands.cli import main
from sim.settings.config import load_config
from sim.vocabulary.errors import ConfigError
from sim.models.workloads import Outage

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

STRATEGIES = [{"type": "Constant", "constant": 5.0}]
QUEUE: dict[str, Any] = {
    "title": "Busy", "clients": [10], "repeat": 1, "network_mu": 0.0, "network_sigma": 0.0,
    "work_to_duration": 1.0, "control": "QueueServer", "concurrency": 2, "service_time": 5.0,
    "queue_size": 0, "reject_delay": 1.0, "overload_threshold": 10, "workload": "spike",
    "spike_fraction": 0.2, "spike_width": 10.0, "arrival_window": 100.0, "horizon": 500.0,
    "strategies": STRATEGIES,
}
LATENCY: dict[str, Any] = {
    "title": "Busy", "clients": [10], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.2,
    "work_to_duration": 0.0, "control": "LatencyServer", "base_latency": 100.0, "concurrency_limit": 30,
    "factor": 1.05, "k": 15.0, "workload": "poisson", "think_time": 10000.0, "horizon": 120000.0,
    "timeout": 2000.0, "outages": [{"start": 30000.0, "duration": 8000.0}], "strategies": STRATEGIES,
}
LOCKING: dict[str, Any] = {
    "title": "Busy", "clients": [1, 5], "repeat": 2, "network_mu": 10.0, "network_sigma": 2.0,
    "work_to_duration": 1.0, "control": "LockingServer", "write_mu": 2.0, "write_sigma": 1.0,
    "strategies": STRATEGIES,
}


def load(tmp_path: Path, base: dict[str, Any], **changes: Any):
    """Write ``base`` with ``changes`` (a value of None drops the key) as a config and load it."""
    table = {k: v for k, v in {**base, **changes}.items() if v is not None}
    return load_config(write_config(tmp_path / "overload.toml", toml_text(table)))


def error(tmp_path: Path, base: dict[str, Any], key: str, contains: str = "", **changes: Any) -> str:
    """The config must fail with one line naming the file, simulation 'Busy' and ``key``."""
    with pytest.raises(ConfigError) as info:
        load(tmp_path, base, **changes)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message
    assert str(tmp_path / "overload.toml") in message
    assert "simulation 'Busy'" in message
    assert f"key {key!r}" in message, message
    assert contains in message, message
    assert info.value.key == key
    return message


def test_the_bases_load(tmp_path: Path) -> None:
    """The mistakes below are each one change away from a valid config."""
    for base in (QUEUE, LATENCY, LOCKING):
        assert load(tmp_path, base).simulations[0].title == "Busy"


# --- workloads -------------------------------------------------------------------------------

def test_unknown_workload_suggests_the_closest(tmp_path: Path) -> None:
    error(tmp_path, QUEUE, "workload", "did you mean 'spike'", workload="spikes")


def test_unknown_workload_without_a_close_match_lists_the_choices(tmp_path: Path) -> None:
    error(tmp_path, QUEUE, "workload", "burst, spike, poisson", workload="zzz")


def test_workload_must_be_a_string(tmp_path: Path) -> None:
    error(tmp_path, QUEUE, "workload", "unknown workload", workload=3)


def test_spike_parameter_on_a_poisson_workload(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "spike_fraction", "workload 'spike', not 'poisson'", spike_fraction=0.2)


def test_poisson_parameter_on_a_spike_workload(tmp_path: Path) -> None:
    error(tmp_path, QUEUE, "think_time", "workload 'poisson', not 'spike'", think_time=10.0)


def test_spike_parameter_without_a_workload(tmp_path: Path) -> None:
    error(tmp_path, QUEUE, "arrival_window", "not 'burst'", workload=None, spike_fraction=None,
          spike_width=None)


def test_missing_workload_parameter(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "think_time", "missing", think_time=None)


@pytest.mark.parametrize("value", [1.5, -0.1])
def test_spike_fraction_outside_zero_to_one(tmp_path: Path, value: float) -> None:
    error(tmp_path, QUEUE, "spike_fraction", "between 0 and 1", spike_fraction=value)


def test_non_positive_arrival_window(tmp_path: Path) -> None:
    error(tmp_path, QUEUE, "arrival_window", "> 0", arrival_window=0.0)


def test_non_positive_think_time(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "think_time", "> 0", think_time=-5.0)


def test_repeating_workload_with_a_contention_control(tmp_path: Path) -> None:
    error(tmp_path, LOCKING, "workload", "only servers that reply keep", workload="poisson", think_time=10.0)


def test_spike_workload_with_a_contention_control_loads(tmp_path: Path) -> None:
    """One client model: a contention control runs a spike as it runs a burst."""
    spec = load(tmp_path, LOCKING, workload="spike", spike_fraction=0.2, spike_width=1.0,
                arrival_window=10.0).simulations[0]
    assert spec.workload.NAME == "spike" and not spec.runs_to_horizon


# --- horizon, timeout, bucket ----------------------------------------------------------------

@pytest.mark.parametrize("base", [QUEUE, LATENCY], ids=["QueueServer", "LatencyServer"])
def test_missing_horizon(tmp_path: Path, base: dict[str, Any]) -> None:
    error(tmp_path, base, "horizon", "missing", horizon=None, outages=None)


@pytest.mark.parametrize("key", ["horizon", "timeout", "bucket"])
def test_horizon_timeout_bucket_with_a_contention_control(tmp_path: Path, key: str) -> None:
    message = error(tmp_path, LOCKING, key, "needs a server that replies", **{key: 10.0})
    assert "QueueServer" in message and "LatencyServer" in message


@pytest.mark.parametrize("key", ["horizon", "timeout", "bucket"])
def test_non_positive_horizon_timeout_bucket(tmp_path: Path, key: str) -> None:
    error(tmp_path, QUEUE, key, "> 0", **{key: 0.0})


@pytest.mark.parametrize("key, value", [("horizon", 5e-324), ("bucket", 1e-300), ("timeout", 1e-12)])
def test_tiny_horizon_timeout_bucket(tmp_path: Path, key: str, value: float) -> None:
    # 1e-9 is sim.vocabulary.bounds.MIN_SPAN: below it a bucket's inverse width is no longer finite.
    error(tmp_path, QUEUE, key, ">= 1e-09", **{key: value})


@pytest.mark.parametrize("key", ["horizon", "start"])
def test_huge_horizon_or_outage_start(tmp_path: Path, key: str) -> None:
    if key == "horizon":
        error(tmp_path, LATENCY, "horizon", "at most 1e+15", horizon=1e308)
    else:
        error(tmp_path, LATENCY, "outages[0].start", "at most 1e+15",
              outages=[{"start": 1e308, "duration": 10.0}])


def test_bucket_longer_than_the_horizon(tmp_path: Path) -> None:
    error(tmp_path, QUEUE, "bucket", "must not exceed horizon", bucket=600.0)


# --- outages ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [{"start": 1.0, "duration": 2.0}, 5.0, [1.0, 2.0]],
                         ids=["table", "number", "list-of-numbers"])
def test_outages_not_a_list_of_tables(tmp_path: Path, value: Any) -> None:
    error(tmp_path, LATENCY, "outages", "must be a list of tables", outages=value)


def test_unknown_outage_key(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "outages[0].stop", "not an outage key",
          outages=[{"start": 1000.0, "duration": 10.0, "stop": 1010.0}])


def test_missing_outage_duration(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "outages[0].duration", "missing", outages=[{"start": 1000.0}])


def test_negative_outage_start(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "outages[0].start", ">= 0", outages=[{"start": -1.0, "duration": 10.0}])


@pytest.mark.parametrize("duration", [0.0, -5.0])
def test_non_positive_outage_duration(tmp_path: Path, duration: float) -> None:
    error(tmp_path, LATENCY, "outages[0].duration", "> 0", outages=[{"start": 100.0, "duration": duration}])


def test_outage_start_must_be_a_number(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "outages[0].start", "must be a number", outages=[{"start": "soon", "duration": 1.0}])


def test_overlapping_outages(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "outages[1].start", "overlaps",
          outages=[{"start": 100.0, "duration": 50.0}, {"start": 120.0, "duration": 10.0}])


def test_outages_out_of_order(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "outages[1].start", "time order",
          outages=[{"start": 500.0, "duration": 50.0}, {"start": 100.0, "duration": 10.0}])


def test_outage_starting_after_the_horizon(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "outages[0].start", "horizon", outages=[{"start": 200000.0, "duration": 10.0}])


def test_an_outage_may_start_at_zero(tmp_path: Path) -> None:
    spec = load(tmp_path, LATENCY, outages=[{"start": 0.0, "duration": 10.0}]).simulations[0]
    assert spec.outages == (Outage(0.0, 10.0),)


# --- backlog ---------------------------------------------------------------------------------

def test_backlog_loads(tmp_path: Path) -> None:
    assert load(tmp_path, LATENCY, backlog=64).simulations[0].backlog == 64
    assert load(tmp_path, LATENCY).simulations[0].backlog == 128  # Go's on Linux before 5.4 by default
    assert load(tmp_path, LATENCY, backlog="unbounded").simulations[0].backlog is None


@pytest.mark.parametrize("value, contains", [(-1, ">= 0"), (2.5, "integer"),
                                             ("many", "a count of connections or 'unbounded'")])
def test_bad_backlog(tmp_path: Path, value: Any, contains: str) -> None:
    error(tmp_path, LATENCY, "backlog", contains, backlog=value)


def test_backlog_without_outages(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "backlog", "no outages", backlog=10, outages=None)


def test_backlog_without_a_timeout(tmp_path: Path) -> None:
    error(tmp_path, LATENCY, "backlog", "needs timeout", backlog=10, timeout=None)


def test_backlog_with_a_contention_control(tmp_path: Path) -> None:
    error(tmp_path, LOCKING, "backlog", "needs a server that replies", backlog=10,
          outages=[{"start": 5.0, "duration": 10.0}])


def test_outages_with_a_contention_control_are_allowed(tmp_path: Path) -> None:
    """The issue lets every control take outages; only horizon-bound keys need a replying server."""
    spec = load(tmp_path, LOCKING, outages=[{"start": 5.0, "duration": 10.0}]).simulations[0]
    assert spec.outages == (Outage(5.0, 10.0),)


# --- server parameters -----------------------------------------------------------------------

@pytest.mark.parametrize("key, value, contains", [
    ("concurrency", 0, ">= 1"), ("service_time", 0.0, "> 0"), ("queue_size", -1, ">= 0"),
    ("reject_delay", -1.0, ">= 0"), ("overload_threshold", -2, ">= 0"), ("concurrency", 2.5, "integer"),
    ("overload_rule", "per_step", "'at_start', 'per_tick'"), ("overload_rule", 1, "non-empty string"),
    ("overload_tick", 0.0, "> 0"), ("overload_tick", "1", "must be a number"),
])
def test_bad_queue_server_parameter(tmp_path: Path, key: str, value: Any, contains: str) -> None:
    error(tmp_path, QUEUE, key, contains, **{key: value})


@pytest.mark.parametrize("key, value, contains", [
    ("base_latency", 0.0, "> 0"), ("concurrency_limit", 0, ">= 1"), ("factor", 0.9, ">= 1"), ("k", 0.0, "> 0"),
    ("check_interval", 0.0, "> 0"), ("check_interval", "fast", "must be a number"),
    ("latency_rule", "at_end", "'current', 'at_start'"), ("latency_rule", 1, "non-empty string"),
])
def test_bad_latency_server_parameter(tmp_path: Path, key: str, value: Any, contains: str) -> None:
    error(tmp_path, LATENCY, key, contains, **{key: value})


def test_missing_queue_server_parameter(tmp_path: Path) -> None:
    error(tmp_path, QUEUE, "service_time", "missing", service_time=None)


def test_normal_jitter_expo_parameter(tmp_path: Path) -> None:
    strategies = [{"type": "NormalJitterExpo", "min_delay": 100.0, "factor": 2.0, "max_delay": 10.0}]
    error(tmp_path, LATENCY, "strategies[0].max_delay", "min_delay", strategies=strategies)


# --- the CLI turns them into one line and status 2 -------------------------------------------

def test_cli_reports_an_overload_mistake_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path / "bad.toml", toml_text({**QUEUE, "workload": "spikes"}))
    assert main(["run", str(path), "--out", str(tmp_path), "--workers", "1", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith("error: ")
    assert str(path) in captured.err and "'workload'" in captured.err and "Traceback" not in captured.err
    assert not list(tmp_path.glob("*.csv")) and not list(tmp_path.glob("*.png"))


# --- the examples load -----------------------------------------------------------------------

def test_spike_queue_example_loads() -> None:
    config = load_config(EXAMPLES / "spike_queue.toml")
    (spec,) = config.simulations
    assert spec.control.type_name == "QueueServer" and spec.caps.keeps_series
    assert (spec.control.concurrency, spec.control.service_time, spec.control.overload_threshold) == (5, 5.0, 25)
    assert spec.workload.NAME == "spike" and spec.clients == (800,)
    assert (spec.workload.spike_fraction, spec.workload.arrival_window) == (0.2, 1000.0)
    assert spec.horizon == 3000.0 and spec.timeout is None and spec.outages == ()
    assert [s.strategy.type_name for s in spec.strategies] == [
        "NoBackoff", "Constant", "UniformRandom", "Expo", "FullJitteredExpo"]


def test_server_outage_example_loads() -> None:
    config = load_config(EXAMPLES / "server_outage.toml")
    (spec,) = config.simulations
    assert spec.control.type_name == "LatencyServer"
    assert (spec.control.base_latency, spec.control.concurrency_limit, spec.control.factor, spec.control.k) == (
        100.0, 30, 1.05, 15.0)
    assert spec.workload.NAME == "poisson" and spec.workload.think_time == 10000.0
    assert spec.timeout == 2000.0 and spec.outages == (Outage(30000.0, 30000.0),)
    assert (spec.backlog, spec.backlog_overflow, spec.abandoned) == (128, "syn-retry", "serve")
    assert (spec.control.check_interval, spec.control.latency_rule) == (50.0, "current")
    assert spec.outages[0].end < spec.horizon
    types = [s.strategy.type_name for s in spec.strategies]
    assert types == ["Constant", "NormalJitterExpo", "ThinkTimeExpo"]
    expo = spec.strategies[1].strategy
    assert (expo.min_delay, expo.factor, expo.max_delay, expo.jitter) == (100.0, 2.718, 300000.0, 0.1)
    go = spec.strategies[2].strategy
    assert (go.factor, go.max_delay, go.jitter) == (2.71828, 300000.0, 100.0)  # client.go's constants
