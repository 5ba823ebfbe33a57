"""The AWS SDK's retry quota (botocore standard and adaptive modes).

Source: botocore ``retries/quota.py`` (``RetryQuota``) and ``retries/standard.py``
(``RetryQuotaChecker``, ``RetryHandler.needs_retry``). The quota starts full at ``capacity``,
which is also its maximum. A retry must acquire its cost or is not attempted: ``timeout_cost``
after a timeout, ``throttle_cost`` after a rejection (a throttling error; ``retry_cost`` when
unset), ``retry_cost`` otherwise. A success gives back ``success_refund`` if the call made no
retry, otherwise what the call's last retry acquired; failures give nothing back. The defaults
are botocore ≤ 1.43 (5, 10 after a timeout); botocore 1.44 charges 5 after a throttling error
and 14 after any other (the ``botocore-standard`` preset): a transient server error
(``SERVER_ERROR``, an HTTP 500) costs ``retry_cost``, as botocore 1.44's ``retries/standard.py``
charges ``RetryQuotaChecker._RETRY_COST`` for every error its ``ThrottlingErrorDetector`` does not
call throttling (500, 502, 503, 504 are ``TransientRetryableChecker``'s status codes).

A hedged copy (``sim.models.hedging``; botocore itself never hedges) is taken as a retry sent
early: it acquires what a retry would, or is not sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.vocabulary.outcomes import REJECTED, TIMED_OUT
from sim.vocabulary.params import int_at_least
from sim.policies.seam import GiveUp, Link, ViewedPolicy, register_policy

EXHAUSTED = GiveUp("retry_quota")


@register_policy
@dataclass(frozen=True, kw_only=True)
class RetryQuota(ViewedPolicy):
    """A retry acquires its cost from the quota or is not made; a success refunds."""

    capacity: int = 500
    retry_cost: int = 5
    timeout_cost: int = 10
    throttle_cost: int | None = None
    success_refund: int = 1

    def validate(self) -> None:
        int_at_least(self, "capacity", 1)
        int_at_least(self, "retry_cost", 0)
        int_at_least(self, "timeout_cost", 0)
        int_at_least(self, "success_refund", 0)
        if self.throttle_cost is not None:
            int_at_least(self, "throttle_cost", 0)

    def state(self) -> _Quota:
        return _Quota(self.capacity)

    def view(self, state: object) -> Link:
        assert isinstance(state, _Quota)
        return _QuotaLink(state, self.retry_cost, self.timeout_cost,
                          self.retry_cost if self.throttle_cost is None else self.throttle_cost,
                          self.success_refund)


class _Quota:
    """botocore's RetryQuota: acquire all or nothing; release truncated at the maximum."""

    __slots__ = ("available", "max")

    def __init__(self, capacity: int) -> None:
        self.available = capacity
        self.max = capacity

    def acquire(self, amount: int) -> bool:
        if amount > self.available:
            return False
        self.available -= amount
        return True

    def release(self, amount: int) -> None:
        if self.available == self.max:
            return
        self.available += min(self.max - self.available, amount)


class _QuotaLink(Link):
    """A client's view: the quota (own or shared) and what this call's last retry acquired."""

    __slots__ = ("quota", "retry_cost", "timeout_cost", "throttle_cost", "refund", "last", "call")

    def __init__(self, quota: _Quota, retry_cost: int, timeout_cost: int, throttle_cost: int,
                 refund: int) -> None:
        self.quota = quota
        self.retry_cost = retry_cost
        self.timeout_cost = timeout_cost
        self.throttle_cost = throttle_cost
        self.refund = refund
        self.last = 0
        self.call = -1.0

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if attempt == 1 or start != self.call:
            self.call = start
            self.last = 0
        if verdict.__class__ is GiveUp:
            return verdict
        if kind == TIMED_OUT:
            cost = self.timeout_cost
        elif kind == REJECTED:
            cost = self.throttle_cost
        else:  # an abort or a server error (HTTP 500): botocore's non-throttling _RETRY_COST
            cost = self.retry_cost
        if not self.quota.acquire(cost):
            return EXHAUSTED
        self.last = cost
        return verdict

    def on_hedge(self, t: float, kind: int | None = None) -> bool:
        # botocore does not hedge: a hedge is taken as a retry sent early, acquiring what a retry
        # after ``kind`` would (a hedge after its delay: the non-throttling retry cost).
        cost = self.throttle_cost if kind == REJECTED else self.retry_cost
        if not self.quota.acquire(cost):
            return False
        self.last = cost
        return True

    def on_success(self, t: float, attempt: int, start: float) -> None:
        if attempt == 1 or start != self.call:
            self.quota.release(self.refund)
        else:
            self.quota.release(self.last)
