"""The retry policies of real libraries, by name: ``{ preset = "NAME", ... }`` → plain data.

``expand_preset(entry, unit_seconds)`` returns ``{"preset", "strategy", "policies"}`` (and
``"hedging"`` for the hedging presets) as plain
dicts (``{"type": ..., field: value}``), for the config layer to validate like any strategy and
policy list (``chain_from_data`` does it here). Each preset has *settings*, named as the
library names them, with the library's documented defaults; the defaults that are times are
kept in seconds and converted with ``unit_seconds`` (seconds per time unit of the config:
0.001 for milliseconds); a setting given in the entry overrides its default and is already in
the config's unit. Which library version each preset follows is in ``Preset.library``; the
tests compare each against that version (the Python libraries) or a transcription of its source.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sim.vocabulary.errors import ParamError

Data = dict[str, Any]


@dataclass(frozen=True)
class Setting:
    """One setting of a preset: its default (seconds if ``time``) and what it means."""

    default: Any
    doc: str
    time: bool = False
    # A setting the library requires (no default): the entry must give it; ``example`` is a value
    # the docs and tests use.
    required: bool = False
    example: Any = None


@dataclass(frozen=True)
class Preset:
    name: str
    library: str
    source: str
    expands_to: str
    settings: dict[str, Setting]
    build: Callable[[dict[str, Any], float], Data] = field(repr=False)


def _limit(max_attempts: int | None) -> list[Data]:
    return [] if max_attempts is None else [{"type": "MaxAttempts", "max_attempts": max_attempts}]


def _botocore_standard(v: dict[str, Any], unit: float) -> Data:
    return {
        "strategy": {"type": "BotocoreStandard", "throttle_base": v["throttle_base"],
                     "transient_base": v["transient_base"], "max_backoff": v["max_backoff"]},
        "policies": [*_limit(v["max_attempts"]),
                     {"type": "RetryQuota", "capacity": v["quota_capacity"], "retry_cost": v["retry_cost"],
                      "timeout_cost": v["timeout_cost"], "throttle_cost": v["throttle_cost"],
                      "success_refund": v["success_refund"], "scope": v["scope"]}],
    }


def _botocore_adaptive(v: dict[str, Any], unit: float) -> Data:
    data = _botocore_standard(v, unit)
    data["policies"].append({"type": "AdaptiveRateLimiter", "unit_seconds": unit, "scope": v["scope"]})
    return data


def _grpc(v: dict[str, Any], unit: float) -> Data:
    attempts = v["max_attempts"]
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 2:
        raise ParamError("max_attempts", f"must be an integer >= 2 (A6: it counts the original attempt), got {attempts!r}")
    policies = _limit(min(attempts, v["max_attempts_limit"]))
    if v["throttling"]:
        policies.append({"type": "GrpcThrottle", "max_tokens": v["max_tokens"], "token_ratio": v["token_ratio"],
                         "scope": v["scope"]})
    return {"strategy": {"type": "GrpcBackoff", "initial_backoff": v["initial_backoff"],
                         "max_backoff": v["max_backoff"], "backoff_multiplier": v["backoff_multiplier"],
                         "jitter": v["jitter"]},
            "policies": policies}


def _tenacity_stops(v: dict[str, Any]) -> list[Data]:
    out = _limit(v["stop_after_attempt"])
    if v["stop_after_delay"] is not None:
        out.append({"type": "Deadline", "total": v["stop_after_delay"]})
    if v["stop_before_delay"] is not None:
        out.append({"type": "Deadline", "total": v["stop_before_delay"], "stop_before": True})
    return out


def _strategy_only(type_name: str, names: tuple[str, ...], limits: Callable[[dict[str, Any]], list[Data]]
                   ) -> Callable[[dict[str, Any], float], Data]:
    def build(v: dict[str, Any], unit: float) -> Data:
        strategy = {"type": type_name, **{k: v[k] for k in names if v[k] is not None}}
        return {"strategy": strategy, "policies": limits(v)}
    return build


# Hedging presets (issue 35; ``sim.models.hedging``): no retries after the copies (gRPC: "If
# all instances of a hedged RPC fail, there are no additional retry attempts"; a Polly pipeline
# of the hedging strategy alone), so MaxAttempts(1) and the copies as ``hedging``.
HEDGE_BUDGET = Setting(None, "a hedging budget: hedges at most this percent of attempts (a token bucket; "
                             "neither library has one)")


def _grpc_hedging(v: dict[str, Any], unit: float) -> Data:
    """gRPC's hedgingPolicy (A6): maxAttempts required and >= 2, above the client's limit (5)
    treated as the limit; hedgingDelay 0 s when unset; every failure is a non-fatal status code
    (the model's failures are UNAVAILABLE, RESOURCE_EXHAUSTED, INTERNAL...)."""
    attempts = v["max_attempts"]
    if attempts is None:
        raise ParamError("max_attempts", "is required (A6: maxAttempts has no default)", "add e.g. max_attempts = 3")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 2:
        raise ParamError("max_attempts", f"must be an integer >= 2 (A6: it counts the original RPC), got {attempts!r}")
    delay = v["hedging_delay"]
    if not delay >= 0:
        raise ParamError("hedging_delay", f"must be >= 0, got {delay!r}")
    policies = _limit(1)
    if v["throttling"]:
        policies.append({"type": "GrpcThrottle", "max_tokens": v["max_tokens"], "token_ratio": v["token_ratio"],
                         "scope": v["scope"]})
    return {"strategy": {"type": "NoBackoff"}, "policies": policies,
            "hedging": {"max_attempts": min(attempts, v["max_attempts_limit"]), "delay": delay,
                        "budget": v["budget"]}}


def _polly_hedging(v: dict[str, Any], unit: float) -> Data:
    """Polly v8's HedgingStrategyOptions: MaxHedgedAttempts beyond the original, in [1, 10]
    (``[Range(MinimumHedgedAttempts, MaximumHedgedAttempts)]``); Delay >= 0 (Polly's
    InfiniteTimeSpan, "never before the previous one finished", is not modelled)."""
    n = v["max_hedged_attempts"]
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 10:
        raise ParamError("max_hedged_attempts", f"must be an integer from 1 to 10 (Polly's range), got {n!r}")
    if not v["delay"] >= 0:
        raise ParamError("delay", f"must be >= 0 (InfiniteTimeSpan is not modelled), got {v['delay']!r}")
    return {"strategy": {"type": "NoBackoff"}, "policies": _limit(1),
            "hedging": {"max_attempts": n + 1, "delay": v["delay"], "budget": v["budget"]}}


TENACITY_STOPS = {
    "stop_after_attempt": Setting(None, "stop_after_attempt(n): at most n attempts (tenacity: stop_never)"),
    "stop_after_delay": Setting(None, "stop_after_delay(d): give up once elapsed ≥ d", time=True),
    "stop_before_delay": Setting(None, "stop_before_delay(d): give up if elapsed + next wait ≥ d", time=True),
}
STANDARD_SETTINGS = {
    "max_attempts": Setting(3, "attempts in all (DEFAULT_MAX_ATTEMPTS)"),
    "throttle_base": Setting(1.0, "backoff scale after a throttling error", time=True),
    "transient_base": Setting(0.05, "backoff scale after any other error", time=True),
    "max_backoff": Setting(20.0, "cap of the backoff (_MAX_BACKOFF)", time=True),
    "quota_capacity": Setting(500, "retry quota (RetryQuota.INITIAL_CAPACITY)"),
    "retry_cost": Setting(14, "quota cost of a retry after a non-throttling error"),
    "timeout_cost": Setting(14, "quota cost of a retry after a timeout (10 in botocore ≤ 1.43)"),
    "throttle_cost": Setting(5, "quota cost of a retry after a throttling error"),
    "success_refund": Setting(1, "refund of a success without retries (_NO_RETRY_INCREMENT)"),
    "scope": Setting("client", "one quota per client, or one shared by all (a shared botocore client)"),
}

POLLY_SETTINGS = {
    "max_retry_attempts": Setting(3, "MaxRetryAttempts (RetryConstants.DefaultRetryCount)"),
    "delay": Setting(2.0, "Delay (RetryConstants.DefaultBaseDelay)", time=True),
    "max_delay": Setting(None, "MaxDelay (null: no cap)", time=True),
}


def _polly_retries(v: dict[str, Any]) -> int:
    """MaxRetryAttempts, checked as Polly's ``[Range(1, int.MaxValue)]`` checks it."""
    n = v["max_retry_attempts"]
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 2**31 - 1:
        raise ParamError("max_retry_attempts", f"must be an integer from 1 to {2**31 - 1} (Polly's range), got {n!r}")
    return n


def _polly_constant(v: dict[str, Any]) -> float:
    """GetRetryDelay for Constant without jitter: ``Delay``, or ``MaxDelay`` if that is smaller."""
    delay, cap = v["delay"], v["max_delay"]
    for name, value in (("delay", delay), ("max_delay", cap)):
        if value is not None and not value >= 0:
            raise ParamError(name, f"must be >= 0 (Polly's range starts at 00:00:00), got {value!r}")
    return delay if cap is None else min(delay, cap)


def _r4j_attempts(n: Any) -> int:
    """maxAttempts as RetryConfig.Builder checks it: an integer >= 1."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ParamError("max_attempts", f"must be an integer >= 1 (resilience4j counts the first call), got {n!r}")
    return n


FINAGLE_BUDGET = {
    "percent_can_retry": Setting(0.2, "percentCanRetry"), "min_retries_per_sec": Setting(10, "minRetriesPerSec"),
    "ttl": Setting(10.0, "ttl", time=True),
    "scope": Setting("client", "one budget per client, or one for all"),
}


def _finagle_budget(v: dict[str, Any], unit: float, deposit: str, cap: float | None) -> Data:
    return {"type": "RetryBudget", "percent": 100.0 * v["percent_can_retry"],
            "min_retries_per_s": v["min_retries_per_sec"], "ttl": v["ttl"], "deposit": deposit,
            **({} if cap is None else {"max_retries_per_request": cap}),
            "unit_seconds": unit, "scope": v["scope"]}


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("botocore-legacy", "botocore 1.44.5 (legacy mode)", "botocore/data/_retry.json; botocore/retryhandler.py",
           "BackoffExpo(factor=1 s) (U(0,1)·2ⁿ s, uncapped) + MaxAttempts(5)",
           {"max_attempts": Setting(5, "attempts in all (_retry.json max_attempts)"),
            "base": Setting(1.0, "delay scale: U(0, base)·2ⁿ", time=True)},
           lambda v, unit: {"strategy": {"type": "BackoffExpo", "factor": v["base"], "base": 2},
                            "policies": _limit(v["max_attempts"])}),
    Preset("botocore-standard", "botocore 1.44.5 (standard mode, the default)",
           "botocore/retries/standard.py; botocore/retries/quota.py",
           "BotocoreStandard(U(0,1)·min(scale·2ⁿ, 20 s), scale 1 s throttled / 50 ms else) + MaxAttempts(3)"
           " + RetryQuota(500; 5 throttled, 14 else; refund 1)",
           STANDARD_SETTINGS, _botocore_standard),
    Preset("botocore-adaptive", "botocore 1.44.5 (adaptive mode)",
           "botocore/retries/adaptive.py; throttling.py; bucket.py",
           "botocore-standard + AdaptiveRateLimiter (CUBIC C=0.4, β=0.7, 0.5 s buckets)",
           STANDARD_SETTINGS, _botocore_adaptive),
    Preset("grpc", "gRPC retry policy, proposal A6 (revised 2024-08; grpc-go stream.go)",
           "grpc/proposal A6-client-retries.md; grpc-go stream.go, clientconn.go",
           "GrpcBackoff(0.1 s, ×2, max 1 s, ±20%) + MaxAttempts(min(4, 5)) [+ GrpcThrottle(10, 0.1)]",
           {"max_attempts": Setting(4, "maxAttempts, the original attempt included (A6 example)"),
            "max_attempts_limit": Setting(5, "the client's clamp on maxAttempts"),
            "initial_backoff": Setting(0.1, "initialBackoff (A6 example; required, no default)", time=True),
            "max_backoff": Setting(1.0, "maxBackoff (A6 example)", time=True),
            "backoff_multiplier": Setting(2.0, "backoffMultiplier (A6 example)"),
            "jitter": Setting(0.2, "the delay is multiplied by U(1 − jitter, 1 + jitter)"),
            "throttling": Setting(False, "add retryThrottling"),
            "max_tokens": Setting(10.0, "retryThrottling maxTokens (A6 example)"),
            "token_ratio": Setting(0.1, "retryThrottling tokenRatio (A6 example)"),
            "scope": Setting("client", "throttle per client, or one per server name for all clients")},
           _grpc),
    Preset("grpc-connect", "gRPC connection backoff (grpc-go backoff.DefaultConfig)",
           "grpc/grpc doc/connection-backoff.md; grpc-go backoff/backoff.go, internal/backoff/backoff.go",
           "GrpcConnectBackoff(1 s, ×1.6, ±20%, max 120 s) + AttemptTimeout(20 s)",
           {"base_delay": Setting(1.0, "INITIAL_BACKOFF / BaseDelay", time=True),
            "multiplier": Setting(1.6, "MULTIPLIER"),
            "jitter": Setting(0.2, "JITTER"),
            "max_delay": Setting(120.0, "MAX_BACKOFF", time=True),
            "min_connect_timeout": Setting(20.0, "MIN_CONNECT_TIMEOUT, each attempt's timeout", time=True)},
           lambda v, unit: {"strategy": {"type": "GrpcConnectBackoff", "base_delay": v["base_delay"],
                                         "multiplier": v["multiplier"], "jitter": v["jitter"],
                                         "max_delay": v["max_delay"]},
                            "policies": [{"type": "AttemptTimeout", "timeout": v["min_connect_timeout"]}]}),
    Preset("tenacity-random-exponential", "tenacity 9.2.1", "tenacity/wait.py (wait_random_exponential); tenacity/stop.py",
           "TenacityRandomExponential(U(0, min(1 s·2ⁿ, max))), no stop",
           {"multiplier": Setting(1.0, "multiplier", time=True), "max": Setting(None, "max (tenacity: MAX_WAIT)", time=True),
            "exp_base": Setting(2.0, "exp_base"), "min": Setting(0.0, "min", time=True), **TENACITY_STOPS},
           _strategy_only("TenacityRandomExponential", ("multiplier", "max", "exp_base", "min"), _tenacity_stops)),
    Preset("tenacity-exponential-jitter", "tenacity 9.2.1", "tenacity/wait.py (wait_exponential_jitter); tenacity/stop.py",
           "TenacityExponentialJitter(min(1 s·2ⁿ + U(0, 1 s), max)), no stop",
           {"multiplier": Setting(1.0, "multiplier (initial before 9.2)", time=True),
            "max": Setting(None, "max (tenacity: MAX_WAIT)", time=True), "exp_base": Setting(2.0, "exp_base"),
            "jitter": Setting(1.0, "jitter", time=True), "min": Setting(0.0, "min", time=True), **TENACITY_STOPS},
           _strategy_only("TenacityExponentialJitter", ("multiplier", "max", "exp_base", "jitter", "min"), _tenacity_stops)),
    Preset("stamina", "stamina 26.1.0", "src/stamina/_core.py (retry, _compute_backoff, _make_stop)",
           "Stamina(min(5 s, 0.1 s·2ⁿ + U(0, 1 s))) + MaxAttempts(10) + Deadline(45 s)",
           {"attempts": Setting(10, "attempts in all"), "timeout": Setting(45.0, "stop_after_delay", time=True),
            "wait_initial": Setting(0.1, "wait_initial", time=True), "wait_max": Setting(5.0, "wait_max", time=True),
            "wait_jitter": Setting(1.0, "wait_jitter", time=True), "wait_exp_base": Setting(2.0, "wait_exp_base")},
           lambda v, unit: {"strategy": {"type": "Stamina", **{k: v[k] for k in ("wait_initial", "wait_max", "wait_jitter", "wait_exp_base")}},
                            "policies": [*_limit(v["attempts"]),
                                         *([] if v["timeout"] is None else [{"type": "Deadline", "total": v["timeout"]}])]}),
    Preset("urllib3", "urllib3 2.8.0", "src/urllib3/util/retry.py (Retry, get_backoff_time)",
           "Urllib3Backoff(0, then backoff_factor·2ⁿ, max 120 s) + MaxAttempts(11) (total=10 retries)",
           {"total": Setting(10, "retries in all (Retry(total=10))"),
            "backoff_factor": Setting(0.0, "backoff_factor (0: no backoff; e.g. 0.1 s)", time=True),
            "backoff_max": Setting(120.0, "DEFAULT_BACKOFF_MAX", time=True),
            "backoff_jitter": Setting(0.0, "backoff_jitter", time=True)},
           lambda v, unit: {"strategy": {"type": "Urllib3Backoff", "backoff_factor": v["backoff_factor"],
                                         "backoff_max": v["backoff_max"], "backoff_jitter": v["backoff_jitter"]},
                            "policies": _limit(None if v["total"] is None else v["total"] + 1)}),
    Preset("backoff-expo", "backoff (litl) 2.2.1", "backoff/_wait_gen.py (expo); backoff/_jitter.py (full_jitter)",
           "BackoffExpo(U(0, 1 s·2ⁿ), uncapped), no stop",
           {"factor": Setting(1.0, "factor", time=True), "base": Setting(2.0, "base"),
            "max_value": Setting(None, "max_value", time=True), "max_tries": Setting(None, "max_tries")},
           lambda v, unit: {"strategy": {"type": "BackoffExpo", **{k: v[k] for k in ("factor", "base", "max_value") if v[k] is not None}},
                            "policies": _limit(v["max_tries"])}),
    # Polly v8's RetryStrategyOptions defaults (App-vNext/Polly at 173d6d1d, Polly.Core
    # src/Polly.Core/Retry/RetryConstants.cs: DefaultRetryCount = 3, DefaultBackoffType =
    # Constant, DefaultBaseDelay = 2 s; RetryStrategyOptions.TResult.cs: UseJitter false, MaxDelay
    # null): RetryHelper.GetRetryDelay gives `baseDelay` for Constant without jitter, capped at
    # MaxDelay. The exponential-with-jitter options are the second preset.
    Preset("polly-v8", "Polly 8 (App-vNext/Polly, Polly.Core; RetryStrategyOptions defaults)",
           "src/Polly.Core/Retry/RetryConstants.cs; RetryStrategyOptions.TResult.cs; RetryHelper.cs (GetRetryDelay)",
           "Constant(2 s) + MaxAttempts(4) (3 retries; BackoffType Constant, no jitter)",
           POLLY_SETTINGS,
           lambda v, unit: {"strategy": {"type": "Constant", "constant": _polly_constant(v)},
                            "policies": _limit(_polly_retries(v) + 1)}),
    Preset("polly-v8-exponential-jitter",
           "Polly 8 (App-vNext/Polly, Polly.Core; BackoffType = Exponential, UseJitter = true)",
           "src/Polly.Core/Retry/RetryHelper.cs (DecorrelatedJitterBackoffV2); RetryConstants.cs",
           "PollyDecorrelatedJitter(2 s) + MaxAttempts(4) (3 retries)",
           POLLY_SETTINGS,
           lambda v, unit: {"strategy": {"type": "PollyDecorrelatedJitter", "delay": v["delay"],
                                         **({} if v["max_delay"] is None else {"max_delay": v["max_delay"]})},
                            "policies": _limit(_polly_retries(v) + 1)}),
    Preset("client-go", "Kubernetes client-go workqueue", "staging/src/k8s.io/client-go/util/workqueue/default_rate_limiters.go",
           "Expo(5 ms, cap 1000 s) + RateLimit(10 qps, burst 100, shared)",
           {"base_delay": Setting(0.005, "ItemExponentialFailureRateLimiter baseDelay", time=True),
            "max_delay": Setting(1000.0, "maxDelay", time=True), "qps": Setting(10.0, "BucketRateLimiter rate"),
            "burst": Setting(100, "BucketRateLimiter burst")},
           lambda v, unit: {"strategy": {"type": "Expo", "base": v["base_delay"], "cap": v["max_delay"]},
                            "policies": [{"type": "RateLimit", "qps": v["qps"], "burst": v["burst"], "unit_seconds": unit}]}),
    Preset("google-http-client", "google-http-java-client ExponentialBackOff",
           "google-http-client/src/main/java/com/google/api/client/util/ExponentialBackOff.java; HttpRequest.java",
           "GoogleHttpClient(0.5 s, ×1.5, ±50%, 60 s, stop after 900 s) + MaxAttempts(11) (10 retries)",
           {"initial_interval": Setting(0.5, "initialIntervalMillis", time=True),
            "multiplier": Setting(1.5, "multiplier"), "randomization_factor": Setting(0.5, "randomizationFactor"),
            "max_interval": Setting(60.0, "maxIntervalMillis", time=True),
            "max_elapsed": Setting(900.0, "maxElapsedTimeMillis", time=True),
            "number_of_retries": Setting(10, "HttpRequest.DEFAULT_NUMBER_OF_RETRIES")},
           lambda v, unit: {"strategy": {"type": "GoogleHttpClient", **{k: v[k] for k in (
               "initial_interval", "multiplier", "randomization_factor", "max_interval", "max_elapsed")}},
                            "policies": _limit(None if v["number_of_retries"] is None else v["number_of_retries"] + 1)}),
    Preset("envoy", "Envoy (route retry policy, cluster retry budget)",
           "source/common/common/backoff_strategy.cc; source/common/router/retry_state_impl.cc; resource_manager_impl.h",
           "EnvoyBackoff(whole ms in [0, 25 ms·2ⁿ), max 250 ms) + MaxAttempts(2) + ConcurrencyBudget(20%, 3)",
           {"num_retries": Setting(1, "num_retries"), "base_interval": Setting(0.025, "base_interval", time=True),
            "max_interval": Setting(0.25, "max_interval (10 × base_interval)", time=True),
            "budget_percent": Setting(20.0, "retry_budget.budget_percent"),
            "min_retry_concurrency": Setting(3, "retry_budget.min_retry_concurrency")},
           lambda v, unit: {"strategy": {"type": "EnvoyBackoff", "base_interval": v["base_interval"],
                                         "max_interval": v["max_interval"], "tick": 0.001 / unit},
                            "policies": [*_limit(v["num_retries"] + 1),
                                         {"type": "ConcurrencyBudget", "percent": v["budget_percent"],
                                          "min_concurrency": v["min_retry_concurrency"]}]}),
    # resilience4j/resilience4j (resilience4j-retry RetryConfig.java: DEFAULT_MAX_ATTEMPTS = 3,
    # DEFAULT_WAIT_DURATION = 500 ms, a constant interval; resilience4j-core IntervalFunction.java:
    # DEFAULT_MULTIPLIER = 1.5, DEFAULT_RANDOMIZATION_FACTOR = 0.5; the Spring properties'
    # enableExponentialBackoff / enableRandomizedWait pick of, ofExponentialBackoff, ofRandomized or
    # ofExponentialRandomBackoff: resilience4j-framework-common CommonRetryConfigurationProperties).
    Preset("resilience4j", "resilience4j 2.x Retry (RetryConfig defaults; Spring Boot instance properties)",
           "resilience4j-retry/.../RetryConfig.java; resilience4j-core/.../IntervalFunction.java;"
           " resilience4j-framework-common/.../CommonRetryConfigurationProperties.java",
           "Resilience4jBackoff(500 ms constant; ×1.5, ±50% when enabled) + MaxAttempts(3) (maxAttempts counts the first)",
           {"max_attempts": Setting(3, "maxAttempts, the first call included (RetryConfig.DEFAULT_MAX_ATTEMPTS)"),
            "wait_duration": Setting(0.5, "waitDuration (RetryConfig.DEFAULT_WAIT_DURATION = 500 ms)", time=True),
            "enable_exponential_backoff": Setting(False, "enableExponentialBackoff"),
            "exponential_backoff_multiplier": Setting(1.5, "exponentialBackoffMultiplier (IntervalFunction.DEFAULT_MULTIPLIER)"),
            "exponential_max_wait_duration": Setting(None, "exponentialMaxWaitDuration (none: no cap)", time=True),
            "enable_randomized_wait": Setting(False, "enableRandomizedWait"),
            "randomized_wait_factor": Setting(0.5, "randomizedWaitFactor (IntervalFunction.DEFAULT_RANDOMIZATION_FACTOR)")},
           lambda v, unit: {"strategy": {"type": "Resilience4jBackoff", "wait_duration": v["wait_duration"],
                                         "multiplier": v["exponential_backoff_multiplier"] if v["enable_exponential_backoff"] else 1.0,
                                         "randomization_factor": v["randomized_wait_factor"] if v["enable_randomized_wait"] else 0.0,
                                         **({} if v["exponential_max_wait_duration"] is None or not v["enable_exponential_backoff"]
                                            else {"max_wait_duration": v["exponential_max_wait_duration"]}),
                                         "tick": 0.001 / unit},
                            "policies": _limit(_r4j_attempts(v["max_attempts"]))}),
    # gRPC's hedgingPolicy, proposal A6 (grpc/proposal A6-client-retries.md, "Hedging Policy",
    # "Throttling Retry Attempts and Hedged RPCs", "Limits on Retries and Hedges").
    Preset("grpc-hedging", "gRPC hedging policy, proposal A6 (hedgingPolicy, retryThrottling)",
           "grpc/proposal A6-client-retries.md",
           "NoBackoff + MaxAttempts(1) + hedging(min(max_attempts, 5) copies, every 0 s) [+ GrpcThrottle(10, 0.1)]",
           {"max_attempts": Setting(None, "maxAttempts, the original RPC included (required, >= 2)",
                                    required=True, example=3),
            "max_attempts_limit": Setting(5, "the client's clamp on maxAttempts (higher values treated as 5)"),
            "hedging_delay": Setting(0.0, "hedgingDelay (unset: 0 s, every copy at once)", time=True),
            "budget": HEDGE_BUDGET,
            "throttling": Setting(False, "add retryThrottling (it gates hedges: none while tokens <= max/2)"),
            "max_tokens": Setting(10.0, "retryThrottling maxTokens (A6 example)"),
            "token_ratio": Setting(0.1, "retryThrottling tokenRatio (A6 example)"),
            "scope": Setting("client", "throttle per client, or one per server name for all clients")},
           _grpc_hedging),
    # Polly v8's HedgingStrategyOptions<TResult> (App-vNext/Polly, src/Polly.Core/Hedging/
    # HedgingStrategyOptions.TResult.cs; HedgingConstants.cs: DefaultMaxHedgedAttempts = 1,
    # MinimumHedgedAttempts 1, MaximumHedgedAttempts 10, DefaultHedgingDelay = 2 s; ShouldHandle
    # hedges on any exception but OperationCanceledException: every failure of the model).
    Preset("polly-v8-hedging", "Polly 8 (App-vNext/Polly, Polly.Core; HedgingStrategyOptions defaults)",
           "src/Polly.Core/Hedging/HedgingStrategyOptions.TResult.cs; HedgingConstants.cs",
           "NoBackoff + MaxAttempts(1) + hedging(2 copies, every 2 s)",
           {"max_hedged_attempts": Setting(1, "MaxHedgedAttempts, beyond the original (DefaultMaxHedgedAttempts)"),
            "delay": Setting(2.0, "Delay (DefaultHedgingDelay)", time=True),
            "budget": HEDGE_BUDGET},
           _polly_hedging),
    # twitter/finagle at 4feb34cb: the client stack's Retries.moduleRequeueable builds a
    # RequeueFilter(RetryBudget(), Backoff.const(0), MaxRequeuesPerReq = 0.2); RequeueFilter.apply
    # fixes the cap from the balance first and deposits only after a successful response.
    Preset("finagle", "Finagle RetryBudget() in the client stack's RequeueFilter",
           "finagle-core/.../service/RequeueFilter.scala; RetryBudget.scala; Retries.scala",
           "NoBackoff + RetryBudget(20%, 10/s reserve, ttl 10 s, deposit after a success,"
           " ≤ ceil(0.2 × balance) per request)",
           {**FINAGLE_BUDGET, "max_retries_per_request": Setting(0.2, "MaxRequeuesPerReq")},
           lambda v, unit: {"strategy": {"type": "NoBackoff"},
                            "policies": [_finagle_budget(v, unit, "success", v["max_retries_per_request"])]}),
    # MethodBuilder's retries (client/MethodBuilderRetry.scala): a RetryFilter with
    # RetryPolicy.tries(DefaultMaxRetries 2 + 1) = Backoff.decorrelatedJittered(5 ms, 200 ms) and
    # the client's RetryBudget(); RetryFilter.apply deposits as each request starts, no cap.
    Preset("finagle-retry", "Finagle RetryBudget() in a RetryFilter (MethodBuilder's retries)",
           "finagle-core/.../service/RetryFilter.scala; RetryPolicy.scala (tries); Backoff.scala;"
           " client/MethodBuilderRetry.scala",
           "FinagleDecorrelatedJittered(5 ms, 200 ms) + MaxAttempts(3) + RetryBudget(20%, 10/s reserve, ttl 10 s,"
           " deposit per request)",
           {"max_retries": Setting(2, "MethodBuilderRetry DefaultMaxRetries (RetryPolicy.tries(max_retries + 1))"),
            "start": Setting(0.005, "RetryPolicy.tries: decorrelatedJittered start", time=True),
            "maximum": Setting(0.2, "RetryPolicy.tries: decorrelatedJittered maximum", time=True),
            **FINAGLE_BUDGET},
           lambda v, unit: {"strategy": {"type": "FinagleDecorrelatedJittered", "start": v["start"],
                                         "maximum": v["maximum"]},
                            "policies": [*_limit(None if v["max_retries"] is None else v["max_retries"] + 1),
                                         _finagle_budget(v, unit, "request", None)]}),
)}


def _check_type(name: str, default: Any, value: Any) -> None:
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ParamError(name, f"must be true or false, got {value!r}")
    elif isinstance(default, str):
        if not isinstance(value, str):
            raise ParamError(name, f"must be a string, got {value!r}")
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(name, f"must be a number, got {value!r}")
    elif isinstance(default, int) and not isinstance(value, int):
        raise ParamError(name, f"must be an integer, got {value!r}")


def preset_settings(name: str, unit_seconds: float = 0.001) -> dict[str, Any]:
    """A preset's default settings, times converted to the config's unit."""
    preset = PRESETS[name]
    return {k: (s.default / unit_seconds if s.time and s.default is not None else s.default)
            for k, s in preset.settings.items()}


def required_example(name: str) -> dict[str, Any]:
    """The settings preset ``name`` requires, at their example values (``Setting.example``)."""
    return {k: s.example for k, s in PRESETS[name].settings.items() if s.required}


def expand_preset(entry: Mapping[str, Any], unit_seconds: float = 0.001) -> Data:
    """``{ preset = "NAME", setting = value, ... }`` → ``{"preset", "strategy", "policies"}``
    (and ``"hedging"`` for a hedging preset)."""
    if not unit_seconds > 0:
        raise ParamError("unit_seconds", f"must be > 0, got {unit_seconds!r}")
    name = entry.get("preset")
    preset = PRESETS.get(name) if isinstance(name, str) else None
    if preset is None:
        raise ParamError("preset", f"unknown preset {name!r}", f"choose one of {', '.join(PRESETS)}")
    values = preset_settings(preset.name, unit_seconds)
    for key, value in entry.items():
        if key in ("preset", "name"):
            continue
        if key not in preset.settings:
            raise ParamError(key, f"is not a setting of preset {preset.name!r}",
                             f"it takes {', '.join(preset.settings)}")
        default = preset.settings[key].default
        if value is not None and default is not None:
            _check_type(key, default, value)
        elif value is not None:
            _check_type(key, 0.0, value)
        values[key] = value
    data = preset.build(values, unit_seconds)
    return {"preset": preset.name, **data}
