"""Backoff strategies: small frozen objects that yield successive delays.

A strategy's ``delays(uniform)`` returns an iterator: its n-th value is the backoff before retry n
(n = 0 for the first retry). All randomness comes from ``uniform``, the client's own stream of
U[0, 1) variates, so strategies are pure and testable with a fixed sequence. A strategy whose
delays start from the client's last think time (``FROM_THINK_TIME``, study 003's Go client) gives
them as ``think_delays(uniform, think)`` instead; it runs only with a workload that repeats.

Adding a strategy is one class decorated with ``@register``; its dataclass fields are its
parameters, validated in ``validate``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import ClassVar

from sim.vocabulary.errors import ParamError
from sim.vocabulary.params import above, at_least, describe_params, finite_fields, fraction

Uniform = Callable[[], float]

STRATEGIES: dict[str, type[Strategy]] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    """Add a strategy class to the registry under its class name."""
    STRATEGIES[cls.__name__] = cls
    return cls


@dataclass(frozen=True, kw_only=True)
class Strategy:
    """Base class: shared retry limits. ``None`` means no limit."""

    max_attempts: int | None = None
    max_elapsed: float | None = None
    # Each retry is sent only with this probability (some clients, joemag1's simulator); else
    # the call ends there (``client_gives_up``). Drawn from the client's jitter stream, before
    # the delay, so a strategy without it draws exactly as before.
    retry_probability: float | None = None

    # Fields that are limits rather than shape parameters, in labels and docs.
    LIMIT_FIELDS: ClassVar[tuple[str, ...]] = ("max_attempts", "max_elapsed", "retry_probability")
    # True when the delays start from the think time before the call (``think_delays``).
    FROM_THINK_TIME: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.max_attempts is not None:
            at_least(self, 1, "max_attempts")
        if self.max_elapsed is not None:
            above(self, 0, "max_elapsed")
        p = self.retry_probability
        if p is not None and (isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1):
            raise ParamError("retry_probability", f"must be a probability from 0 to 1, got {p!r}")
        finite_fields(self)
        self.validate()

    def validate(self) -> None:
        """Raise ``ParamError`` for impossible parameters (so negative delays cannot happen)."""

    def delays(self, uniform: Uniform) -> Iterator[float]:
        """Yield the backoff before each retry, forever (limits are applied by the client)."""
        raise NotImplementedError

    @property
    def type_name(self) -> str:
        return type(self).__name__

    def params(self) -> dict[str, float | int | None]:
        """Shape parameters and any limits that differ from the class default."""
        out: dict[str, float | int | None] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in self.LIMIT_FIELDS and value == f.default:
                continue
            out[f.name] = value
        return out

    def describe(self) -> str:
        """``Type(a=1, b=2)``: distinguishes two strategies of one type."""
        return describe_params(self.type_name, self.params())


def _capped_doubling(base: float, cap: float) -> Iterator[float]:
    """min(cap, base * 2**n) for n = 0, 1, ... without overflowing for large n."""
    t = base
    while True:
        if t >= cap:
            while True:
                yield cap
        yield t
        t *= 2.0


@register
@dataclass(frozen=True, kw_only=True)
class Constant(Strategy):
    """Back off by the same delay every time."""

    constant: float

    def validate(self) -> None:
        at_least(self, 0, "constant")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        c = float(self.constant)
        while True:
            yield c


@register
@dataclass(frozen=True, kw_only=True)
class NoBackoff(Strategy):
    """Retry immediately (a delay of 0)."""

    def delays(self, uniform: Uniform) -> Iterator[float]:
        while True:
            yield 0.0


@dataclass(frozen=True, kw_only=True)
class _BaseCap(Strategy):
    """Strategies shaped by a base delay and a cap (the AWS post's family)."""

    base: float
    cap: float

    def validate(self) -> None:
        at_least(self, 0, "base")
        above(self, 0, "cap")
        if self.cap < self.base:  # every delay would be the cap: a Constant in disguise, or a typo
            raise ParamError("cap", f"must be >= base ({self.base!r}), got {self.cap!r}",
                             "a cap below the base makes every delay the cap")


@register
@dataclass(frozen=True, kw_only=True)
class Expo(_BaseCap):
    """Capped exponential backoff without jitter."""

    def delays(self, uniform: Uniform) -> Iterator[float]:
        return _capped_doubling(float(self.base), float(self.cap))


@register
@dataclass(frozen=True, kw_only=True)
class FullJitteredExpo(_BaseCap):
    """The AWS post's "Full Jitter"."""

    def delays(self, uniform: Uniform) -> Iterator[float]:
        for t in _capped_doubling(float(self.base), float(self.cap)):
            yield uniform() * t


def _floored_doubling(base: float, floor: float) -> Iterator[float]:
    """max(floor, base * 2**n) for n = 0, 1, ...: no cap (the doubling stops at 1e300, far past
    any horizon, so the delay never overflows to inf)."""
    t = base
    while True:
        yield max(floor, t)
        if t < 1e300:
            t *= 2.0


@dataclass(frozen=True, kw_only=True)
class _BaseFloor(Strategy):
    """Study 004's literal EB and REB, ``max(2^attempts, 30)``: the bound is a floor, not a cap, so
    every delay is at least ``floor`` and the growth is unbounded."""

    base: float
    floor: float

    def validate(self) -> None:
        at_least(self, 0, "base", "floor")


@register
@dataclass(frozen=True, kw_only=True)
class FlooredExpo(_BaseFloor):
    """Exponential backoff that never waits less than ``floor`` and has no cap."""

    def delays(self, uniform: Uniform) -> Iterator[float]:
        return _floored_doubling(float(self.base), float(self.floor))


@register
@dataclass(frozen=True, kw_only=True)
class FullJitteredFlooredExpo(_BaseFloor):
    """U(0, max(floor, base·2ⁿ)): full jitter over the floored, uncapped exponential."""

    def delays(self, uniform: Uniform) -> Iterator[float]:
        for t in _floored_doubling(float(self.base), float(self.floor)):
            yield uniform() * t


@register
@dataclass(frozen=True, kw_only=True)
class EqualJitteredExpo(_BaseCap):
    """The AWS post's "Equal Jitter": keep half, jitter the other half."""

    def delays(self, uniform: Uniform) -> Iterator[float]:
        for t in _capped_doubling(float(self.base), float(self.cap)):
            half = t / 2.0
            yield half + uniform() * half


@register
@dataclass(frozen=True, kw_only=True)
class DecorrelatedJitter(_BaseCap):
    """The AWS post's "Decorrelated Jitter": each sleep grows from the previous one."""

    def delays(self, uniform: Uniform) -> Iterator[float]:
        base, cap = float(self.base), float(self.cap)
        sleep = base
        while True:
            high = 3.0 * sleep
            sleep = min(cap, base + uniform() * (high - base))
            yield sleep


@register
@dataclass(frozen=True, kw_only=True)
class UniformRandom(Strategy):
    """A fresh uniform delay every time, no growth."""

    low: float
    high: float

    def validate(self) -> None:
        at_least(self, 0, "low")
        if not self.high >= self.low:
            raise ParamError("high", f"must be >= low ({self.low!r}), got {self.high!r}")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        low, span = float(self.low), float(self.high) - float(self.low)
        while True:
            yield low + uniform() * span


@register
@dataclass(frozen=True, kw_only=True)
class GoogleHttpClient(Strategy):
    """google-http-java-client's ExponentialBackOff: interval·U(1−f, 1+f), stops after max_elapsed."""

    initial_interval: float = 500.0
    multiplier: float = 1.5
    randomization_factor: float = 0.5
    max_interval: float = 60000.0
    max_elapsed: float | None = 900000.0

    def validate(self) -> None:
        above(self, 0, "initial_interval", "max_interval")
        at_least(self, 1, "multiplier")
        fraction(self, "randomization_factor")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        interval, mult, cap = float(self.initial_interval), float(self.multiplier), float(self.max_interval)
        f = float(self.randomization_factor)
        while True:
            yield interval * (1.0 - f + 2.0 * f * uniform())
            interval = min(cap, interval * mult)


@register
@dataclass(frozen=True, kw_only=True)
class GoogleDrive(Strategy):
    """Google Drive SDK: 2ⁿ·1000 + U(0, 1000) ms, at most 5 retries (6 attempts)."""

    max_attempts: int | None = 6

    def delays(self, uniform: Uniform) -> Iterator[float]:
        step = 1000.0
        while True:
            yield step + 1000.0 * uniform()
            if step < 1e300:
                step *= 2.0


@register
@dataclass(frozen=True, kw_only=True)
class SimpleDB(Strategy):
    """AWS SimpleDB: U(0, 1)·100·4ⁿ⁺¹ ms."""

    def delays(self, uniform: Uniform) -> Iterator[float]:
        scale = 400.0
        while True:
            yield uniform() * scale
            if scale < 1e300:
                scale *= 4.0


@register
@dataclass(frozen=True, kw_only=True)
class CsmaBinaryExponential(Strategy):
    """Truncated binary exponential backoff (Ethernet CSMA/CD): slot × integer in [0, 2^k − 1]."""

    slot: float
    truncate: int = 10
    max_attempts: int | None = 16

    def validate(self) -> None:
        above(self, 0, "slot")
        if not 1 <= self.truncate <= 62:
            raise ParamError("truncate", f"must be between 1 and 62, got {self.truncate!r}")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        slot, truncate = float(self.slot), int(self.truncate)
        n = 0
        while True:
            k = min(n + 1, truncate)
            yield slot * math.floor(uniform() * (1 << k))
            n += 1


@register
@dataclass(frozen=True, kw_only=True)
class NormalJitterExpo(Strategy):
    """Study 003's client: min_delay first, then min(previous·factor, max_delay) + N(0, jitter·delay),
    never below 0 (the next step grows from at least min_delay).

    A new request starts again from ``min_delay`` (the reset after a success). Normal variates come
    from the client's uniform stream by the Box–Muller transform, so the stream stays U[0, 1).
    """

    min_delay: float
    factor: float
    max_delay: float
    jitter: float = 0.1

    def validate(self) -> None:
        above(self, 0, "min_delay", "max_delay")
        at_least(self, 0, "jitter")
        at_least(self, 1, "factor")
        if not self.max_delay >= self.min_delay:
            raise ParamError("max_delay", f"must be >= min_delay ({self.min_delay!r}), got {self.max_delay!r}")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        factor, cap, jitter = float(self.factor), float(self.max_delay), float(self.jitter)
        floor = delay = float(self.min_delay)
        yield delay
        while True:
            # Grow from at least min_delay, so a large negative jitter cannot pin the delay at 0.
            delay = min(max(delay, floor) * factor, cap)
            if jitter:
                z = math.sqrt(-2.0 * math.log(1.0 - uniform())) * math.cos(2.0 * math.pi * uniform())
                delay = max(0.0, delay + z * jitter * delay)
            yield delay


@register
@dataclass(frozen=True, kw_only=True)
class ThinkTimeExpo(Strategy):
    """Study 003's real client (``client.go`` with ``-exponential-backoff``), not its post's
    pseudocode: the first backoff is ``factor`` × the think time that preceded the call, each
    next one ``factor`` × the previous; capped at ``max_delay``, then an absolute N(0, ``jitter``)
    is added (``rand.NormFloat64() * 0.1 * time.Second``: 100 ms). Go sleeps a negative delay as
    0 (``time.After``) but keeps it as the next one's base, so a client whose delay turns
    negative retries at once until a success; that is kept.

    The defaults are the client's constants in ms (``expFactor = 2.71828``,
    ``expMaxDelay = 5 * time.Minute``, the jitter's 0.1 s). Normal variates come from the
    client's uniform stream by the Box–Muller transform, as ``NormalJitterExpo``'s do.
    """

    FROM_THINK_TIME: ClassVar[bool] = True
    factor: float = 2.71828
    max_delay: float = 300000.0
    jitter: float = 100.0

    def validate(self) -> None:
        above(self, 0, "max_delay")
        at_least(self, 0, "jitter")
        at_least(self, 1, "factor")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        raise TypeError("ThinkTimeExpo's delays start from the client's last think time: "
                        "call think_delays(uniform, think)")

    def think_delays(self, uniform: Uniform, think: float) -> Iterator[float]:
        """The backoffs of a call that began ``think`` after the previous one ended."""
        factor, cap, jitter = float(self.factor), float(self.max_delay), float(self.jitter)
        last = float(think)
        while True:
            delay = min(last * factor, cap)  # Go: if delay > expMaxDelay { delay = expMaxDelay }
            if jitter:
                z = math.sqrt(-2.0 * math.log(1.0 - uniform())) * math.cos(2.0 * math.pi * uniform())
                delay += z * jitter
            last = delay
            yield delay if delay > 0.0 else 0.0
