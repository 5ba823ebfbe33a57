"""Each preset's backoff against the library itself (Python) or a transcription of its source.

Two checks per jittered strategy: fed the same U[0, 1) stream as the library's ``random``
(seeded), the delays are *equal*, value for value (the strategies draw in the library's order);
and, fed the simulator's own numpy stream, ≥ 5,000 delays at each retry index have the library's
distribution by a two-sample Kolmogorov–Smirnov test at p > 0.001 (the threshold issue 11 sets;
every seed is fixed, so each p-value is one deterministic number, not a flaky draw).
Deterministic parts are compared exactly. Presets are expanded in seconds (``unit_seconds=1``)
so the floats are the library's own; ``test_milliseconds_only_rescale`` checks the ms default.
"""

from __future__ import annotations

import inspect
import itertools
import math
import random
from collections.abc import Callable
from types import SimpleNamespace

import backoff
import numpy as np
import pytest
import stamina
import tenacity
import urllib3
from botocore import retryhandler
from botocore.retries import standard
from scipy.stats import ks_2samp
from support import numpy_uniform, take
from urllib3.exceptions import ConnectTimeoutError

from sim.vocabulary.errors import ParamError
from sim.models.strategies import Strategy
from sim.vocabulary.outcomes import REJECTED, TIMED_OUT, GiveUp
from sim.policies import chain_from_data
from sim.policies.presets import expand_preset, preset_settings

DRAWS = 5000          # issue 11: at least 5,000 draws per KS comparison
P_MIN = 0.001         # issue 11: KS p-value must exceed this
SEED = 20260807


def strategy_of(preset: str, unit_seconds: float = 1.0, **settings: object) -> Strategy:
    spec = chain_from_data(expand_preset({"preset": preset, **settings}, unit_seconds))
    assert spec.strategy is not None
    return spec.strategy


def ours_at(strategy: Strategy, retries: int, seed: int = SEED) -> np.ndarray:
    """DRAWS calls' delay sequences (each a fresh sequence, as after a success), column n = retry n."""
    uniform = numpy_uniform(seed)
    return np.array([take(strategy, uniform, retries) for _ in range(DRAWS)])


def assert_same_distribution(theirs: np.ndarray, ours: np.ndarray, what: str) -> None:
    for n in range(theirs.shape[1]):
        p = ks_2samp(theirs[:, n], ours[:, n]).pvalue
        assert p > P_MIN, f"{what}: retry {n}: KS p = {p:.2g}"


def state(attempt: int) -> SimpleNamespace:
    """The one field tenacity's waits read from a RetryCallState: the 1-based attempt that failed."""
    return SimpleNamespace(attempt_number=attempt)


# --- tenacity 9.2.1 ----------------------------------------------------------------------------

def tenacity_sequence(wait: Callable[[SimpleNamespace], float], n: int) -> list[float]:
    return [wait(state(k + 1)) for k in range(n)]


@pytest.mark.parametrize("kwargs", [{}, {"multiplier": 0.5, "max": 60}, {"multiplier": 2, "max": 10, "min": 1, "exp_base": 3}])
def test_tenacity_random_exponential_equals_the_library(kwargs: dict) -> None:
    wait = tenacity.wait_random_exponential(**kwargs)
    random.seed(SEED)
    theirs = tenacity_sequence(wait, 40)
    ours = take(strategy_of("tenacity-random-exponential", **kwargs), random.Random(SEED).random, 40)
    assert ours == theirs


@pytest.mark.parametrize("kwargs", [{}, {"multiplier": 0.5, "max": 30, "jitter": 2}, {"max": 10, "min": 3}])
def test_tenacity_exponential_jitter_equals_the_library(kwargs: dict) -> None:
    wait = tenacity.wait_exponential_jitter(**kwargs)
    random.seed(SEED)
    theirs = tenacity_sequence(wait, 40)
    ours = take(strategy_of("tenacity-exponential-jitter", **kwargs), random.Random(SEED).random, 40)
    assert ours == theirs


@pytest.mark.parametrize("preset, wait", [
    ("tenacity-random-exponential", tenacity.wait_random_exponential(multiplier=1, max=60)),
    ("tenacity-exponential-jitter", tenacity.wait_exponential_jitter(max=60)),
])
def test_tenacity_waits_have_the_library_distribution(preset: str, wait: Callable) -> None:
    random.seed(SEED)
    theirs = np.array([tenacity_sequence(wait, 8) for _ in range(DRAWS)])
    assert_same_distribution(theirs, ours_at(strategy_of(preset, max=60), 8), preset)


def test_tenacity_presets_take_the_library_defaults() -> None:
    for cls, preset in ((tenacity.wait_random_exponential, "tenacity-random-exponential"),
                        (tenacity.wait_exponential_jitter, "tenacity-exponential-jitter")):
        ours = strategy_of(preset)
        for name, param in inspect.signature(cls).parameters.items():
            if name in ("initial",):
                continue  # deprecated alias of multiplier
            default = param.default
            if name == "max":  # tenacity's MAX_WAIT (sys.maxsize / 2 seconds) is "no cap" here
                assert default == tenacity._utils.MAX_WAIT and ours.max is None  # type: ignore[attr-defined]
            else:
                assert getattr(ours, name) == default, (preset, name)


# --- stamina 26.1.0 ----------------------------------------------------------------------------

def test_stamina_defaults_are_the_library_defaults() -> None:
    defaults = {k: p.default for k, p in inspect.signature(stamina.retry).parameters.items()}
    s = strategy_of("stamina")
    assert (s.wait_initial, s.wait_max, s.wait_jitter, s.wait_exp_base) == (  # type: ignore[attr-defined]
        defaults["wait_initial"], defaults["wait_max"], defaults["wait_jitter"], defaults["wait_exp_base"])
    data = expand_preset({"preset": "stamina"}, 1.0)
    assert {"type": "MaxAttempts", "max_attempts": defaults["attempts"]} in data["policies"]
    assert {"type": "Deadline", "total": defaults["timeout"]} in data["policies"]


def stamina_run(clock: list[float], attempt_time: float, monkeypatch: pytest.MonkeyPatch, **kwargs: object
                ) -> tuple[int, list[float]]:
    """Run stamina's real retry loop on a fake clock: attempts made, sleeps asked for."""
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock[0] += seconds
    monkeypatch.setattr("time.sleep", sleep)
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    attempts = 0
    with pytest.raises(ValueError):
        for attempt in stamina.retry_context(on=ValueError, **kwargs):  # type: ignore[arg-type]
            with attempt:
                attempts += 1
                clock[0] += attempt_time
                raise ValueError
    return attempts, sleeps


def chain_run(preset: str, attempt_time: float, uniform: Callable[[], float], **settings: object
              ) -> tuple[int, list[float]]:
    """The same always-failing call through our preset's chain: attempts made, delays."""
    chain = chain_from_data(expand_preset({"preset": preset, **settings}, 1.0)).build([uniform])[0]
    t, attempt, delays = 0.0, 0, []
    while True:
        attempt += 1
        t += attempt_time
        verdict = chain.on_failure(t, TIMED_OUT, attempt, 0.0)
        if not isinstance(verdict, float):
            return attempt, delays
        delays.append(verdict)
        t += verdict


@pytest.mark.parametrize("attempt_time", [0.01, 3.0, 7.0])
def test_stamina_retry_loop_is_reproduced(attempt_time: float, monkeypatch: pytest.MonkeyPatch) -> None:
    # 3 s and 7 s attempts hit the 45 s timeout before the 10 attempts; 10 ms ones do not.
    random.seed(SEED)
    theirs = stamina_run([0.0], attempt_time, monkeypatch)
    ours = chain_run("stamina", attempt_time, random.Random(SEED).random)
    assert ours == theirs


def test_stamina_backoff_has_the_library_distribution() -> None:
    from stamina._core import _compute_backoff  # the function stamina's waits call
    random.seed(SEED)
    theirs = np.array([[_compute_backoff(k + 1, 5.0, 0.1, 2, 1.0) for k in range(8)] for _ in range(DRAWS)])
    assert_same_distribution(theirs, ours_at(strategy_of("stamina"), 8), "stamina")


# --- tenacity stops through the real Retrying loop ----------------------------------------------

@pytest.mark.parametrize("stop_setting", ["stop_after_delay", "stop_before_delay"])
@pytest.mark.parametrize("attempt_time", [0.05, 0.7, 2.5])
def test_tenacity_stop_semantics_are_reproduced(stop_setting: str, attempt_time: float,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock[0] += seconds
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    stop = getattr(tenacity, stop_setting)(20)
    retrying = tenacity.Retrying(wait=tenacity.wait_random_exponential(multiplier=1, max=8), stop=stop,
                                 sleep=sleep, reraise=True)
    attempts = 0

    def fail() -> None:
        nonlocal attempts
        attempts += 1
        clock[0] += attempt_time
        raise ValueError
    random.seed(SEED)
    with pytest.raises(ValueError):
        retrying(fail)
    ours = chain_run("tenacity-random-exponential", attempt_time, random.Random(SEED).random,
                     max=8.0, **{stop_setting: 20.0})
    assert ours == (attempts, sleeps)


# --- urllib3 2.8.0 -----------------------------------------------------------------------------

def urllib3_run(**kwargs: object) -> tuple[int, list[float]]:
    """urllib3's Retry after each connect timeout: the backoff it would sleep, until exhausted."""
    retry = urllib3.Retry(**kwargs)  # type: ignore[arg-type]
    delays: list[float] = []
    attempts = 1
    while True:
        try:
            retry = retry.increment(method="GET", url="/", error=ConnectTimeoutError())
        except urllib3.exceptions.MaxRetryError:
            return attempts, delays
        delays.append(retry.get_backoff_time())
        attempts += 1


@pytest.mark.parametrize("kwargs", [{"total": 10}, {"total": 10, "backoff_factor": 0.1},
                                    {"total": 12, "backoff_factor": 0.5, "backoff_max": 30, "backoff_jitter": 0.3}])
def test_urllib3_retry_is_reproduced(kwargs: dict) -> None:
    random.seed(SEED)
    theirs = urllib3_run(**kwargs)
    ours = chain_run("urllib3", 1.0, random.Random(SEED).random, **kwargs)
    assert ours == theirs
    assert theirs[1][0] == 0  # urllib3 does not sleep before the first retry


def test_urllib3_defaults_are_the_library_defaults() -> None:
    s = strategy_of("urllib3")
    sig = inspect.signature(urllib3.Retry).parameters
    assert s.backoff_factor == sig["backoff_factor"].default  # type: ignore[attr-defined]
    assert s.backoff_max == urllib3.Retry.DEFAULT_BACKOFF_MAX  # type: ignore[attr-defined]
    assert s.backoff_jitter == sig["backoff_jitter"].default  # type: ignore[attr-defined]
    assert expand_preset({"preset": "urllib3"}, 1.0)["policies"] == [
        {"type": "MaxAttempts", "max_attempts": sig["total"].default + 1}]


def test_urllib3_jitter_has_the_library_distribution() -> None:
    random.seed(SEED)
    theirs = np.array([urllib3_run(total=8, backoff_factor=0.2, backoff_jitter=0.5)[1] for _ in range(DRAWS)])
    ours = ours_at(strategy_of("urllib3", backoff_factor=0.2, backoff_jitter=0.5), 8)
    assert_same_distribution(theirs, ours, "urllib3")


# --- backoff (litl) 2.2.1 ----------------------------------------------------------------------

def backoff_run(monkeypatch: pytest.MonkeyPatch, **kwargs: object) -> tuple[int, list[float]]:
    """backoff.on_exception's real loop, its sleeps recorded instead of slept."""
    sleeps: list[float] = []
    monkeypatch.setattr("time.sleep", sleeps.append)
    calls = 0

    @backoff.on_exception(backoff.expo, ValueError, **kwargs)  # type: ignore[call-overload]
    def fail() -> None:
        nonlocal calls
        calls += 1
        raise ValueError
    with pytest.raises(ValueError):
        fail()
    return calls, sleeps


@pytest.mark.parametrize("kwargs", [{"max_tries": 12}, {"max_tries": 9, "max_value": 20}])
def test_backoff_expo_is_reproduced(kwargs: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    random.seed(SEED)
    theirs = backoff_run(monkeypatch, **kwargs)
    ours = chain_run("backoff-expo", 0.0, random.Random(SEED).random, **kwargs)
    assert ours == theirs


def test_backoff_expo_has_the_library_distribution() -> None:
    random.seed(SEED)
    theirs = []
    for _ in range(DRAWS):
        gen = backoff.expo()
        gen.send(None)
        theirs.append([backoff.full_jitter(gen.send(None)) for _ in range(8)])
    assert_same_distribution(np.array(theirs), ours_at(strategy_of("backoff-expo"), 8), "backoff-expo")


# --- botocore 1.44.5 ---------------------------------------------------------------------------

class Detector:
    """Stands in for botocore's ThrottlingErrorDetector: the context says whether it throttled."""

    def is_throttling_error_from_context(self, context: standard.RetryContext) -> bool:
        return context.throttled  # type: ignore[attr-defined]


def botocore_context(attempt: int, throttled: bool) -> standard.RetryContext:
    context = standard.RetryContext(attempt_number=attempt, request_context={})
    context.throttled = throttled  # type: ignore[attr-defined]
    return context


def test_botocore_standard_backoff_equals_the_library() -> None:
    rng = random.Random(SEED)
    kinds = [rng.choice((REJECTED, TIMED_OUT)) for _ in range(30)]
    backoff_ = standard.ExponentialBackoff(random=random.Random(SEED + 1).random, throttling_detector=Detector())
    theirs = [backoff_.delay_amount(botocore_context(k + 1, kind == REJECTED)) for k, kind in enumerate(kinds)]
    delay = strategy_of("botocore-standard").kind_delays(random.Random(SEED + 1).random)  # type: ignore[attr-defined]
    assert [delay(kind) for kind in kinds] == theirs


def test_botocore_standard_defaults_are_the_library_constants() -> None:
    s = strategy_of("botocore-standard")
    assert s.max_backoff == standard.ExponentialBackoff._MAX_BACKOFF  # type: ignore[attr-defined]
    config = standard.ExponentialBackoff._DEFAULT_BACKOFF_CONFIG
    assert (s.throttle_base, s.transient_base) == (  # type: ignore[attr-defined]
        config["throttling_base_scale"], config["non_throttling_base_scale"])
    assert standard.ExponentialBackoff._BASE == 2
    assert {"type": "MaxAttempts", "max_attempts": standard.DEFAULT_MAX_ATTEMPTS} in \
        expand_preset({"preset": "botocore-standard"}, 1.0)["policies"]


def test_botocore_standard_backoff_has_the_library_distribution() -> None:
    backoff_ = standard.ExponentialBackoff(random=random.Random(SEED).random, throttling_detector=Detector())
    theirs = np.array([[backoff_.delay_amount(botocore_context(k + 1, True)) for k in range(6)] for _ in range(DRAWS)])
    assert_same_distribution(theirs, ours_at(strategy_of("botocore-standard"), 6), "botocore-standard")


def test_botocore_legacy_equals_the_library() -> None:
    random.seed(SEED)
    theirs = [retryhandler.delay_exponential("rand", 2, k + 1) for k in range(40)]
    ours = take(strategy_of("botocore-legacy"), random.Random(SEED).random, 40)
    assert ours == theirs
    random.seed(SEED)
    dist = np.array([[retryhandler.delay_exponential("rand", 2, k + 1) for k in range(6)] for _ in range(DRAWS)])
    assert_same_distribution(dist, ours_at(strategy_of("botocore-legacy"), 6), "botocore-legacy")


def test_botocore_legacy_gives_up_where_the_library_does() -> None:
    import json
    import os

    import botocore
    with open(os.path.join(os.path.dirname(botocore.__file__), "data", "_retry.json")) as f:
        default = json.load(f)["retry"]["__default__"]
    assert default["delay"] == {"type": "exponential", "base": "rand", "growth_factor": 2}
    decorator = retryhandler.MaxAttemptsDecorator(lambda *_: True, max_attempts=default["max_attempts"])
    theirs = [decorator(attempt_number=k, response=None, caught_exception=ValueError(), retries_context=None)
              for k in range(1, 9)]
    chain = chain_from_data(expand_preset({"preset": "botocore-legacy"}, 1.0)).build([random.random])[0]
    ours = [isinstance(chain.on_failure(0.0, REJECTED, k, 0.0), float) for k in range(1, 9)]
    assert ours == theirs


# --- libraries not in Python: transcriptions of their source -----------------------------------

def grpc_go_retry_delays(rand: Callable[[], float], initial: float, max_backoff: float, mult: float, n: int) -> list[float]:
    """grpc-go ``stream.go`` shouldRetry (A6 as revised 2024-08): fact = mult^k;
    cur = min(initial·fact, max); cur *= 0.8 + 0.4·rand.Float64()."""
    out = []
    for k in range(n):
        cur = min(initial * math.pow(mult, k), max_backoff)
        cur *= 0.8 + 0.4 * rand()
        out.append(cur)
    return out


def test_grpc_backoff_matches_grpc_go() -> None:
    theirs = grpc_go_retry_delays(random.Random(SEED).random, 0.1, 1.0, 2.0, 12)
    assert take(strategy_of("grpc"), random.Random(SEED).random, 12) == theirs
    rng = random.Random(SEED)
    dist = np.array([grpc_go_retry_delays(rng.random, 0.1, 1.0, 2.0, 6) for _ in range(DRAWS)])
    assert_same_distribution(dist, ours_at(strategy_of("grpc"), 6), "grpc")


def grpc_go_connect_backoff(rand: Callable[[], float], retries: int) -> float:
    """grpc-go ``internal/backoff`` Exponential.Backoff with backoff.DefaultConfig (1 s, 1.6, 0.2, 120 s)."""
    base, mult, jitter, max_delay = 1.0, 1.6, 0.2, 120.0
    if retries == 0:
        return base
    backoff_, left = base, retries
    while backoff_ < max_delay and left > 0:
        backoff_ *= mult
        left -= 1
    if backoff_ > max_delay:
        backoff_ = max_delay
    backoff_ *= 1 + jitter * (rand() * 2 - 1)
    return max(backoff_, 0.0)


def test_grpc_connect_backoff_matches_grpc_go() -> None:
    rng = random.Random(SEED)
    theirs = [grpc_go_connect_backoff(rng.random, k) for k in range(20)]
    ours = take(strategy_of("grpc-connect"), random.Random(SEED).random, 20)
    assert ours == theirs
    assert ours[0] == 1.0 and max(ours) <= 120.0 * 1.2
    rng = random.Random(SEED)
    dist = np.array([[grpc_go_connect_backoff(rng.random, k) for k in range(1, 14)] for _ in range(DRAWS)])
    ours_dist = ours_at(strategy_of("grpc-connect"), 14)[:, 1:]
    assert_same_distribution(dist, ours_dist, "grpc-connect")


def polly_v2(rand: Callable[[], float], base_ticks: int, n: int) -> list[float]:
    """Polly ``RetryHelper.DecorrelatedJitterBackoffV2`` in .NET ticks (100 ns), returned in seconds."""
    p_factor, rp_scaling = 4.0, 1 / 1.4
    max_ticks = float(2**63 - 1) - 1000
    prev, out = 0.0, []
    for attempt in range(n):
        t = attempt + rand()
        nxt = math.pow(2, t) * math.tanh(math.sqrt(p_factor * t))
        value = nxt - prev
        prev = nxt
        ticks = int(min(value * rp_scaling * base_ticks, max_ticks))  # (long) truncates toward zero
        out.append(ticks / 1e7)
    return out


def test_polly_decorrelated_jitter_matches_polly() -> None:
    base_ticks = 2 * 10**7  # Delay = 2 s
    theirs = polly_v2(random.Random(SEED).random, base_ticks, 10)
    ours = take(strategy_of("polly-v8-exponential-jitter"), random.Random(SEED).random, 10)
    assert ours == pytest.approx(theirs, rel=0, abs=1e-7)  # Polly truncates to whole ticks
    rng = random.Random(SEED)
    dist = np.array([polly_v2(rng.random, base_ticks, 6) for _ in range(DRAWS)])
    assert_same_distribution(dist, ours_at(strategy_of("polly-v8-exponential-jitter"), 6), "polly-v8-exponential-jitter")
    # RetryHelper's doc comment: retries happen at median *times* "approximately" f·2ⁿ, i.e.
    # 1, 2, 4, 8 s after the failure for a 1 s delay (its example: 850 ms, then 1455 ms more).
    times = np.cumsum(ours_at(strategy_of("polly-v8-exponential-jitter", delay=1.0), 4), axis=1)
    assert np.median(times, axis=0) == pytest.approx([1, 2, 4, 8], rel=0.2)


def polly_get_retry_delay(base_ticks: int, max_ticks: int | None) -> float:
    """Polly ``RetryHelper.GetRetryDelay`` for ``BackoffType.Constant`` without jitter, in .NET
    ticks (100 ns), returned in seconds: ``baseDelay`` whatever the attempt, capped at ``MaxDelay``."""
    delay = base_ticks  # GetRetryDelayCore: DelayBackoffType.Constant => baseDelay
    if max_ticks is not None and delay > max_ticks:
        delay = max_ticks
    return delay / 1e7


def test_polly_v8_is_polly_s_default_retry_options() -> None:
    """``new RetryStrategyOptions()``: 3 retries, each after 2 s, no jitter; MaxDelay caps the delay."""
    # RetryConstants.cs: DefaultRetryCount = 3, DefaultBackoffType = Constant, DefaultBaseDelay =
    # 2 s; RetryStrategyOptions.TResult.cs: UseJitter = false, MaxDelay = null.
    assert preset_settings("polly-v8", 1.0) == {"max_retry_attempts": 3, "delay": 2.0, "max_delay": None}
    chain = chain_from_data(expand_preset({"preset": "polly-v8"}, 1.0)).build([random.random])[0]
    verdicts = [chain.on_failure(float(k), REJECTED, k, 0.0) for k in range(1, 6)]
    assert verdicts[:3] == [polly_get_retry_delay(2 * 10**7, None)] * 3 == [2.0, 2.0, 2.0]
    last = verdicts[3]
    assert isinstance(last, GiveUp) and last.reason == "max_attempts"  # IsLastAttempt: attempt >= RetryCount
    drawn = [0]

    def counting() -> float:
        drawn[0] += 1
        return 0.5
    assert take(strategy_of("polly-v8"), counting, 10) == [2.0] * 10 and drawn[0] == 0  # no jitter: no draws
    capped = take(strategy_of("polly-v8", delay=5.0, max_delay=3.0), random.random, 3)
    assert capped == [polly_get_retry_delay(5 * 10**7, 3 * 10**7)] * 3 == [3.0] * 3
    assert take(strategy_of("polly-v8", delay=0.0), random.random, 2) == [0.0, 0.0]  # a zero delay is returned as is
    with pytest.raises(ParamError, match="max_retry_attempts"):  # [Range(1, RetryConstants.MaxRetryCount)]
        expand_preset({"preset": "polly-v8", "max_retry_attempts": 0})


# --- Finagle (Backoff.scala, RetryPolicy.scala) ---------------------------------------------------

def finagle_decorrelated_jittered(next_long: Callable[[int], int], start_ns: int, max_ns: int, n: int) -> list[float]:
    """Finagle ``Backoff.decorrelatedJittered(start, maximum)`` in whole ns, returned in seconds:
    ``duration`` is start; ``next`` draws start + rng.nextLong(upperbound - start)."""
    if start_ns == max_ns:
        return [start_ns / 1e9] * n
    cur, out = start_ns, [start_ns / 1e9]
    while len(out) < n:
        upper = max_ns if cur >= max_ns // 3 else cur * 3   # Duration / 3 divides whole ns
        span = abs(upper - cur)
        cur = cur if span == 0 else cur + next_long(span)
        out.append(cur / 1e9)
    return out


def test_finagle_decorrelated_jittered_matches_finagle() -> None:
    strategy = strategy_of("finagle-retry")
    assert take(strategy, random.random, 1) == [0.005]    # RetryPolicy.tries: the first retry after start
    # The same uniforms: Finagle draws a whole number of ns, floor(u·span) (ThreadLocalRandom.nextLong(n)).
    rng = random.Random(SEED)
    draws: list[float] = []

    def next_long(span: int) -> int:
        u = rng.random()
        draws.append(u)
        return math.floor(u * span)
    theirs = finagle_decorrelated_jittered(next_long, 5 * 10**6, 200 * 10**6, 30)
    ours = take(strategy, iter(draws).__next__, 30)
    assert ours == pytest.approx(theirs, rel=0, abs=1e-7) and len(draws) == 29   # ns floors: < 0.1 µs apart
    assert all(b >= a for a, b in zip(ours, ours[1:])) and max(ours) < 0.2   # never shorter, under maximum
    top = take(strategy, itertools.repeat(1.0 - 2.0**-53).__next__, 6)
    assert top == pytest.approx([0.005, 0.015, 0.045, 0.135, 0.2, 0.2])      # ×3 until maximum/3, then maximum
    assert take(strategy_of("finagle-retry", start=0.2), random.random, 3) == [0.2] * 3   # start == maximum: Const
    rng2 = random.Random(SEED)
    dist = np.array([finagle_decorrelated_jittered(lambda span: math.floor(rng2.random() * span),
                                                   5 * 10**6, 200 * 10**6, 6) for _ in range(DRAWS)])
    assert_same_distribution(dist[:, 1:], ours_at(strategy, 6)[:, 1:], "finagle-retry")


def envoy_backoff(rand64: Callable[[], int], base_ms: int, max_ms: int, n: int) -> list[int]:
    """Envoy ``JitteredExponentialBackOffStrategy::nextBackOffMs``: random() % backoff, doubling to max."""
    nxt, out = base_ms, []
    for _ in range(n):
        backoff_ = nxt
        nxt = nxt * 2 if nxt < max_ms // 2 else max_ms
        out.append(min(rand64() % backoff_, max_ms))
    return out


def test_envoy_backoff_matches_envoy() -> None:
    strategy = strategy_of("envoy")
    # Deterministic part: the interval doubles 25, 50, 100, 200 ms, then stays at max 250 ms.
    top = take(strategy, itertools.repeat(1.0 - 2.0**-53).__next__, 7)
    assert top == pytest.approx([0.024, 0.049, 0.099, 0.199, 0.249, 0.249, 0.249])
    rng = random.Random(SEED)
    dist = np.array([envoy_backoff(lambda: rng.getrandbits(64), 25, 250, 6) for _ in range(DRAWS)])
    # Compared in whole milliseconds: 0.001·k and k/1000 may differ in the last bit.
    assert_same_distribution(dist, np.round(ours_at(strategy, 6) * 1000), "envoy")


def test_client_go_backoff_matches_client_go() -> None:
    """client-go ItemExponentialFailureRateLimiter.When: base·2^failures in ns, capped at max, no jitter."""
    base_ns, max_ns = 5 * 10**6, 1000 * 10**9
    theirs = [min(base_ns * 2**k, max_ns) / 1e9 for k in range(30)]
    assert take(strategy_of("client-go"), random.random, 30) == pytest.approx(theirs, rel=1e-12)
    assert theirs[17] < 1000 == theirs[18]  # the cap is first hit at failure 19 (5 ms·2¹⁸ ≈ 1311 s)


def google_java(rand: Callable[[], float], n: int) -> list[int]:
    """google-http-client ExponentialBackOff.nextBackOffMillis with its defaults, in whole ms."""
    current, factor, mult, max_ms = 500, 0.5, 1.5, 60000
    out = []
    for _ in range(n):
        delta = factor * current
        lo, hi = current - delta, current + delta
        out.append(int(lo + rand() * (hi - lo + 1)))
        current = max_ms if current >= max_ms / mult else int(current * mult)
    return out


def test_google_http_client_matches_the_java_client() -> None:
    rng = random.Random(SEED)
    dist = np.array([google_java(rng.random, 8) for _ in range(DRAWS)]) / 1000
    assert_same_distribution(dist, ours_at(strategy_of("google-http-client"), 8), "google-http-client")


# --- units ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", ["botocore-legacy", "botocore-standard", "grpc", "grpc-connect", "stamina",
                                    "tenacity-random-exponential", "tenacity-exponential-jitter", "urllib3",
                                    "backoff-expo", "polly-v8", "polly-v8-exponential-jitter", "client-go",
                                    "google-http-client", "finagle", "finagle-retry"])
def test_milliseconds_only_rescale(preset: str) -> None:
    settings = {"backoff_factor": 0.1} if preset == "urllib3" else {}
    seconds = take(strategy_of(preset, 1.0, **settings), random.Random(SEED).random, 12)
    ms_settings = {k: v * 1000 for k, v in settings.items()}
    millis = take(strategy_of(preset, 0.001, **ms_settings), random.Random(SEED).random, 12)
    assert millis == pytest.approx([s * 1000 for s in seconds], rel=1e-9)


def test_the_tested_versions_are_the_pinned_ones() -> None:
    """The comparisons above hold for these versions (README's presets table names them)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    from importlib.metadata import version
    from pathlib import Path
    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    pins = dict(req.split("==") for req in pyproject["project"]["optional-dependencies"]["libs"])
    assert set(pins) == {"backoff", "botocore", "stamina", "tenacity", "urllib3"}
    for name, pinned in pins.items():
        assert version(name) == pinned, name
