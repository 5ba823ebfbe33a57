"""Every mistake of a config at once (issue 40, item 11): a control's own mistakes are reported
beside those of its ``concurrency_limit`` table, not hidden by them."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import toml_text, write_config

from sim.settings.config import load_config
from sim.vocabulary.errors import ConfigError
from test_pool_server import POOL


def mistakes(tmp_path: Path, tiers: str = "", **changes) -> list[str]:
    table = {k: v for k, v in {**POOL, **changes}.items() if v is not None}
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path / "pool.toml", toml_text(table) + tiers))
    return info.value.lines()


def test_a_control_s_own_mistake_beside_its_limit_table_s(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, workers=0, concurrency_limit={"algorithm": "aimd", "smoothing": 0.5})
    assert len(lines) == 2, lines
    assert "key 'concurrency_limit.smoothing'" in lines[0] or "key 'concurrency_limit.smoothing'" in lines[1]
    assert any("key 'workers'" in line for line in lines)


def test_a_tier_s_own_mistake_beside_its_limit_table_s(tmp_path: Path) -> None:
    tier = """
[[simulation.tiers]]
control = "PoolServer"
workers = 0
service_time = 1.0
concurrency_limit = { algorithm = "cubic" }
retry = { type = "Constant", constant = 1.0, max_attempts = 2 }
"""
    lines = mistakes(tmp_path, tier)
    assert any("key 'tiers[0].concurrency_limit.algorithm'" in line for line in lines), lines
    assert any("key 'tiers[0].workers'" in line for line in lines), lines


def test_a_limit_table_mistake_alone_is_one_line(tmp_path: Path) -> None:
    (line,) = mistakes(tmp_path, concurrency_limit={"algorithm": "aimd", "smoothing": 0.5})
    assert "key 'concurrency_limit.smoothing'" in line


def test_every_mistake_a_control_checks_itself(tmp_path: Path) -> None:
    # PoolServer checks its parameters one after the other: each of these three stopped the
    # checks before, so only the first was reported.
    lines = mistakes(tmp_path, queue_size=-1, queue_timeout=-2.0, codel_target=-1.0, codel_interval=10.0)
    keys = [key for key in ("queue_size", "queue_timeout", "codel_target") if any(f"key '{key}'" in l for l in lines)]
    assert keys == ["queue_size", "queue_timeout", "codel_target"] and len(lines) == 3, lines


def test_a_required_key_s_mistake_hides_none_after_it(tmp_path: Path) -> None:
    # workers is required (no default to fall back on) and checked first; service_time's
    # default (None) would be "missing": each is tried again with 1, so the checks go on.
    lines = mistakes(tmp_path, workers=0, service_time=-1.0, queue_size=-1)
    assert [k for k in ("workers", "service_time", "queue_size") if any(f"key '{k}'" in l for l in lines)] == \
        ["workers", "service_time", "queue_size"] and len(lines) == 3, lines


def test_a_consequence_of_a_mistake_is_not_a_mistake_of_its_own(tmp_path: Path) -> None:
    # service_time -1, tried again as 1: service_p99 = 0.5 is then below that median, but the
    # user's median was not 1, so nothing is said of service_p99.
    (line,) = mistakes(tmp_path, service_distribution="lognormal", service_time=-1.0, service_p99=0.5)
    assert "key 'service_time'" in line


# --- every mistake of one incident or outage entry, and of the other nested tables -------------

def keys_named(lines: list[str], *keys: str) -> list[str]:
    """The keys among ``keys`` that some line names (in the order given)."""
    return [k for k in keys if any(f"key '{k}'" in line for line in lines)]


def test_a_bad_duration_hides_no_bad_capacity(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, incidents=[{"start": 100.0, "duration": 0.0, "capacity": 2.0}])
    assert keys_named(lines, "incidents[0].duration", "incidents[0].capacity") == \
        ["incidents[0].duration", "incidents[0].capacity"] and len(lines) == 2, lines


def test_every_key_of_an_incident_entry(tmp_path: Path) -> None:
    # an unknown key, a bad start and a slowdown below 1: three lines, each naming its key
    lines = mistakes(tmp_path, incidents=[{"start": -1.0, "duration": 10.0, "slowdown": 0.5, "sevrity": 1}])
    assert keys_named(lines, "incidents[0].sevrity", "incidents[0].start", "incidents[0].slowdown") == \
        ["incidents[0].sevrity", "incidents[0].start", "incidents[0].slowdown"] and len(lines) == 3, lines


def test_two_kinds_in_one_incident_beside_a_bad_level(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, incidents=[{"start": 10.0, "duration": 10.0, "capacity": 2.0, "slowdown": 3.0}])
    assert keys_named(lines, "incidents[0].capacity", "incidents[0].slowdown") == \
        ["incidents[0].capacity", "incidents[0].slowdown"] and len(lines) == 2, lines


def test_every_key_of_an_outage_entry(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, outages=[{"start": -5.0, "duration": 0.0, "lenght": 3.0, "hsts": 1}])
    assert keys_named(lines, "outages[0].hsts", "outages[0].lenght", "outages[0].start", "outages[0].duration") == \
        ["outages[0].hsts", "outages[0].lenght", "outages[0].start", "outages[0].duration"] and len(lines) == 4, lines


def test_every_key_of_a_tier_s_incident(tmp_path: Path) -> None:
    tier = """
[[simulation.tiers]]
control = "PoolServer"
workers = 2
service_time = 1.0
incidents = [{ start = 10.0, duration = -1.0, error_rate = 1.5 }]
"""
    lines = mistakes(tmp_path, tier)
    assert keys_named(lines, "tiers[0].incidents[0].duration", "tiers[0].incidents[0].error_rate") == \
        ["tiers[0].incidents[0].duration", "tiers[0].incidents[0].error_rate"] and len(lines) == 2, lines


FLEET = "\n[simulation.fleet]\nhosts = 4\n"


def test_every_key_of_a_host_incident(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, FLEET, incidents=[{"start": -1.0, "duration": 0.0, "capacity": -0.5, "hosts": 9}])
    keys = ("incidents[0].capacity", "incidents[0].start", "incidents[0].duration", "incidents[0].hosts")
    assert keys_named(lines, *keys) == list(keys) and len(lines) == 4, lines


def test_a_host_incident_s_level_out_of_range_beside_a_bad_start(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, FLEET, incidents=[{"start": -1.0, "duration": 5.0, "error_rate": 3.0, "hosts": [1]}])
    assert keys_named(lines, "incidents[0].start", "incidents[0].error_rate") == \
        ["incidents[0].start", "incidents[0].error_rate"] and len(lines) == 2, lines


def test_every_key_of_a_host_outage(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, FLEET, outages=[{"start": -1.0, "duration": 5.0, "hosts": [1], "cause": "x"}])
    assert keys_named(lines, "outages[0].cause", "outages[0].start") == \
        ["outages[0].cause", "outages[0].start"] and len(lines) == 2, lines


def test_every_key_of_a_policy(tmp_path: Path) -> None:
    strategies = [{"type": "Constant", "constant": 5.0, "max_attempts": 3,
                   "policies": [{"type": "TokenBucket", "capacity": -1.0, "refill": -2.0, "colour": 1}]}]
    lines = mistakes(tmp_path, strategies=strategies)
    keys = ("strategies[0].policies[0].colour", "strategies[0].policies[0].capacity",
            "strategies[0].policies[0].refill")
    assert keys_named(lines, *keys) == list(keys) and len(lines) == 3, lines


def test_every_key_of_a_simulation_s_policy(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, policies=[{"type": "TokenBucket", "cost": 0.0, "refill_on": "never"}])
    assert keys_named(lines, "policies[0].cost", "policies[0].refill_on") == \
        ["policies[0].cost", "policies[0].refill_on"] and len(lines) == 2, lines


def test_every_key_of_outlier_detection(tmp_path: Path) -> None:
    fleet = FLEET + "outlier_detection = { consecutive_errors = 0, interval = -1.0, max_ejection_percent = 200.0 }\n"
    lines = mistakes(tmp_path, fleet)
    keys = ("fleet.outlier_detection.consecutive_errors", "fleet.outlier_detection.interval",
            "fleet.outlier_detection.max_ejection_percent")
    assert keys_named(lines, *keys) == list(keys) and len(lines) == 3, lines


def test_every_unknown_key_of_a_fleet_sub_table_beside_a_bad_value(tmp_path: Path) -> None:
    fleet = FLEET + "health_check = { interval = 0.0, unhealthy_threshold = 3, healthy_threshold = 2, period = 1, jitter = 2 }\n"
    lines = mistakes(tmp_path, fleet)
    keys = ("fleet.health_check.jitter", "fleet.health_check.period", "fleet.health_check.interval")
    assert keys_named(lines, *keys) == list(keys) and len(lines) == 3, lines


def test_every_key_of_a_hedging_table(tmp_path: Path) -> None:
    strategies = [{"type": "NoBackoff", "hedging": {"max_attempts": 1, "delay": -1.0, "budget": 0.0, "wait": 1}}]
    lines = mistakes(tmp_path, FLEET, strategies=strategies)
    keys = tuple(f"strategies[0].hedging.{k}" for k in ("wait", "max_attempts", "delay", "budget"))
    assert keys_named(lines, *keys) == list(keys) and len(lines) == 4, lines


def test_every_key_of_a_controlled_delay(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, controlled_delay={"short": -1.0, "long": 0.0, "interval": "x"})
    keys = ("controlled_delay.short", "controlled_delay.long", "controlled_delay.interval")
    assert keys_named(lines, *keys) == list(keys) and len(lines) == 3, lines


def test_a_type_mistake_hides_no_check_of_the_control(tmp_path: Path) -> None:
    # service_time of the wrong type is found by the loader; queue_size by PoolServer itself
    lines = mistakes(tmp_path, service_time="fast", queue_size=-1)
    assert keys_named(lines, "service_time", "queue_size") == ["service_time", "queue_size"] and len(lines) == 2, lines


def test_a_tier_s_type_mistake_hides_no_check_of_its_control(tmp_path: Path) -> None:
    tier = """
[[simulation.tiers]]
control = "PoolServer"
workers = "two"
service_time = 1.0
queue_size = -1
"""
    lines = mistakes(tmp_path, tier)
    assert keys_named(lines, "tiers[0].workers", "tiers[0].queue_size") == \
        ["tiers[0].workers", "tiers[0].queue_size"] and len(lines) == 2, lines


def test_a_strategy_s_type_mistake_hides_no_check_of_the_strategy(tmp_path: Path) -> None:
    strategies = [{"type": "Expo", "base": "big", "cap": 100.0, "max_attempts": 0}]
    lines = mistakes(tmp_path, strategies=strategies)
    assert keys_named(lines, "strategies[0].base", "strategies[0].max_attempts") == \
        ["strategies[0].base", "strategies[0].max_attempts"] and len(lines) == 2, lines


def test_a_hedging_preset_s_bad_setting_hides_no_bad_policy(tmp_path: Path) -> None:
    strategies = [{"preset": "polly-v8-hedging", "max_hedged_attempts": "two",
                   "policies": [{"type": "TokenBucket", "cost": -1.0}]}]
    lines = mistakes(tmp_path, strategies=strategies)
    keys = ("strategies[0].policies[0].cost", "strategies[0].max_hedged_attempts")
    assert keys_named(lines, *keys) == list(keys) and len(lines) == 2, lines


def test_every_setting_of_a_preset_entry(tmp_path: Path) -> None:
    # an unknown setting beside one of the wrong type, and the entry's policy: three lines
    strategies = [{"preset": "grpc", "maxAttempts": 3, "jitter": "lots",
                   "policies": [{"type": "TokenBucket", "cost": -1.0}]}]
    lines = mistakes(tmp_path, strategies=strategies)
    keys = ("strategies[0].maxAttempts", "strategies[0].jitter", "strategies[0].policies[0].cost")
    assert keys_named(lines, *keys) == list(keys) and len(lines) == 3, lines


@pytest.mark.parametrize("key", ["outages", "incidents"])
def test_a_start_after_the_horizon_hides_no_end_past_the_clock(tmp_path: Path, key: str) -> None:
    # start at the horizon (5000, POOL's) is one mistake, a window ending after MAX_TIME another
    entry = {"start": 6000.0, "duration": 1e15, **({"capacity": 0.5} if key == "incidents" else {})}
    lines = mistakes(tmp_path, **{key: [entry]})
    assert keys_named(lines, f"{key}[0].start", f"{key}[0].duration") == \
        [f"{key}[0].start", f"{key}[0].duration"] and len(lines) == 2, lines


@pytest.mark.parametrize("key", ["outages", "incidents"])
def test_a_host_entry_without_a_fleet_hides_no_bad_window(tmp_path: Path, key: str) -> None:
    entry = {"start": -1.0, "duration": 0.0, "hosts": [0], **({"slowdown": 2.0} if key == "incidents" else {})}
    lines = mistakes(tmp_path, **{key: [entry]})
    keys = (f"{key}[0].hosts", f"{key}[0].start", f"{key}[0].duration")
    assert keys_named(lines, *keys) == list(keys) and len(lines) == 3, lines
