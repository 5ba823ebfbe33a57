"""botocore's adaptive retry mode: a client-side send-rate limiter steered by CUBIC.

Sources: botocore ``retries/adaptive.py`` (``ClientRateLimiter``, ``RateClocker``),
``retries/throttling.py`` (``CubicCalculator``), ``retries/bucket.py`` (``TokenBucket``);
adaptive mode also runs the standard mode's retries and quota (the ``botocore-adaptive`` preset).
Transcribed in seconds, botocore's own unit (``unit_seconds`` converts the simulation's time):

- every response (of each attempt) is counted in 0.5 s buckets; when a bucket closes,
  ``measured = 0.8·count/width + 0.2·measured``;
- a throttling response (here: a rejection) sets ``w_max`` to the measured rate (or
  ``min(measured, fill rate)`` once enabled), ``K = cbrt(w_max·(1−β)/C)``, the new rate to
  ``β·w_max`` and enables the limiter; any other response (a success, a timeout, an abort)
  gives ``C·(t − t_last_throttle − K)³ + w_max``; the bucket's rate becomes
  ``min(new rate, 2·measured)``, floored at 0.5/s, capacity ``max(rate, 1)``;
- once enabled, each attempt takes one token before it is sent; the bucket starts empty at
  1 token/s.

Simplification: botocore blocks the sending thread until a token has refilled and re-checks if
the rate changes meanwhile; here the attempt reserves its token at once (the balance may go
negative) and is held for ``(1 − tokens)/rate`` at the rate of that moment. With one attempt in
flight per client (the default scope) this is exactly botocore's wait.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.vocabulary.errors import ParamError
from sim.vocabulary.outcomes import DENIED, REJECTED
from sim.policies.seam import GiveUp, Link, Policy, register_policy


@register_policy
@dataclass(frozen=True, kw_only=True)
class AdaptiveRateLimiter(Policy):
    """botocore's ClientRateLimiter: a token bucket whose rate follows CUBIC on throttling."""

    scale_constant: float = 0.4
    beta: float = 0.7
    smoothing: float = 0.8
    bucket_seconds: float = 0.5
    min_rate: float = 0.5
    unit_seconds: float = 0.001

    def validate(self) -> None:
        for name in ("scale_constant", "bucket_seconds", "min_rate", "unit_seconds"):
            if not getattr(self, name) > 0:
                raise ParamError(name, f"must be > 0, got {getattr(self, name)!r}")
        for name in ("beta", "smoothing"):
            if not 0 < getattr(self, name) < 1:
                raise ParamError(name, f"must be in (0, 1), got {getattr(self, name)!r}")

    def link(self) -> Link:
        return ClientRateLimiter(self.scale_constant, self.beta, self.smoothing, self.bucket_seconds,
                                 self.min_rate, self.unit_seconds)


class ClientRateLimiter(Link):
    """The state of botocore's limiter (token bucket, rate clocker, CUBIC), times in seconds."""

    __slots__ = ("unit", "c", "beta", "smoothing", "bucket_scale", "min_rate", "enabled",
                 "fill_rate", "max_capacity", "capacity", "last_refill",
                 "measured", "count", "last_bucket", "w_max", "k", "last_fail")

    def __init__(self, c: float, beta: float, smoothing: float, bucket_seconds: float,
                 min_rate: float, unit_seconds: float, start: float = 0.0) -> None:
        self.unit = unit_seconds
        self.c, self.beta, self.smoothing = c, beta, smoothing
        self.bucket_scale = 1 / bucket_seconds
        self.min_rate = min_rate
        self.enabled = False
        # TokenBucket(max_rate=1): starts empty.
        self.capacity = 0.0
        self.last_refill = start
        self.fill_rate = 0.0
        self.max_capacity = 0.0
        self._set_max_rate(start, 1.0)
        # RateClocker: the first bucket edge is floor(start), in whole seconds.
        self.measured = 0.0
        self.count = 0
        self.last_bucket = math.floor(start)
        # CubicCalculator(starting_max_rate=0, start_time=start).
        self.w_max = 0.0
        self.k = 0.0
        self.last_fail = start

    # bucket.TokenBucket
    def _refill(self, now: float) -> None:
        fill = (now - self.last_refill) * self.fill_rate
        self.capacity = min(self.max_capacity, self.capacity + fill)
        self.last_refill = now

    def _set_max_rate(self, now: float, value: float) -> None:
        self._refill(now)
        self.fill_rate = max(value, self.min_rate)
        self.max_capacity = value if value >= 1 else 1.0
        self.capacity = min(self.capacity, self.max_capacity)

    def acquire(self, now: float) -> float:
        """Take one token; the wait in seconds until it would have refilled (0 if it was there)."""
        self._refill(now)
        capacity = self.capacity
        self.capacity = capacity - 1.0
        return 0.0 if capacity >= 1.0 else (1.0 - capacity) / self.fill_rate

    # adaptive.RateClocker
    def _record(self, now: float) -> float:
        bucket = math.floor(now * self.bucket_scale) / self.bucket_scale
        self.count += 1
        if bucket > self.last_bucket:
            rate = self.count / float(bucket - self.last_bucket)
            self.measured = rate * self.smoothing + self.measured * (1 - self.smoothing)
            self.count = 0
            self.last_bucket = bucket
        return self.measured

    def response(self, now: float, throttled: bool) -> None:
        """ClientRateLimiter.on_receiving_response."""
        measured = self._record(now)
        if not throttled:
            new_rate = self.c * (now - self.last_fail - self.k) ** 3 + self.w_max
        else:
            rate = measured if not self.enabled else min(measured, self.fill_rate)
            self.w_max = rate
            self.k = (rate * (1 - self.beta) / self.c) ** (1 / 3.0)
            self.last_fail = now
            new_rate = rate * self.beta
            self.enabled = True
        self._set_max_rate(now, min(new_rate, 2.0 * measured))

    # the seam
    def on_attempt(self, t: float, attempt: int, start: float) -> float | None:
        if not self.enabled:
            return None
        wait = self.acquire(t * self.unit)
        return wait / self.unit if wait else None

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if kind != DENIED:
            # Only throttling lowers the rate: botocore's ``adaptive.py`` (on_receiving_response)
            # asks ``ThrottlingErrorDetector``; a server error (HTTP 500) or a timeout is a
            # ``success_received`` to CUBIC.
            self.response(t * self.unit, kind == REJECTED)
        return verdict

    def on_success(self, t: float, attempt: int, start: float) -> None:
        self.response(t * self.unit, False)
