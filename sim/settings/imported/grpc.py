"""A gRPC service config (JSON): ``methodConfig[].retryPolicy`` or ``hedgingPolicy``, ``timeout``
and ``retryThrottling``, onto the ``grpc`` and ``grpc-hedging`` presets.

From grpc/proposal ``A6-client-retries.md``: ``maxAttempts`` counts the original attempt, must be
> 1 and is clamped to 5 by the client (``maxAttempts`` "greater than 5 ... treated as 5");
``initialBackoff``, ``maxBackoff``, ``backoffMultiplier`` and ``retryableStatusCodes`` are required,
with no defaults; ``hedgingDelay`` defaults to 0 s; ``retryThrottling`` has no defaults
(``maxTokens`` in (0, 1000], ``tokenRatio`` > 0, three decimals). A service config that breaks
these rules is rejected by the client, so it is an error here too.
"""

from __future__ import annotations

from typing import Any

from sim.settings.imported.durations import to_ms
from sim.settings.imported.layer import Knob, Layer
from sim.settings.imported.source import Document, check_keys, integer, number, suggest, table

MAX_ATTEMPTS_LIMIT = 5  # A6: "maxAttempts ... greater than 5 ... treated as 5"
TOP_KEYS = ("loadBalancingPolicy", "loadBalancingConfig", "methodConfig", "retryThrottling", "healthCheckConfig")
METHOD_KEYS = ("name", "waitForReady", "timeout", "maxRequestMessageBytes", "maxResponseMessageBytes",
               "retryPolicy", "hedgingPolicy")
RETRY_KEYS = ("maxAttempts", "initialBackoff", "maxBackoff", "backoffMultiplier", "retryableStatusCodes",
              "perAttemptRecvTimeout")
HEDGING_KEYS = ("maxAttempts", "hedgingDelay", "nonFatalStatusCodes")
THROTTLE_KEYS = ("maxTokens", "tokenRatio")
CODES = ("OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
         "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
         "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED")
# The failures simulated here, as gRPC would report them (sim.vocabulary.outcomes): rejections
# (UNAVAILABLE, RESOURCE_EXHAUSTED), timeouts (DEADLINE_EXCEEDED), conflicts (ABORTED), errors
# (INTERNAL, UNKNOWN).
KIND_OF = {"UNAVAILABLE": "rejected", "RESOURCE_EXHAUSTED": "rejected", "DEADLINE_EXCEEDED": "timed_out",
           "ABORTED": "aborted", "INTERNAL": "server_error", "UNKNOWN": "server_error"}
ALL_KINDS = {"rejected", "aborted", "timed_out", "server_error"}


def _codes(doc: Document, path: tuple, raw: Any, required: bool) -> list[str]:
    if raw is None and not required:
        return []
    if not isinstance(raw, list) or (required and not raw):
        raise doc.error(path, "must be a non-empty list of status codes (A6 requires it)",
                        'e.g. ["UNAVAILABLE"]')
    out = []
    for i, code in enumerate(raw):
        if isinstance(code, int) and not isinstance(code, bool) and 0 <= code < len(CODES):
            code = CODES[code]
        if not isinstance(code, str) or code.upper() not in CODES:
            raise doc.error(path + (i,), f"is not a gRPC status code: {code!r}",
                            suggest(str(code).upper(), CODES) or "e.g. UNAVAILABLE")
        out.append(code.upper())
    return out


def _method_name(method: dict[str, Any], i: int) -> str:
    names = method.get("name")
    if isinstance(names, list) and names and isinstance(names[0], dict):
        first = names[0]
        service, rpc = first.get("service", ""), first.get("method", "")
        label = f"{service}/{rpc}" if rpc else (service or "default")
        return label + (f" (+{len(names) - 1})" if len(names) > 1 else "")
    return f"methodConfig[{i}]"


def read(doc: Document) -> list[Layer]:
    data = table(doc, (), doc.data, '{ "methodConfig": [...] }')
    check_keys(doc, (), data, TOP_KEYS, "a gRPC service config")
    throttle: dict[str, Any] | None = None
    if "retryThrottling" in data:
        tpath = ("retryThrottling",)
        raw = table(doc, tpath, data["retryThrottling"], '{ "maxTokens": 10, "tokenRatio": 0.1 }')
        check_keys(doc, tpath, raw, THROTTLE_KEYS, "gRPC retryThrottling")
        for key in THROTTLE_KEYS:
            if key not in raw:
                raise doc.error(tpath, f"needs {key} (A6 gives no default)", '{ "maxTokens": 10, "tokenRatio": 0.1 }')
        tokens = number(doc, tpath + ("maxTokens",), raw["maxTokens"], positive=True, maximum=1000)
        ratio = number(doc, tpath + ("tokenRatio",), raw["tokenRatio"], positive=True)
        throttle = {"max_tokens": tokens, "token_ratio": round(ratio, 3)}  # A6: three decimals kept
    methods = data.get("methodConfig", [])
    if not isinstance(methods, list):
        raise doc.error(("methodConfig",), "must be a list of method configs")
    layers = []
    for i, raw in enumerate(methods):
        path = ("methodConfig", i)
        method = table(doc, path, raw, '{ "name": [{}], "retryPolicy": {...} }')
        check_keys(doc, path, method, METHOD_KEYS, "a gRPC methodConfig")
        if "retryPolicy" in method and "hedgingPolicy" in method:
            raise doc.error(path + ("hedgingPolicy",), "cannot be given with retryPolicy (A6: one or the other)",
                            "keep one of them")
        layers.append(_method(doc, path, method, _method_name(method, i), throttle))
    if not layers and throttle is not None:
        raise doc.error(("retryThrottling",), "throttles retries, but no methodConfig retries",
                        "add a methodConfig with a retryPolicy")
    return layers


def _method(doc: Document, path: tuple, method: dict[str, Any], name: str, throttle: dict[str, Any] | None) -> Layer:
    notes: list[str] = []
    deadline = to_ms(doc, path + ("timeout",), method["timeout"], "proto") if "timeout" in method else None
    if deadline == 0:
        deadline = None
    if "waitForReady" in method:
        notes.append("waitForReady: not modelled")
    fleet: dict[str, Any] = {}
    knob: Knob | None = None
    if "retryPolicy" in method:
        rpath = path + ("retryPolicy",)
        policy = table(doc, rpath, method["retryPolicy"], '{ "maxAttempts": 4, "initialBackoff": "0.1s", ... }')
        check_keys(doc, rpath, policy, RETRY_KEYS, "a gRPC retryPolicy")
        for key in ("maxAttempts", "initialBackoff", "maxBackoff", "backoffMultiplier", "retryableStatusCodes"):
            if key not in policy:
                raise doc.error(rpath, f"needs {key} (A6 requires it, with no default)",
                                '{ "maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s", '
                                '"backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"] }')
        asked = integer(doc, rpath + ("maxAttempts",), policy["maxAttempts"], minimum=2)
        initial = to_ms(doc, rpath + ("initialBackoff",), policy["initialBackoff"], "proto")
        cap = to_ms(doc, rpath + ("maxBackoff",), policy["maxBackoff"], "proto")
        for key, value in (("initialBackoff", initial), ("maxBackoff", cap)):
            if not value > 0:
                raise doc.error(rpath + (key,), "must be greater than 0 (A6)")
        multiplier = number(doc, rpath + ("backoffMultiplier",), policy["backoffMultiplier"], positive=True)
        codes = _codes(doc, rpath + ("retryableStatusCodes",), policy["retryableStatusCodes"], required=True)
        attempts = min(asked, MAX_ATTEMPTS_LIMIT)
        if asked > MAX_ATTEMPTS_LIMIT:
            notes.append(f"maxAttempts {asked} is clamped to {MAX_ATTEMPTS_LIMIT} by the client (A6)")
        if "perAttemptRecvTimeout" in policy:
            notes.append("perAttemptRecvTimeout: not modelled")
        entry: dict[str, Any] = {"name": name, "preset": "grpc", "max_attempts": asked, "initial_backoff": initial,
                                 "max_backoff": cap, "backoff_multiplier": multiplier}
        if throttle is not None:
            entry.update(throttling=True, **throttle)
            knob = Knob("max_tokens", "retryThrottling.maxTokens",
                        tuple(sorted({2.0, 5.0, 10.0, 20.0, 50.0, 100.0, throttle["max_tokens"]})))
        else:
            knob = Knob("max_attempts", "maxAttempts", tuple(sorted({2, 3, 4, 5, attempts})))
        kinds = _code_kinds(codes, notes)
        if kinds != ALL_KINDS:
            entry["policies"] = [{"type": "RetryOn", "kinds": sorted(kinds)}]
    elif "hedgingPolicy" in method:
        hpath = path + ("hedgingPolicy",)
        policy = table(doc, hpath, method["hedgingPolicy"], '{ "maxAttempts": 3, "hedgingDelay": "0.5s" }')
        check_keys(doc, hpath, policy, HEDGING_KEYS, "a gRPC hedgingPolicy")
        if "maxAttempts" not in policy:
            raise doc.error(hpath, "needs maxAttempts (A6 requires it)", '{ "maxAttempts": 3 }')
        asked = integer(doc, hpath + ("maxAttempts",), policy["maxAttempts"], minimum=2)
        attempts = min(asked, MAX_ATTEMPTS_LIMIT)
        if asked > MAX_ATTEMPTS_LIMIT:
            notes.append(f"maxAttempts {asked} is clamped to {MAX_ATTEMPTS_LIMIT} by the client (A6)")
        delay = to_ms(doc, hpath + ("hedgingDelay",), policy["hedgingDelay"], "proto") if "hedgingDelay" in policy else 0.0
        _codes(doc, hpath + ("nonFatalStatusCodes",), policy.get("nonFatalStatusCodes"), required=False)
        # The grpc-hedging preset clamps maxAttempts to 5 itself and lets retryThrottling gate the
        # hedges (A6: none while tokens <= max_tokens / 2), as the client does.
        entry = {"name": name, "preset": "grpc-hedging", "max_attempts": asked, "hedging_delay": delay}
        if throttle is not None:
            entry.update(throttling=True, **throttle)
            knob = Knob("max_tokens", "retryThrottling.maxTokens",
                        tuple(sorted({2.0, 5.0, 10.0, 20.0, 50.0, 100.0, throttle["max_tokens"]})))
        notes.append("hedged copies go to other hosts of a fleet (or again to a lone server); no retries")
    else:
        attempts = 1
        entry = {"name": name, "type": "NoBackoff", "policies": [{"type": "MaxAttempts", "max_attempts": 1}]}
        notes.append("no retryPolicy or hedgingPolicy: one attempt per call")
    if deadline is not None:
        entry.setdefault("policies", []).append({"type": "Deadline", "total": deadline})
        notes.append("timeout: no retry starts after the deadline (the attempt in flight is not cut short)")
    return Layer(source=doc.file, kind="grpc", name=name, attempts=attempts, entry=entry, timeout=None,
                 total_timeout=deadline, fleet=fleet, knob=knob, notes=tuple(notes))


def _code_kinds(codes: list[str], notes: list[str]) -> set[str]:
    """The failure kinds the retryable status codes retry; a code with no failure here noted."""
    other = [c for c in codes if c not in KIND_OF]
    if other:
        notes.append(f"retryableStatusCodes {', '.join(other)}: no such failure here")
    kinds = {KIND_OF[c] for c in codes if c in KIND_OF}
    if kinds:
        notes.append(f"retries {', '.join(sorted(kinds))} failures; other failures end the call")
    else:
        notes.append("retryableStatusCodes name no failure simulated here: the simulation makes no retries")
    return kinds
