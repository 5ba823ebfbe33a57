"""Envoy's retry budget: concurrent retries at most a percentage of active requests.

Sources: envoyproxy/envoy ``api/envoy/config/cluster/v3/circuit_breaker.proto`` (``RetryBudget``:
``budget_percent`` 20%, ``min_retry_concurrency`` 3), ``source/common/upstream/
resource_manager_impl.h`` (``RetryBudgetImpl::max``: ``max(uint64(percent/100 × (active +
pending)), min_retry_concurrency)``; ``canCreate``: ``count < max``) and
``source/common/router/retry_state_impl.cc`` (``shouldRetry``: the per-request retry limit is
checked first; a granted retry holds its slot through the backoff and its attempt, until that
attempt's outcome or the end of the request). Active requests are the attempts in flight, of
all clients: the budget is one per Envoy cluster, so this policy is shared only. Without a
budget Envoy caps concurrent retries at ``max_retries = 3``: ``percent = 0, min_concurrency = 3``.

A hedged copy (``sim.models.hedging``) takes a retry slot as a retry does (Envoy's hedging on a
per-try timeout goes through the same retry state, ``shouldHedgeRetryPerTryTimeout``), held
until its attempt's outcome; without a free slot it is not sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sim.vocabulary.errors import ParamError
from sim.vocabulary.params import at_least
from sim.policies.seam import GiveUp, Link, Policy, register_policy

OVERFLOW = GiveUp("concurrency_budget")


@register_policy
@dataclass(frozen=True, kw_only=True)
class ConcurrencyBudget(Policy):
    """Retries in progress at most max(percent × attempts in flight, min_concurrency)."""

    SCOPES: ClassVar[tuple[str, ...]] = ("shared",)
    scope: str = "shared"
    percent: float = 20.0
    min_concurrency: int = 3

    def validate(self) -> None:
        at_least(self, 0, "percent")
        m = self.min_concurrency
        if isinstance(m, bool) or not isinstance(m, int) or m < 0:
            raise ParamError("min_concurrency", f"must be an integer >= 0, got {m!r}")

    def link(self) -> Link:
        return _BudgetView(_Cluster(float(self.percent), self.min_concurrency))

    def links(self, n: int) -> list[Link]:
        cluster = _Cluster(float(self.percent), self.min_concurrency)
        return [_BudgetView(cluster) for _ in range(n)]


class _Cluster:
    """The shared counters: attempts in flight and retries holding a slot."""

    __slots__ = ("fraction", "minimum", "active", "retries")

    def __init__(self, percent: float, minimum: int) -> None:
        self.fraction = percent / 100.0
        self.minimum = minimum
        self.active = 0
        self.retries = 0

    def max_retries(self) -> int:
        return max(int(self.fraction * self.active), self.minimum)


class _BudgetView(Link):
    """One client's view: is its attempt in flight, does its request hold a retry slot."""

    __slots__ = ("cluster", "in_flight", "holding", "hedges")

    def __init__(self, cluster: _Cluster) -> None:
        self.cluster = cluster
        self.in_flight = False
        self.holding = False
        self.hedges = 0  # retry slots the attempt's hedged copies hold

    def _attempt_ended(self) -> None:
        cluster = self.cluster
        if self.in_flight:
            self.in_flight = False
            cluster.active -= 1
        if self.holding:
            self.holding = False
            cluster.retries -= 1
        if self.hedges:
            cluster.retries -= self.hedges
            self.hedges = 0

    def on_hedge(self, t: float, kind: int | None = None) -> bool:
        cluster = self.cluster
        if cluster.retries < cluster.max_retries():
            cluster.retries += 1
            self.hedges += 1
            return True
        return False

    def on_attempt(self, t: float, attempt: int, start: float) -> None:
        if not self.in_flight:
            self.in_flight = True
            self.cluster.active += 1

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        self._attempt_ended()
        if verdict.__class__ is GiveUp:
            return verdict
        cluster = self.cluster
        if cluster.retries < cluster.max_retries():
            cluster.retries += 1
            self.holding = True
            return verdict
        return OVERFLOW

    def on_success(self, t: float, attempt: int, start: float) -> None:
        self._attempt_ended()

    def on_give_up(self, t: float) -> None:
        if self.holding:
            self.holding = False
            self.cluster.retries -= 1
        if self.hedges:
            self.cluster.retries -= self.hedges
            self.hedges = 0
