"""Brooker's adaptive retry: a token bucket that a retry must pay from.

Source: mbrooker/simulator_example ``retry_sim/retry_strategy.py`` (``AdaptiveRetryStrategy``),
behind "Fixing retries with token buckets and circuit breakers" (brooker.co.za, 2022-02-28).
The bucket starts full at ``capacity``; a retry is allowed only while it holds strictly more
than ``cost`` tokens (his ``if self.bucket > 1.0``), and then costs ``cost``. ``refill`` tokens
come back on each call start (``refill_on = "attempt"``, his code: ``start()`` runs once per new
call, not per retry) or on each success (``"success"``, as his blog describes it), up to the
capacity. There is no per-call cap: combine with ``MaxAttempts`` for one. A hedged copy
(``sim.models.hedging``) pays as a retry does, or is not sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.vocabulary.errors import ParamError
from sim.vocabulary.params import above, at_least
from sim.policies.seam import GiveUp, Link, Policy, register_policy

EMPTY = GiveUp("token_bucket")


@register_policy
@dataclass(frozen=True, kw_only=True)
class TokenBucket(Policy):
    """A retry needs more than ``cost`` tokens and spends them; each call start (or success) adds ``refill``."""

    capacity: float = 5.0
    refill: float = 0.1
    cost: float = 1.0
    refill_on: str = "attempt"
    strict: bool = True

    def validate(self) -> None:
        above(self, 0, "capacity", "cost")
        at_least(self, 0, "refill")
        if self.refill_on not in ("attempt", "success"):
            raise ParamError("refill_on", f"must be 'attempt' or 'success', got {self.refill_on!r}")
        if not isinstance(self.strict, bool):
            raise ParamError("strict", f"must be true or false, got {self.strict!r}")

    def link(self) -> Link:
        cls = _RefillOnSuccess if self.refill_on == "success" else _RefillOnCallStart
        return cls(float(self.capacity), float(self.refill), float(self.cost), self.strict)


class _Bucket(Link):
    __slots__ = ("tokens", "capacity", "refill", "cost", "strict")

    def __init__(self, capacity: float, refill: float, cost: float, strict: bool) -> None:
        self.tokens = capacity
        self.capacity = capacity
        self.refill = refill
        self.cost = cost
        self.strict = strict

    def _add(self) -> None:
        self.tokens = min(self.tokens + self.refill, self.capacity)

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if verdict.__class__ is GiveUp:
            return verdict
        tokens, cost = self.tokens, self.cost
        if tokens > cost if self.strict else tokens >= cost:
            self.tokens = tokens - cost
            return verdict
        return EMPTY

    def on_hedge(self, t: float, kind: int | None = None) -> bool:
        # A hedge (sim.models.hedging) is a retry sent early: it pays as one, or is not sent.
        tokens, cost = self.tokens, self.cost
        if tokens > cost if self.strict else tokens >= cost:
            self.tokens = tokens - cost
            return True
        return False


class _RefillOnCallStart(_Bucket):
    __slots__ = ()

    def on_attempt(self, t: float, attempt: int, start: float) -> None:
        if attempt == 1:
            self._add()


class _RefillOnSuccess(_Bucket):
    __slots__ = ()

    def on_success(self, t: float, attempt: int, start: float) -> None:
        self._add()
