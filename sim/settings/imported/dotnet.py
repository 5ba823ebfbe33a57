""".NET ``appsettings.json`` for Microsoft.Extensions.Http.Resilience's standard handlers (Polly v8
underneath): ``Retry``, ``AttemptTimeout``, ``TotalRequestTimeout``, ``CircuitBreaker`` (and
``RateLimiter``) of ``AddStandardResilienceHandler``; ``Hedging`` and ``Endpoint`` of
``AddStandardHedgingHandler``. The section may sit anywhere in the file (it is bound with
``GetSection(...)``); each section found is one layer, named by its path.

Defaults, from dotnet/extensions ``src/Libraries/Microsoft.Extensions.Http.Resilience``
(``HttpStandardResilienceOptions.cs``: the pipeline RateLimiter → TotalRequestTimeout → Retry →
CircuitBreaker → AttemptTimeout, AttemptTimeout 10 s; ``HttpRetryStrategyOptions``: BackoffType
Exponential, UseJitter true) and App-vNext/Polly (``RetryConstants``: MaxRetryAttempts 3, Delay
2 s; ``TimeoutConstants``: 30 s, the total timeout; ``CircuitBreakerConstants``: FailureRatio 0.1,
MinimumThroughput 100, SamplingDuration 30 s, BreakDuration 5 s; ``HedgingConstants``:
MaxHedgedAttempts 1, Delay 2 s). The retry sits outside the breaker, so the breaker counts every
attempt, as the ``CircuitBreaker(kind = "ratio")`` policy does.
"""

from __future__ import annotations

from typing import Any

from sim.settings.imported.durations import to_ms
from sim.settings.imported.layer import Knob, Layer
from sim.settings.imported.source import Document, boolean, check_keys, integer, number, table, word

STANDARD = ("RateLimiter", "TotalRequestTimeout", "Retry", "CircuitBreaker", "AttemptTimeout")
HEDGING = ("TotalRequestTimeout", "Hedging", "Endpoint")
RETRY_KEYS = ("MaxRetryAttempts", "BackoffType", "UseJitter", "Delay", "MaxDelay", "ShouldRetryAfterHeader", "Name")
TIMEOUT_KEYS = ("Timeout", "Name")
BREAKER_KEYS = ("FailureRatio", "MinimumThroughput", "SamplingDuration", "BreakDuration", "Name")
LIMITER_KEYS = ("DefaultRateLimiterOptions", "Name")
HEDGING_KEYS = ("MaxHedgedAttempts", "Delay", "Name")
ENDPOINT_KEYS = ("RateLimiter", "CircuitBreaker", "Timeout")
DEFAULT_RETRIES = 3                 # Polly RetryConstants.DefaultRetryCount
DEFAULT_DELAY_MS = 2000.0           # Polly RetryConstants.DefaultBaseDelay: 2 s
DEFAULT_ATTEMPT_TIMEOUT_MS = 10000.0  # HttpStandardResilienceOptions.AttemptTimeoutOptions: 10 s
DEFAULT_TOTAL_TIMEOUT_MS = 30000.0  # Polly TimeoutConstants.DefaultTimeout: 30 s
DEFAULT_HEDGED = 1                  # Polly HedgingConstants.DefaultMaxHedgedAttempts
DEFAULT_HEDGING_DELAY_MS = 2000.0   # Polly HedgingConstants.DefaultHedgingDelay: 2 s
TRANSIENT = ("rejected", "server_error", "timed_out")  # HttpClientResiliencePredicates.IsTransient, in our kinds
EXPONENTIAL_CAP_MS = 86_400_000.0   # no MaxDelay: one day stands for Polly's TimeSpan.MaxValue guard


def handler_sections(value: Any, path: tuple) -> list[tuple[tuple, dict[str, Any]]]:
    """Every section holding a standard (or hedging) handler's options, with its path."""
    if not isinstance(value, dict):
        return []
    keys = set(value)
    if keys & {"Retry", "AttemptTimeout", "TotalRequestTimeout", "CircuitBreaker", "Hedging", "Endpoint"}:
        return [(path, value)]
    out = []
    for k, v in value.items():
        out += handler_sections(v, path + (k,))
    return out


def read(doc: Document) -> list[Layer]:
    found = handler_sections(doc.data, ())
    if not found:
        raise doc.error((), "has no resilience handler section (Retry, AttemptTimeout, TotalRequestTimeout, "
                        "CircuitBreaker, Hedging)", 'e.g. "Resilience": { "Retry": { "MaxRetryAttempts": 3 } }')
    return [_layer(doc, path, section) for path, section in found]


def _timeout(doc: Document, path: tuple, raw: Any, default: float) -> float:
    t = table(doc, path, raw, '{ "Timeout": "00:00:10" }')
    check_keys(doc, path, t, TIMEOUT_KEYS, "a Polly timeout")
    if "Timeout" not in t:
        return default
    ms = to_ms(doc, path + ("Timeout",), t["Timeout"], "timespan")
    if not 10.0 <= ms <= 86_400_000.0:  # TimeoutStrategyOptions: [Range("00:00:00.010", "1.00:00:00")]
        raise doc.error(path + ("Timeout",), "must be from 10 ms to 1 day (Polly's range)")
    return ms


def _layer(doc: Document, path: tuple, section: dict[str, Any]) -> Layer:
    hedging = "Hedging" in section or "Endpoint" in section
    check_keys(doc, path, section, HEDGING if hedging else STANDARD,
               "the standard hedging handler" if hedging else "the standard resilience handler")
    name = ":".join(str(p) for p in path) or "standard"
    notes: list[str] = []
    policies: list[dict[str, Any]] = []
    fleet: dict[str, Any] = {}
    total = _timeout(doc, path + ("TotalRequestTimeout",), section.get("TotalRequestTimeout", {}), DEFAULT_TOTAL_TIMEOUT_MS)
    if hedging:
        hpath = path + ("Hedging",)
        h = table(doc, hpath, section.get("Hedging", {}), '{ "MaxHedgedAttempts": 1 }')
        check_keys(doc, hpath, h, HEDGING_KEYS, "Polly hedging")
        hedged = integer(doc, hpath + ("MaxHedgedAttempts",), h["MaxHedgedAttempts"], minimum=1, maximum=10) \
            if "MaxHedgedAttempts" in h else DEFAULT_HEDGED  # HedgingStrategyOptions: [Range(1, 10)]
        delay = to_ms(doc, hpath + ("Delay",), h["Delay"], "timespan") if "Delay" in h else DEFAULT_HEDGING_DELAY_MS
        attempts = hedged + 1
        notes.append("hedged copies go to other hosts of a fleet (or again to a lone server); no retries")
        entry: dict[str, Any] = {"name": name, "type": "NoBackoff",
                                 "hedging": {"max_attempts": attempts, "delay": delay}}
        policies.append({"type": "MaxAttempts", "max_attempts": 1})
        epath = path + ("Endpoint",)
        endpoint = table(doc, epath, section.get("Endpoint", {}), '{ "Timeout": { "Timeout": "00:00:10" } }')
        check_keys(doc, epath, endpoint, ENDPOINT_KEYS, "the hedging handler's Endpoint")
        attempt_timeout = _timeout(doc, epath + ("Timeout",), endpoint.get("Timeout", {}), DEFAULT_ATTEMPT_TIMEOUT_MS)
        policies.append(_breaker(doc, epath + ("CircuitBreaker",), endpoint.get("CircuitBreaker", {})))
        if "RateLimiter" in endpoint:
            notes.append("Endpoint.RateLimiter: not modelled (the service's own limits are)")
        knob = None
    else:
        attempts, entry = _retry(doc, path + ("Retry",), section.get("Retry", {}), name, notes)
        policies.extend(entry.pop("policies", []))
        policies.append({"type": "RetryOn", "kinds": list(TRANSIENT)})
        attempt_timeout = _timeout(doc, path + ("AttemptTimeout",), section.get("AttemptTimeout", {}),
                                   DEFAULT_ATTEMPT_TIMEOUT_MS)
        policies.append(_breaker(doc, path + ("CircuitBreaker",), section.get("CircuitBreaker", {})))
        knob = Knob("max_retry_attempts", "Retry.MaxRetryAttempts",
                    tuple(sorted({1, 2, 3, 4, 5, attempts - 1}))) if "preset" in entry else None
        if "RateLimiter" in section:
            rpath = path + ("RateLimiter",)
            check_keys(doc, rpath, table(doc, rpath, section["RateLimiter"], "{}"), LIMITER_KEYS, "the rate limiter")
            notes.append("RateLimiter (1000 concurrent requests by default): not modelled")
    if attempt_timeout >= total:  # HttpStandardResilienceOptionsCustomValidator
        raise doc.error(path + ("TotalRequestTimeout",), "must be greater than the attempt timeout "
                        f"({attempt_timeout:g} ms): .NET refuses these options", "raise it or lower the attempt timeout")
    policies.append({"type": "AttemptTimeout", "timeout": attempt_timeout})
    policies.append({"type": "Deadline", "total": total})
    notes.append("TotalRequestTimeout: no retry starts after it (the attempt in flight is not cut short)")
    entry["policies"] = policies
    return Layer(source=doc.file, kind="dotnet", name=name, attempts=attempts, entry=entry, timeout=attempt_timeout,
                 total_timeout=total, fleet=fleet, knob=knob, notes=tuple(notes))


def _retry(doc: Document, path: tuple, raw: Any, name: str, notes: list[str]) -> tuple[int, dict[str, Any]]:
    r = table(doc, path, raw, '{ "MaxRetryAttempts": 3, "Delay": "00:00:02" }')
    check_keys(doc, path, r, RETRY_KEYS, "Polly retry options")
    retries = integer(doc, path + ("MaxRetryAttempts",), r["MaxRetryAttempts"], minimum=1, maximum=2**31 - 1) \
        if "MaxRetryAttempts" in r else DEFAULT_RETRIES  # RetryStrategyOptions: [Range(1, int.MaxValue)]
    kind = word(doc, path + ("BackoffType",), r["BackoffType"], ("Constant", "Linear", "Exponential"), fold=True) \
        if "BackoffType" in r else "Exponential"  # HttpRetryStrategyOptions: Exponential
    jitter = boolean(doc, path + ("UseJitter",), r["UseJitter"]) if "UseJitter" in r else True
    delay = to_ms(doc, path + ("Delay",), r["Delay"], "timespan") if "Delay" in r else DEFAULT_DELAY_MS
    cap = to_ms(doc, path + ("MaxDelay",), r["MaxDelay"], "timespan") if r.get("MaxDelay") is not None else None
    if "ShouldRetryAfterHeader" in r:
        boolean(doc, path + ("ShouldRetryAfterHeader",), r["ShouldRetryAfterHeader"])
        notes.append("ShouldRetryAfterHeader: no Retry-After headers here")
    # HttpClientResiliencePredicates.IsTransient: 408, 429, 5xx, HttpRequestException and
    # TimeoutRejectedException; a 409 conflict is not transient.
    notes.append("retries rejections, server errors and timeouts (HttpRetryStrategyOptions: transient failures); "
                 "a conflict (409) ends the call")
    limit = [{"type": "MaxAttempts", "max_attempts": retries + 1}]
    settings: dict[str, Any] = {"max_retry_attempts": retries, "delay": delay,
                                **({} if cap is None else {"max_delay": cap})}
    if kind == "Exponential" and jitter:
        return retries + 1, {"name": name, "preset": "polly-v8-exponential-jitter", **settings}
    if kind == "Constant" and not jitter:
        return retries + 1, {"name": name, "preset": "polly-v8", **settings}
    if kind == "Constant":  # RetryHelper.ApplyJitter: d ± 25%
        low, high = 0.75 * delay, 1.25 * delay
        if cap is not None:
            low, high = min(low, cap), min(high, cap)
            notes.append("MaxDelay caps the jittered constant delay: read as U(min(0.75 d, cap), min(1.25 d, cap))")
        return retries + 1, {"name": name, "type": "UniformRandom", "low": low, "high": high, "policies": limit}
    if kind == "Exponential":  # no jitter: 2^n · d (n from 0), capped at MaxDelay
        return retries + 1, {"name": name, "type": "Expo", "base": delay,
                             "cap": max(delay, cap if cap is not None else EXPONENTIAL_CAP_MS), "policies": limit}
    notes.append("BackoffType Linear ((n + 1) · Delay): not modelled, read as a constant Delay")
    return retries + 1, {"name": name, "type": "Constant", "constant": delay if cap is None else min(delay, cap),
                         "policies": limit}


def _breaker(doc: Document, path: tuple, raw: Any) -> dict[str, Any]:
    b = table(doc, path, raw, '{ "FailureRatio": 0.1 }')
    check_keys(doc, path, b, BREAKER_KEYS, "Polly circuit breaker options")
    policy: dict[str, Any] = {"type": "CircuitBreaker", "kind": "ratio"}
    if "FailureRatio" in b:
        policy["failure_ratio"] = number(doc, path + ("FailureRatio",), b["FailureRatio"], positive=True, maximum=1)
    if "MinimumThroughput" in b:
        policy["minimum_throughput"] = integer(doc, path + ("MinimumThroughput",), b["MinimumThroughput"], minimum=2)
    for key, ours in (("SamplingDuration", "sampling_duration"), ("BreakDuration", "break_duration")):
        if key in b:
            ms = to_ms(doc, path + (key,), b[key], "timespan")
            if ms < 500.0:  # CircuitBreakerStrategyOptions: [Range(typeof(TimeSpan), "00:00:00.500", ...)]
                raise doc.error(path + (key,), "must be at least 00:00:00.500 (Polly's range)")
            policy[ours] = ms
    return policy
