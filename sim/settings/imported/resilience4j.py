"""resilience4j's Spring Boot ``application.yml``: ``resilience4j.retry`` and
``resilience4j.circuitbreaker`` (``configs``, ``instances``, ``baseConfig``), onto the
``resilience4j`` preset and a ``CircuitBreaker(kind = "count")``.

Inheritance, as resilience4j-framework-common ``CommonRetryConfigurationProperties`` does it: an
instance takes the keys it lacks from its ``baseConfig`` (else from ``configs.default``), then
RetryConfig's own defaults (``RetryConfig.java``: ``DEFAULT_MAX_ATTEMPTS = 3``,
``DEFAULT_WAIT_DURATION = 500`` ms). The interval function is chosen only where a
``waitDuration`` is given (``configureRetryIntervalFunction``); without one the flags are ignored
and the wait stays 500 ms. Breaker defaults: resilience4j-circuitbreaker ``CircuitBreakerConfig``
(failure rate 50%, a count window of 100 calls, minimum 100 calls, 60 s open, 10 calls half-open).

Decorator order: resilience4j-spring-boot's aspects run by ``retryAspectOrder``
(``Ordered.LOWEST_PRECEDENCE - 5``) and ``circuitBreakerAspectOrder`` (``LOWEST_PRECEDENCE - 4``):
the lower runs outside, so by default the retry is outside the breaker and the breaker sees every
attempt (``Retry ( CircuitBreaker ( ... ) )``). ``order="retry-inside"`` reads the other order.
"""

from __future__ import annotations

import re
from typing import Any

from sim.settings.imported.durations import to_ms
from sim.settings.imported.layer import Knob, Layer
from sim.settings.imported.source import Document, boolean, check_keys, integer, number, table, word

ORDERS = ("retry-outside", "retry-inside")
LOWEST_PRECEDENCE = 2**31 - 1  # org.springframework.core.Ordered.LOWEST_PRECEDENCE
RETRY_ASPECT_ORDER = LOWEST_PRECEDENCE - 5      # RetryConfigurationProperties.retryAspectOrder
BREAKER_ASPECT_ORDER = LOWEST_PRECEDENCE - 4    # CircuitBreakerConfigurationProperties.circuitBreakerAspectOrder
DEFAULT_MAX_ATTEMPTS = 3        # RetryConfig.DEFAULT_MAX_ATTEMPTS
DEFAULT_WAIT_MS = 500.0         # RetryConfig.DEFAULT_WAIT_DURATION
DEFAULT_MULTIPLIER = 1.5        # IntervalFunction.DEFAULT_MULTIPLIER
DEFAULT_RANDOMIZATION = 0.5     # IntervalFunction.DEFAULT_RANDOMIZATION_FACTOR
DEFAULT_TIME_LIMIT_MS = 1000.0  # TimeLimiterConfig: timeoutDuration 1 s

RETRY_KEYS = ("waitDuration", "intervalBiFunction", "maxAttempts", "maxRetryAttempts", "retryExceptionPredicate",
              "resultPredicate", "consumeResultBeforeRetryAttempt", "retryExceptions", "ignoreExceptions",
              "eventConsumerBufferSize", "enableExponentialBackoff", "exponentialBackoffMultiplier",
              "exponentialMaxWaitDuration", "enableRandomizedWait", "randomizedWaitFactor", "failAfterMaxAttempts",
              "baseConfig", "writableStackTraceEnabled")
BREAKER_KEYS = ("waitDurationInOpenState", "slowCallDurationThreshold", "maxWaitDurationInHalfOpenState",
                "failureRateThreshold", "slowCallRateThreshold", "slidingWindowType", "slidingWindowSize",
                "minimumNumberOfCalls", "permittedNumberOfCallsInHalfOpenState",
                "automaticTransitionFromOpenToHalfOpenEnabled", "writableStackTraceEnabled",
                "allowHealthIndicatorToFail", "eventConsumerBufferSize", "registerHealthIndicator",
                "recordFailurePredicate", "recordExceptions", "recordResultPredicate", "ignoreExceptions",
                "ignoreExceptionPredicate", "baseConfig", "enableExponentialBackoff", "exponentialBackoffMultiplier",
                "exponentialMaxWaitDurationInOpenState", "enableRandomizedWait", "randomizedWaitFactor",
                "ringBufferSizeInClosedState", "ringBufferSizeInHalfOpenState", "waitIntervalFunctionInOpenState",
                "initialState", "ignoreClassBindingExceptions")
TIME_LIMITER_KEYS = ("timeoutDuration", "cancelRunningFuture", "eventConsumerBufferSize", "baseConfig")
MODULE_KEYS = {"retry": ("retryAspectOrder", "configs", "instances", "backends", "metrics", "tags"),
               "circuitbreaker": ("circuitBreakerAspectOrder", "configs", "instances", "backends", "metrics", "tags"),
               "timelimiter": ("timeLimiterAspectOrder", "configs", "instances", "backends", "metrics", "tags")}
OTHER_MODULES = ("bulkhead", "thread-pool-bulkhead", "ratelimiter")


def camel(key: str) -> str:
    """Spring's relaxed binding: ``max-attempts`` and ``max_attempts`` bind as ``maxAttempts``."""
    return re.sub(r"[-_](\w)", lambda m: m.group(1).upper(), key) if isinstance(key, str) else key


def _module(doc: Document, root: dict[str, Any], name: str) -> tuple[tuple, dict[str, Any]]:
    path = ("resilience4j",) + ((name,) if name in root else ())
    if name not in root:
        return path, {}
    module = table(doc, path, root[name], "{ instances: { backendA: { maxAttempts: 3 } } }")
    check_keys(doc, path, {camel(k): v for k, v in module.items()}, MODULE_KEYS[name], f"resilience4j.{name}")
    return path, module


def _named(doc: Document, path: tuple, module: dict[str, Any], key: str) -> dict[str, tuple[tuple, dict[str, Any]]]:
    """``configs`` or ``instances`` (``backends`` is the old name) of a module."""
    out: dict[str, tuple[tuple, dict[str, Any]]] = {}
    for spelled in (k for k in module if camel(k) == key or (key == "instances" and camel(k) == "backends")):
        group = table(doc, path + (spelled,), module[spelled], "{ backendA: { maxAttempts: 3 } }")
        for name, raw in group.items():
            out[str(name)] = (path + (spelled, name), table(doc, path + (spelled, name), raw or {}, "{ maxAttempts: 3 }"))
    return out


def _merged(doc: Document, what: str, path: tuple, raw: dict[str, Any], configs: dict, known: tuple[str, ...],
            name: str) -> dict[str, tuple[tuple, Any]]:
    """An instance's keys (camelCase) with where each was written, its base config's beneath."""
    own = {}
    for key, value in raw.items():
        own[camel(key)] = (path + (key,), value)
    check_keys(doc, path, {camel(k): v for k, v in raw.items()}, known, f"a resilience4j {what} instance")
    base_name = own.get("baseConfig", (None, None))[1]
    if base_name is not None:
        if base_name not in configs:
            raise doc.error(own["baseConfig"][0], f"names no config {base_name!r}",
                            f"the configs are {', '.join(configs) or 'none'}")
        bpath, braw = configs[base_name]
        base = _merged(doc, what, bpath, braw, {}, known, base_name)
    elif name != "default" and "default" in configs:
        bpath, braw = configs["default"]
        base = _merged(doc, what, bpath, braw, {}, known, "default")
    else:
        base = {}
    return {**base, **own}


def read(doc: Document, order: str | None = None) -> list[Layer]:
    data = table(doc, (), doc.data, "{ resilience4j: { retry: {...} } }")
    if "resilience4j" not in data:
        raise doc.error((), "has no resilience4j section", "add resilience4j: { retry: { instances: ... } }")
    root = table(doc, ("resilience4j",), data["resilience4j"], "{ retry: { instances: ... } }")
    known = tuple(MODULE_KEYS) + OTHER_MODULES
    check_keys(doc, ("resilience4j",), root, known, "resilience4j")
    rpath, retry = _module(doc, root, "retry")
    cpath, breaker = _module(doc, root, "circuitbreaker")
    tpath, limiter = _module(doc, root, "timelimiter")
    retry_configs, breaker_configs, limiter_configs = (_named(doc, p, m, "configs") for p, m in
                                                      ((rpath, retry), (cpath, breaker), (tpath, limiter)))
    retries = _named(doc, rpath, retry, "instances")
    breakers = _named(doc, cpath, breaker, "instances")
    limiters = _named(doc, tpath, limiter, "instances")
    if order is None:
        retry_order = _aspect_order(doc, rpath, retry, "retryAspectOrder", RETRY_ASPECT_ORDER)
        breaker_order = _aspect_order(doc, cpath, breaker, "circuitBreakerAspectOrder", BREAKER_ASPECT_ORDER)
        order = "retry-outside" if retry_order < breaker_order else "retry-inside"
    elif order not in ORDERS:
        raise doc.error(("resilience4j",), f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    others = [m for m in OTHER_MODULES if m in root]
    layers = []
    for name in list(retries) + [n for n in breakers if n not in retries]:
        notes = [f"{m}: not modelled" for m in others]
        entry: dict[str, Any] = {"name": name}
        attempts = 1
        if name in retries:
            path, raw = retries[name]
            values = _merged(doc, "retry", path, raw, retry_configs, RETRY_KEYS, name)
            attempts, settings = _retry_settings(doc, values, notes)
            entry.update(preset="resilience4j", **settings)
        else:
            entry.update(type="NoBackoff")
            notes.append("no retry instance of this name: one attempt per call")
        policies: list[dict[str, Any]] = [] if "preset" in entry else [{"type": "MaxAttempts", "max_attempts": 1}]
        if name in breakers:
            path, raw = breakers[name]
            values = _merged(doc, "circuitbreaker", path, raw, breaker_configs, BREAKER_KEYS, name)
            policies.append(_breaker(doc, values, notes, order, "preset" in entry))
        timeout = None
        if name in limiters:
            path, raw = limiters[name]
            values = _merged(doc, "timelimiter", path, raw, limiter_configs, TIME_LIMITER_KEYS, name)
            timeout = DEFAULT_TIME_LIMIT_MS
            if "timeoutDuration" in values:
                timeout = to_ms(doc, values["timeoutDuration"][0], values["timeoutDuration"][1], "spring") or None
            if timeout:
                policies.append({"type": "AttemptTimeout", "timeout": timeout})
            notes.append("timelimiter: each attempt times out (it applies to async calls only)")
        if policies:
            entry["policies"] = policies
        knob = Knob("max_attempts", "maxAttempts", tuple(sorted({1, 2, 3, 4, 5, attempts}))) if "preset" in entry else None
        layers.append(Layer(source=doc.file, kind="resilience4j", name=name, attempts=attempts, entry=entry,
                            timeout=timeout, knob=knob, notes=tuple(notes), options={"order": order}))
    if not layers:
        raise doc.error(("resilience4j",), "has no retry or circuitbreaker instances",
                        "add resilience4j.retry.instances.NAME")
    return layers


def _aspect_order(doc: Document, path: tuple, module: dict[str, Any], key: str, default: int) -> int:
    for spelled, value in module.items():
        if camel(spelled) == key:
            return integer(doc, path + (spelled,), value)
    return default


def _retry_settings(doc: Document, values: dict[str, tuple[tuple, Any]], notes: list[str]) -> tuple[int, dict[str, Any]]:
    """The preset's settings from an instance's merged keys, as the Spring properties build them."""
    settings: dict[str, Any] = {}
    attempts = DEFAULT_MAX_ATTEMPTS
    for key in ("maxAttempts", "maxRetryAttempts"):  # maxRetryAttempts: the 1.x name of the same setting
        if key in values:
            path, value = values[key]
            given = integer(doc, path, value, minimum=0)
            if given == 0:
                notes.append(f"{key} 0 is ignored by resilience4j: the default 3 stays")
            else:
                attempts = given
    settings["max_attempts"] = attempts
    if "waitDuration" not in values:
        for flag in ("enableExponentialBackoff", "enableRandomizedWait"):
            if flag in values:
                notes.append(f"{flag} without waitDuration is ignored by resilience4j: 500 ms constant")
        return attempts, settings
    path, value = values["waitDuration"]
    settings["wait_duration"] = to_ms(doc, path, value, "spring")
    exponential = boolean(doc, *values["enableExponentialBackoff"]) if "enableExponentialBackoff" in values else False
    randomized = boolean(doc, *values["enableRandomizedWait"]) if "enableRandomizedWait" in values else False
    settings["enable_exponential_backoff"] = exponential
    settings["enable_randomized_wait"] = randomized
    if exponential:
        if "exponentialBackoffMultiplier" in values:
            settings["exponential_backoff_multiplier"] = number(doc, *values["exponentialBackoffMultiplier"], minimum=1)
            if "exponentialMaxWaitDuration" in values:  # used only with a multiplier given
                settings["exponential_max_wait_duration"] = to_ms(doc, *values["exponentialMaxWaitDuration"], "spring")
        elif "exponentialMaxWaitDuration" in values:
            notes.append("exponentialMaxWaitDuration without exponentialBackoffMultiplier is ignored by resilience4j")
    if randomized and "randomizedWaitFactor" in values and (not exponential or "exponentialBackoffMultiplier" in values):
        settings["randomized_wait_factor"] = number(doc, *values["randomizedWaitFactor"], minimum=0, maximum=1)
    for key in ("retryExceptions", "ignoreExceptions", "retryExceptionPredicate", "resultPredicate"):
        if key in values:
            notes.append(f"{key}: not modelled (every failed attempt is retried)")
    if "intervalBiFunction" in values:
        notes.append("intervalBiFunction: a custom interval, not modelled (the waits above are used)")
    return attempts, settings


def _breaker(doc: Document, values: dict[str, tuple[tuple, Any]], notes: list[str], order: str,
             retried: bool) -> dict[str, Any]:
    """A ``CircuitBreaker(kind = "count")`` from an instance's keys (CircuitBreakerConfig defaults
    where unset: the policy's own ``count`` defaults are resilience4j's)."""
    policy: dict[str, Any] = {"type": "CircuitBreaker", "kind": "count"}
    if "failureRateThreshold" in values:
        policy["failure_ratio"] = number(doc, *values["failureRateThreshold"], positive=True, maximum=100) / 100.0
    size = integer(doc, *values["slidingWindowSize"], minimum=1) if "slidingWindowSize" in values else None
    if size is not None:
        policy["window"] = size
    if "minimumNumberOfCalls" in values:
        policy["minimum_throughput"] = integer(doc, *values["minimumNumberOfCalls"], minimum=1)
    if "waitDurationInOpenState" in values:
        wait = to_ms(doc, *values["waitDurationInOpenState"], "spring")
        if not wait > 0:
            raise doc.error(values["waitDurationInOpenState"][0], "must be greater than 0")
        policy["break_duration"] = wait
    if "permittedNumberOfCallsInHalfOpenState" in values:
        policy["half_open_calls"] = integer(doc, *values["permittedNumberOfCallsInHalfOpenState"], minimum=1)
    if "slidingWindowType" in values:
        kind = word(doc, *values["slidingWindowType"], ("COUNT_BASED", "TIME_BASED"), fold=True)
        if kind == "TIME_BASED":
            notes.append("slidingWindowType TIME_BASED: modelled as a count window of slidingWindowSize calls")
    for key in ("slowCallRateThreshold", "slowCallDurationThreshold"):
        if key in values:
            notes.append(f"{key}: slow calls are not counted as failures here")
    if "automaticTransitionFromOpenToHalfOpenEnabled" in values:
        notes.append("automaticTransitionFromOpenToHalfOpenEnabled: the breaker half-opens at the next call")
    if retried and order == "retry-inside":
        policy["counts"] = "calls"
        notes.append("retry inside the breaker: it counts one outcome per call, and a call it refuses is not retried")
    elif retried:
        notes.append("retry outside the breaker (Spring Boot's aspect order): the breaker counts every attempt")
    return policy
