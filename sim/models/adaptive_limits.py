"""Adaptive concurrency limits, as Netflix's concurrency-limits library computes them.

A translation of concurrency-limits-core (github.com/Netflix/concurrency-limits, commit 78a74b9,
January 2026), package ``com.netflix.concurrency.limits``:

- ``limit/AIMDLimit.java``: loss based; +1 while at least half the limit is in flight, times
  ``backoff_ratio`` on a drop or an RTT over ``timeout``; clamped to [min_limit, max_limit].
- ``limit/Gradient2Limit.java``: the gradient of a long-term RTT average (``ExpAvgMeasurement``
  of ``long_window`` samples, 10 of warm-up) over the latest RTT, limited to [0.5, 1], times the
  limit plus ``queue_size``, smoothed by ``smoothing``; clamped to [min_limit, max_concurrency].
- ``limit/VegasLimit.java``: TCP Vegas; the queue estimated as limit × (1 − rtt_noload / rtt)
  against thresholds that grow as log10 of the limit (``functions/Log10RootIntFunction.java``),
  and a new no-load RTT probed every ``probe_jitter · probe_multiplier · limit`` samples; the
  jitter is the library's only random draw (``ThreadLocalRandom.nextDouble(0.5, 1)``), here
  from the run's own stream.
- ``limiter/SimpleLimiter.java`` over ``limiter/AbstractLimiter.java``: admit while fewer than
  the limit are in flight (an adjustable semaphore); on release, the algorithm gets the RTT since
  admission, the in-flight count at admission and whether the request was dropped.

Times are in the simulation's unit; ``timeout``'s default is the library's 5 s written in
milliseconds, the default unit. Plain Python, no randomness but Vegas's probe jitter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Callable, Protocol

from sim.vocabulary.errors import ParamError

ALGORITHMS = ("aimd", "gradient2", "vegas")

# Each algorithm's parameters and the library's defaults (its Builder's field initialisers).
DEFAULTS: dict[str, dict[str, float | int]] = {
    # AIMDLimit.Builder: initialLimit 20, minLimit 20, maxLimit 200, backoffRatio 0.9,
    # timeout 5 s (DEFAULT_TIMEOUT) = 5000 ms.
    "aimd": {"initial_limit": 20, "min_limit": 20, "max_limit": 200, "backoff_ratio": 0.9,
             "timeout": 5000.0},
    # Gradient2Limit.Builder: initialLimit 20, minLimit 20, maxConcurrency 200, smoothing 0.2,
    # queueSize 4, longWindow 600, rttTolerance 1.5.
    "gradient2": {"initial_limit": 20, "min_limit": 20, "max_concurrency": 200, "smoothing": 0.2,
                  "queue_size": 4, "long_window": 600, "rtt_tolerance": 1.5},
    # VegasLimit.Builder: initialLimit 20, maxConcurrency 1000, smoothing 1.0, probeMultiplier 30;
    # alpha, beta: 3 and 6 times log10 of the limit unless fixed (alpha(int), beta(int)).
    "vegas": {"initial_limit": 20, "max_concurrency": 1000, "smoothing": 1.0, "probe_multiplier": 30,
              "alpha": None, "beta": None},  # type: ignore[dict-item]
}

# ExpAvgMeasurement(longWindow, 10) in Gradient2Limit: the first 10 samples are averaged.
GRADIENT2_WARMUP = 10


def log10_root(n: int) -> int:
    """Log10RootIntFunction.create(0): max(1, ⌊log10 n⌋) below 1000 (1 for 0), else ⌊log10 n⌋."""
    if n < 1000:
        return max(1, int(math.log10(n))) if n > 0 else 1
    return int(math.log10(n))


class Algorithm(Protocol):
    """A limit algorithm: its current limit, and ``on_sample`` (AbstractLimit.onSample)."""

    limit: int

    def on_sample(self, rtt: float, inflight: int, did_drop: bool) -> None: ...


class AIMDLimit:
    """AIMDLimit.java's ``_update``."""

    def __init__(self, initial_limit: int = 20, min_limit: int = 20, max_limit: int = 200,
                 backoff_ratio: float = 0.9, timeout: float = 5000.0) -> None:
        self.limit = int(initial_limit)
        self.min_limit, self.max_limit = int(min_limit), int(max_limit)
        self.backoff_ratio, self.timeout = float(backoff_ratio), float(timeout)

    def on_sample(self, rtt: float, inflight: int, did_drop: bool) -> None:
        current = self.limit
        if did_drop or rtt > self.timeout:
            current = int(current * self.backoff_ratio)  # Java's (int) truncates toward zero
        elif inflight * 2 >= current:
            current += 1
        self.limit = min(self.max_limit, max(self.min_limit, current))


class ExpAvgMeasurement:
    """measurement/ExpAvgMeasurement.java: the mean of the first ``warmup`` samples, then an
    exponential average with factor 2 / (window + 1)."""

    def __init__(self, window: int, warmup: int) -> None:
        self.window, self.warmup = int(window), int(warmup)
        self.value = 0.0
        self.total = 0.0
        self.count = 0

    def add(self, sample: float) -> float:
        if self.count < self.warmup:
            self.count += 1
            self.total += sample
            self.value = self.total / self.count
        else:
            factor = 2.0 / (self.window + 1)
            self.value = self.value * (1 - factor) + sample * factor
        return self.value


class Gradient2Limit:
    """Gradient2Limit.java's ``_update``."""

    def __init__(self, initial_limit: int = 20, min_limit: int = 20, max_concurrency: int = 200,
                 smoothing: float = 0.2, queue_size: int = 4, long_window: int = 600,
                 rtt_tolerance: float = 1.5) -> None:
        self.estimated = float(initial_limit)
        self.limit = int(initial_limit)
        self.min_limit, self.max_limit = int(min_limit), int(max_concurrency)
        self.smoothing, self.queue_size = float(smoothing), int(queue_size)
        self.tolerance = float(rtt_tolerance)
        self.long_rtt = ExpAvgMeasurement(long_window, GRADIENT2_WARMUP)

    def on_sample(self, rtt: float, inflight: int, did_drop: bool) -> None:
        estimated = self.estimated
        queue_size = float(self.queue_size)
        short_rtt = float(rtt)
        long_rtt = self.long_rtt.add(rtt)
        # "If the long RTT is substantially larger than the short RTT then reduce the long RTT"
        # (the returned long_rtt is used as it was, as in the library).
        if long_rtt / short_rtt > 2:
            self.long_rtt.value *= 0.95
        if inflight < estimated / 2:  # "Don't grow the limit if we are app limited"
            self.limit = int(estimated)
            return
        gradient = max(0.5, min(1.0, self.tolerance * long_rtt / short_rtt))
        new_limit = estimated * gradient + queue_size
        new_limit = estimated * (1 - self.smoothing) + new_limit * self.smoothing
        new_limit = max(self.min_limit, min(self.max_limit, new_limit))
        self.estimated = new_limit
        self.limit = int(new_limit)


class VegasLimit:
    """VegasLimit.java's ``_update``; ``uniform`` gives draws in [0, 1) for the probe jitter."""

    def __init__(self, uniform: Callable[[], float], initial_limit: int = 20, max_concurrency: int = 1000,
                 smoothing: float = 1.0, probe_multiplier: int = 30, alpha: int | None = None,
                 beta: int | None = None, decrease: Callable[[float], float] | None = None) -> None:
        self.uniform = uniform
        self.estimated = float(initial_limit)
        self.limit = int(initial_limit)
        self.max_limit = int(max_concurrency)
        self.smoothing, self.probe_multiplier = float(smoothing), int(probe_multiplier)
        self.alpha = (lambda limit: 3 * log10_root(limit)) if alpha is None else (lambda _: int(alpha))
        self.beta = (lambda limit: 6 * log10_root(limit)) if beta is None else (lambda _: int(beta))
        self.threshold = log10_root
        self.increase = lambda limit: limit + log10_root(int(limit))
        self.decrease = decrease or (lambda limit: limit - log10_root(int(limit)))
        self.rtt_noload = 0.0
        self.probe_count = 0
        self.probe_jitter = self._jitter()

    def _jitter(self) -> float:
        return 0.5 + 0.5 * self.uniform()  # ThreadLocalRandom.nextDouble(0.5, 1)

    def on_sample(self, rtt: float, inflight: int, did_drop: bool) -> None:
        if not rtt > 0:
            raise ValueError(f"rtt must be >0 but got {rtt}")
        self.probe_count += 1
        if self.probe_jitter * self.probe_multiplier * self.estimated <= self.probe_count:
            self.probe_jitter = self._jitter()
            self.probe_count = 0
            self.rtt_noload = rtt
            return
        if self.rtt_noload == 0 or rtt < self.rtt_noload:
            self.rtt_noload = rtt
            return
        estimated = self.estimated
        queue_size = math.ceil(estimated * (1 - self.rtt_noload / rtt))
        if did_drop:
            new_limit = self.decrease(estimated)
        elif inflight * 2 < estimated:  # "Prevent upward drift if not close to the limit"
            return
        else:
            current = int(estimated)
            alpha, beta, threshold = self.alpha(current), self.beta(current), self.threshold(current)
            if queue_size <= threshold:
                new_limit = estimated + beta
            elif queue_size < alpha:
                new_limit = self.increase(estimated)
            elif queue_size > beta:
                new_limit = self.decrease(estimated)
            else:
                return
        new_limit = max(1.0, min(self.max_limit, new_limit))
        new_limit = (1 - self.smoothing) * estimated + self.smoothing * new_limit
        self.estimated = new_limit
        self.limit = int(new_limit)


class SimpleLimiter:
    """SimpleLimiter.java: admit while fewer than the limit are in flight. ``acquire`` returns
    the in-flight count at admission (AbstractLimiter's ``currentInflight``) or 0 for a
    rejection; ``release`` hands the algorithm its sample (``onSuccess``/``onDropped``), ``ignore``
    none (``onIgnore``)."""

    def __init__(self, algorithm: Algorithm) -> None:
        self.algorithm = algorithm
        self.inflight = 0

    @property
    def limit(self) -> int:
        return self.algorithm.limit

    def acquire(self) -> int:
        if self.inflight >= self.algorithm.limit:
            return 0
        self.inflight += 1
        return self.inflight

    def release(self, rtt: float, inflight_at_start: int, dropped: bool) -> None:
        self.inflight -= 1
        self.algorithm.on_sample(rtt, inflight_at_start, dropped)

    def ignore(self) -> None:
        self.inflight -= 1


@dataclass(frozen=True, kw_only=True)
class AdaptiveLimit:
    """PoolServer's ``concurrency_limit = { algorithm = ..., ... }``: a keyword the library's
    builder takes, in snake case, or None for the library's default (``DEFAULTS``)."""

    algorithm: str
    initial_limit: int | None = None
    min_limit: int | None = None
    max_limit: int | None = None
    max_concurrency: int | None = None
    backoff_ratio: float | None = None
    timeout: float | None = None
    smoothing: float | None = None
    queue_size: int | None = None
    long_window: int | None = None
    rtt_tolerance: float | None = None
    probe_multiplier: int | None = None
    alpha: int | None = None
    beta: int | None = None

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ParamError("algorithm", f"must be one of {', '.join(map(repr, ALGORITHMS))}, "
                             f"got {self.algorithm!r}")
        own = DEFAULTS[self.algorithm]
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "algorithm" or value is None:
                continue
            if f.name not in own:
                takes = ", ".join(own)
                raise ParamError(f.name, f"is not a parameter of the {self.algorithm} limit",
                                 f"{self.algorithm} takes: {takes}")
            if isinstance(value, float) and not math.isfinite(value):
                raise ParamError(f.name, f"must be a finite number, got {value!r}")
        p = self.params()
        for key in ("initial_limit", "min_limit", "max_limit", "max_concurrency", "queue_size",
                    "long_window", "probe_multiplier", "alpha", "beta"):
            if p.get(key) is not None and p[key] < (0 if key == "queue_size" else 1):
                raise ParamError(key, f"must be >= {0 if key == 'queue_size' else 1}, got {p[key]!r}")
        top = p.get("max_limit", p.get("max_concurrency"))
        low = p.get("min_limit", 1)
        if not low <= p["initial_limit"] <= top:
            raise ParamError("initial_limit", f"must be from min_limit ({low}) to the maximum ({top}), "
                             f"got {p['initial_limit']!r}")
        if self.backoff_ratio is not None and not 0.5 <= self.backoff_ratio < 1.0:
            # AIMDLimit.Builder: "Backoff ratio must be in the range [0.5, 1.0)"
            raise ParamError("backoff_ratio", f"must be in [0.5, 1.0), got {self.backoff_ratio!r}")
        if self.timeout is not None and not self.timeout > 0:
            raise ParamError("timeout", f"must be > 0, got {self.timeout!r}")
        if self.smoothing is not None and not 0 < self.smoothing <= 1:
            raise ParamError("smoothing", f"must be in (0, 1], got {self.smoothing!r}")
        if self.rtt_tolerance is not None and not self.rtt_tolerance >= 1.0:
            # Gradient2Limit.Builder: "Tolerance must be >= 1.0"
            raise ParamError("rtt_tolerance", f"must be >= 1.0, got {self.rtt_tolerance!r}")
        if self.alpha is not None and self.beta is not None and not self.alpha <= self.beta:
            raise ParamError("beta", f"must be >= alpha ({self.alpha}), got {self.beta!r}")

    def own_keys(self) -> tuple[str, ...]:
        """The keys this algorithm takes (explore's paths offer only these)."""
        return ("algorithm", *DEFAULTS[self.algorithm])

    def params(self) -> dict[str, float | int | None]:
        """The algorithm's parameters: those given, the library's defaults for the rest."""
        return {key: (default if getattr(self, key) is None else getattr(self, key))
                for key, default in DEFAULTS[self.algorithm].items()}

    def make(self, uniform: Callable[[], float]) -> SimpleLimiter:
        """A fresh limiter for one run (``uniform``: the run's [0, 1) draws, for Vegas)."""
        p = self.params()
        if self.algorithm == "aimd":
            return SimpleLimiter(AIMDLimit(**p))
        if self.algorithm == "gradient2":
            return SimpleLimiter(Gradient2Limit(**p))
        return SimpleLimiter(VegasLimit(uniform, **p))
