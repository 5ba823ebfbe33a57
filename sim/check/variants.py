"""The alternatives a check runs beside the settings as given, each differing in ONE setting:
a retry budget added, one attempt fewer, jitter, the other decorator order, retries to another
host. An alternative that does not apply (nothing to jitter, no fleet, a budget already there)
is skipped with the reason, never run as a copy of the settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sim.check.build import Settings
from sim.check.service import Service
from sim.settings.imported.layer import Layer

AS_GIVEN = "as_given"
# Policies that already hold retries back: a layer with one gets no budget added.
BUDGETS = ("RetryBudget", "ConcurrencyBudget", "GrpcThrottle", "RetryQuota", "TokenBucket",
           "AdaptiveRateLimiter")
BUDGET = {"type": "RetryBudget", "percent": 10.0, "scope": "shared"}  # 10% of recent calls
# Unjittered strategies and their fully jittered kin (the same keys, a uniform draw below them).
JITTERED = {"Expo": "FullJitteredExpo", "FlooredExpo": "FullJitteredFlooredExpo"}


def _with_policy(layer: Layer, policy: dict[str, Any]) -> Layer:
    entry = dict(layer.entry)
    entry["policies"] = [*entry.get("policies", []), policy]
    return replace(layer, entry=entry)


def _swap(settings: Settings, i: int, layer: Layer, name: str, change: str) -> Settings:
    layers = list(settings.layers)
    layers[i] = layer
    return Settings(name, change, tuple(layers))


def chain_types(layer: Layer) -> set[str]:
    """The policy types of a layer's chain, its preset's included (``native.entry_chain``)."""
    from sim.settings.imported.native import entry_chain

    return {type(p).__name__ for p in entry_chain(layer.entry, layer.source).ordered()}


def retry_budget(base: Settings, service: Service) -> Settings | str:
    retrying = [i for i, layer in enumerate(base.layers) if layer.retries > 0]
    if not retrying:
        return "no layer retries: a budget would hold nothing back"
    free = [i for i in retrying if not chain_types(base.layers[i]) & set(BUDGETS)]
    if not free:
        return "every layer that retries already holds its retries to a budget or throttle"
    i = free[-1]  # the nearest the service, where meshes keep their budgets
    layer = base.layers[i]
    return _swap(base, i, _with_policy(layer, BUDGET), "retry_budget",
                 f"{layer.name}: a retry budget of 10% of recent calls (shared)")


def fewer_attempts(base: Settings, service: Service) -> Settings | str:
    most = max(layer.attempts for layer in base.layers)
    if most <= 1:
        return "no layer retries"
    i = next(i for i, layer in enumerate(base.layers) if layer.attempts == most)
    layer = base.layers[i]
    fewer = _with_policy(layer, {"type": "MaxAttempts", "max_attempts": most - 1})
    return _swap(base, i, replace(fewer, attempts=most - 1), "fewer_attempts",
                 f"{layer.name}: {most - 1} attempts instead of {most}")


def jitter(base: Settings, service: Service) -> Settings | str:
    for i, layer in enumerate(base.layers):
        kind = layer.entry.get("type")
        if kind in JITTERED:
            entry = {**layer.entry, "type": JITTERED[kind]}
            return _swap(base, i, replace(layer, entry=entry), "jitter",
                         f"{layer.name}: {JITTERED[kind]} instead of {kind}")
        if kind == "Constant" and float(layer.entry.get("constant", 0.0)) > 0 and layer.retries > 0:
            c = float(layer.entry["constant"])
            entry = {k: v for k, v in layer.entry.items() if k != "constant"}
            entry.update({"type": "UniformRandom", "low": 0.0, "high": 2.0 * c})
            return _swap(base, i, replace(layer, entry=entry), "jitter",
                         f"{layer.name}: delays uniform in [0, {2 * c:g}] ms instead of {c:g} ms")
    return "no layer waits a fixed or unjittered delay (immediate retries or a library's own jitter)"


def decorator_order(base: Settings, service: Service) -> Settings | str:
    """The first layer read with a decorator order (resilience4j: retry outside the breaker, or
    inside), read again from its file with the other one."""
    from sim.settings.imported import read_settings
    from sim.settings.imported.resilience4j import ORDERS

    for i, layer in enumerate(base.layers):
        order = layer.options.get("order")
        if order in ORDERS:
            other = next(o for o in ORDERS if o != order)
            (again,) = read_settings(layer.source, **{**layer.options, "order": other})
            return _swap(base, i, again, "decorator_order", f"{layer.name}: {other} (read with {order})")
    return "no layer has a decorator order to swap (retry and breaker as one chain)"


def retry_other_host(base: Settings, service: Service) -> Settings | str:
    if service.fleet is None:
        return "the service is one host (no [simulation.fleet])"
    if service.fleet.get("retry_other_host") or any(layer.fleet.get("retry_other_host") for layer in base.layers):
        return "retries already go to another host"
    return Settings("retry_other_host", "retries to another host of the fleet", base.layers,
                    {"retry_other_host": True})


ALTERNATIVES: tuple[Callable[[Settings, Service], Settings | str], ...] = (
    retry_budget, fewer_attempts, jitter, decorator_order, retry_other_host)


def alternatives(base: Settings, service: Service) -> tuple[list[Settings], list[tuple[str, str]]]:
    """The alternatives that apply, and (name, reason) of those skipped."""
    out, skipped = [], []
    for make in ALTERNATIVES:
        made = make(base, service)
        if isinstance(made, str):
            skipped.append((make.__name__, made))
        else:
            out.append(made)
    return out, skipped
