"""Circuit breakers of three kinds: Polly v8's failure ratio, resilience4j's count window, Brooker's.

An open ratio or count breaker refuses attempts, a first attempt too (``on_attempt`` returns a
GiveUp; the client reports the refused attempt as ``DENIED`` and its chain decides whether to
retry later, as Polly's and resilience4j's retry strategies retry a broken-circuit exception).
The brooker kind never refuses an attempt; it only stops retries.

- ``ratio``: Polly v8 ``CircuitStateController``, ``AdvancedCircuitBehavior``,
  ``RollingHealthMetrics``/``SingleHealthMetrics`` (App-vNext/Polly ``src/Polly.Core/
  CircuitBreaker/``), defaults from ``CircuitBreakerConstants``: failure ratio 0.1 over a 30 s
  sampling window (10 rolling windows; one window below 200 ms), minimum throughput 100, break
  5 s. A failure in the closed state opens the breaker when throughput ≥ minimum and ratio ≥
  failure_ratio. After the break the next attempt is the one probe (half-open); others are
  refused until it ends: a success closes (and resets the metrics), a failure re-opens.
- ``count``: resilience4j ``CircuitBreakerStateMachine`` with ``CircuitBreakerConfig`` defaults:
  failure rate ≥ 50% over the last 100 calls (count-based window), evaluated once 100 calls are
  recorded, after every call; open 60 s (an attempt strictly after that half-opens); 10 calls
  permitted half-open, then closed below the rate or re-opened at it. Slow-call rates are not
  modelled (their default threshold, 100% of calls over 60 s, needs calls longer than 60 s).
- ``brooker``: mbrooker/simulator_example ``retry_sim/retry_strategy.py``
  (``CircuitBreakerRetryStrategy``): cumulative counters that never reset; ``calls`` +1 per new
  call, ``failures`` +1 per failed attempt; a retry only while failures/calls ≤ failure_ratio.

Attempts refused by a breaker (``DENIED``) never reached the server and are not counted. Each
breaker link calls ``listener(t, state)`` (if set) on every transition, for the client's log.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from sim.vocabulary.errors import ParamError
from sim.vocabulary.outcomes import DENIED
from sim.policies.seam import GiveUp, Link, Policy, register_policy

OPEN_CIRCUIT = GiveUp("breaker_open")
TRIPPED = GiveUp("breaker")

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"

KINDS = ("ratio", "count", "brooker")
COUNTS = ("attempts", "calls")
# Each kind's defaults (times in seconds) and the parameters it accepts.
DEFAULTS: dict[str, dict[str, float | int]] = {
    "ratio": {"failure_ratio": 0.1, "minimum_throughput": 100, "sampling_duration": 30.0, "break_duration": 5.0},
    "count": {"failure_ratio": 0.5, "minimum_throughput": 100, "window": 100, "break_duration": 60.0,
              "half_open_calls": 10},
    "brooker": {"failure_ratio": 0.1},
}
TIME_PARAMS = ("sampling_duration", "break_duration")
# Polly: HealthMetrics.Create uses one window below ResolutionOfCircuitTimer (20 ms) × 10 windows.
POLLY_WINDOWS = 10
POLLY_SINGLE_BELOW_S = 0.2


def _f32(x: float) -> float:
    """Round to a Java ``float`` (resilience4j computes failure rates in float)."""
    return struct.unpack("f", struct.pack("f", x))[0]


@register_policy
@dataclass(frozen=True, kw_only=True)
class CircuitBreaker(Policy):
    """``kind = "ratio"`` (Polly v8), ``"count"`` (resilience4j) or ``"brooker"``; unset parameters take the kind's defaults."""

    kind: str = "ratio"
    failure_ratio: float | None = None
    minimum_throughput: int | None = None
    sampling_duration: float | None = None
    window: int | None = None
    break_duration: float | None = None
    half_open_calls: int | None = None
    unit_seconds: float = 0.001
    # "attempts": the breaker sees every attempt (the retry outside it: resilience4j's Spring Boot
    # aspect order, Polly's standard pipeline); "calls": one outcome per call, the retry inside
    # the breaker (a refused call fails at once, with no retry).
    counts: str = "attempts"

    def validate(self) -> None:
        if self.kind not in KINDS:
            raise ParamError("kind", f"must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.counts not in COUNTS:
            raise ParamError("counts", f"must be one of {', '.join(COUNTS)}, got {self.counts!r}")
        if self.counts == "calls" and self.kind == "brooker":
            raise ParamError("counts", "does not apply to kind 'brooker' (it counts calls and attempts already)")
        if not self.unit_seconds > 0:
            raise ParamError("unit_seconds", f"must be > 0, got {self.unit_seconds!r}")
        accepted = DEFAULTS[self.kind]
        for name in ("failure_ratio", "minimum_throughput", "sampling_duration", "window",
                     "break_duration", "half_open_calls"):
            if getattr(self, name) is not None and name not in accepted:
                raise ParamError(name, f"does not apply to kind {self.kind!r}",
                                 f"it takes {', '.join(accepted)}")
        p = self.resolved()
        if not 0 < p["failure_ratio"] <= 1:
            raise ParamError("failure_ratio", f"must be in (0, 1], got {p['failure_ratio']!r}")
        for name in ("minimum_throughput", "window", "half_open_calls"):
            if name in p:
                value = p[name]
                low = 2 if name == "minimum_throughput" and self.kind == "ratio" else 1
                if isinstance(value, bool) or not isinstance(value, int) or value < low:
                    raise ParamError(name, f"must be an integer >= {low}, got {value!r}")
        for name in TIME_PARAMS:
            if name in p and not p[name] > 0:
                raise ParamError(name, f"must be > 0, got {p[name]!r}")

    def resolved(self) -> dict[str, float | int]:
        """The kind's parameters with defaults filled in, times in the config's time unit."""
        out: dict[str, float | int] = {}
        for name, default in DEFAULTS[self.kind].items():
            value = getattr(self, name)
            if value is None:
                value = default / self.unit_seconds if name in TIME_PARAMS else default
            out[name] = value
        return out

    def link(self) -> Link:
        inner = self._breaker()
        return _PerCall(inner) if self.counts == "calls" else inner

    def links(self, n: int) -> list[Link]:
        if self.counts != "calls":
            return super().links(n)
        if self.scope == "shared":  # one breaker, and each client's own view of its call
            inner = self._breaker()
            return [_PerCall(inner) for _ in range(n)]
        return [_PerCall(self._breaker()) for _ in range(n)]

    def _breaker(self) -> _Breaker:
        p = self.resolved()
        if self.kind == "ratio":
            sampling = float(p["sampling_duration"])
            single = sampling * self.unit_seconds < POLLY_SINGLE_BELOW_S
            metrics = _SingleMetrics(sampling) if single else _RollingMetrics(sampling, POLLY_WINDOWS)
            return _PollyBreaker(float(p["failure_ratio"]), int(p["minimum_throughput"]),
                                 float(p["break_duration"]), metrics)
        if self.kind == "count":
            return _Resilience4jBreaker(float(p["failure_ratio"]), int(p["minimum_throughput"]),
                                        int(p["window"]), float(p["break_duration"]),
                                        int(p["half_open_calls"]))
        return _BrookerBreaker(float(p["failure_ratio"]))


class _Breaker(Link):
    __slots__ = ("state", "listener")

    def __init__(self) -> None:
        self.state = CLOSED
        self.listener: Callable[[float, str], None] | None = None

    def _to(self, t: float, state: str) -> None:
        self.state = state
        if self.listener is not None:
            self.listener(t, state)


class _PerCall(Link):
    """A breaker outside the retries (``counts = "calls"``): asked once, before a call's first
    attempt, and told the call's outcome once: a success, or the failure it ended with. A call it
    refuses ends there (the retry inside never runs), and is not counted."""

    __slots__ = ("inner", "refused", "kind")

    def __init__(self, inner: _Breaker) -> None:
        self.inner = inner
        self.refused = False
        self.kind = DENIED

    @property
    def listener(self) -> Callable[[float, str], None] | None:
        return self.inner.listener

    @listener.setter
    def listener(self, value: Callable[[float, str], None] | None) -> None:
        self.inner.listener = value

    @property
    def state(self) -> str:
        return self.inner.state

    def on_attempt(self, t: float, attempt: int, start: float) -> GiveUp | None:
        if attempt != 1:
            return None  # the retries run inside a call the breaker let through
        answer = self.inner.on_attempt(t, attempt, start)
        self.refused = answer.__class__ is GiveUp
        return answer

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if self.refused:
            return OPEN_CIRCUIT  # CallNotPermitted reaches the caller: no retry
        self.kind = kind
        return verdict

    def on_success(self, t: float, attempt: int, start: float) -> None:
        self.inner.on_success(t, attempt, start)

    def on_give_up(self, t: float) -> None:
        if not self.refused:
            self.inner.on_failure(t, self.kind, 1, t, TRIPPED)
        self.refused = False


# --- Polly v8 (ratio) --------------------------------------------------------------------------

class _RollingMetrics:
    """Polly's RollingHealthMetrics: windows start at the event that opens them."""

    __slots__ = ("sampling", "window", "windows", "current", "successes", "failures")

    def __init__(self, sampling: float, n: int) -> None:
        self.sampling = sampling
        self.window = sampling / n
        self.windows: deque[list[float]] = deque()
        self.current: list[float] | None = None
        self.successes = 0
        self.failures = 0

    def _update(self, t: float) -> list[float]:
        current = self.current
        if current is None or t - current[0] >= self.window:
            current = [t, 0, 0]
            self.current = current
            self.windows.append(current)
        windows = self.windows
        while t - windows[0][0] >= self.sampling:
            old = windows.popleft()
            self.successes -= old[1]
            self.failures -= old[2]
        return current

    def success(self, t: float) -> None:
        self.successes += 1
        self._update(t)[1] += 1

    def failure(self, t: float) -> None:
        self.failures += 1
        self._update(t)[2] += 1

    def reset(self, t: float) -> None:
        self.successes = self.failures = 0
        self.current = None
        self.windows.clear()

    def health(self, t: float) -> tuple[int, float]:
        self._update(t)
        total = self.successes + self.failures
        return total, (self.failures / total if total else 0.0)


class _SingleMetrics:
    """Polly's SingleHealthMetrics: one window, reset once sampling_duration has passed."""

    __slots__ = ("sampling", "started", "successes", "failures")

    def __init__(self, sampling: float) -> None:
        self.sampling = sampling
        self.started = 0.0
        self.successes = 0
        self.failures = 0

    def _try_reset(self, t: float) -> None:
        if t - self.started >= self.sampling:
            self.reset(t)

    def success(self, t: float) -> None:
        self._try_reset(t)
        self.successes += 1

    def failure(self, t: float) -> None:
        self._try_reset(t)
        self.failures += 1

    def reset(self, t: float) -> None:
        self.started = t
        self.successes = self.failures = 0

    def health(self, t: float) -> tuple[int, float]:
        self._try_reset(t)
        total = self.successes + self.failures
        return total, (self.failures / total if total else 0.0)


class _PollyBreaker(_Breaker):
    __slots__ = ("ratio", "minimum", "break_duration", "metrics", "blocked_until")

    def __init__(self, ratio: float, minimum: int, break_duration: float,
                 metrics: _RollingMetrics | _SingleMetrics) -> None:
        super().__init__()
        self.ratio = ratio
        self.minimum = minimum
        self.break_duration = break_duration
        self.metrics = metrics
        self.blocked_until = float("-inf")

    def on_attempt(self, t: float, attempt: int, start: float) -> GiveUp | None:
        state = self.state
        if state is CLOSED:
            return None
        if state is OPEN and t >= self.blocked_until:
            self.blocked_until = t + self.break_duration
            self._to(t, HALF_OPEN)
            return None
        return OPEN_CIRCUIT

    def _open(self, t: float) -> None:
        self.blocked_until = t + self.break_duration
        self._to(t, OPEN)

    def on_success(self, t: float, attempt: int, start: float) -> None:
        self.metrics.success(t)
        if self.state is HALF_OPEN:
            self.blocked_until = float("-inf")
            self.metrics.reset(t)
            self._to(t, CLOSED)

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if kind == DENIED:
            return verdict
        state = self.state
        if state is CLOSED:
            metrics = self.metrics
            metrics.failure(t)
            throughput, rate = metrics.health(t)
            if throughput >= self.minimum and rate >= self.ratio:
                self._open(t)
        elif state is OPEN:
            self.metrics.failure(t)
        else:
            self._open(t)
        return verdict


# --- resilience4j (count) ----------------------------------------------------------------------

class _Resilience4jBreaker(_Breaker):
    __slots__ = ("threshold", "minimum", "window", "wait", "half_open_calls", "ring", "failed",
                 "min_calls", "retry_after", "permits")

    def __init__(self, ratio: float, minimum: int, window: int, wait: float, half_open_calls: int) -> None:
        super().__init__()
        self.threshold = _f32(ratio * 100.0)
        self.minimum = minimum
        self.window = window
        self.wait = wait
        self.half_open_calls = half_open_calls
        self.retry_after = 0.0
        self.permits = 0
        self._metrics(window, min(minimum, window))

    def _metrics(self, size: int, min_calls: int) -> None:
        self.ring: deque[bool] = deque(maxlen=size)
        self.failed = 0
        self.min_calls = min_calls

    def on_attempt(self, t: float, attempt: int, start: float) -> GiveUp | None:
        state = self.state
        if state is CLOSED:
            return None
        if state is OPEN:
            if not t > self.retry_after:
                return OPEN_CIRCUIT
            self.permits = self.half_open_calls
            self._metrics(self.half_open_calls, self.half_open_calls)
            self._to(t, HALF_OPEN)
        if self.permits > 0:
            self.permits -= 1
            return None
        return OPEN_CIRCUIT

    def _record(self, t: float, failed: bool) -> None:
        if self.state is OPEN:
            return
        ring = self.ring
        if len(ring) == ring.maxlen and ring[0]:
            self.failed -= 1
        ring.append(failed)
        self.failed += failed
        total = len(ring)
        if total < self.min_calls:
            return
        if _f32(_f32(self.failed * 100.0) / total) >= self.threshold:
            self.retry_after = t + self.wait
            self._to(t, OPEN)
        elif self.state is HALF_OPEN:
            self._metrics(self.window, min(self.minimum, self.window))
            self._to(t, CLOSED)

    def on_success(self, t: float, attempt: int, start: float) -> None:
        self._record(t, False)

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if kind != DENIED:
            self._record(t, True)
        return verdict


# --- Brooker's retry_sim -----------------------------------------------------------------------

class _BrookerBreaker(_Breaker):
    __slots__ = ("ratio", "calls", "failures")

    def __init__(self, ratio: float) -> None:
        super().__init__()
        self.ratio = ratio
        self.calls = 0.0
        self.failures = 0.0

    def on_attempt(self, t: float, attempt: int, start: float) -> None:
        if attempt == 1:
            self.calls += 1.0

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if kind == DENIED:
            return verdict
        self.failures += 1.0
        if verdict.__class__ is GiveUp:
            return verdict
        if not self.calls or self.failures / self.calls > self.ratio:
            return TRIPPED
        return verdict
