"""Strategy entries with policies and presets, as the config reads them (``sim.policies.entries``)."""

from __future__ import annotations

import pytest

from sim.policies.circuit_breaker import CircuitBreaker
from sim.policies.entries import parse_entry, parse_policies, preset_label, seconds_per_unit
from sim.policies.grpc_throttle import GrpcThrottle
from sim.policies.limits import MaxAttempts
from sim.policies.rate_limit import RateLimit
from sim.policies.retry_quota import RetryQuota
from sim.policies.token_bucket import TokenBucket


def test_units_with_a_length_in_seconds() -> None:
    assert seconds_per_unit("ms") == 0.001
    assert seconds_per_unit("s") == 1.0
    assert seconds_per_unit("tick") is None


def test_a_strategy_entry_keeps_its_table_and_builds_its_policies() -> None:
    entry, problems = parse_entry({"type": "Constant", "constant": 0.0, "name": "bucket",
                                   "policies": [{"type": "TokenBucket", "capacity": 5}]}, 0.001)
    assert problems == []
    assert entry is not None
    assert entry.strategy == {"type": "Constant", "constant": 0.0, "name": "bucket"}
    assert entry.policies == (TokenBucket(capacity=5),)
    assert entry.name == "bucket" and entry.preset is None


def test_simulation_policies_come_after_the_entry_s_own() -> None:
    shared = (GrpcThrottle(scope="shared"),)
    entry, _ = parse_entry({"type": "Constant", "constant": 1.0,
                            "policies": [{"type": "MaxAttempts", "max_attempts": 4}]}, 0.001, shared=shared)
    assert entry is not None
    assert entry.policies == (MaxAttempts(max_attempts=4), GrpcThrottle(scope="shared"))


def test_policies_in_seconds_take_the_simulation_s_unit() -> None:
    # A config in seconds: the rate limiter's qps is per second and its unit is 1 s.
    policies, problems = parse_policies([{"type": "RateLimit", "qps": 5}], 1.0)
    assert problems == []
    assert policies == [RateLimit(qps=5, unit_seconds=1.0)]
    # A breaker's 5 s break is 5 time units when the unit is a second, 5000 in milliseconds.
    (breaker,), _ = parse_policies([{"type": "CircuitBreaker"}], 1.0)
    assert isinstance(breaker, CircuitBreaker) and breaker.resolved()["break_duration"] == 5.0
    (breaker,), _ = parse_policies([{"type": "CircuitBreaker"}], 0.001)
    assert breaker.resolved()["break_duration"] == 5000.0


def test_a_unit_without_seconds_needs_unit_seconds_where_it_matters() -> None:
    _, problems = parse_policies([{"type": "RateLimit"}], None, time_unit="tick")
    assert [p.key for p in problems] == ["policies[0].unit_seconds"]
    assert "tick" in problems[0].message
    # The brooker breaker counts calls, not time: nothing to convert.
    policies, problems = parse_policies([{"type": "CircuitBreaker", "kind": "brooker"}], None, time_unit="tick")
    assert problems == [] and policies[0].kind == "brooker"
    # A preset's defaults are in seconds: an explicit unit_seconds converts them.
    entry, problems = parse_entry({"preset": "grpc", "unit_seconds": 0.01}, None, time_unit="tick")
    assert problems == [] and entry is not None
    assert entry.strategy["initial_backoff"] == pytest.approx(10.0)  # 0.1 s in 10 ms ticks


def test_every_mistake_is_named_by_its_key() -> None:
    _, problems = parse_entry({"type": "Constant", "constant": 1.0, "policies": [
        {"type": "TokenBucket", "capacity": -1}, {"type": "Nope"}, {"type": "GrpcThrottle", "tokens": 3}]}, 0.001)
    assert [p.key for p in problems] == ["policies[0].capacity", "policies[1].type", "policies[2].tokens"]
    _, problems = parse_entry({"type": "Constant", "policies": {"type": "TokenBucket"}}, 0.001)
    assert [p.key for p in problems] == ["policies"]


def test_a_preset_expands_with_overrides_in_the_config_s_unit() -> None:
    entry, problems = parse_entry({"preset": "grpc", "throttling": True, "initial_backoff": 50.0}, 0.001)
    assert problems == [] and entry is not None
    assert entry.preset == "grpc"
    assert entry.strategy["type"] == "GrpcBackoff"
    assert entry.strategy["initial_backoff"] == 50.0  # given in ms, kept
    assert entry.strategy["max_backoff"] == pytest.approx(1000.0)  # 1 s default, converted
    assert entry.policies == (MaxAttempts(max_attempts=4), GrpcThrottle(max_tokens=10.0, token_ratio=0.1))
    assert preset_label(entry, {"preset": "grpc", "throttling": True}) == "grpc(throttling=True)"
    # The same preset in seconds: its defaults are not converted.
    entry, _ = parse_entry({"preset": "grpc"}, 1.0)
    assert entry is not None and entry.strategy["max_backoff"] == pytest.approx(1.0)


def test_a_preset_s_own_policies_come_first_then_the_entry_s() -> None:
    entry, problems = parse_entry({"preset": "botocore-standard",
                                   "policies": [{"type": "TokenBucket"}]}, 0.001)
    assert problems == [] and entry is not None
    assert [type(p) for p in entry.policies] == [MaxAttempts, RetryQuota, TokenBucket]


def test_preset_mistakes() -> None:
    _, problems = parse_entry({"preset": "grcp"}, 0.001)
    assert problems[0].key == "preset" and "grpc" in (problems[0].hint or "")
    _, problems = parse_entry({"preset": "grpc", "maxAttempts": 3}, 0.001)
    assert problems[0].key == "maxAttempts"
    _, problems = parse_entry({"preset": "grpc", "type": "Expo"}, 0.001)
    assert problems[0].key == "preset"
    _, problems = parse_entry({"preset": "grpc", "throttling": True, "max_tokens": 5000.0}, 0.001)
    assert problems[0].key == "max_tokens"
    _, problems = parse_entry({"preset": "grpc", "unit_seconds": 0}, 0.001)
    assert problems[0].key == "unit_seconds"
    _, problems = parse_entry({"type": "Expo", "unit_seconds": 1.0}, 0.001)
    assert problems[0].key == "unit_seconds"
