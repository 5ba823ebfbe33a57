"""gRPC service configs, .NET appsettings.json and AWS config files → the presets, against gRFC A6,
Microsoft.Extensions.Http.Resilience / Polly v8 and botocore defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from settings_import_helpers import config_of, error_of, max_attempts, one, write

from sim.models.library_strategies import GrpcBackoff, PollyDecorrelatedJitter
from sim.policies.circuit_breaker import CircuitBreaker
from sim.policies.grpc_throttle import GrpcThrottle
from sim.policies.limits import Deadline
from sim.settings.imported import read_settings


def service_config(tmp_path: Path, policy: dict, **top) -> object:
    text = json.dumps({"methodConfig": [{"name": [{"service": "s.S"}], **policy}], **top}, indent=2)
    return one(tmp_path, "service_config.json", text)


RETRY = {"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
         "retryableStatusCodes": ["UNAVAILABLE"]}


def test_grpc_retry_policy(tmp_path: Path) -> None:
    layer = service_config(tmp_path, {"retryPolicy": RETRY, "timeout": "1.5s"})
    assert (layer.attempts, layer.total_timeout) == (4, 1500.0)  # maxAttempts counts the original
    config = config_of(layer)
    chain = config.simulations[0].strategies[0].chain
    assert isinstance(chain.strategy, GrpcBackoff)
    assert (chain.strategy.initial_backoff, chain.strategy.max_backoff, chain.strategy.backoff_multiplier) == (100.0, 1000.0, 2.0)
    assert max_attempts(config) == 4
    assert [p.total for p in chain.policies if isinstance(p, Deadline)] == [1500.0]
    assert layer.knob.path == "max_attempts"


def test_grpc_max_attempts_is_capped_at_five(tmp_path: Path) -> None:
    # A6: "If maxAttempts is greater than 5, it will be treated as 5."
    layer = service_config(tmp_path, {"retryPolicy": {**RETRY, "maxAttempts": 9}})
    assert layer.attempts == 5 and max_attempts(config_of(layer)) == 5
    assert any("clamped to 5" in n for n in layer.notes)


def test_grpc_throttling_and_its_knob(tmp_path: Path) -> None:
    layer = service_config(tmp_path, {"retryPolicy": RETRY}, retryThrottling={"maxTokens": 20, "tokenRatio": 0.1234})
    throttle = next(p for p in config_of(layer).simulations[0].strategies[0].chain.policies
                    if isinstance(p, GrpcThrottle))
    assert (throttle.max_tokens, throttle.token_ratio) == (20.0, 0.123)  # A6: three decimals
    assert layer.knob.path == "max_tokens" and 20.0 in layer.knob.values


def test_grpc_hedging_copies_count_as_attempts(tmp_path: Path) -> None:
    layer = service_config(tmp_path, {"hedgingPolicy": {"maxAttempts": 7, "hedgingDelay": "0.05s"}})
    assert layer.attempts == 5  # hedged copies count, capped at 5 as maxAttempts is
    assert layer.entry["preset"] == "grpc-hedging" and layer.fleet == {}
    hedging = config_of(layer).simulations[0].strategies[0].hedging
    assert (hedging.max_attempts, hedging.delay) == (5, 50.0)  # the preset clamps 7 to 5 (A6)


@pytest.mark.parametrize("policy, key, needle, words", [
    ({**RETRY, "maxAttempts": 1}, "methodConfig[0].retryPolicy.maxAttempts", '"maxAttempts"', ">= 2"),
    ({k: v for k, v in RETRY.items() if k != "initialBackoff"}, "methodConfig[0].retryPolicy", '"retryPolicy"',
     "needs initialBackoff"),
    ({**RETRY, "retryableStatusCodes": ["UNAVAILBLE"]}, "methodConfig[0].retryPolicy.retryableStatusCodes[0]",
     '"UNAVAILBLE"', "did you mean 'UNAVAILABLE'"),
    ({**RETRY, "maxBackof": "1s"}, "methodConfig[0].retryPolicy.maxBackof", '"maxBackof"', "did you mean 'maxBackoff'"),
])
def test_grpc_mistakes_name_file_line_and_key(tmp_path: Path, policy: dict, key: str, needle: str, words: str) -> None:
    text = json.dumps({"methodConfig": [{"name": [{}], "retryPolicy": policy}]}, indent=2)
    message = error_of(tmp_path, "sc.json", text)
    line = next(i for i, l in enumerate(text.splitlines(), start=1) if needle in l)  # the key's (or item's) line
    assert message.startswith(f"{tmp_path / 'sc.json'}:{line}: key '{key}'") and words in message


# --- .NET ---------------------------------------------------------------------------------------

def test_dotnet_standard_handler_defaults(tmp_path: Path) -> None:
    # HttpRetryStrategyOptions: Exponential + jitter; Polly: 3 retries, 2 s; AttemptTimeout 10 s,
    # TotalRequestTimeout 30 s; CircuitBreakerConstants: 0.1, 100, 30 s, 5 s.
    layer = one(tmp_path, "appsettings.json", '{ "Client": { "Retry": {} } }')
    assert (layer.attempts, layer.timeout, layer.total_timeout) == (4, 10000.0, 30000.0)
    assert layer.entry["preset"] == "polly-v8-exponential-jitter"
    chain = config_of(layer).simulations[0].strategies[0].chain
    assert isinstance(chain.strategy, PollyDecorrelatedJitter) and chain.strategy.delay == 2000.0
    breaker = next(p for p in chain.policies if isinstance(p, CircuitBreaker))
    assert breaker.resolved() == {"failure_ratio": 0.1, "minimum_throughput": 100, "sampling_duration": 30000.0,
                                  "break_duration": 5000.0}
    assert chain.attempt_timeout == 10000.0
    from sim.policies.retry_on import RetryOn
    assert [p.kinds for p in chain.policies if isinstance(p, RetryOn)] == [("rejected", "server_error", "timed_out")]


def test_dotnet_timespans_and_comments(tmp_path: Path) -> None:
    layer = one(tmp_path, "appsettings.json", """
    {
      // comments and trailing commas, as appsettings.json allows
      "Resilience": {
        "Retry": { "MaxRetryAttempts": 5, "BackoffType": "Constant", "UseJitter": false, "Delay": "00:00:00.250", },
        "AttemptTimeout": { "Timeout": "00:00:01.5" },
        "TotalRequestTimeout": { "Timeout": "00:01:00" },
      }
    }
    """)
    assert (layer.attempts, layer.timeout, layer.total_timeout) == (6, 1500.0, 60000.0)
    assert layer.entry["preset"] == "polly-v8" and layer.entry["delay"] == 250.0
    assert max_attempts(config_of(layer)) == 6


def test_dotnet_hedging_handler(tmp_path: Path) -> None:
    layer = one(tmp_path, "appsettings.json", '{ "H": { "Hedging": { "MaxHedgedAttempts": 2, "Delay": "00:00:00.100" } } }')
    assert layer.attempts == 3  # the original and 2 hedged copies
    assert layer.fleet == {}
    hedging = config_of(layer).simulations[0].strategies[0].hedging
    assert (hedging.max_attempts, hedging.delay) == (3, 100.0)


def test_dotnet_mistake_names_its_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, "appsettings.json", '{\n  "C": {\n    "Retry": {\n      "Delay": "2s"\n    }\n  }\n}')
    assert message.startswith(f"{tmp_path / 'appsettings.json'}:4: key 'C.Retry.Delay'") and "00:00:02" in message


# --- AWS ----------------------------------------------------------------------------------------

def test_aws_modes_and_their_defaults(tmp_path: Path) -> None:
    # botocore: default mode legacy (5 attempts, _retry.json); standard DEFAULT_MAX_ATTEMPTS 3.
    legacy = one(tmp_path, "config", "[default]\nregion = eu-west-1\n")
    assert (legacy.entry["preset"], legacy.attempts) == ("botocore-legacy", 5)
    standard = one(tmp_path, "config", "[default]\nretry_mode = standard\n")
    assert (standard.entry["preset"], standard.attempts) == ("botocore-standard", 3)
    adaptive = one(tmp_path, "config", "[default]\nretry_mode = adaptive\nmax_attempts = 6\n")
    assert (adaptive.entry["preset"], adaptive.attempts) == ("botocore-adaptive", 6)
    for layer in (legacy, standard, adaptive):
        assert max_attempts(config_of(layer)) == layer.attempts


def test_aws_profile_and_environment(tmp_path: Path) -> None:
    path = write(tmp_path, "config", "[default]\nretry_mode = standard\n\n[profile batch]\nmax_attempts = 2\n")
    assert read_settings(path, profile="batch")[0].attempts == 2
    assert read_settings(f"{path}#batch")[0].attempts == 2
    env = {"AWS_RETRY_MODE": "standard", "AWS_MAX_ATTEMPTS": "7"}
    assert read_settings(path, environ=env)[0].attempts == 7  # the environment overrides the file
    assert read_settings("env:aws", environ={"AWS_MAX_ATTEMPTS": "2"})[0].entry == {
        "name": "default (aws)", "preset": "botocore-legacy", "max_attempts": 2}


def test_aws_mistakes(tmp_path: Path) -> None:
    message = error_of(tmp_path, "config", "[default]\nregion = x\nretry_mode = standrd\n")
    assert message.startswith(f"{tmp_path / 'config'}:3: key 'default.retry_mode'") and "did you mean 'standard'" in message
    message = error_of(tmp_path, "config", "[default]\nmax_attempt = 3\n")
    assert ":2: key 'default.max_attempt'" in message and "did you mean 'max_attempts'" in message


@pytest.mark.parametrize("codes, kinds", [
    (["UNAVAILABLE"], ["rejected"]),
    (["UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL"], ["rejected", "server_error", "timed_out"]),
    (["UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL", "ABORTED"], None),  # every kind: no RetryOn
    (["NOT_FOUND"], []),
])
def test_grpc_retryable_codes_are_the_failure_kinds_retried(tmp_path: Path, codes: list[str], kinds) -> None:
    from sim.policies.retry_on import RetryOn
    layer = service_config(tmp_path, {"retryPolicy": {**RETRY, "retryableStatusCodes": codes}})
    found = [list(p.kinds) for p in config_of(layer).simulations[0].strategies[0].chain.policies
             if isinstance(p, RetryOn)]
    assert found == ([] if kinds is None else [kinds])
