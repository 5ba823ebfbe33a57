"""Per-call retry limits: how many attempts, how long a call may go on.

Stateless links (they read the client's attempt number and call start), so one instance serves
every client. ``MaxAttempts`` and ``MaxElapsed`` keep the exact semantics of the strategies'
``max_attempts``/``max_elapsed`` fields (the engine's rule until now). ``Deadline`` follows
tenacity's two stops: ``stop_after_delay`` (elapsed ≥ total when an attempt fails; the last
backoff may overshoot) and, with ``stop_before=True``, ``stop_before_delay`` (elapsed plus the
coming backoff ≥ total). ``AttemptTimeout`` is not a link: the chain exposes it as
``attempt_timeout`` for the client's per-attempt timer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sim.vocabulary.errors import ParamError
from sim.vocabulary.params import int_at_least
from sim.policies.seam import GiveUp, Link, Policy, register_policy

MAX_ATTEMPTS = GiveUp("max_attempts", denied=False)
MAX_ELAPSED = GiveUp("max_elapsed", denied=False)
DEADLINE = GiveUp("deadline", denied=False)


@dataclass(frozen=True, kw_only=True)
class Limit(Policy):
    """A stateless per-call limit: one link shared by every client, no scope to choose."""

    SCOPES: ClassVar[tuple[str, ...]] = ("client",)

    def links(self, n: int) -> list[Link]:
        return [self.link()] * n



@register_policy
@dataclass(frozen=True, kw_only=True)
class MaxAttempts(Limit):
    """Give up once the call has made ``max_attempts`` attempts (the first one included)."""

    max_attempts: int

    def validate(self) -> None:
        int_at_least(self, "max_attempts")

    def link(self) -> Link:
        return _MaxAttemptsLink(self.max_attempts)


class _MaxAttemptsLink(Link):
    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if verdict.__class__ is GiveUp or attempt < self.n:
            return verdict
        return MAX_ATTEMPTS


@register_policy
@dataclass(frozen=True, kw_only=True)
class MaxElapsed(Limit):
    """Give up when a failure arrives more than ``max_elapsed`` after the call started."""

    max_elapsed: float

    def validate(self) -> None:
        if not self.max_elapsed > 0:
            raise ParamError("max_elapsed", f"must be > 0, got {self.max_elapsed!r}")

    def link(self) -> Link:
        return _MaxElapsedLink(float(self.max_elapsed))


class _MaxElapsedLink(Link):
    __slots__ = ("limit",)

    def __init__(self, limit: float) -> None:
        self.limit = limit

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if verdict.__class__ is GiveUp or not t - start > self.limit:
            return verdict
        return MAX_ELAPSED


@register_policy
@dataclass(frozen=True, kw_only=True)
class Deadline(Limit):
    """tenacity's stop_after_delay (elapsed ≥ total), or stop_before_delay with ``stop_before``
    (elapsed + next backoff ≥ total, so no attempt starts after the deadline)."""

    total: float
    stop_before: bool = False

    def validate(self) -> None:
        if not self.total > 0:  # as MaxElapsed's max_elapsed: a deadline of 0 is no retry at all
            raise ParamError("total", f"must be > 0, got {self.total!r}",
                             "for no retries, give max_attempts = 1")
        if not isinstance(self.stop_before, bool):
            raise ParamError("stop_before", f"must be true or false, got {self.stop_before!r}")

    @property
    def needs_delay(self) -> bool:
        return self.stop_before

    def link(self) -> Link:
        return _DeadlineLink(float(self.total), self.stop_before)


class _DeadlineLink(Link):
    __slots__ = ("total", "before")

    def __init__(self, total: float, before: bool) -> None:
        self.total = total
        self.before = before

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if verdict.__class__ is GiveUp:
            return verdict
        elapsed = t - start
        if self.before:
            elapsed += verdict  # type: ignore[operator]
        return DEADLINE if elapsed >= self.total else verdict


@register_policy
@dataclass(frozen=True, kw_only=True)
class AttemptTimeout(Limit):
    """Each attempt times out ``timeout`` after it is sent (read by the client, not a link)."""

    timeout: float

    def validate(self) -> None:
        if not self.timeout > 0:
            raise ParamError("timeout", f"must be > 0, got {self.timeout!r}")

    def link(self) -> Link:
        return Link()
