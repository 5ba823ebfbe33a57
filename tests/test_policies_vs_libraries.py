"""Quotas and rate limiters against botocore 1.44.5 itself: identical decisions and state.

Both sides are driven by the same random sequence of calls and outcomes (interleaved across
clients for the shared quota), and every retry decision and the remaining capacity must match
exactly; the adaptive limiter's send holds, fill rates and measured rates must match to the
last bits (they are the same float operations in the same order).
"""

from __future__ import annotations

import math
import random
from types import SimpleNamespace

import pytest
from botocore.exceptions import ReadTimeoutError
from botocore.retries import adaptive, bucket, quota, standard, throttling

from sim.vocabulary.outcomes import ABORTED, REJECTED, SERVER_ERROR, TIMED_OUT
from sim.policies import chain_from_data
from sim.policies.adaptive import ClientRateLimiter
from sim.policies.presets import expand_preset
from sim.policies.retry_quota import _QuotaLink

OK = 200


class Detector:
    """botocore's throttling detector, told by the test whether a response throttled."""

    def is_throttling_error_from_context(self, context: standard.RetryContext) -> bool:
        return context.throttled  # type: ignore[attr-defined]

    def is_throttling_error(self, **kwargs: object) -> bool:
        return bool(kwargs["throttled"])


Step = tuple[int, int]  # (call, client slot): the next attempt of that call, made by that client


def botocore_decisions(outcomes: list[list[int]], order: list[Step]) -> tuple[list, list[int]]:
    """botocore's standard-mode checks, one quota for all calls: (call, attempt, retried?) and capacity."""
    q = quota.RetryQuota()
    checker = standard.RetryQuotaChecker(q, Detector())
    max_attempts = standard.MaxAttemptsChecker(standard.DEFAULT_MAX_ATTEMPTS)
    contexts: dict[int, dict] = {}
    attempt: dict[int, int] = {}
    decisions, capacity = [], []
    for call, _ in order:
        k = attempt[call] = attempt.get(call, 0) + 1
        request_context = contexts.setdefault(call, {})
        kind = outcomes[call][k - 1]
        if kind == OK:
            checker.release_retry_quota(request_context, SimpleNamespace(status_code=200))
            decisions.append((call, k, "success"))
        else:
            context = standard.RetryContext(attempt_number=k, request_context=request_context)
            context.throttled = kind == REJECTED  # type: ignore[attr-defined]
            retried = max_attempts.is_retryable(context) and checker.acquire_retry_quota(context)
            decisions.append((call, k, retried))
        capacity.append(q.available_capacity)
    return decisions, capacity


def our_decisions(outcomes: list[list[int]], order: list[Step], clients: int, scope: str) -> tuple[list, list[int]]:
    spec = chain_from_data(expand_preset({"preset": "botocore-standard", "scope": scope}, 1.0))
    chains = spec.build([random.Random(1).random] * clients)
    attempt: dict[int, int] = {}
    decisions, capacity = [], []
    for step, (call, slot) in enumerate(order):
        chain = chains[slot]
        t, start = float(step), float(call)  # a call's start: any value unique to the call
        k = attempt[call] = attempt.get(call, 0) + 1
        chain.on_attempt(t, k, start)
        kind = outcomes[call][k - 1]
        if kind == OK:
            chain.on_success(t, k, start)
            decisions.append((call, k, "success"))
        else:
            decisions.append((call, k, isinstance(chain.on_failure(t, kind, k, start), float)))
        link = next(x for x in chain.links if isinstance(x, _QuotaLink))
        capacity.append(link.quota.available)
    return decisions, capacity


def call_script(rng: random.Random, calls: int, p_fail: float) -> list[list[int]]:
    """Each call's outcome at each of its (at most 3) attempts."""
    return [[rng.choice((REJECTED, ABORTED, TIMED_OUT)) if rng.random() < p_fail else OK for _ in range(3)]
            for _ in range(calls)]


def interleave(rng: random.Random, outcomes: list[list[int]], clients: int) -> list[Step]:
    """Each client makes one call at a time; the next attempt comes from a random client. Calls
    end at a success or their third attempt (as if every retry were granted)."""
    order: list[Step] = []
    live: dict[int, int] = {}  # slot -> call
    made: dict[int, int] = {}
    nxt = 0
    while nxt < len(outcomes) or live:
        for slot in range(clients):
            if slot not in live and nxt < len(outcomes):
                live[slot], made[nxt] = nxt, 0
                nxt += 1
        slot = rng.choice(sorted(live))
        call = live[slot]
        order.append((call, slot))
        made[call] += 1
        if outcomes[call][made[call] - 1] == OK or made[call] == 3:
            del live[slot]
    return order


def settle(outcomes: list[list[int]], order: list[Step]) -> list[Step]:
    """Drop the attempts after a refused retry (neither side makes them), until nothing changes."""
    for _ in range(50):
        decisions, _ = botocore_decisions(outcomes, order)
        ended: set[int] = set()
        cut = []
        for step, (_, _, retried) in zip(order, decisions):
            if step[0] in ended:
                continue
            cut.append(step)
            if retried is False:
                ended.add(step[0])
        if cut == order:
            return order
        order = cut
    raise AssertionError("the schedule did not settle")


@pytest.mark.parametrize("p_fail", [0.2, 0.6, 0.9])
def test_retry_quota_decisions_equal_botocore_one_client(p_fail: float) -> None:
    rng = random.Random(int(p_fail * 100))
    outcomes = call_script(rng, 800, p_fail)
    order = settle(outcomes, interleave(rng, outcomes, 1))
    theirs = botocore_decisions(outcomes, order)
    assert our_decisions(outcomes, order, 1, "client") == theirs
    if p_fail == 0.9:  # 90% failures drain the 500-token quota: both sides refused retries
        assert any(retried is False and k < 3 for _, k, retried in theirs[0])


def test_retry_quota_shared_by_interleaved_calls_equals_botocore() -> None:
    rng = random.Random(7)
    outcomes = call_script(rng, 1500, 0.85)
    order = settle(outcomes, interleave(rng, outcomes, 8))
    theirs = botocore_decisions(outcomes, order)
    assert our_decisions(outcomes, order, 8, "shared") == theirs
    assert min(theirs[1]) < 14  # the quota ran dry at least once


def test_retry_quota_defaults_are_botocore_constants() -> None:
    data = expand_preset({"preset": "botocore-standard"}, 1.0)
    q = next(p for p in data["policies"] if p["type"] == "RetryQuota")
    assert q["capacity"] == quota.RetryQuota.INITIAL_CAPACITY
    assert q["retry_cost"] == standard.RetryQuotaChecker._RETRY_COST
    assert q["throttle_cost"] == standard.RetryQuotaChecker._THROTTLING_RETRY_COST
    assert q["success_refund"] == standard.RetryQuotaChecker._NO_RETRY_INCREMENT


# --- the adaptive mode's client rate limiter ---------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def current_time(self) -> float:
        return self.now


class Condition:
    """Replaces the bucket's threading.Condition: waiting advances the fake clock instead."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def __enter__(self) -> Condition:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def wait(self, timeout: float) -> None:
        # botocore re-waits while the refilled balance is short by rounding; always move on.
        now = self.clock.now
        self.clock.now = max(now + timeout, math.nextafter(now, math.inf))

    def notify(self) -> None:
        return None


def real_limiter(clock: Clock) -> adaptive.ClientRateLimiter:
    """botocore's adaptive.register_retry_handler wiring, on a fake clock."""
    token_bucket = bucket.TokenBucket(max_rate=1, clock=clock)
    token_bucket._new_fill_rate_condition = Condition(clock)
    return adaptive.ClientRateLimiter(
        rate_adjustor=throttling.CubicCalculator(starting_max_rate=0, start_time=clock.current_time()),
        rate_clocker=adaptive.RateClocker(clock), token_bucket=token_bucket,
        throttling_detector=Detector(), clock=clock)


@pytest.mark.parametrize("unit_seconds", [1.0, 0.001])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_adaptive_limiter_equals_botocore(seed: int, unit_seconds: float) -> None:
    clock = Clock()
    theirs = real_limiter(clock)
    data = expand_preset({"preset": "botocore-adaptive"}, unit_seconds)
    chain = chain_from_data(data).build([random.Random(1).random])[0]
    ours = next(x for x in chain.links if isinstance(x, ClientRateLimiter))
    rng = random.Random(seed)
    t = 0.0
    for step in range(400):
        # Send: botocore blocks until a token is there (our fake clock jumps), we get a hold.
        before = clock.now = t
        theirs.on_sending_request(request=None)
        hold = chain.on_attempt(t / unit_seconds, 1, t / unit_seconds)
        assert isinstance(hold, float)
        assert hold * unit_seconds == pytest.approx(clock.now - before, rel=1e-9, abs=1e-12)
        # The response, throttled more often when sending fast (a server with a rate limit).
        t = clock.now + rng.uniform(0.01, 0.4)
        clock.now = t
        throttled = rng.random() < (0.6 if theirs._enabled and theirs._token_bucket.max_rate > 3 else 0.25)
        theirs.on_receiving_response(throttled=throttled)
        if throttled:
            chain.on_failure(t / unit_seconds, REJECTED, 1, t / unit_seconds)
        else:
            chain.on_success(t / unit_seconds, 1, t / unit_seconds)
        tb = theirs._token_bucket
        assert ours.enabled == theirs._enabled
        assert ours.fill_rate == pytest.approx(tb.max_rate, rel=1e-9)
        assert ours.measured == pytest.approx(theirs._rate_clocker.measured_rate, rel=1e-9)
        if unit_seconds == 1.0:  # the same operations on the same floats: equal to the last bit
            assert (ours.fill_rate, ours.max_capacity, ours.measured) == (
                tb.max_rate, tb.max_capacity, theirs._rate_clocker.measured_rate)
    assert ours.enabled


def test_adaptive_limiter_timeouts_and_aborts_count_as_non_throttling() -> None:
    # botocore's CUBIC takes every non-throttling response (any error too) as a "success".
    clock = Clock()
    theirs = real_limiter(clock)
    chain = chain_from_data(expand_preset({"preset": "botocore-adaptive"}, 1.0)).build([random.random])[0]
    ours = next(x for x in chain.links if isinstance(x, ClientRateLimiter))
    for i, (kind, throttled) in enumerate([(REJECTED, True), (TIMED_OUT, False), (ABORTED, False), (REJECTED, True)]):
        clock.now = 0.3 * (i + 1)
        theirs.on_receiving_response(throttled=throttled)
        chain.on_failure(clock.now, kind, 1, clock.now)
        assert ours.fill_rate == theirs._token_bucket.max_rate


# --- transient server errors (HTTP 500), as botocore classifies real responses ------------------


def response_context(kind: int, attempt: int, request_context: dict) -> standard.RetryContext:
    """A real botocore retry context for an outcome kind: a 429 ThrottlingException, a 500
    InternalError, or a read timeout (no response)."""
    if kind == TIMED_OUT:
        return standard.RetryContext(attempt_number=attempt, request_context=request_context,
                                     caught_exception=ReadTimeoutError(endpoint_url="https://x"))
    status, code = (429, "ThrottlingException") if kind == REJECTED else (500, "InternalError")
    return standard.RetryContext(attempt_number=attempt, request_context=request_context,
                                 http_response=SimpleNamespace(status_code=status, headers={}),
                                 parsed_response={"Error": {"Code": code}})


def test_botocore_classifies_a_server_error_as_transient_not_throttling() -> None:
    detector = standard.ThrottlingErrorDetector(standard.RetryEventAdapter())
    conditions = standard.StandardRetryConditions()
    for kind, throttling in ((REJECTED, True), (SERVER_ERROR, False), (TIMED_OUT, False)):
        context = response_context(kind, 1, {})
        assert conditions.is_retryable(context)  # botocore retries all three
        assert detector.is_throttling_error_from_context(context) is throttling


@pytest.mark.parametrize("seed", [1, 2])
def test_standard_mode_after_server_errors_equals_botocore(seed: int) -> None:
    # One shared quota, calls of up to 3 attempts whose failures mix throttling errors, server
    # errors and timeouts; botocore's own detector classifies real responses. Every retry
    # decision, the quota left and every delay must be botocore's.
    rng = random.Random(seed)
    detector = standard.ThrottlingErrorDetector(standard.RetryEventAdapter())
    q = quota.RetryQuota()
    checker = standard.RetryQuotaChecker(q, detector)
    backoff = standard.ExponentialBackoff(random=random.Random(seed).random, throttling_detector=detector)
    max_attempts = standard.MaxAttemptsChecker(standard.DEFAULT_MAX_ATTEMPTS)
    spec = chain_from_data(expand_preset({"preset": "botocore-standard", "scope": "shared"}, 1.0))
    chain = spec.build([random.Random(seed).random])[0]
    link = next(x for x in chain.links if isinstance(x, _QuotaLink))
    kinds = (REJECTED, SERVER_ERROR, SERVER_ERROR, TIMED_OUT)
    server_errors = dry = 0
    for call in range(600):
        request_context: dict = {}
        start = float(call)
        for k in range(1, 4):
            t = start + k / 10
            chain.on_attempt(t, k, start)
            if rng.random() < 0.3:
                checker.release_retry_quota(request_context, SimpleNamespace(status_code=200))
                chain.on_success(t, k, start)
                break
            kind = rng.choice(kinds)
            server_errors += kind == SERVER_ERROR
            context = response_context(kind, k, request_context)
            retried = max_attempts.is_retryable(context) and checker.acquire_retry_quota(context)
            verdict = chain.on_failure(t, kind, k, start)
            assert isinstance(verdict, float) == retried
            if retried:
                assert verdict == backoff.delay_amount(context)
            assert link.quota.available == q.available_capacity
            if not retried:
                dry += k < 3  # refused by the quota, not by max attempts
                break
    assert server_errors > 200 and dry > 0  # server errors were heard, and the quota ran dry


def test_adaptive_limiter_does_not_slow_down_for_server_errors() -> None:
    # botocore's ClientRateLimiter with its real throttling detector: only the 429 throttling
    # responses lower the rate; 500s are successes to CUBIC, as timeouts are.
    clock = Clock()
    token_bucket = bucket.TokenBucket(max_rate=1, clock=clock)
    token_bucket._new_fill_rate_condition = Condition(clock)
    theirs = adaptive.ClientRateLimiter(
        rate_adjustor=throttling.CubicCalculator(starting_max_rate=0, start_time=0.0),
        rate_clocker=adaptive.RateClocker(clock), token_bucket=token_bucket,
        throttling_detector=standard.ThrottlingErrorDetector(standard.RetryEventAdapter()), clock=clock)
    chain = chain_from_data(expand_preset({"preset": "botocore-adaptive"}, 1.0)).build([random.random])[0]
    ours = next(x for x in chain.links if isinstance(x, ClientRateLimiter))
    rng = random.Random(5)
    rates = []
    for i in range(400):
        clock.now = 0.05 * (i + 1)
        # A mix, then only server errors: the rate must climb back (CUBIC's success_received).
        kind = rng.choice((REJECTED, SERVER_ERROR, SERVER_ERROR, SERVER_ERROR)) if i < 300 else SERVER_ERROR
        context = response_context(kind, 1, {})
        theirs.on_receiving_response(
            response=(context.http_response, context.parsed_response), attempts=1, operation=None,
            caught_exception=None, request_dict={"context": {}})
        chain.on_failure(clock.now, kind, 1, clock.now)
        assert ours.enabled == theirs._enabled
        assert ours.fill_rate == theirs._token_bucket.max_rate
        rates.append(ours.fill_rate)
    assert ours.enabled and rates[-1] > 2 * rates[299]
    assert all(b >= a for a, b in zip(rates[300:], rates[301:]))
