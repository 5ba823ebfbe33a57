"""Every strategy's formula and range, checked with fixed uniform sequences and a real stream."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from support import numpy_uniform, take

from sim.vocabulary.errors import ParamError
from sim.models.strategies import (
    STRATEGIES,
    Constant,
    CsmaBinaryExponential,
    DecorrelatedJitter,
    EqualJitteredExpo,
    Expo,
    FlooredExpo,
    FullJitteredExpo,
    FullJitteredFlooredExpo,
    GoogleDrive,
    GoogleHttpClient,
    NoBackoff,
    SimpleDB,
    Strategy,
    UniformRandom,
)

U_HIGH = 1.0 - 2.0**-53  # the largest value numpy's random() can return


# One instance of every registered strategy, for the generic checks.
EXAMPLES: dict[str, Strategy] = {
    "Constant": Constant(constant=3.0),
    "NoBackoff": NoBackoff(),
    "Expo": Expo(base=2.0, cap=10.0),
    "FullJitteredExpo": FullJitteredExpo(base=2.0, cap=1000.0),
    "FlooredExpo": FlooredExpo(base=2.0, floor=30.0),
    "FullJitteredFlooredExpo": FullJitteredFlooredExpo(base=2.0, floor=30.0),
    "EqualJitteredExpo": EqualJitteredExpo(base=2.0, cap=1000.0),
    "DecorrelatedJitter": DecorrelatedJitter(base=5.0, cap=2000.0),
    "UniformRandom": UniformRandom(low=1.0, high=4.0),
    "GoogleHttpClient": GoogleHttpClient(),
    "GoogleDrive": GoogleDrive(),
    "SimpleDB": SimpleDB(),
    "CsmaBinaryExponential": CsmaBinaryExponential(slot=0.0512),
}


def test_examples_cover_the_builtin_registry() -> None:
    assert set(EXAMPLES) <= set(STRATEGIES)
    assert {"Constant", "NoBackoff", "Expo", "FullJitteredExpo", "EqualJitteredExpo",
            "FlooredExpo", "FullJitteredFlooredExpo", "DecorrelatedJitter", "UniformRandom", "GoogleHttpClient", "GoogleDrive", "SimpleDB",
            "CsmaBinaryExponential"} == set(EXAMPLES)


# --- formulas ---------------------------------------------------------------------------------

@pytest.mark.parametrize("u", [0.0, 0.5, U_HIGH])
def test_constant_and_no_backoff(u: float) -> None:
    assert take(Constant(constant=3.5), u, 5) == [3.5] * 5
    assert take(Constant(constant=0.0), u, 3) == [0.0] * 3
    assert take(NoBackoff(), u, 5) == [0.0] * 5


@pytest.mark.parametrize("u", [0.0, 0.5, U_HIGH])
def test_expo_doubles_to_the_cap_without_jitter(u: float) -> None:
    assert take(Expo(base=2.0, cap=10.0), u, 6) == [2.0, 4.0, 8.0, 10.0, 10.0, 10.0]
    assert take(Expo(base=5.0, cap=2000.0), u, 10) == [min(2000.0, 5.0 * 2**n) for n in range(10)]


@pytest.mark.parametrize("u", [0.0, 0.5, U_HIGH])
def test_floored_expo_is_study_004s_literal_max(u: float) -> None:
    """max(2^attempts, 30), attempts = the attempts made (1 before the first retry): base 2."""
    literal = [max(2.0**attempts, 30.0) for attempts in range(1, 13)]
    assert literal[:6] == [30.0, 30.0, 30.0, 30.0, 32.0, 64.0]
    assert take(FlooredExpo(base=2.0, floor=30.0), u, 12) == literal
    assert take(FullJitteredFlooredExpo(base=2.0, floor=30.0), u, 12) == [u * t for t in literal]


def test_floored_expo_grows_without_overflow() -> None:
    values = take(FlooredExpo(base=1.0, floor=0.0), 0.5, 3000)
    assert values[:4] == [1.0, 2.0, 4.0, 8.0] and all(math.isfinite(v) for v in values)
    assert values[-1] == values[-2] >= 1e300


def test_expo_with_zero_base_stays_at_zero() -> None:
    assert take(Expo(base=0.0, cap=10.0), 0.5, 4) == [0.0] * 4


def test_full_jitter_is_uniform_below_the_capped_exponential() -> None:
    s = FullJitteredExpo(base=2.0, cap=10.0)
    t = [2.0, 4.0, 8.0, 10.0, 10.0]
    assert take(s, 0.0, 5) == [0.0] * 5
    assert take(s, 0.5, 5) == [x / 2 for x in t]
    high = take(s, U_HIGH, 5)
    assert all(v < x and v == pytest.approx(x) for v, x in zip(high, t))


def test_equal_jitter_keeps_half_and_jitters_half() -> None:
    s = EqualJitteredExpo(base=2.0, cap=10.0)
    t = [2.0, 4.0, 8.0, 10.0, 10.0]
    assert take(s, 0.0, 5) == [x / 2 for x in t]
    assert take(s, 0.5, 5) == [0.75 * x for x in t]
    high = take(s, U_HIGH, 5)  # t/2 + (just under t/2) may round to t
    assert all(v <= x and v == pytest.approx(x) for v, x in zip(high, t))


def test_decorrelated_jitter_grows_from_the_previous_sleep() -> None:
    base, cap = 5.0, 100.0
    s = DecorrelatedJitter(base=base, cap=cap)
    # u = 0: always the base.
    assert take(s, 0.0, 5) == [base] * 5
    # u = 0.5: sleep = min(cap, base + 0.5 * (3 * prev - base)), prev starting at base.
    expected, prev = [], base
    for _ in range(6):
        prev = min(cap, base + 0.5 * (3 * prev - base))
        expected.append(prev)
    assert take(s, 0.5, 6) == pytest.approx(expected)
    assert expected[:3] == [10.0, 17.5, 28.75]
    # u ≈ 1: triples each time, then sticks at the cap.
    assert take(s, U_HIGH, 6) == pytest.approx([15.0, 45.0, 100.0, 100.0, 100.0, 100.0])


def test_decorrelated_jitter_with_a_varying_sequence() -> None:
    us = iter([0.25, 1.0 - 1e-12, 0.0, 0.5]).__next__
    base, cap = 2.0, 1000.0
    got = take(DecorrelatedJitter(base=base, cap=cap), us, 4)
    prev, expected = base, []
    for u in [0.25, 1.0 - 1e-12, 0.0, 0.5]:
        prev = min(cap, base + u * (3 * prev - base))
        expected.append(prev)
    assert got == pytest.approx(expected)


def test_uniform_random() -> None:
    s = UniformRandom(low=1.0, high=4.0)
    assert take(s, 0.0, 3) == [1.0] * 3
    assert take(s, 0.5, 3) == [2.5] * 3
    assert all(v < 4.0 for v in take(s, U_HIGH, 3))
    assert take(UniformRandom(low=2.0, high=2.0), 0.7, 2) == [2.0, 2.0]


def test_google_http_client_defaults() -> None:
    s = GoogleHttpClient()
    assert (s.initial_interval, s.multiplier, s.randomization_factor, s.max_interval) == (
        500.0, 1.5, 0.5, 60000.0)
    assert s.max_elapsed == 900000.0
    assert s.max_attempts is None


@pytest.mark.parametrize("u", [0.0, 0.5, U_HIGH])
def test_google_http_client_formula(u: float) -> None:
    s = GoogleHttpClient()
    got = take(s, u, 20)
    for n, value in enumerate(got):
        interval = min(60000.0, 500.0 * 1.5**n)
        assert value == pytest.approx(interval * (1 - 0.5 + 2 * 0.5 * u))
    assert take(s, 0.0, 3) == pytest.approx([250.0, 375.0, 562.5])
    assert take(s, 0.5, 3) == pytest.approx([500.0, 750.0, 1125.0])


def test_google_http_client_custom_parameters() -> None:
    s = GoogleHttpClient(initial_interval=100.0, multiplier=2.0, randomization_factor=0.0,
                         max_interval=500.0)
    assert take(s, 0.9, 6) == [100.0, 200.0, 400.0, 500.0, 500.0, 500.0]


def test_google_drive() -> None:
    s = GoogleDrive()
    assert s.max_attempts == 6  # 5 retries at most
    assert take(s, 0.0, 5) == [1000.0, 2000.0, 4000.0, 8000.0, 16000.0]
    assert take(s, 0.5, 5) == [1500.0, 2500.0, 4500.0, 8500.0, 16500.0]
    high = take(s, U_HIGH, 5)
    # u < 1, but the sum may round up to the bound itself.
    assert all(2**n * 1000 <= v <= 2**n * 1000 + 1000 for n, v in enumerate(high))


def test_simple_db() -> None:
    s = SimpleDB()
    assert take(s, 0.0, 4) == [0.0] * 4
    assert take(s, 0.5, 4) == [0.5 * 100 * 4 ** (n + 1) for n in range(4)]
    assert take(s, 0.5, 3) == [200.0, 800.0, 3200.0]
    high = take(s, U_HIGH, 6)
    assert all(v < 100 * 4 ** (n + 1) and v == pytest.approx(100 * 4 ** (n + 1))
               for n, v in enumerate(high))


def test_csma_binary_exponential() -> None:
    s = CsmaBinaryExponential(slot=2.0)
    assert s.truncate == 10 and s.max_attempts == 16
    assert take(s, 0.0, 12) == [0.0] * 12
    # u ≈ 1: the largest integer, 2^min(n+1, truncate) − 1, times the slot.
    assert take(s, U_HIGH, 12) == [2.0 * (2 ** min(n + 1, 10) - 1) for n in range(12)]
    # u = 0.5: half of 2^k, an integer.
    assert take(s, 0.5, 12) == [2.0 * 2 ** min(n + 1, 10) / 2 for n in range(12)]
    assert take(CsmaBinaryExponential(slot=1.0, truncate=3), U_HIGH, 5) == [1.0, 3.0, 7.0, 7.0, 7.0]


def test_csma_values_are_whole_slots() -> None:
    s = CsmaBinaryExponential(slot=0.5)
    for n, v in enumerate(take(s, numpy_uniform(3), 200)):
        k = min(n + 1, 10)
        assert (v / 0.5).is_integer() and 0 <= v / 0.5 <= 2**k - 1


# --- ranges -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(EXAMPLES))
@pytest.mark.parametrize("u", [0.0, 0.5, U_HIGH])
def test_large_n_never_overflows(name: str, u: float) -> None:
    values = take(EXAMPLES[name], u, 2000)
    assert len(values) == 2000
    assert all(math.isfinite(v) and v >= 0 for v in values)


def _bounds(name: str, s: Strategy, n: int, prev: float) -> tuple[float, float]:
    """Documented [low, high] for the n-th delay (``prev``: the previous one, for decorrelated)."""
    if name == "Constant":
        return s.constant, s.constant
    if name == "NoBackoff":
        return 0.0, 0.0
    if name in ("Expo", "FullJitteredExpo", "EqualJitteredExpo"):
        t = min(s.cap, s.base * 2.0 ** min(n, 1000))
        return {"Expo": (t, t), "FullJitteredExpo": (0.0, t), "EqualJitteredExpo": (t / 2, t)}[name]
    if name in ("FlooredExpo", "FullJitteredFlooredExpo"):
        t = max(s.floor, s.base * 2.0 ** min(n, 1000))
        return {"FlooredExpo": (t, t), "FullJitteredFlooredExpo": (0.0, t)}[name]
    if name == "DecorrelatedJitter":
        return min(s.cap, s.base), min(s.cap, 3 * prev)
    if name == "UniformRandom":
        return s.low, s.high
    if name == "GoogleHttpClient":
        interval = min(s.max_interval, s.initial_interval * s.multiplier ** min(n, 1000))
        f = s.randomization_factor
        return interval * (1 - f), interval * (1 + f)
    if name == "GoogleDrive":
        return 2.0**n * 1000, 2.0**n * 1000 + 1000
    if name == "SimpleDB":
        return 0.0, 100 * 4.0 ** (n + 1)
    if name == "CsmaBinaryExponential":
        return 0.0, s.slot * (2 ** min(n + 1, s.truncate) - 1)
    raise AssertionError(name)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_values_stay_in_their_documented_range(name: str) -> None:
    """10k draws from a real numpy stream, across many independent delay sequences."""
    s = EXAMPLES[name]
    uniform = numpy_uniform(sum(map(ord, name)))
    # Short sequences (the early, small delays) and one longer one (growth and caps).
    seqs = [take(s, uniform, 20) for _ in range(450)] + [take(s, uniform, 60) for _ in range(17)]
    assert sum(map(len, seqs)) > 10_000
    for values in seqs:
        prev = getattr(s, "base", 0.0)
        for n, v in enumerate(values):
            low, high = _bounds(name, s, n, prev)
            assert low - 1e-9 * max(1.0, low) <= v <= high + 1e-9 * max(1.0, high), (n, v, low, high)
            prev = v


@pytest.mark.parametrize("name", ["FullJitteredExpo", "FullJitteredFlooredExpo", "EqualJitteredExpo", "DecorrelatedJitter",
                                  "UniformRandom", "GoogleHttpClient", "GoogleDrive", "SimpleDB",
                                  "CsmaBinaryExponential"])
def test_jittered_strategies_use_their_uniforms(name: str) -> None:
    sequences = {tuple(take(EXAMPLES[name], u, 4)) for u in (0.1, 0.6, 0.95)}
    assert len(sequences) == 3


# --- validation -------------------------------------------------------------------------------

@pytest.mark.parametrize("make, key", [
    (lambda: Constant(constant=-1.0), "constant"),
    (lambda: Expo(base=-1.0, cap=10.0), "base"),
    (lambda: Expo(base=1.0, cap=0.0), "cap"),
    (lambda: Expo(base=1.0, cap=-5.0), "cap"),
    (lambda: FullJitteredExpo(base=-2.0, cap=10.0), "base"),
    (lambda: FullJitteredExpo(base=2.0, cap=0.0), "cap"),
    (lambda: EqualJitteredExpo(base=2.0, cap=-1.0), "cap"),
    (lambda: EqualJitteredExpo(base=-0.5, cap=1.0), "base"),
    (lambda: DecorrelatedJitter(base=-1.0, cap=10.0), "base"),
    (lambda: FlooredExpo(base=-1.0, floor=30.0), "base"),
    (lambda: FullJitteredFlooredExpo(base=2.0, floor=-1.0), "floor"),
    (lambda: DecorrelatedJitter(base=1.0, cap=0.0), "cap"),
    (lambda: Expo(base=10.0, cap=5.0), "cap"),  # a base above the cap: README's broken rule for tune
    (lambda: FullJitteredExpo(base=2.0, cap=1.5), "cap"),
    (lambda: EqualJitteredExpo(base=2.0, cap=1.0), "cap"),
    (lambda: DecorrelatedJitter(base=3.0, cap=2.0), "cap"),
    (lambda: UniformRandom(low=-1.0, high=2.0), "low"),
    (lambda: UniformRandom(low=3.0, high=2.0), "high"),
    (lambda: GoogleHttpClient(initial_interval=0.0), "initial_interval"),
    (lambda: GoogleHttpClient(max_interval=-1.0), "max_interval"),
    (lambda: GoogleHttpClient(multiplier=0.5), "multiplier"),
    (lambda: GoogleHttpClient(randomization_factor=-0.1), "randomization_factor"),
    (lambda: GoogleHttpClient(randomization_factor=1.0), "randomization_factor"),
    (lambda: CsmaBinaryExponential(slot=0.0), "slot"),
    (lambda: CsmaBinaryExponential(slot=-1.0), "slot"),
    (lambda: CsmaBinaryExponential(slot=1.0, truncate=0), "truncate"),
    (lambda: NoBackoff(max_attempts=0), "max_attempts"),
    (lambda: SimpleDB(max_elapsed=0.0), "max_elapsed"),
    (lambda: GoogleDrive(max_elapsed=-3.0), "max_elapsed"),
    (lambda: Expo(base=1.0, cap=float("inf")), "cap"),
    (lambda: Constant(constant=float("nan")), "constant"),
])
def test_parameter_validation(make: Callable[[], Strategy], key: str) -> None:
    with pytest.raises(ParamError) as info:
        make()
    assert info.value.key == key


def test_labels_distinguish_parameters() -> None:
    assert FullJitteredExpo(base=2.0, cap=1000.0).describe() == "FullJitteredExpo(base=2, cap=1000)"
    assert GoogleDrive().describe() == "GoogleDrive()"
    assert NoBackoff(max_attempts=3).describe() == "NoBackoff(max_attempts=3)"
