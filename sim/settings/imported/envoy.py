"""Envoy (YAML or JSON): a route's ``retry_policy`` and its cluster's ``circuit_breakers`` and
``outlier_detection``, onto the ``envoy`` preset and ``[simulation.fleet]``.

Defaults, from envoyproxy/envoy: ``api/envoy/config/route/v3/route_components.proto``
(``RetryPolicy.num_retries``: "Default is 1"; ``retry_back_off.base_interval`` 25 ms and
``max_interval`` "10 times the base_interval"; ``RouteAction.timeout``: 15 s, 0 disables it),
``api/envoy/config/cluster/v3/circuit_breaker.proto`` (``Thresholds.max_retries`` 3;
``RetryBudget.budget_percent`` 20%, ``min_retry_concurrency`` 3; a budget replaces max_retries)
and ``api/envoy/config/cluster/v3/outlier_detection.proto`` (``consecutive_5xx`` 5, ``interval``
10 s, ``base_ejection_time`` 30 s, ``max_ejection_percent`` 10%, ``max_ejection_time`` 300 s).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sim.settings.imported.durations import to_ms
from sim.settings.imported.layer import Knob, Layer
from sim.settings.imported.source import (Document, Path, check_keys, integer, number, suggest, table)

DEFAULT_NUM_RETRIES = 1            # route_components.proto RetryPolicy.num_retries: "Default is 1"
DEFAULT_BASE_INTERVAL_MS = 25.0    # RetryBackOff.base_interval: 25 ms
MAX_INTERVAL_FACTOR = 10           # RetryBackOff.max_interval: "10 times the base_interval"
DEFAULT_ROUTE_TIMEOUT_MS = 15000.0 # RouteAction.timeout: "defaults to 15 seconds"
DEFAULT_MAX_RETRIES = 3            # circuit_breaker.proto Thresholds.max_retries: 3
DEFAULT_BUDGET_PERCENT = 20.0      # RetryBudget.budget_percent: 20%
DEFAULT_MIN_RETRY_CONCURRENCY = 3  # RetryBudget.min_retry_concurrency: 3
PREVIOUS_HOSTS = "envoy.retry_host_predicates.previous_hosts"

RETRY_KEYS = ("retry_on", "num_retries", "per_try_timeout", "per_try_idle_timeout", "retry_priority",
              "retry_host_predicate", "retry_options_predicates", "host_selection_retry_max_attempts",
              "retriable_status_codes", "retry_back_off", "rate_limited_retry_back_off", "retriable_headers",
              "retriable_request_headers")
BACKOFF_KEYS = ("base_interval", "max_interval")
CIRCUIT_KEYS = ("thresholds", "per_host_thresholds")
THRESHOLD_KEYS = ("priority", "max_connections", "max_pending_requests", "max_requests", "max_retries",
                  "retry_budget", "track_remaining", "max_connection_pools")
BUDGET_KEYS = ("budget_percent", "min_retry_concurrency", "budget_interval")
OUTLIER_KEYS = ("consecutive_5xx", "interval", "base_ejection_time", "max_ejection_percent",
                "enforcing_consecutive_5xx", "enforcing_success_rate", "success_rate_minimum_hosts",
                "success_rate_request_volume", "success_rate_stdev_factor", "consecutive_gateway_failure",
                "enforcing_consecutive_gateway_failure", "split_external_local_origin_errors",
                "consecutive_local_origin_failure", "enforcing_consecutive_local_origin_failure",
                "enforcing_local_origin_success_rate", "failure_percentage_threshold",
                "enforcing_failure_percentage", "enforcing_failure_percentage_local_origin",
                "failure_percentage_minimum_hosts", "failure_percentage_request_volume", "max_ejection_time",
                "max_ejection_time_jitter", "successful_active_health_check_uneject_host", "monitors",
                "always_eject_one_host", "detect_degraded_hosts")
# Our outlier detection (sim/settings/fleet.py OUTLIER_KEYS) under Envoy's names.
OUTLIER_MAP = {"consecutive_5xx": "consecutive_errors", "interval": "interval",
               "base_ejection_time": "base_ejection_time", "max_ejection_percent": "max_ejection_percent",
               "max_ejection_time": "max_ejection_time"}
OUTLIER_TIMES = ("interval", "base_ejection_time", "max_ejection_time")
# router_filter.rst "x-envoy-retry-on" and "x-envoy-retry-grpc-on".
RETRY_ON = ("5xx", "gateway-error", "reset", "reset-before-request", "connect-failure", "envoy-ratelimited",
            "retriable-4xx", "refused-stream", "retriable-status-codes", "retriable-headers",
            "http3-post-connect-failure", "cancelled", "deadline-exceeded", "internal", "resource-exhausted",
            "unavailable")
# What each condition retries, in the failure kinds simulated here (sim.vocabulary.outcomes):
# router_filter.rst "x-envoy-retry-on" / "x-envoy-retry-grpc-on". "5xx" is any 5xx or no response
# (reset, read timeout); "gateway-error" 502/503/504 (server_error stands for 500/502/504 here);
# "reset" no response; "refused-stream" a stream the server turned away; "retriable-4xx" 409.
ALL_KINDS = frozenset({"rejected", "aborted", "timed_out", "server_error"})
RETRY_ON_KINDS: dict[str, tuple[str, ...]] = {
    "5xx": ("server_error", "rejected", "timed_out"), "gateway-error": ("server_error", "rejected", "timed_out"),
    "reset": ("timed_out",), "refused-stream": ("rejected",), "retriable-4xx": ("aborted",),
    "unavailable": ("rejected",), "resource-exhausted": ("rejected",), "deadline-exceeded": ("timed_out",),
    "internal": ("server_error",), "connect-failure": (), "reset-before-request": (), "envoy-ratelimited": (),
    "retriable-headers": (), "http3-post-connect-failure": (), "cancelled": (), "retriable-status-codes": ()}
# retriable_status_codes: 503 and 429 are rejections here, 500/502/504 server errors, 409 a conflict.
STATUS_KINDS = {503: "rejected", 429: "rejected", 500: "server_error", 502: "server_error", 504: "server_error",
                409: "aborted"}
# Conditions with no counterpart among the failures simulated here (errors, rejections, timeouts).
NOT_HERE = {"envoy-ratelimited": "no x-envoy-ratelimited header", "retriable-headers": "no response headers",
            "reset-before-request": "no connection resets", "http3-post-connect-failure": "no HTTP/3",
            "cancelled": "no cancelled calls", "connect-failure": "no connection failures"}


def kinds_of(conditions: list[str], codes: list[int], notes: list[str]) -> set[str]:
    """The failure kinds a ``retry_on`` retries (with ``retriable_status_codes`` where
    ``retriable-status-codes`` is one of them), each condition that has none here noted."""
    kinds: set[str] = set()
    for c in conditions:
        kinds.update(RETRY_ON_KINDS.get(c, ()))
        if c in NOT_HERE:
            notes.append(f"retry_on {c!r}: not modelled ({NOT_HERE[c]} here)")
    if "retriable-status-codes" in conditions:
        for code in codes:
            if code in STATUS_KINDS:
                kinds.add(STATUS_KINDS[code])
            else:
                notes.append(f"retriable status {code}: no such response here")
    if "gateway-error" in conditions and "5xx" not in conditions:
        notes.append("gateway-error: server errors (500/502/504 here) are all retried, though Envoy skips 500")
    if kinds:
        notes.append(f"retries {', '.join(sorted(kinds))} failures (retry_on); other failures end the call")
    return kinds


@dataclass
class Retry:
    """An Envoy retry policy as read (times in ms), and where it came from."""

    num_retries: int = 0
    base_interval: float = DEFAULT_BASE_INTERVAL_MS
    max_interval: float | None = None
    per_try_timeout: float | None = None
    route_timeout: float | None = DEFAULT_ROUTE_TIMEOUT_MS
    retry_other_host: bool = False
    host_selection_attempts: int | None = None
    budget_percent: float = 0.0
    min_retry_concurrency: int = DEFAULT_MAX_RETRIES
    budget: bool = False
    outlier: dict[str, Any] | None = None
    kinds: set[str] = field(default_factory=lambda: set(ALL_KINDS))  # the failure kinds retried
    notes: list[str] = field(default_factory=list)


def read_retry_policy(doc: Document, path: Path, raw: Any, out: Retry) -> None:
    """``retry_policy`` into ``out``: retries, backoff, per-try timeout, host predicate."""
    policy = table(doc, path, raw, "{ retry_on: 5xx, num_retries: 2 }")
    check_keys(doc, path, policy, RETRY_KEYS, "an Envoy retry_policy")
    conditions = []
    if "retry_on" in policy:
        value = policy["retry_on"]
        if not isinstance(value, str):
            raise doc.error(path + ("retry_on",), f"must be a comma-separated string, got {value!r}",
                            'e.g. retry_on: "5xx,reset"')
        conditions = [c.strip() for c in value.split(",") if c.strip()]
        for c in conditions:
            if c not in RETRY_ON:
                raise doc.error(path + ("retry_on",), f"names an unknown condition {c!r}",
                                suggest(c, RETRY_ON) or f"Envoy's conditions are {', '.join(RETRY_ON)}")
    n = DEFAULT_NUM_RETRIES
    if "num_retries" in policy:
        n = integer(doc, path + ("num_retries",), policy["num_retries"], minimum=0)
    if not conditions:
        out.notes.append("retry_on is empty: Envoy retries nothing, so 1 attempt")
        n = 0
    out.num_retries = n
    codes: list[int] = []
    if "retriable_status_codes" in policy:
        raw = policy["retriable_status_codes"]
        if not isinstance(raw, list):
            raise doc.error(path + ("retriable_status_codes",), "must be a list of HTTP status codes", "e.g. [503]")
        codes = [integer(doc, path + ("retriable_status_codes", i), c, minimum=100, maximum=599) for i, c in enumerate(raw)]
    out.kinds = kinds_of(conditions, codes, out.notes)
    if conditions and not out.kinds:
        out.notes.append("retry_on names no failure simulated here: the simulation makes no retries, "
                         "though the attempts count the real maximum")
    if "per_try_timeout" in policy:
        out.per_try_timeout = to_ms(doc, path + ("per_try_timeout",), policy["per_try_timeout"], "proto") or None
    if "per_try_idle_timeout" in policy:
        out.notes.append("per_try_idle_timeout: not modelled")
    if "retry_back_off" in policy:
        bpath = path + ("retry_back_off",)
        back = table(doc, bpath, policy["retry_back_off"], '{ base_interval: "0.025s" }')
        check_keys(doc, bpath, back, BACKOFF_KEYS, "an Envoy retry_back_off")
        if "base_interval" not in back:
            raise doc.error(bpath, "needs base_interval (Envoy requires it)", 'add base_interval: "0.025s"')
        out.base_interval = to_ms(doc, bpath + ("base_interval",), back["base_interval"], "proto")
        if not out.base_interval >= 1.0:
            raise doc.error(bpath + ("base_interval",), "must be at least 1 ms: Envoy counts backoff in whole milliseconds",
                            'e.g. base_interval: "0.025s"')
        if "max_interval" in back:
            out.max_interval = to_ms(doc, bpath + ("max_interval",), back["max_interval"], "proto")
            if out.max_interval < out.base_interval:
                raise doc.error(bpath + ("max_interval",), "must be >= base_interval (Envoy refuses it)")
    if "rate_limited_retry_back_off" in policy:
        out.notes.append("rate_limited_retry_back_off: not modelled (no reset headers here)")
    for key in ("retriable_headers", "retriable_request_headers", "retry_priority",
                "retry_options_predicates"):
        if key in policy:
            out.notes.append(f"{key}: not modelled")
    if "retry_host_predicate" in policy:
        ppath = path + ("retry_host_predicate",)
        predicates = policy["retry_host_predicate"]
        if not isinstance(predicates, list):
            raise doc.error(ppath, "must be a list", f"e.g. - name: {PREVIOUS_HOSTS}")
        for i, item in enumerate(predicates):
            item = table(doc, ppath + (i,), item, f"{{ name: {PREVIOUS_HOSTS} }}")
            check_keys(doc, ppath + (i,), item, ("name", "typed_config"), "a retry host predicate")
            name = item.get("name")
            type_url = str((item.get("typed_config") or {}).get("@type", "")) if isinstance(item.get("typed_config"), dict) else ""
            if name == PREVIOUS_HOSTS or type_url.endswith("PreviousHostsPredicate"):
                out.retry_other_host = True
            else:
                out.notes.append(f"retry host predicate {name!r}: not modelled")
    if "host_selection_retry_max_attempts" in policy:
        out.host_selection_attempts = integer(doc, path + ("host_selection_retry_max_attempts",),
                                              policy["host_selection_retry_max_attempts"], minimum=1)


def read_cluster(doc: Document, path: Path, cluster: dict[str, Any], out: Retry) -> None:
    """A cluster's ``circuit_breakers`` (max_retries or retry_budget) and ``outlier_detection``."""
    if "circuit_breakers" in cluster:
        cpath = path + ("circuit_breakers",)
        breakers = table(doc, cpath, cluster["circuit_breakers"], "{ thresholds: [{ max_retries: 3 }] }")
        check_keys(doc, cpath, breakers, CIRCUIT_KEYS, "Envoy circuit_breakers")
        if "per_host_thresholds" in breakers:
            out.notes.append("circuit_breakers.per_host_thresholds: not modelled")
        thresholds = breakers.get("thresholds", [])
        if not isinstance(thresholds, list):
            raise doc.error(cpath + ("thresholds",), "must be a list of thresholds", "e.g. - max_retries: 3")
        for i, raw in enumerate(thresholds):
            tpath = cpath + ("thresholds", i)
            t = table(doc, tpath, raw, "{ max_retries: 3 }")
            check_keys(doc, tpath, t, THRESHOLD_KEYS, "Envoy circuit breaker thresholds")
            priority = t.get("priority", "DEFAULT")
            if priority not in ("DEFAULT", "HIGH"):
                raise doc.error(tpath + ("priority",), f"must be DEFAULT or HIGH, got {priority!r}")
            if priority == "HIGH":
                out.notes.append("circuit_breakers thresholds for priority HIGH: not modelled (DEFAULT routes only)")
                continue
            for key in ("max_connections", "max_pending_requests", "max_requests"):
                if key in t:
                    integer(doc, tpath + (key,), t[key], minimum=0)
                    out.notes.append(f"circuit_breakers {key}: not modelled (the service's own limits are)")
            if "max_retries" in t:
                out.min_retry_concurrency = integer(doc, tpath + ("max_retries",), t["max_retries"], minimum=0)
            if "retry_budget" in t:
                read_budget(doc, tpath + ("retry_budget",), t["retry_budget"], out)
    if "outlier_detection" in cluster:
        out.outlier = read_outlier(doc, path + ("outlier_detection",), cluster["outlier_detection"], out)


def read_budget(doc: Document, path: Path, raw: Any, out: Retry) -> None:
    budget = table(doc, path, raw, "{ budget_percent: { value: 20.0 }, min_retry_concurrency: 3 }")
    check_keys(doc, path, budget, BUDGET_KEYS, "an Envoy retry_budget")
    out.budget = True
    out.budget_percent = DEFAULT_BUDGET_PERCENT
    out.min_retry_concurrency = DEFAULT_MIN_RETRY_CONCURRENCY
    if "budget_percent" in budget:
        ppath = path + ("budget_percent",)
        percent = budget["budget_percent"]
        if not (isinstance(percent, dict) and set(percent) <= {"value"}):
            raise doc.error(ppath, f"must be a Percent, {{ value: N }}, got {percent!r}",
                            "write budget_percent: { value: 20.0 }")
        out.budget_percent = number(doc, ppath + ("value",), percent.get("value", 0.0), minimum=0, maximum=100)
    if "min_retry_concurrency" in budget:
        out.min_retry_concurrency = integer(doc, path + ("min_retry_concurrency",), budget["min_retry_concurrency"],
                                            minimum=0)
    if "budget_interval" in budget:
        out.notes.append("retry_budget.budget_interval: not modelled (the budget counts requests in flight)")


def read_outlier(doc: Document, path: Path, raw: Any, out: Retry, names: dict[str, str] | None = None,
                 syntax: str = "proto") -> dict[str, Any]:
    """``outlier_detection`` as our fleet keys (times in ms); ``names`` maps another spelling
    (Istio's camelCase) onto Envoy's."""
    detection = table(doc, path, raw, "{ consecutive_5xx: 5 }")
    names = names or {k: k for k in OUTLIER_KEYS}
    check_keys(doc, path, detection, names, "outlier detection")
    fleet: dict[str, Any] = {}
    for key, value in detection.items():
        envoy = names[key]
        ours = OUTLIER_MAP.get(envoy)
        if ours is None:
            if envoy not in ("enforcing_consecutive_5xx",):
                out.notes.append(f"outlier detection {key}: not modelled")
            continue
        if envoy in OUTLIER_TIMES:
            fleet[ours] = to_ms(doc, path + (key,), value, syntax)
        elif envoy == "max_ejection_percent":
            fleet[ours] = number(doc, path + (key,), value, minimum=0, maximum=100)
        else:
            fleet[ours] = integer(doc, path + (key,), value, minimum=1)
    out.notes.append("outlier detection by success rate (on in Envoy by default): not modelled")
    return fleet


def layer_of(source: str, kind: str, name: str, r: Retry) -> Layer:
    """The ``envoy`` preset entry, the fleet keys and the knob of one route's retries."""
    max_interval = r.max_interval if r.max_interval is not None else MAX_INTERVAL_FACTOR * r.base_interval
    entry: dict[str, Any] = {"name": name, "preset": "envoy", "num_retries": r.num_retries,
                             "base_interval": r.base_interval, "max_interval": max_interval,
                             "budget_percent": r.budget_percent, "min_retry_concurrency": r.min_retry_concurrency}
    policies: list[dict[str, Any]] = []
    if r.kinds != ALL_KINDS and r.num_retries > 0:
        policies.append({"type": "RetryOn", "kinds": sorted(r.kinds)})
    if r.per_try_timeout:
        policies.append({"type": "AttemptTimeout", "timeout": r.per_try_timeout})
    if r.route_timeout:
        policies.append({"type": "Deadline", "total": r.route_timeout})
        r.notes.append("route timeout: no retry starts after it (the attempt in flight is not cut short)")
    if policies:
        entry["policies"] = policies
    fleet: dict[str, Any] = {}
    if r.retry_other_host:
        fleet["retry_other_host"] = True
        if r.host_selection_attempts is not None:
            fleet["host_selection_attempts"] = r.host_selection_attempts
    elif r.host_selection_attempts is not None:
        r.notes.append("host_selection_retry_max_attempts without a previous_hosts predicate: no effect")
    if r.outlier is not None:
        fleet["outlier_detection"] = r.outlier
    if not r.budget:
        r.notes.append(f"no retry_budget: at most {r.min_retry_concurrency} retries in flight (max_retries)")
    if r.budget:
        knob = Knob("budget_percent", "retry_budget.budget_percent",
                    tuple(sorted({5.0, 10.0, 20.0, 35.0, 50.0, 100.0, r.budget_percent})))
    else:
        knob = Knob("num_retries", "num_retries", tuple(sorted(set(range(0, 6)) | {r.num_retries})))
    return Layer(source=source, kind=kind, name=name, attempts=r.num_retries + 1, entry=entry,
                 timeout=r.per_try_timeout, total_timeout=r.route_timeout, fleet=fleet, knob=knob,
                 notes=tuple(dict.fromkeys(r.notes)))


# --- finding routes and clusters in a bootstrap, a RouteConfiguration or a snippet ---------------

def _walk(value: Any, path: Path):
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, path + (i,))


def _clusters(doc: Document) -> dict[str, tuple[Path, dict[str, Any]]]:
    found: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path, value in _walk(doc.data, ()):
        if path and path[-1] == "clusters" and isinstance(value, list):
            for i, c in enumerate(value):
                if isinstance(c, dict):
                    found[str(c.get("name", f"cluster {len(found)}"))] = (path + (i,), c)
    if not found and isinstance(doc.data, dict) and ("circuit_breakers" in doc.data or "outlier_detection" in doc.data):
        found[str(doc.data.get("name", "cluster"))] = ((), doc.data)
    return found


def read(doc: Document) -> list[Layer]:
    """One layer per route that has (or inherits) a retry policy; a snippet with a top-level
    ``retry_policy`` is one route."""
    clusters = _clusters(doc)
    routes: list[tuple[str, Path | None, Any, Path | None, dict[str, Any]]] = []  # name, policy path, policy, action path, action
    for path, value in _walk(doc.data, ()):
        if isinstance(value, dict) and isinstance(value.get("routes"), list) and "domains" in value:
            vhost_policy = value.get("retry_policy")
            for i, route in enumerate(value["routes"]):
                if not isinstance(route, dict):
                    continue
                action = route.get("route") if isinstance(route.get("route"), dict) else None
                rpath = path + ("routes", i)
                match = route.get("match") if isinstance(route.get("match"), dict) else {}
                label = route.get("name") or f"{value.get('name', 'virtual host')}{match.get('prefix', match.get('path', ''))}"
                if action is not None and "retry_policy" in action:
                    routes.append((str(label), rpath + ("route", "retry_policy"), action["retry_policy"],
                                   rpath + ("route",), action))
                elif vhost_policy is not None and action is not None:
                    routes.append((str(label), path + ("retry_policy",), vhost_policy, rpath + ("route",), action))
    if not routes and isinstance(doc.data, dict) and "retry_policy" in doc.data:
        routes.append((str(doc.data.get("name", "route")), ("retry_policy",), doc.data["retry_policy"], (), doc.data))
    if not routes and isinstance(doc.data, dict) and set(doc.data) & set(RETRY_KEYS) and set(doc.data) <= set(RETRY_KEYS):
        routes.append(("retry_policy", (), doc.data, None, {}))
    layers = []
    for label, ppath, policy, apath, action in routes:
        r = Retry()
        read_retry_policy(doc, ppath or (), policy, r)
        if apath is not None and "timeout" in action:
            r.route_timeout = to_ms(doc, apath + ("timeout",), action["timeout"], "proto") or None
        for key in ("hedge_policy", "max_stream_duration", "idle_timeout"):
            if key in action:
                r.notes.append(f"route {key}: not modelled")
        name = action.get("cluster") if isinstance(action.get("cluster"), str) else None
        chosen = clusters.get(name) if name else (next(iter(clusters.values())) if len(clusters) == 1 else None)
        if chosen is not None:
            read_cluster(doc, chosen[0], chosen[1], r)
        layers.append(layer_of(doc.file, "envoy", label, r))
    if not layers and clusters:  # a cluster alone: its limits, and no retry policy (no retries)
        cname, (cpath, cluster) = next(iter(clusters.items()))
        r = Retry(notes=["no route retry_policy: Envoy makes no retries"])
        read_cluster(doc, cpath, cluster, r)
        layers.append(layer_of(doc.file, "envoy", cname, r))
    return layers
