"""A retry rate limit on a token bucket with reservations: client-go's BucketRateLimiter.

Sources: kubernetes ``staging/src/k8s.io/client-go/util/workqueue/default_rate_limiters.go``
(``DefaultControllerRateLimiter`` = ``MaxOf(ItemExponentialFailure(5ms, 1000s),
Bucket(rate.NewLimiter(10, 100)))``; ``BucketRateLimiter.When`` = ``Limiter.Reserve().Delay()``)
and golang.org/x/time ``rate/rate.go`` (``reserveN``, ``advance``). The bucket starts full at
``burst``, fills at ``qps`` per second, and every retry reserves one token at the time of the
failure, even into debt: the retry then waits at least until its token exists. The retry's delay
is the larger of the strategy's and the bucket's (``MaxOf``). client-go's bucket is one per work
queue, so this policy is shared by default. Go truncates waits to whole nanoseconds; not here.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.vocabulary.errors import ParamError
from sim.policies.seam import GiveUp, Link, Policy, register_policy


@register_policy
@dataclass(frozen=True, kw_only=True)
class RateLimit(Policy):
    """Each retry reserves a token of a qps/burst bucket; its delay is at least the token's wait."""

    scope: str = "shared"
    qps: float = 10.0
    burst: int = 100
    unit_seconds: float = 0.001

    def validate(self) -> None:
        for name in ("qps", "unit_seconds"):
            if not getattr(self, name) > 0:
                raise ParamError(name, f"must be > 0, got {getattr(self, name)!r}")
        if isinstance(self.burst, bool) or not isinstance(self.burst, int) or self.burst < 1:
            raise ParamError("burst", f"must be an integer >= 1, got {self.burst!r}")

    @property
    def needs_delay(self) -> bool:
        return True

    def link(self) -> Link:
        return ReservationBucket(float(self.qps), self.burst, self.unit_seconds)


class ReservationBucket(Link):
    """x/time/rate's Limiter: ``reserve(now)`` returns the wait in seconds for one token."""

    __slots__ = ("limit", "burst", "tokens", "last", "unit")

    def __init__(self, qps: float, burst: int, unit_seconds: float) -> None:
        self.limit = qps
        self.burst = burst
        self.tokens = float(burst)
        self.last = 0.0
        self.unit = unit_seconds

    def reserve(self, now: float) -> float:
        last = self.last if self.last <= now else now
        tokens = self.tokens + (now - last) * self.limit
        if tokens > self.burst:
            tokens = float(self.burst)
        tokens -= 1.0
        self.last = now
        self.tokens = tokens
        return -tokens / self.limit if tokens < 0 else 0.0

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if verdict.__class__ is GiveUp:
            return verdict
        wait = self.reserve(t * self.unit) / self.unit
        return wait if wait > verdict else verdict  # type: ignore[operator]
