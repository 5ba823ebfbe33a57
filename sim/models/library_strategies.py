"""Backoff strategies of real retry libraries, transcribed from their source.

Same contract as ``sim.models.strategies`` (``delays(uniform)`` yields the backoff before retry n,
n = 0 first; all randomness from ``uniform``), registered in the same ``STRATEGIES``. Each
draws its uniforms in the library's own order and count, so fed the same U[0, 1) stream as the
library's ``random.random`` a Python library's delays are reproduced exactly (the tests do).
Times are in the config's time unit; the presets (``sim.policies.presets``) convert the
libraries' seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sim.vocabulary.errors import ParamError
from sim.models.strategies import Strategy, Uniform, register
from sim.vocabulary.outcomes import REJECTED
from sim.vocabulary.params import above, at_least, fraction


def _optional_positive(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if value is not None and not value > 0:
            raise ParamError(name, f"must be > 0 (or left out for no cap), got {value!r}")


def _cap(value: float | None) -> float:
    return math.inf if value is None else float(value)


def _power(scale: float, base: float, n: int) -> float:
    """scale·baseⁿ, or infinity where that overflows a float (each library then caps it, so an
    overflow gives its cap). Not for a sum with a float jitter: an integer power too large for a
    float raises there, outside this ``try`` (tenacity and stamina catch it themselves)."""
    try:
        return scale * base ** n
    except OverflowError:
        return math.inf


@register
@dataclass(frozen=True, kw_only=True)
class GrpcBackoff(Strategy):
    """gRPC retry policy (A6, revised 2024; grpc-go ``stream.go``): min(initial·multiplierⁿ, max)·U(1−j, 1+j)."""

    initial_backoff: float
    max_backoff: float
    backoff_multiplier: float
    jitter: float = 0.2

    def validate(self) -> None:
        above(self, 0, "initial_backoff", "max_backoff", "backoff_multiplier")
        fraction(self, "jitter")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        initial, cap, mult = float(self.initial_backoff), float(self.max_backoff), float(self.backoff_multiplier)
        low, span = 1.0 - self.jitter, 2.0 * self.jitter
        n = 0
        while True:
            cur = min(_power(initial, mult, n), cap)
            yield cur * (low + span * uniform())
            n += 1


@register
@dataclass(frozen=True, kw_only=True)
class GrpcConnectBackoff(Strategy):
    """gRPC connection backoff (grpc-go ``backoff.Exponential``): base first, then min(base·1.6ⁿ, max)·(1 ± 0.2)."""

    base_delay: float = 1000.0
    multiplier: float = 1.6
    jitter: float = 0.2
    max_delay: float = 120000.0

    def validate(self) -> None:
        above(self, 0, "base_delay", "max_delay")
        at_least(self, 1, "multiplier")
        fraction(self, "jitter")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        base, cap, mult, jitter = float(self.base_delay), float(self.max_delay), float(self.multiplier), float(self.jitter)
        yield base
        retries = 1
        while True:
            backoff, left = base, retries
            while backoff < cap and left > 0:
                backoff *= mult
                left -= 1
            if backoff > cap:
                backoff = cap
            backoff *= 1 + jitter * (uniform() * 2 - 1)
            yield max(backoff, 0.0)
            retries += 1


def _tenacity_exponential(multiplier: float, cap: float, exp_base: float, low: float, exponent: int) -> float:
    """tenacity ``wait_exponential.__call__`` (9.2): clamp(multiplier·exp_base^exponent, max(0, min), max)."""
    if (multiplier > 0 and cap > 0 and exp_base > 1 and math.isfinite(cap)
            and exponent > math.log(cap, exp_base) - math.log(multiplier, exp_base)):
        return max(max(0, low), cap)
    try:
        result = multiplier * exp_base ** exponent
    except OverflowError:
        return cap
    return max(max(0, low), min(result, cap))


@register
@dataclass(frozen=True, kw_only=True)
class TenacityRandomExponential(Strategy):
    """tenacity ``wait_random_exponential``: U(min, clamp(multiplier·exp_baseⁿ, min, max))."""

    multiplier: float = 1000.0
    max: float | None = None
    exp_base: float = 2
    min: float = 0.0

    def validate(self) -> None:
        at_least(self, 0, "multiplier", "min")
        above(self, 1, "exp_base")
        _optional_positive(self, "max")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        mult, cap, base, low = self.multiplier, _cap(self.max), self.exp_base, float(self.min)
        n = 0
        while True:
            high = _tenacity_exponential(mult, cap, base, low, n)
            yield low + (high - low) * uniform()
            n += 1


@register
@dataclass(frozen=True, kw_only=True)
class TenacityExponentialJitter(Strategy):
    """tenacity ``wait_exponential_jitter`` (9.2): clamp(multiplier·exp_baseⁿ + U(0, jitter), min, max)."""

    multiplier: float = 1000.0
    max: float | None = None
    exp_base: float = 2
    jitter: float = 1000.0
    min: float = 0.0

    def validate(self) -> None:
        at_least(self, 0, "multiplier", "jitter", "min")
        above(self, 0, "exp_base")
        _optional_positive(self, "max")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        mult, cap, base, jitter, low = self.multiplier, _cap(self.max), self.exp_base, float(self.jitter), float(self.min)
        n = 0
        while True:
            u = jitter * uniform()  # drawn first, as tenacity does
            try:
                result = mult * base ** n + u
            except OverflowError:
                result = cap
            yield max(max(0, low), min(result, cap))
            n += 1


@register
@dataclass(frozen=True, kw_only=True)
class Stamina(Strategy):
    """stamina's backoff (``_compute_backoff``): min(wait_max, wait_initial·wait_exp_baseⁿ + U(0, wait_jitter))."""

    wait_initial: float = 100.0
    wait_max: float = 5000.0
    wait_jitter: float = 1000.0
    wait_exp_base: float = 2

    def validate(self) -> None:
        at_least(self, 0, "wait_initial", "wait_jitter")
        above(self, 0, "wait_max", "wait_exp_base")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        initial, cap, jitter, base = self.wait_initial, float(self.wait_max), float(self.wait_jitter), self.wait_exp_base
        n = 0
        while True:
            u = jitter * uniform() if jitter else 0  # stamina draws nothing when wait_jitter is 0
            try:
                yield min(cap, initial * base ** n + u)
            except OverflowError:
                yield cap
            n += 1


@register
@dataclass(frozen=True, kw_only=True)
class Urllib3Backoff(Strategy):
    """urllib3 ``Retry.get_backoff_time``: no wait before the first retry, then backoff_factor·2ⁿ (+ U·jitter), at most backoff_max."""

    backoff_factor: float = 0.0
    backoff_max: float = 120000.0
    backoff_jitter: float = 0.0

    def validate(self) -> None:
        at_least(self, 0, "backoff_factor", "backoff_max", "backoff_jitter")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        factor, cap, jitter = self.backoff_factor, self.backoff_max, float(self.backoff_jitter)
        yield 0.0
        errors = 2
        while True:
            value = _power(factor, 2, errors - 1)
            if jitter != 0.0:
                value += uniform() * jitter
            yield float(max(0, min(cap, value)))
            errors += 1


@register
@dataclass(frozen=True, kw_only=True)
class BackoffExpo(Strategy):
    """litl/backoff ``expo`` with its default ``full_jitter``: U(0, factor·baseⁿ), the value capped at max_value."""

    factor: float = 1000.0
    base: float = 2
    max_value: float | None = None

    def validate(self) -> None:
        above(self, 0, "factor")
        above(self, 1, "base")
        _optional_positive(self, "max_value")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        factor, base, cap = self.factor, self.base, self.max_value
        n = 0
        capped = False
        while True:
            if not capped:
                a = _power(factor, base, n)
                if cap is None or a < cap:
                    n += 1
                else:
                    a, capped = cap, True
            else:
                a = cap
            yield a * uniform()


@register
@dataclass(frozen=True, kw_only=True)
class PollyDecorrelatedJitter(Strategy):
    """Polly v8 exponential backoff with jitter (``RetryHelper.DecorrelatedJitterBackoffV2``), at most max_delay."""

    delay: float = 2000.0
    max_delay: float | None = None

    def validate(self) -> None:
        at_least(self, 0, "delay")
        _optional_positive(self, "max_delay")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        delay, cap = float(self.delay), _cap(self.max_delay)
        prev = 0.0
        attempt = 0
        while True:
            if delay == 0:
                yield 0.0  # Polly returns a zero base delay at once, drawing nothing
                continue
            t = attempt + uniform()
            try:
                nxt = math.pow(2, t) * math.tanh(math.sqrt(4.0 * t))
            except OverflowError:
                nxt = math.inf
            if math.isinf(nxt):
                prev = nxt
                value = math.inf
            else:
                value = (nxt - prev) * (1 / 1.4) * delay
                prev = nxt
            yield min(value, cap)
            attempt += 1


@register
@dataclass(frozen=True, kw_only=True)
class FinagleDecorrelatedJittered(Strategy):
    """Finagle ``Backoff.decorrelatedJittered(start, maximum)``: start, then U[previous, min(3·previous, maximum)).

    twitter/finagle ``finagle-core/.../finagle/Backoff.scala`` (``DecorrelatedJittered.next``):
    ``upperbound = if (start >= maximum / 3) maximum else start * 3``, the next duration is
    ``start + rng.nextLong(upperbound - start)`` in whole ns (here a continuous U), so it never
    falls below the previous one and stays under ``maximum``; ``start == maximum`` is constant.
    ``RetryPolicy.tries(n)`` uses (5 ms, 200 ms) for its n − 1 retries.
    """

    start: float = 5.0
    maximum: float = 200.0

    def validate(self) -> None:
        above(self, 0, "start", "maximum")
        if not self.maximum >= self.start:
            raise ParamError("maximum", f"must be >= start ({self.start!r}), got {self.maximum!r}")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        cur, cap = float(self.start), float(self.maximum)
        yield cur
        while True:
            upper = cap if cur >= cap / 3 else cur * 3
            span = abs(upper - cur)
            if span:
                cur = cur + uniform() * span
            yield cur


@register
@dataclass(frozen=True, kw_only=True)
class EnvoyBackoff(Strategy):
    """Envoy ``JitteredExponentialBackOffStrategy``: a whole number of ticks in [0, bₙ), b doubling from base to max."""

    base_interval: float = 25.0
    max_interval: float | None = None
    tick: float = 1.0

    def validate(self) -> None:
        above(self, 0, "base_interval", "tick")
        _optional_positive(self, "max_interval")
        if round(self.base_interval / self.tick) < 1:
            raise ParamError("base_interval", f"must be at least one tick ({self.tick!r}), got {self.base_interval!r}")
        if self.max_interval is not None and not self.max_interval >= self.base_interval:
            raise ParamError("max_interval", f"must be >= base_interval ({self.base_interval!r}), got {self.max_interval!r}")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        tick = float(self.tick)
        base = round(self.base_interval / tick)
        cap = 10 * base if self.max_interval is None else round(self.max_interval / tick)
        nxt = base
        while True:
            backoff = nxt
            nxt = nxt * 2 if nxt < cap // 2 else cap
            yield tick * min(math.floor(uniform() * backoff), cap)


@register
@dataclass(frozen=True, kw_only=True)
class BotocoreStandard(Strategy):
    """botocore standard mode (1.44, ``ExponentialBackoff``): U(0,1)·min(scale·2ⁿ, max_backoff), scale by the failure's kind."""

    throttle_base: float = 1000.0
    transient_base: float = 50.0
    max_backoff: float = 20000.0

    def validate(self) -> None:
        at_least(self, 0, "throttle_base", "transient_base")
        above(self, 0, "max_backoff")

    def kind_delays(self, uniform: Uniform) -> Callable[[int], float]:
        """The delay after each failure of a call, told the failure's kind (``sim.vocabulary.outcomes``)."""
        throttle, transient, cap = self.throttle_base, self.transient_base, float(self.max_backoff)
        attempt = 0

        def delay(kind: int) -> float:
            nonlocal attempt
            # botocore ``retries/standard.py`` ExponentialBackoff._get_base_scale: 1 s for a
            # throttling error, 50 ms for any other (a server error, HTTP 500; a timeout).
            scale = throttle if kind == REJECTED else transient
            u = uniform()  # drawn first, as botocore's ``self._random() * min(...)``
            bound = min(_power(scale, 2, attempt), cap)
            attempt += 1
            return u * bound
        return delay

    def delays(self, uniform: Uniform) -> Iterator[float]:
        """Without kinds (an engine that only knows rejections): every failure is throttling."""
        delay = self.kind_delays(uniform)
        while True:
            yield delay(REJECTED)


@register
@dataclass(frozen=True, kw_only=True)
class Resilience4jBackoff(Strategy):
    """resilience4j's IntervalFunction: whole ms, ×multiplier each retry, randomized ±factor, then capped.

    resilience4j-core ``IntervalFunction.java`` (``ofExponentialRandomBackoff``): retry n waits
    ``min((long) randomize(iₙ, f), max)``, with i₁ = the wait and iₙ₊₁ = ``(long) (iₙ × multiplier)``
    (whole milliseconds, truncated); ``randomize(x, f)`` = x − f·x + U(0,1)·2f·x. ``multiplier = 1``
    is ``of(wait)`` (constant: RetryConfig's default, 500 ms), ``randomization_factor = 0`` is
    ``ofExponentialBackoff``, both together ``ofRandomized``. ``tick`` is one millisecond in the
    config's time unit (1.0 for ms).
    """

    wait_duration: float = 500.0
    multiplier: float = 1.0
    randomization_factor: float = 0.0
    max_wait_duration: float | None = None
    tick: float = 1.0

    def validate(self) -> None:
        above(self, 0, "tick")
        at_least(self, 0, "wait_duration")
        at_least(self, 1, "multiplier")
        f = self.randomization_factor
        if not 0 <= f <= 1:  # IntervalFunctionCompanion.checkRandomizationFactor: [0, 1]
            raise ParamError("randomization_factor", f"must be from 0 to 1, got {f!r}")
        _optional_positive(self, "max_wait_duration")

    def delays(self, uniform: Uniform) -> Iterator[float]:
        tick, mult, f = float(self.tick), float(self.multiplier), float(self.randomization_factor)
        interval = math.floor(self.wait_duration / tick)  # Duration.toMillis()
        cap = _cap(None if self.max_wait_duration is None else math.floor(self.max_wait_duration / tick))
        while True:
            if f:
                delta = f * interval
                wait = math.floor(interval - delta + uniform() * (2.0 * delta))  # (long) randomize(...)
            else:
                wait = interval  # of / ofExponentialBackoff draw nothing
            yield tick * min(wait, cap)
            interval = min(math.floor(interval * mult), 2**63 - 1)  # (long) (x * multiplier), Long.MAX saturated
