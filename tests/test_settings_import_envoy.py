"""Envoy and Istio settings → the ``envoy`` preset, against Envoy's and Istio's documented defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from settings_import_helpers import config_of, error_of, max_attempts, one

from sim.policies.concurrency_budget import ConcurrencyBudget
from sim.policies.limits import AttemptTimeout, Deadline
from sim.models.library_strategies import EnvoyBackoff

ROUTE = """
route_config:
  virtual_hosts:
    - name: api
      domains: ["*"]
      routes:
        - name: api
          match: {{ prefix: "/" }}
          route:
            cluster: api
{route}
"""


def route(tmp_path: Path, retry_and_timeout: str, clusters: str = "") -> object:
    body = "\n".join("            " + line for line in retry_and_timeout.strip("\n").splitlines())
    return one(tmp_path, "envoy.yaml", ROUTE.format(route=body) + clusters)


def test_envoy_defaults_are_envoys(tmp_path: Path) -> None:
    # route_components.proto: num_retries "Default is 1"; base_interval 25 ms, max 10x; route
    # timeout 15 s. circuit_breaker.proto: max_retries 3 without a retry budget.
    layer = route(tmp_path, "retry_policy: { retry_on: 5xx }")
    assert (layer.attempts, layer.retries, layer.counts()) == (2, 1, "2 attempts (1 retry)")
    assert layer.total_timeout == 15000.0 and layer.timeout is None
    spec = config_of(layer).simulations[0].strategies[0]
    assert max_attempts(config_of(layer)) == 2
    strategy = spec.chain.strategy
    assert isinstance(strategy, EnvoyBackoff)
    assert (strategy.base_interval, strategy.max_interval) == (25.0, 250.0)
    budget = next(p for p in spec.chain.policies if isinstance(p, ConcurrencyBudget))
    assert (budget.percent, budget.min_concurrency) == (0.0, 3)
    assert next(p for p in spec.chain.policies if isinstance(p, Deadline)).total == 15000.0
    assert layer.knob is not None and layer.knob.path == "num_retries" and 1 in layer.knob.values


def test_envoy_num_retries_counts_retries_and_max_interval_is_ten_times_base(tmp_path: Path) -> None:
    layer = route(tmp_path, """
retry_policy:
  retry_on: "5xx,reset"
  num_retries: 2
  per_try_timeout: 0.5s
  retry_back_off: { base_interval: 0.1s }
timeout: 0s
""")
    assert layer.attempts == 3  # num_retries 2 → 3 attempts
    assert layer.timeout == 500.0 and layer.total_timeout is None  # 0s disables the route timeout
    spec = config_of(layer).simulations[0].strategies[0]
    assert spec.chain.strategy.max_interval == 10 * 100.0
    assert [p.timeout for p in spec.chain.policies if isinstance(p, AttemptTimeout)] == [500.0]
    assert not any(isinstance(p, Deadline) for p in spec.chain.policies)


def test_envoy_retry_budget_defaults_and_knob(tmp_path: Path) -> None:
    # circuit_breaker.proto RetryBudget: budget_percent 20%, min_retry_concurrency 3 when unset.
    clusters = """
clusters:
  - name: api
    circuit_breakers:
      thresholds:
        - retry_budget: {}
"""
    layer = route(tmp_path, "retry_policy: { retry_on: 5xx, num_retries: 3 }", clusters)
    assert layer.entry["budget_percent"] == 20.0 and layer.entry["min_retry_concurrency"] == 3
    assert layer.knob.path == "budget_percent" and 20.0 in layer.knob.values
    config_of(layer)


def test_envoy_previous_hosts_and_outlier_detection_become_fleet_keys(tmp_path: Path) -> None:
    clusters = """
clusters:
  - name: api
    outlier_detection: { consecutive_5xx: 3, interval: 2s, base_ejection_time: 10s, max_ejection_percent: 30 }
"""
    layer = route(tmp_path, """
retry_policy:
  retry_on: 5xx
  retry_host_predicate: [{ name: envoy.retry_host_predicates.previous_hosts }]
  host_selection_retry_max_attempts: 4
""", clusters)
    assert layer.fleet == {"retry_other_host": True, "host_selection_attempts": 4,
                           "outlier_detection": {"consecutive_errors": 3, "interval": 2000.0,
                                                 "base_ejection_time": 10000.0, "max_ejection_percent": 30.0}}
    fleet = config_of(layer).simulations[0].fleet
    assert fleet.retry_other_host and fleet.host_selection_attempts == 4
    assert fleet.outlier_detection.consecutive_errors == 3


def test_envoy_retry_on_conditions_that_do_not_exist_here_are_noted(tmp_path: Path) -> None:
    layer = route(tmp_path, 'retry_policy: { retry_on: "5xx,envoy-ratelimited,cancelled" }')
    assert any("envoy-ratelimited" in n for n in layer.notes)
    assert any("'cancelled'" in n for n in layer.notes)
    assert not any("'5xx'" in n for n in layer.notes)


def retried(layer) -> list[str] | None:
    """The failure kinds the layer's RetryOn lets through (None: every kind)."""
    from sim.policies.retry_on import RetryOn
    found = [p.kinds for p in config_of(layer).simulations[0].strategies[0].chain.policies if isinstance(p, RetryOn)]
    return list(found[0]) if found else None


@pytest.mark.parametrize("retry_on, codes, kinds", [
    ("5xx", None, ["rejected", "server_error", "timed_out"]),   # any 5xx, or no response
    ("5xx,retriable-4xx", None, None),                          # every kind simulated here
    ("reset", None, ["timed_out"]),                             # no response: a read timeout
    ("retriable-status-codes", "[503, 429]", ["rejected"]),     # 503/429 are this simulation's rejections
    ("retriable-status-codes,retriable-4xx", "[500]", ["aborted", "server_error"]),
    ("connect-failure", None, []),                              # no connection failures here: no retries
])
def test_envoy_retry_on_becomes_the_failure_kinds_retried(tmp_path: Path, retry_on: str, codes: str | None,
                                                          kinds: list[str] | None) -> None:
    extra = f", retriable_status_codes: {codes}" if codes else ""
    layer = route(tmp_path, f'retry_policy: {{ retry_on: "{retry_on}"{extra}, num_retries: 2 }}')
    assert retried(layer) == kinds
    assert layer.attempts == 3  # the configured maximum, whatever is simulated


def test_envoy_without_retry_on_makes_no_retries(tmp_path: Path) -> None:
    layer = route(tmp_path, "retry_policy: { num_retries: 3 }")
    assert layer.attempts == 1


def test_envoy_virtual_host_policy_applies_to_its_routes(tmp_path: Path) -> None:
    layer = one(tmp_path, "vh.json", """
    {"virtual_hosts": [{"name": "v", "domains": ["*"], "retry_policy": {"retry_on": "5xx", "num_retries": 4},
      "routes": [{"name": "r", "match": {"prefix": "/"}, "route": {"cluster": "c"}}]}]}
    """)
    assert layer.attempts == 5 and layer.name == "r"


@pytest.mark.parametrize("text, line, key, words", [
    ("retry_policy: { retry_on: 5xx, num_retrys: 2 }", 10, "retry_policy.num_retrys", "did you mean 'num_retries'"),
    ("retry_policy: { retry_on: 5xx, per_try_timeout: 25ms }", 10, "retry_policy.per_try_timeout", "0.025s"),
    ("retry_policy: { retry_on: 5xxx }", 10, "retry_policy.retry_on", "did you mean '5xx'"),
    ("retry_policy: { retry_on: 5xx, num_retries: -1 }", 10, "retry_policy.num_retries", ">= 0"),
    ("retry_policy: { retry_on: 5xx, retry_back_off: { base_interval: 0.0002s } }", 10,
     "retry_policy.retry_back_off.base_interval", "whole milliseconds"),
])
def test_envoy_mistakes_name_file_line_and_key(tmp_path: Path, text: str, line: int, key: str, words: str) -> None:
    body = "\n".join("            " + x for x in text.splitlines())
    message = error_of(tmp_path, "envoy.yaml", ROUTE.format(route=body))
    assert message.startswith(f"{tmp_path / 'envoy.yaml'}:{line}: key '")
    assert key in message and words in message


def test_envoy_json_mistake_names_its_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, "envoy.json", """
    {
      "retry_policy": {
        "retry_on": "5xx",
        "num_retries": "two"
      }
    }
    """)
    assert message.startswith(f"{tmp_path / 'envoy.json'}:4: key 'retry_policy.num_retries'")


# --- Istio --------------------------------------------------------------------------------------

VS = """
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {{ name: reviews }}
spec:
  hosts: [reviews]
  http:
    - route: [{{ destination: {{ host: reviews }} }}]
{extra}
"""


def test_istio_default_policy_is_istios(tmp_path: Path) -> None:
    # retry.go DefaultPolicy: 2 retries, previous_hosts, HostSelectionRetryMaxAttempts 5; no timeout.
    layer = one(tmp_path, "vs.yaml", VS.format(extra=""))
    assert layer.attempts == 3
    assert layer.total_timeout is None
    assert layer.fleet == {"retry_other_host": True, "host_selection_attempts": 5}
    assert layer.entry["min_retry_concurrency"] == 2**32 - 1  # HTTPSettings.maxRetries default
    # retryOn connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes (503):
    # of the failures simulated here only rejections (503, a refused stream, UNAVAILABLE).
    assert retried(layer) == ["rejected"]


def test_istio_attempts_are_retries_and_destination_rule_applies(tmp_path: Path) -> None:
    extra = """      retries: { attempts: 3, perTryTimeout: 250ms, retryOn: "5xx,503" }
      timeout: 1.5s
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: reviews }
spec:
  host: reviews.default.svc.cluster.local
  trafficPolicy:
    connectionPool: { http: { maxRetries: 7 } }
    outlierDetection: { consecutive5xxErrors: 2, interval: 1m, baseEjectionTime: 1m30s }
"""
    layer = one(tmp_path, "vs.yaml", VS.format(extra=extra))
    assert (layer.attempts, layer.timeout, layer.total_timeout) == (4, 250.0, 1500.0)
    assert layer.entry["min_retry_concurrency"] == 7
    assert layer.fleet["outlier_detection"] == {"consecutive_errors": 2, "interval": 60000.0,
                                                "base_ejection_time": 90000.0}
    assert max_attempts(config_of(layer)) == 4


def test_istio_attempts_zero_turns_retries_off(tmp_path: Path) -> None:
    layer = one(tmp_path, "vs.yaml", VS.format(extra="      retries: { attempts: 0 }"))
    assert layer.attempts == 1


def test_istio_unknown_key_names_its_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, "vs.yaml", VS.format(extra="      retries: { attempt: 3 }"))
    assert message.startswith(f"{tmp_path / 'vs.yaml'}:8: key 'spec.http[0].retries.attempt'")
    assert "did you mean 'attempts'" in message


def test_envoy_max_retries_caps_retries_in_flight(tmp_path: Path) -> None:
    clusters = """
clusters:
  - name: api
    circuit_breakers:
      thresholds:
        - { priority: DEFAULT, max_retries: 8 }
        - { priority: HIGH, max_retries: 1 }
"""
    layer = route(tmp_path, "retry_policy: { retry_on: 5xx }", clusters)
    assert (layer.entry["budget_percent"], layer.entry["min_retry_concurrency"]) == (0.0, 8)
    assert any("priority HIGH" in n for n in layer.notes)
    budget = next(p for p in config_of(layer).simulations[0].strategies[0].chain.policies
                  if isinstance(p, ConcurrencyBudget))
    assert budget.min_concurrency == 8
