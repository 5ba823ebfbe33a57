"""resilience4j's application.yml → the ``resilience4j`` preset, against RetryConfig's defaults and
IntervalFunction's formulas (resilience4j-core IntervalFunction.java, transcribed in the test)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from settings_import_helpers import config_of, error_of, max_attempts, one

from sim.models.library_strategies import Resilience4jBackoff
from sim.policies.circuit_breaker import CircuitBreaker
from sim.policies.presets import expand_preset


def interval_function(wait: int, multiplier: float, factor: float, cap: int | None, uniforms: list[float]) -> list[int]:
    """IntervalFunction.ofExponentialRandomBackoff as Java computes it: iₙ₊₁ = (long)(iₙ·m), then
    (long) randomize(iₙ, f) = (long)(iₙ − f·iₙ + U·(2·f·iₙ)), then Math.min with the cap."""
    out, interval = [], wait
    for u in uniforms:
        value = interval
        if factor:
            delta = factor * interval
            value = int((interval - delta) + u * ((interval + delta) - (interval - delta)))
        out.append(value if cap is None else min(value, cap))
        interval = int(interval * multiplier)
    return out


def delays(strategy: Resilience4jBackoff, uniforms: list[float]) -> list[float]:
    stream = iter(uniforms)
    gen = strategy.delays(lambda: next(stream))
    return [next(gen) for _ in uniforms] if strategy.randomization_factor else list(itertools.islice(gen, len(uniforms)))


APP = """
resilience4j:
  retry:
    instances:
      backend:
{keys}
"""


def app(tmp_path: Path, keys: str, **options):
    body = "\n".join("        " + line for line in keys.strip("\n").splitlines()) if keys.strip() else "        {}"
    return one(tmp_path, "application.yml", APP.format(keys=body), **options)


def strategy_of(layer) -> Resilience4jBackoff:
    strategy = config_of(layer).simulations[0].strategies[0].chain.strategy
    assert isinstance(strategy, Resilience4jBackoff)
    return strategy


def test_defaults_are_retryconfigs(tmp_path: Path) -> None:
    # RetryConfig: DEFAULT_MAX_ATTEMPTS = 3 (the first call counts), DEFAULT_WAIT_DURATION = 500 ms.
    layer = app(tmp_path, "")
    assert (layer.attempts, layer.retries) == (3, 2)
    assert max_attempts(config_of(layer)) == 3
    assert delays(strategy_of(layer), [0.0] * 4) == [500.0] * 4
    assert layer.options == {"order": "retry-outside"}
    assert layer.knob.path == "max_attempts"


def test_max_attempts_counts_the_first_call(tmp_path: Path) -> None:
    layer = app(tmp_path, "maxAttempts: 3")
    assert layer.counts() == "3 attempts (2 retries)"
    layer = app(tmp_path, "max-attempts: 5")  # relaxed binding
    assert layer.attempts == 5


def test_exponential_backoff_is_interval_functions(tmp_path: Path) -> None:
    layer = app(tmp_path, "waitDuration: PT0.5S\nenableExponentialBackoff: true")
    expected = interval_function(500, 1.5, 0.0, None, [0.0] * 6)  # DEFAULT_MULTIPLIER 1.5
    assert expected[:4] == [500, 750, 1125, 1687]  # (long) truncation: 1125 · 1.5 = 1687.5 → 1687
    assert delays(strategy_of(layer), [0.0] * 6) == [float(x) for x in expected]


def test_exponential_random_backoff_with_cap_is_interval_functions(tmp_path: Path) -> None:
    layer = app(tmp_path, """
waitDuration: 200ms
enableExponentialBackoff: true
exponentialBackoffMultiplier: 2
exponentialMaxWaitDuration: 1s
enableRandomizedWait: true
randomizedWaitFactor: 0.3
""")
    uniforms = [0.0, 0.999, 0.5, 0.25, 0.75, 0.1, 0.9]
    expected = interval_function(200, 2.0, 0.3, 1000, uniforms)
    assert delays(strategy_of(layer), uniforms) == [float(x) for x in expected]
    assert max(expected) == 1000  # the cap applies after the randomization


def test_randomized_wait_only_stays_around_the_wait(tmp_path: Path) -> None:
    layer = app(tmp_path, "waitDuration: 1s\nenableRandomizedWait: true")  # DEFAULT_RANDOMIZATION_FACTOR 0.5
    uniforms = [0.0, 0.5, 0.999]
    assert delays(strategy_of(layer), uniforms) == [float(x) for x in interval_function(1000, 1.0, 0.5, None, uniforms)]


def test_flags_without_wait_duration_are_ignored_as_resilience4j_does(tmp_path: Path) -> None:
    # CommonRetryConfigurationProperties.configureRetryIntervalFunction: only with a waitDuration.
    layer = app(tmp_path, "enableExponentialBackoff: true")
    assert delays(strategy_of(layer), [0.0] * 3) == [500.0] * 3
    assert any("without waitDuration" in n for n in layer.notes)


def test_base_config_and_default_config_are_inherited(tmp_path: Path) -> None:
    layer = one(tmp_path, "application.yml", """
    resilience4j:
      retry:
        configs:
          default: { maxAttempts: 6, waitDuration: 100ms }
          slow: { maxAttempts: 2, waitDuration: 2s }
        instances:
          fast: {}
          careful: { baseConfig: slow, waitDuration: 3s }
    """, select="careful")
    assert layer.attempts == 2 and delays(strategy_of(layer), [0.0]) == [3000.0]
    fast = one(tmp_path, "application.yml", """
    resilience4j:
      retry:
        configs:
          default: { maxAttempts: 6, waitDuration: 100ms }
        instances:
          fast: {}
    """)
    assert fast.attempts == 6 and delays(strategy_of(fast), [0.0]) == [100.0]


def test_circuit_breaker_and_decorator_order(tmp_path: Path) -> None:
    text = """
    resilience4j:
      retry:
        instances:
          inventory: { maxAttempts: 4 }
      circuitbreaker:
        instances:
          inventory: { failureRateThreshold: 25, slidingWindowSize: 20, minimumNumberOfCalls: 10,
                       waitDurationInOpenState: 5s, permittedNumberOfCallsInHalfOpenState: 2 }
    """
    layer = one(tmp_path, "application.yml", text)
    breaker = next(p for p in config_of(layer).simulations[0].strategies[0].chain.policies
                   if isinstance(p, CircuitBreaker))
    assert breaker.kind == "count"
    assert breaker.resolved() == {"failure_ratio": 0.25, "minimum_throughput": 10, "window": 20,
                                  "break_duration": 5000.0, "half_open_calls": 2}
    assert layer.options == {"order": "retry-outside"}  # Spring Boot: retryAspectOrder < circuitBreakerAspectOrder
    inside = one(tmp_path, "application.yml", text, order="retry-inside")
    assert inside.options == {"order": "retry-inside"} and any("inside the breaker" in n for n in inside.notes)
    assert [p.counts for p in config_of(inside).simulations[0].strategies[0].chain.policies
            if isinstance(p, CircuitBreaker)] == ["calls"]
    assert breaker.counts == "attempts"
    swapped = one(tmp_path, "application.yml", text.replace("retry:\n", "retry:\n        retryAspectOrder: 10\n")
                  .replace("circuitbreaker:\n", "circuitbreaker:\n        circuitBreakerAspectOrder: 5\n"))
    assert swapped.options == {"order": "retry-inside"}


def test_breaker_defaults_are_circuitbreakerconfigs(tmp_path: Path) -> None:
    layer = one(tmp_path, "application.yml", "resilience4j:\n  circuitbreaker:\n    instances:\n      b: {}\n")
    assert layer.attempts == 1
    breaker = next(p for p in config_of(layer).simulations[0].strategies[0].chain.policies
                   if isinstance(p, CircuitBreaker))
    # CircuitBreakerConfig: 50%, count window 100, minimum 100, 60 s open, 10 half-open calls.
    assert breaker.resolved() == {"failure_ratio": 0.5, "minimum_throughput": 100, "window": 100,
                                  "break_duration": 60000.0, "half_open_calls": 10}


def test_preset_defaults_expand_to_resilience4js(tmp_path: Path) -> None:
    data = expand_preset({"preset": "resilience4j"})
    assert data["policies"] == [{"type": "MaxAttempts", "max_attempts": 3}]
    assert data["strategy"]["wait_duration"] == 500.0 and data["strategy"]["multiplier"] == 1.0
    on = expand_preset({"preset": "resilience4j", "enable_exponential_backoff": True, "enable_randomized_wait": True})
    assert (on["strategy"]["multiplier"], on["strategy"]["randomization_factor"]) == (1.5, 0.5)
    assert math.isclose(expand_preset({"preset": "resilience4j"}, unit_seconds=1.0)["strategy"]["wait_duration"], 0.5)


@pytest.mark.parametrize("keys, line, key, words", [
    ("maxAttempts: three", 5, "resilience4j.retry.instances.backend.maxAttempts", "whole number"),
    ("maxAttemps: 3", 5, "resilience4j.retry.instances.backend.maxAttemps", "did you mean 'maxAttempts'"),
    ("waitDuration: 2 seconds", 5, "resilience4j.retry.instances.backend.waitDuration", "PT2S"),
    ("baseConfig: missing", 5, "resilience4j.retry.instances.backend.baseConfig", "names no config"),
])
def test_mistakes_name_file_line_and_key(tmp_path: Path, keys: str, line: int, key: str, words: str) -> None:
    message = error_of(tmp_path, "application.yml", APP.format(keys="        " + keys))
    assert message.startswith(f"{tmp_path / 'application.yml'}:{line}: key '{key}'")
    assert words in message


def _drive(counts: str, calls: int) -> list[int]:
    """Attempts sent per call under total failure: a resilience4j-like chain (3 attempts, a count
    breaker of 10 calls at 50%), each refused attempt reported as DENIED, as the client does."""
    from sim.policies.chain import chain_from_data
    from sim.vocabulary.outcomes import DENIED, SERVER_ERROR
    spec = chain_from_data({"strategy": {"type": "Constant", "constant": 1.0},
                            "policies": [{"type": "MaxAttempts", "max_attempts": 3},
                                         {"type": "CircuitBreaker", "kind": "count", "window": 10,
                                          "minimum_throughput": 10, "break_duration": 1e9, "counts": counts}]})
    chain = spec.build([lambda: 0.5])[0]
    t, sent = 0.0, []
    for _ in range(calls):
        attempt, start, n = 1, t, 0
        while True:
            hold = chain.on_attempt(t, attempt, start)
            refused = hold.__class__.__name__ == "GiveUp"
            n += 0 if refused else 1
            verdict = chain.on_failure(t, DENIED if refused else SERVER_ERROR, attempt, start)
            t += 1.0
            if verdict.__class__.__name__ == "GiveUp":
                break
            attempt += 1
        sent.append(n)
    return sent


def test_decorator_order_decides_what_the_breaker_counts() -> None:
    # Retry outside (counts "attempts"): 10 failed attempts open the breaker, during the 4th call
    # (3 + 3 + 3 + 1); later calls send nothing. Retry inside ("calls"): 10 failed calls of 3
    # attempts each open it; the calls after it are refused at once.
    assert _drive("attempts", 6) == [3, 3, 3, 1, 0, 0]
    assert _drive("calls", 12) == [3] * 10 + [0, 0]
