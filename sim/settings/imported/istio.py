"""Istio (YAML, one or more documents): a VirtualService's ``http[].retries`` and ``timeout``, and
the DestinationRule's ``outlierDetection`` and ``connectionPool`` for the route's host.

Istio programs Envoy, so this reads onto the same ``envoy`` preset. Defaults, from istio/istio
``pilot/pkg/networking/core/route/retry/retry.go`` (``DefaultPolicy``: 2 retries, retryOn
"connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes", the previous_hosts
predicate, ``HostSelectionRetryMaxAttempts: 5``; ``attempts: 0`` turns retries off) and the
networking API (``HTTPRoute.timeout``: "disabled by default"; ``ConnectionPoolSettings.HTTPSettings
.maxRetries``: 2³²−1; ``OutlierDetection``: consecutive5xxErrors 5, interval 10 s,
baseEjectionTime 30 s, maxEjectionPercent 10%).
"""

from __future__ import annotations

from typing import Any

from sim.settings.imported.durations import to_ms
from sim.settings.imported.envoy import RETRY_ON, Retry, kinds_of, layer_of, read_outlier
from sim.settings.imported.layer import Layer
from sim.settings.imported.source import Document, boolean, check_keys, integer, suggest, table

DEFAULT_ATTEMPTS = 2  # retry.go DefaultPolicy: NumRetries 2 (Istio's "attempts" are retries)
DEFAULT_HOST_SELECTION = 5  # retry.go: HostSelectionRetryMaxAttempts: 5
MAX_RETRIES_DEFAULT = 2**32 - 1  # HTTPSettings.maxRetries: "Default 2^32-1"
DEFAULT_RETRY_ON = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"
DEFAULT_STATUS_CODES = [503]  # retry.go DefaultPolicy: RetriableStatusCodes: [http.StatusServiceUnavailable]
RETRY_KEYS = ("attempts", "perTryTimeout", "retryOn", "retryRemoteLocalities", "retryIgnorePreviousHosts", "backoff")
ROUTE_KEYS = ("name", "match", "route", "redirect", "directResponse", "delegate", "rewrite", "timeout", "retries",
              "fault", "mirror", "mirrors", "mirrorPercentage", "mirrorPercent", "mirror_percent", "corsPolicy",
              "headers")
OUTLIER_NAMES = {"consecutive5xxErrors": "consecutive_5xx", "consecutiveErrors": "consecutive_5xx",
                 "consecutiveGatewayErrors": "consecutive_gateway_failure",
                 "consecutiveLocalOriginFailures": "consecutive_local_origin_failure",
                 "splitExternalLocalOriginErrors": "split_external_local_origin_errors",
                 "interval": "interval", "baseEjectionTime": "base_ejection_time",
                 "maxEjectionPercent": "max_ejection_percent", "minHealthPercent": "min_health_percent"}
POOL_KEYS = ("tcp", "http")
HTTP_POOL_KEYS = ("http1MaxPendingRequests", "http2MaxRequests", "maxRequestsPerConnection", "maxRetries",
                  "idleTimeout", "h2UpgradePolicy", "useClientProtocol", "maxConcurrentStreams")


def _retry_on(doc: Document, path: tuple, value: Any, r: Retry, codes: list[int] | None = None) -> None:
    """retry.go parseRetryOn: a status code in the list joins retriable_status_codes (and turns
    on retriable-status-codes); the other parts are Envoy's conditions."""
    if not isinstance(value, str):
        raise doc.error(path, f"must be a comma-separated string, got {value!r}", 'e.g. retryOn: "5xx,reset"')
    conditions, codes = [], list(codes or [])
    for c in (c.strip() for c in value.split(",") if c.strip()):
        if c.isdigit():
            codes.append(int(c))
            conditions.append("retriable-status-codes")
        elif c not in RETRY_ON:
            raise doc.error(path, f"names an unknown condition {c!r}", suggest(c, RETRY_ON) or f"Envoy's are {', '.join(RETRY_ON)}")
        else:
            conditions.append(c)
    r.kinds = kinds_of(conditions, codes, r.notes)
    if not r.kinds:
        r.notes.append("retryOn names no failure simulated here: the simulation makes no retries")


def _route(doc: Document, path: tuple, route: dict[str, Any]) -> Retry:
    check_keys(doc, path, route, ROUTE_KEYS, "an Istio HTTPRoute")
    r = Retry(num_retries=DEFAULT_ATTEMPTS, route_timeout=None, retry_other_host=True,
              host_selection_attempts=DEFAULT_HOST_SELECTION, min_retry_concurrency=MAX_RETRIES_DEFAULT)
    if "retries" in route:
        rpath = path + ("retries",)
        retries = table(doc, rpath, route["retries"], "{ attempts: 3, perTryTimeout: 2s }")
        check_keys(doc, rpath, retries, RETRY_KEYS, "Istio retries")
        if "attempts" in retries:
            r.num_retries = integer(doc, rpath + ("attempts",), retries["attempts"], minimum=0)
        if "perTryTimeout" in retries:
            r.per_try_timeout = to_ms(doc, rpath + ("perTryTimeout",), retries["perTryTimeout"], "go") or None
        if "retryOn" in retries:
            _retry_on(doc, rpath + ("retryOn",), retries["retryOn"], r)
        else:
            _retry_on(doc, rpath, DEFAULT_RETRY_ON, r, codes=DEFAULT_STATUS_CODES)
        if "retryIgnorePreviousHosts" in retries and not boolean(doc, rpath + ("retryIgnorePreviousHosts",),
                                                                  retries["retryIgnorePreviousHosts"]):
            r.retry_other_host = False
        if "backoff" in retries:
            r.base_interval = to_ms(doc, rpath + ("backoff",), retries["backoff"], "go")
            if not r.base_interval >= 1.0:
                raise doc.error(rpath + ("backoff",), "must be at least 1ms: Envoy counts backoff in whole milliseconds",
                                "e.g. backoff: 25ms")
        if "retryRemoteLocalities" in retries:
            r.notes.append("retryRemoteLocalities: not modelled (one locality here)")
    else:
        _retry_on(doc, path, DEFAULT_RETRY_ON, r, codes=DEFAULT_STATUS_CODES)
        r.notes.append("no retries block: Istio's default policy, 2 retries to other hosts")
    if r.num_retries == 0:
        r.notes.append("attempts 0: Istio turns retries off")
    if "timeout" in route:
        r.route_timeout = to_ms(doc, path + ("timeout",), route["timeout"], "go") or None
    else:
        r.notes.append("no timeout: Istio disables Envoy's route timeout by default")
    return r


def _destination(doc: Document, path: tuple, spec: dict[str, Any], r: Retry) -> None:
    policy = spec.get("trafficPolicy")
    if policy is None:
        return
    ppath = path + ("trafficPolicy",)
    policy = table(doc, ppath, policy, "{ outlierDetection: { consecutive5xxErrors: 5 } }")
    check_keys(doc, ppath, policy, ("loadBalancer", "connectionPool", "outlierDetection", "tls", "portLevelSettings",
                                     "tunnel", "proxyProtocol"), "an Istio trafficPolicy")
    if "outlierDetection" in policy:
        r.outlier = read_outlier(doc, ppath + ("outlierDetection",), policy["outlierDetection"], r,
                                 names=OUTLIER_NAMES, syntax="go")
    if "connectionPool" in policy:
        cpath = ppath + ("connectionPool",)
        pool = table(doc, cpath, policy["connectionPool"], "{ http: { maxRetries: 3 } }")
        check_keys(doc, cpath, pool, POOL_KEYS, "an Istio connectionPool")
        if "tcp" in pool:
            r.notes.append("connectionPool.tcp: not modelled (the service's own limits are)")
        if "http" in pool:
            hpath = cpath + ("http",)
            http = table(doc, hpath, pool["http"], "{ maxRetries: 3 }")
            check_keys(doc, hpath, http, HTTP_POOL_KEYS, "Istio connectionPool.http")
            if "maxRetries" in http:
                r.min_retry_concurrency = integer(doc, hpath + ("maxRetries",), http["maxRetries"], minimum=0)
            for key in http:
                if key != "maxRetries":
                    r.notes.append(f"connectionPool.http.{key}: not modelled")
    if "portLevelSettings" in policy or "loadBalancer" in policy:
        r.notes.append("trafficPolicy loadBalancer/portLevelSettings: not read (give the fleet's balancer)")


def read(docs: list[Document]) -> list[Layer]:
    """One layer per VirtualService HTTP route; the DestinationRule of its host (or the only
    one) adds outlier detection and the retry limit."""
    routes: list[tuple[str, str | None, Document, tuple, dict[str, Any]]] = []
    rules: dict[str | None, tuple[Document, tuple, dict[str, Any]]] = {}
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict):
            raise doc.error((), "must be a Kubernetes object (apiVersion, kind, spec)")
        kind = data.get("kind")
        if kind not in ("VirtualService", "DestinationRule"):
            continue
        spec = table(doc, ("spec",), data.get("spec"), "{ hosts: [...], http: [...] }")
        name = str((data.get("metadata") or {}).get("name", kind))
        if kind == "DestinationRule":
            rules[spec.get("host")] = (doc, ("spec",), spec)
            continue
        http = spec.get("http", [])
        if not isinstance(http, list):
            raise doc.error(("spec", "http"), "must be a list of routes")
        for i, route in enumerate(http):
            route = table(doc, ("spec", "http", i), route, "{ route: [...], retries: {...} }")
            hosts = [d.get("destination", {}).get("host") for d in route.get("route", []) if isinstance(d, dict)]
            label = f"{name}/{route.get('name', i)}" if len(http) > 1 else name
            routes.append((label, hosts[0] if hosts else None, doc, ("spec", "http", i), route))
    layers = []
    for label, host, doc, path, route in routes:
        r = _route(doc, path, route)
        rule = rules.get(host) or _short_host(rules, host) or (next(iter(rules.values())) if len(rules) == 1 else None)
        if rule is not None:
            _destination(rule[0], rule[1], rule[2], r)
        layers.append(layer_of(doc.file, "istio", label, r))
    if not layers and rules:
        doc, path, spec = next(iter(rules.values()))
        r = Retry(num_retries=0, route_timeout=None, min_retry_concurrency=MAX_RETRIES_DEFAULT,
                  notes=["a DestinationRule alone: the routes' retries are in a VirtualService"])
        _destination(doc, path, spec, r)
        layers.append(layer_of(doc.file, "istio", str(spec.get("host", "destination")), r))
    return layers


def _short_host(rules: dict, host: str | None):
    """``reviews`` and ``reviews.default.svc.cluster.local`` name the same service."""
    if not host:
        return None
    for key, rule in rules.items():
        if isinstance(key, str) and (key.split(".")[0] == host.split(".")[0]):
            return rule
    return None
