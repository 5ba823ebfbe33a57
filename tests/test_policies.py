"""The policy seam and each policy's state machine, against transcriptions of the libraries that
are not in Python (Brooker's retry_sim, grpc-go, Finagle, Envoy, Polly, resilience4j,
x/time/rate) and the expectations their own sources or test suites state."""

from __future__ import annotations

import ast
import itertools
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from sim.vocabulary.errors import ParamError
from sim.models.strategies import Constant, Expo, FullJitteredExpo
from sim.vocabulary.outcomes import ABORTED, DENIED, REJECTED, TIMED_OUT
from sim.policies import POLICIES, Chain, ChainSpec, GiveUp, chain_from_data, policy_from_dict, strategy_from_dict
from sim.policies.circuit_breaker import CLOSED, HALF_OPEN, OPEN, CircuitBreaker
from sim.policies.concurrency_budget import ConcurrencyBudget
from sim.policies.grpc_throttle import GrpcThrottle
from sim.policies.limits import AttemptTimeout, Deadline, MaxAttempts
from sim.policies.presets import PRESETS, expand_preset, preset_settings, required_example
from sim.policies.rate_limit import RateLimit
from sim.policies.retry_budget import RetryBudget
from sim.policies.retry_quota import RetryQuota
from sim.policies.token_bucket import TokenBucket

ROOT = Path(__file__).parent.parent


def counting_uniform() -> tuple[list[int], object]:
    """A uniform stream that counts its draws."""
    drawn = [0]

    def uniform() -> float:
        drawn[0] += 1
        return 0.5
    return drawn, uniform


def one_chain(*policies: object, strategy: object = None) -> Chain:
    return ChainSpec(strategy or Constant(constant=7.0), tuple(policies)).build([random.random])[0]  # type: ignore[arg-type]


def run_call(chain: Chain, kinds: list[int], start: float = 0.0, gap: float = 1.0) -> list[float | GiveUp]:
    """Fail a call's attempts with ``kinds`` until the chain gives up; the verdicts."""
    out: list[float | GiveUp] = []
    t = start
    for attempt, kind in enumerate(kinds, start=1):
        chain.on_attempt(t, attempt, start)
        t += gap
        verdict = chain.on_failure(t, kind, attempt, start)
        out.append(verdict)
        if isinstance(verdict, GiveUp):
            break
        t += verdict
    return out


# --- the seam ----------------------------------------------------------------------------------

def test_a_strategy_alone_is_the_fast_path_and_its_limits_come_first() -> None:
    assert ChainSpec(Expo(base=2.0, cap=100.0)).plain  # the engine's inline path
    s = Expo(base=2.0, cap=100.0, max_attempts=3, max_elapsed=50.0)
    spec = ChainSpec(s)
    assert not spec.plain  # its limits are links of the chain
    assert [type(x).__name__ for x in spec.ordered()] == ["MaxAttempts", "MaxElapsed", "Expo"]
    assert not ChainSpec(s, (TokenBucket(),)).plain


def test_policies_go_before_the_strategy_and_delay_readers_after() -> None:
    spec = ChainSpec(Constant(constant=1.0), (Deadline(total=5.0, stop_before=True), TokenBucket(),
                                              RateLimit(), MaxAttempts(max_attempts=3)))
    assert [type(x).__name__ for x in spec.ordered()] == [
        "TokenBucket", "MaxAttempts", "Constant", "Deadline", "RateLimit"]


def test_chain_limits_reproduce_the_engine_rule() -> None:
    # The engine's rule (sim/engine.py, sim/open_clients.py): give up when attempts >= max_attempts
    # or t - first > max_elapsed, checked before drawing the next backoff.
    rng = random.Random(3)
    for _ in range(300):
        max_attempts, max_elapsed = rng.randint(1, 6), rng.uniform(1, 40)
        s = Constant(constant=rng.uniform(0, 5), max_attempts=max_attempts, max_elapsed=max_elapsed)
        chain = ChainSpec(s).build([random.random])[0]
        t, start = 0.0, rng.uniform(0, 10)
        t = start
        for attempt in range(1, 10):
            t += rng.uniform(0, 6)
            engine_gives_up = attempt >= max_attempts or t - start > max_elapsed
            verdict = chain.on_failure(t, REJECTED, attempt, start)
            assert isinstance(verdict, GiveUp) == engine_gives_up
            if engine_gives_up:
                break
            t += verdict  # type: ignore[operator]


def test_no_jitter_is_drawn_for_a_retry_that_a_limit_or_budget_refuses() -> None:
    drawn, uniform = counting_uniform()
    spec = ChainSpec(FullJitteredExpo(base=1.0, cap=10.0), (MaxAttempts(max_attempts=3),
                                                            TokenBucket(capacity=1.5, refill=0.0)))
    chain = spec.build([uniform])[0]  # type: ignore[list-item]
    verdicts = run_call(chain, [REJECTED] * 5)
    assert [isinstance(v, float) for v in verdicts] == [True, False]   # 1.5 > 1: one retry, 0.5 > 1 fails
    assert drawn[0] == 1


def test_every_link_hears_the_failure_that_ends_a_call() -> None:
    # grpc-go decrements the throttle before checking maxAttempts: the final failure costs a token.
    throttle = GrpcThrottle(max_tokens=10, token_ratio=0.1)
    chain = one_chain(MaxAttempts(max_attempts=2), throttle)
    verdicts = run_call(chain, [REJECTED] * 3)
    assert isinstance(verdicts[-1], GiveUp) and verdicts[-1].reason == "max_attempts"
    assert not verdicts[-1].denied
    link = chain.links[1]
    assert link.tokens == 8.0  # type: ignore[attr-defined]


def test_shared_scope_is_one_state_and_client_scope_one_each() -> None:
    for scope, expected in (("client", [True, True]), ("shared", [True, False])):
        spec = ChainSpec(Constant(constant=1.0), (TokenBucket(capacity=2.0, refill=0.0, scope=scope),))
        a, b = spec.build([random.random, random.random])
        got = [isinstance(a.on_failure(1.0, REJECTED, 1, 0.0), float),
               isinstance(b.on_failure(1.0, REJECTED, 1, 0.0), float)]
        assert got == expected


def test_a_new_call_starts_a_fresh_delay_sequence() -> None:
    chain = one_chain(strategy=Expo(base=1.0, cap=100.0))
    assert run_call(chain, [REJECTED] * 3) == [1.0, 2.0, 4.0]
    assert run_call(chain, [REJECTED] * 2, start=50.0) == [1.0, 2.0]


def test_on_attempt_stops_at_the_first_refusal_and_holds_take_the_longest() -> None:
    breaker = CircuitBreaker(kind="count", minimum_throughput=2, window=2, break_duration=100.0)
    bucket = TokenBucket()
    chain = one_chain(breaker, bucket)
    for attempt in (1, 2):
        chain.on_attempt(0.0, attempt, 0.0)
        chain.on_failure(1.0, REJECTED, attempt, 0.0)
    tokens = chain.links[1].tokens  # type: ignore[attr-defined]
    refused = chain.on_attempt(2.0, 1, 2.0)
    assert isinstance(refused, GiveUp) and refused.reason == "breaker_open"
    assert chain.links[1].tokens == tokens  # type: ignore[attr-defined]  # the bucket never saw it


def test_attempt_timeout_is_exposed_not_linked() -> None:
    spec = ChainSpec(Constant(constant=1.0), (AttemptTimeout(timeout=30.0), AttemptTimeout(timeout=20.0)))
    assert spec.attempt_timeout == 20.0
    assert spec.build([random.random])[0].attempt_timeout == 20.0
    assert "AttemptTimeout" not in [type(x).__name__ for x in spec.ordered()]


def test_deadline_stop_after_and_stop_before() -> None:
    # tenacity: stop_after_delay stops once elapsed >= d; stop_before_delay once elapsed + next sleep >= d.
    after = one_chain(Deadline(total=10.0), strategy=Constant(constant=3.0))
    before = one_chain(Deadline(total=10.0, stop_before=True), strategy=Constant(constant=3.0))
    # Attempts take 1 and back off 3: failures at 1, 5, 9, 13.
    assert run_call(after, [REJECTED] * 9) == [3.0, 3.0, 3.0, GiveUp("deadline", denied=False)]  # 13 ≥ 10
    assert run_call(before, [REJECTED] * 9) == [3.0, 3.0, GiveUp("deadline", denied=False)]       # 9 + 3 ≥ 10


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_policy_builds_from_its_defaults_or_a_minimal_table(name: str) -> None:
    required = {"MaxAttempts": {"max_attempts": 3}, "MaxElapsed": {"max_elapsed": 5.0},
                "Deadline": {"total": 5.0}, "AttemptTimeout": {"timeout": 5.0}}
    policy = policy_from_dict({"type": name, **required.get(name, {})})
    links = policy.links(3)
    assert len(links) == 3
    assert policy.describe().startswith(name)


@pytest.mark.parametrize("raw, key, words", [
    ({"type": "TokenBuckett"}, "type", "unknown policy"),
    ({"type": "TokenBucket", "size": 3}, "size", "is not a parameter of TokenBucket"),
    ({"type": "TokenBucket", "capacity": -1.0}, "capacity", "must be > 0"),
    ({"type": "TokenBucket", "refill_on": "call"}, "refill_on", "must be 'attempt' or 'success'"),
    ({"type": "MaxAttempts"}, "max_attempts", "needs max_attempts"),
    ({"type": "MaxAttempts", "max_attempts": 0}, "max_attempts", "integer >= 1"),
    ({"type": "MaxAttempts", "max_attempts": 3, "scope": "shared"}, "scope", "must be 'client'"),
    ({"type": "GrpcThrottle", "max_tokens": 2000.0}, "max_tokens", "(0, 1000]"),
    ({"type": "GrpcThrottle", "token_ratio": 0.1234}, "token_ratio", "3 decimal places"),
    ({"type": "RetryQuota", "retry_cost": 2.5}, "retry_cost", "integer"),
    ({"type": "RetryBudget", "ttl": 100.0}, "ttl", "between 1 s and 60 s"),
    ({"type": "ConcurrencyBudget", "scope": "client"}, "scope", "must be 'shared'"),
    ({"type": "CircuitBreaker", "kind": "ratio", "window": 10}, "window", "does not apply to kind 'ratio'"),
    ({"type": "CircuitBreaker", "kind": "count", "failure_ratio": 1.5}, "failure_ratio", "(0, 1]"),
    ({"type": "CircuitBreaker", "kind": "hystrix"}, "kind", "ratio, count, brooker"),
    ({"type": "RateLimit", "burst": 0}, "burst", ">= 1"),
    ({"type": "TokenBucket", "capacity": math.inf}, "capacity", "finite"),
    ({"type": "MaxElapsed", "max_elapsed": 0.0}, "max_elapsed", "must be > 0"),
    ({"type": "Deadline", "total": 0.0}, "total", "must be > 0, got 0.0 for no retries, give max_attempts = 1"),
])
def test_bad_parameters_are_one_line_errors(raw: dict, key: str, words: str) -> None:
    with pytest.raises(ParamError) as info:
        policy_from_dict(raw)
    assert info.value.key == key
    text = f"{info.value} {info.value.hint or ''}"
    assert words in text and "\n" not in text


def test_strategy_tables_build_and_fail_like_policies() -> None:
    assert strategy_from_dict({"type": "GrpcBackoff", "initial_backoff": 100.0, "max_backoff": 1000.0,
                               "backoff_multiplier": 2.0}).describe().startswith("GrpcBackoff")
    with pytest.raises(ParamError) as info:
        strategy_from_dict({"type": "GrpcBackoff", "initial_backoff": 100.0})
    assert info.value.key == "backoff_multiplier"


def test_library_strategies_load_from_a_config(tmp_path: Path) -> None:
    from sim.settings.config import load_config
    lines = ['[[simulation]]', 'title = "libs"', 'clients = [2]', 'repeat = 1', 'network_mu = 10.0',
             'network_sigma = 2.0', 'work_to_duration = 1.0', 'control = "LockingServer"',
             'write_mu = 2.0', 'write_sigma = 1.0', 'strategies = [']
    for name in sorted(PRESETS):
        strategy = expand_preset({"preset": name, **required_example(name)})["strategy"]
        fields = ", ".join(f"{k} = {v!r}".replace("True", "true") for k, v in strategy.items() if k != "type")
        lines.append(f'  {{ type = "{strategy["type"]}", name = "{name}"{", " if fields else ""}{fields} }},')
    lines.append("]")
    path = tmp_path / "libs.toml"
    path.write_text("\n".join(lines).replace("'", '"'))
    config = load_config(path)
    assert len(config.simulations[0].strategies) == len(PRESETS)


def test_sim_never_imports_the_test_only_libraries() -> None:
    banned = {"tenacity", "stamina", "backoff", "urllib3", "botocore", "scipy"}
    for path in (ROOT / "sim").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                assert name.split(".")[0] not in banned, f"{path.relative_to(ROOT)} imports {name}"


def test_policies_and_presets_import_without_the_libraries() -> None:
    code = ("import sys\n"
            "for m in ('tenacity', 'stamina', 'backoff', 'urllib3', 'botocore', 'scipy'): sys.modules[m] = None\n"
            "import sim.policies, sim.policies.presets as p, sim.models.library_strategies\n"
            "for n in p.PRESETS: sim.policies.chain_from_data(p.expand_preset({'preset': n, **p.required_example(n)}))\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "ok", out.stderr


# --- presets -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_expands_to_valid_specs(name: str) -> None:
    data = expand_preset({"preset": name, **required_example(name)})
    assert data["preset"] == name
    spec = chain_from_data(data)
    assert spec.strategy is not None
    chains = spec.build([random.Random(1).random] * 2)
    assert len(chains) == 2


def test_preset_settings_override_in_config_units() -> None:
    data = expand_preset({"preset": "grpc", "initial_backoff": 50.0, "max_attempts": 9, "throttling": True})
    assert data["strategy"]["initial_backoff"] == 50.0
    assert {"type": "MaxAttempts", "max_attempts": 5} in data["policies"]   # A6 clamps to 5
    assert any(p["type"] == "GrpcThrottle" for p in data["policies"])
    assert preset_settings("grpc", 1.0)["initial_backoff"] == 0.1
    assert preset_settings("grpc")["initial_backoff"] == pytest.approx(100.0)


@pytest.mark.parametrize("entry, key, words", [
    ({"preset": "grcp"}, "preset", "unknown preset"),
    ({"preset": "grpc", "max_attempt": 3}, "max_attempt", "is not a setting of preset 'grpc'"),
    ({"preset": "grpc", "max_attempts": 1}, "max_attempts", ">= 2"),
    ({"preset": "grpc", "max_attempts": 2.5}, "max_attempts", "integer"),
    ({"preset": "grpc", "throttling": 1}, "throttling", "true or false"),
    ({"preset": "stamina", "wait_max": "5s"}, "wait_max", "must be a number"),
])
def test_bad_preset_settings_are_one_line_errors(entry: dict, key: str, words: str) -> None:
    with pytest.raises(ParamError) as info:
        expand_preset(entry)
    assert info.value.key == key
    assert words in f"{info.value} {info.value.hint or ''}"


# --- Brooker's retry_sim (mbrooker/simulator_example retry_sim/retry_strategy.py) --------------

class BrookerAdaptive:
    """Transcribed: AdaptiveRetryStrategy(bucket_fill_rate, bucket_size)."""

    def __init__(self, fill: float, size: float) -> None:
        self.size, self.fill, self.bucket = size, fill, size

    def start(self) -> None:
        self.bucket = min(self.bucket + self.fill, self.size)

    def should_retry(self) -> bool:
        if self.bucket > 1.0:
            self.bucket -= 1.0
            return True
        return False


class BrookerBreaker:
    """Transcribed: CircuitBreakerRetryStrategy(NRetriesFactory(3), max_rate) with its calls."""

    def __init__(self, n: int, max_rate: float) -> None:
        self.n, self.max_rate, self.calls, self.failures, self.tries = n, max_rate, 0.0, 0.0, 0

    def start(self) -> None:
        self.calls += 1.0
        self.tries = 0

    def should_retry(self) -> bool:
        self.failures += 1.0
        if self.failures / self.calls > self.max_rate:
            return False
        self.tries += 1
        return self.tries <= self.n


def brooker_compare(theirs: object, chain: Chain, failure_rate: float, seed: int) -> None:
    rng = random.Random(seed)
    t = 0.0
    for call in range(3000):
        start = t
        theirs.start()  # type: ignore[attr-defined]
        chain.on_attempt(t, 1, start)
        attempt = 1
        while True:
            t += 1.0
            if rng.random() >= failure_rate:
                chain.on_success(t, attempt, start)
                break
            expected = theirs.should_retry()  # type: ignore[attr-defined]
            verdict = chain.on_failure(t, REJECTED, attempt, start)
            assert isinstance(verdict, float) == expected, (call, attempt)
            if not expected:
                break
            attempt += 1
            chain.on_attempt(t, attempt, start)


@pytest.mark.parametrize("failure_rate", [0.05, 0.3, 0.6])
def test_token_bucket_is_brookers_adaptive_retry(failure_rate: float) -> None:
    chain = one_chain(TokenBucket(capacity=5.0, refill=0.1), strategy=Constant(constant=0.0))
    brooker_compare(BrookerAdaptive(0.1, 5.0), chain, failure_rate, seed=int(failure_rate * 100))


@pytest.mark.parametrize("failure_rate", [0.02, 0.08, 0.3])
def test_brooker_breaker_is_his_circuit_breaker(failure_rate: float) -> None:
    chain = one_chain(MaxAttempts(max_attempts=4), CircuitBreaker(kind="brooker", failure_ratio=0.1),
                      strategy=Constant(constant=0.0))
    brooker_compare(BrookerBreaker(3, 0.1), chain, failure_rate, seed=int(failure_rate * 1000))


def test_token_bucket_refill_on_success_and_strictness() -> None:
    chain = one_chain(TokenBucket(capacity=2.0, refill=1.0, refill_on="success"))
    assert [isinstance(v, float) for v in run_call(chain, [REJECTED] * 3)] == [True, False]  # 2 > 1, then 1 > 1 fails
    chain.on_success(10.0, 1, 10.0)
    assert chain.links[0].tokens == 2.0  # type: ignore[attr-defined]
    lenient = one_chain(TokenBucket(capacity=2.0, refill=0.0, strict=False))
    assert [isinstance(v, float) for v in run_call(lenient, [REJECTED] * 3)] == [True, True, False]


# --- gRPC A6 throttling (grpc-go clientconn.go retryThrottler) ----------------------------------

class GoThrottler:
    """Transcribed grpc-go retryThrottler: throttle() decrements then tests tokens <= thresh."""

    def __init__(self, max_tokens: float, ratio: float) -> None:
        self.max, self.thresh, self.ratio, self.tokens = max_tokens, max_tokens / 2, ratio, max_tokens

    def throttle(self) -> bool:
        self.tokens = max(self.tokens - 1, 0)
        return self.tokens <= self.thresh

    def successful_rpc(self) -> None:
        self.tokens = min(self.tokens + self.ratio, self.max)


def test_grpc_throttle_is_grpc_gos_throttler() -> None:
    rng = random.Random(11)
    theirs = GoThrottler(10, 0.1)
    link = GrpcThrottle(max_tokens=10, token_ratio=0.1).link()
    for step in range(20000):
        p_fail = 0.9 if (step // 500) % 2 else 0.05   # alternate outages and healthy periods
        if rng.random() < p_fail:
            assert isinstance(link.on_failure(0.0, REJECTED, 1, 0.0, 1.0), GiveUp) == theirs.throttle()
        else:
            theirs.successful_rpc()
            link.on_success(0.0, 1, 0.0)
        assert link.tokens == theirs.tokens  # type: ignore[attr-defined]


def test_grpc_throttle_documented_example() -> None:
    # A6 with maxTokens 10: failures take 10 → 9, 8, 7, 6 (retries allowed), then 5 ≤ 10/2: throttled.
    chain = one_chain(GrpcThrottle(max_tokens=10, token_ratio=0.1))
    verdicts = run_call(chain, [REJECTED] * 9)
    assert [isinstance(v, float) for v in verdicts] == [True] * 4 + [False]
    # Each success adds 0.1: ten successes lift 5 to 6 and retries resume.
    for _ in range(10):
        chain.on_success(0.0, 1, 0.0)
    assert isinstance(chain.on_failure(1.0, REJECTED, 1, 100.0), float) is False  # 6 − 1 = 5: still throttled
    for _ in range(20):
        chain.on_success(0.0, 1, 0.0)
    assert isinstance(chain.on_failure(1.0, REJECTED, 1, 200.0), float)          # 7 − 1 = 6 > 5


def test_grpc_throttle_ignores_refused_attempts() -> None:
    link = GrpcThrottle().link()
    link.on_failure(0.0, DENIED, 1, 0.0, 1.0)
    assert link.tokens == 10.0  # type: ignore[attr-defined]


# --- botocore's quota: the ≤ 1.43 defaults, derived by hand -------------------------------------

def test_retry_quota_default_costs() -> None:
    # RetryQuota() = botocore ≤ 1.43: 500 tokens, 5 per retry, 10 after a timeout, refund 1.
    chain = one_chain(RetryQuota())
    quota = chain.links[0].quota  # type: ignore[attr-defined]
    run_call(chain, [TIMED_OUT, REJECTED, ABORTED], gap=1.0)
    assert quota.available == 500 - 10 - 5 - 5
    chain.on_success(20.0, 4, 0.0)        # the call's last retry acquired 5
    assert quota.available == 485
    chain.on_success(30.0, 1, 30.0)       # a call without retries refunds 1
    assert quota.available == 486
    for _ in range(100):
        chain.on_success(40.0, 1, 40.0)
    assert quota.available == 500         # never above the capacity
    assert [isinstance(v, float) for v in run_call(one_chain(RetryQuota(capacity=12)), [REJECTED] * 4)] == [
        True, True, False]


# --- Finagle (RetryBudget.scala, RequeueFilter.scala, RetryFilter.scala; RequeueFilterTest.scala,
# RetryBudgetTest.scala; twitter/finagle at 4feb34cb) ---------------------------------------------

def finagle_filter(max_per_request: float, percent: float = 0.0) -> Chain:
    """RequeueFilter(RetryBudget(1.second, minRetries=10, percentCanRetry), zero backoff, max_per_request)."""
    budget = RetryBudget(percent=100.0 * percent, min_retries_per_s=10, ttl=1000.0,
                         max_retries_per_request=max_per_request, deposit="success")
    return one_chain(budget, strategy=Constant(constant=0.0))


def requeues(chain: Chain, kinds: list[int], start: float) -> tuple[int, GiveUp | None]:
    verdicts = run_call(chain, kinds, start=start, gap=0.0)
    last = verdicts[-1]
    return sum(isinstance(v, float) for v in verdicts), last if isinstance(last, GiveUp) else None


@pytest.mark.parametrize("percent", [0.0, 0.5])
def test_finagle_respects_max_retries_per_request(percent: float) -> None:
    # RequeueFilterTest "respects maxRetriesPerReq" (percentCanRetry 0): 10 × 0.5 = 5 requeues,
    # budget not exhausted; "retries propagated in context" (attempts 0 to 5) and "requeued
    # requests generate a new span" (percentCanRetry 0.5: reserve 10 × 1 s × 2000, balance 10):
    # 6 tries, 5 of them requeues.
    n, why = requeues(finagle_filter(0.5, percent), [REJECTED] * 50, 0.0)
    assert n == 5 and why is not None and why.reason == "retry_budget_request_limit"


def test_finagle_exhausts_the_budget() -> None:
    # RequeueFilterTest "exhausts budget": percentRequeues 2.0 → 10 requeues (the reserve), then exhausted.
    n, why = requeues(finagle_filter(2.0), [REJECTED] * 50, 0.0)
    assert n == 10 and why is not None and why.reason == "retry_budget"


def test_finagle_tracks_requeues_per_request() -> None:
    # RequeueFilterTest "tracks requeues_per_request": a success (0), a request failing once (1),
    # then one failing until its limit: "the 1 failed request knocks our balance from 10 to 9,
    # then we get 50% of that, which is 5" (time frozen: no deposit or debit expires).
    chain = finagle_filter(0.5)
    chain.on_attempt(0.0, 1, 0.0)
    chain.on_success(0.0, 1, 0.0)
    chain.on_attempt(0.0, 1, 1e-9)
    assert isinstance(chain.on_failure(0.0, REJECTED, 1, 1e-9), float)
    chain.on_attempt(0.0, 2, 1e-9)
    chain.on_success(0.0, 2, 1e-9)
    n, why = requeues(chain, [REJECTED] * 50, 2e-9)
    assert n == 5 and why is not None and why.reason == "retry_budget_request_limit"


def test_finagle_applies_the_backoff_schedule() -> None:
    # RequeueFilterTest "applies delay": Backoff.exponential(1 s, 2).take(3), maxRetriesPerReq 1.0:
    # requeues after 1, 2 and 4 s, then no more (Finagle counts the schedule's end as
    # budget_exhausted after a withdrawal; here the attempt limit that stands for take(3) ends it).
    budget = RetryBudget(percent=0.0, min_retries_per_s=10, ttl=1000.0, max_retries_per_request=1.0,
                         deposit="success")
    chain = one_chain(MaxAttempts(max_attempts=4), budget, strategy=Expo(base=1000.0, cap=1e9))
    verdicts = run_call(chain, [REJECTED] * 10, gap=0.0)
    assert verdicts[:3] == [1000.0, 2000.0, 4000.0] and isinstance(verdicts[3], GiveUp) and len(verdicts) == 4


def finagle_budget_test(ttl_s: int, min_retries_per_sec: int, percent_can_retry: float) -> None:
    """RetryBudgetTest ``testBudget``: time frozen; 10,000 requests each deposit, then try one retry."""
    budget = RetryBudget(ttl=1000.0 * ttl_s, min_retries_per_s=min_retries_per_sec,
                         percent=100.0 * percent_can_retry).state()
    min_retries = ttl_s * min_retries_per_sec
    assert budget.balance(0.0) == min_retries
    if min_retries == 0:
        assert not budget.try_withdraw(0.0)
    n_reqs, retried = 10000, 0
    for _ in range(n_reqs):
        budget.deposit(0.0)
        if budget.try_withdraw(0.0):
            retried += 1
        else:
            assert budget.balance(0.0) == 0
    expected = int(n_reqs * percent_can_retry) + min_retries   # "a small error margin": ± 1
    assert abs(retried - expected) <= 1, (percent_can_retry, retried, expected)


@pytest.mark.parametrize("percent_can_retry", [0.1, 0.5, 0.25, 0.75, 0.99, 0.999, 0.9999, 0.01, 0.001, 0.0001])
def test_finagle_budget_percent_of_requests(percent_can_retry: float) -> None:
    # RetryBudgetTest "apply minRetriesPerSec=0" (ttl 60 s).
    finagle_budget_test(60, 0, percent_can_retry)


@pytest.mark.parametrize("ttl_s, min_retries, percent_can_retry", [(1, 10, 0.0), (2, 5, 0.0), (1, 10, 0.1), (2, 5, 0.5)])
def test_finagle_budget_reserve_and_percent(ttl_s: int, min_retries: int, percent_can_retry: float) -> None:
    # RetryBudgetTest "apply with minRetries and maxPercentOver=0" and "... and maxPercentOver".
    finagle_budget_test(ttl_s, min_retries, percent_can_retry)


def test_finagle_budget_above_one_retry_per_request_and_empty() -> None:
    # RetryBudgetTest "apply minRetries=0 maxPercentOver greater than 1.0": 10,000 deposits at 2.0 → 20,000.
    budget = RetryBudget(ttl=60000.0, min_retries_per_s=0, percent=200.0).state()
    assert budget.balance(0.0) == 0 and not budget.try_withdraw(0.0)
    for _ in range(10000):
        budget.deposit(0.0)
    assert budget.balance(0.0) == 20000
    # "Empty" (minRetriesPerSec 0 and percentCanRetry 0): no balance, before or after a deposit.
    empty = RetryBudget(min_retries_per_s=0, percent=0.0).state()
    assert empty.balance(0.0) == 0 and not empty.try_withdraw(0.0)
    empty.deposit(0.0)
    assert empty.balance(0.0) == 0 and not empty.try_withdraw(0.0)


@pytest.mark.parametrize("params, key", [({"ttl": 0.0}, "ttl"), ({"ttl": 61000.0}, "ttl"),
                                         ({"min_retries_per_s": -1}, "min_retries_per_s"),
                                         ({"percent": -100.0}, "percent"), ({"deposit": "start"}, "deposit")])
def test_finagle_budget_bounds(params: dict, key: str) -> None:
    # RetryBudgetTest "apply ttl bounds check", "minRetriesPerSec bounds check", "maxPercentOver bounds".
    with pytest.raises(ParamError) as info:
        RetryBudget(**params)
    assert info.value.key == key


def test_finagle_default_budget_is_percent_of_requests_plus_reserve_and_expires() -> None:
    # RetryBudget() in a RetryFilter (deposit per request): 20% of deposits (1000 each, a retry
    # costs 5000) + 10/s × 10 s reserve.
    spec = ChainSpec(Constant(constant=0.0), (RetryBudget(min_retries_per_s=0, scope="shared"),))
    chains = spec.build([random.random] * 50)
    for i, chain in enumerate(chains):
        chain.on_attempt(float(i), 1, float(i))            # 50 requests in the first 50 ms
    allowed = sum(isinstance(chain.on_failure(100.0, REJECTED, 1, float(i)), float) for i, chain in enumerate(chains))
    assert allowed == 10                                   # 20% of 50
    # Deposits expire after the 10 s ttl (10 slices of 1 s): nothing left at 11 s.
    chains[0].on_attempt(11000.0, 1, 11000.0)
    allowed_later = sum(isinstance(chains[0].on_failure(11000.0, REJECTED, k, 11000.0), float) for k in range(1, 6))
    assert allowed_later == 0                              # one new deposit = 0.2 of a retry
    reserve_only = RetryBudget(percent=0.0).link()
    assert sum(isinstance(reserve_only.on_failure(5.0, REJECTED, 1, 0.0, 0.0), float) for _ in range(200)) == 100


def preset_chains(preset: str, n: int) -> list[Chain]:
    """n clients of a preset, its budget shared (one Finagle client for all requests)."""
    return chain_from_data(expand_preset({"preset": preset, "scope": "shared"})).build([random.random] * n)


def retries_under_total_failure(preset: str, requests: int) -> int:
    """``requests`` requests in the first second, every attempt failing: the retries made."""
    chains = preset_chains(preset, requests)
    made = 0
    for i, chain in enumerate(chains):
        start = t = float(i)                                # one request a ms
        for attempt in itertools.count(1):
            chain.on_attempt(t, attempt, start)
            verdict = chain.on_failure(t, REJECTED, attempt, start)
            if isinstance(verdict, GiveUp):
                break
            made += 1
            t += verdict
    return made


def test_finagle_requeue_budget_under_total_failure_allows_only_its_reserve() -> None:
    # RequeueFilter deposits only after a successful response: with every response a failure
    # nothing is deposited, and 1000 requests get the reserve alone, 10/s × 10 s = 100 retries
    # (each request at most ceil(0.2 × balance): 20 for the first, 16 for the next, ...).
    assert retries_under_total_failure("finagle", 1000) == 100
    # RetryFilter deposits as each request starts: 100 + 20% of 1000 = 300 (each request ≤ 2 retries).
    assert retries_under_total_failure("finagle-retry", 1000) == 300


def test_finagle_requeue_budget_grows_with_successes_only() -> None:
    chains = preset_chains("finagle", 2)
    ok, failing = chains
    for i in range(50):                                   # 50 successful requests: + 50 × 1000 tokens
        ok.on_attempt(float(i), 1, float(i))
        ok.on_success(float(i), 1, float(i))
    # The next request's cap: ceil(0.2 × (100 reserve + 50 × 1000 / 5000)) = ceil(22.0) = 22.
    n, why = requeues(failing, [REJECTED] * 100, 100.0)
    assert n == 22 and why is not None and why.reason == "retry_budget_request_limit"
    # It deposited nothing by failing: 110 − 22 = 88 left, so the next cap is ceil(17.6) = 18.
    n, _ = requeues(failing, [REJECTED] * 100, 200.0)
    assert n == 18
    # A request that succeeds after requeues deposits once, at its success.
    link = RetryBudget(percent=20.0, min_retries_per_s=0, deposit="success").link()
    link.on_attempt(0.0, 1, 0.0)
    assert link.on_failure(0.0, REJECTED, 1, 0.0, 0.0).__class__ is GiveUp    # nothing deposited yet
    for _ in range(5):
        link.on_success(1.0, 1, 1.0)
    assert isinstance(link.on_failure(2.0, REJECTED, 1, 1.0, 0.0), float)     # 5 × 1000 = one retry


def test_finagle_retry_filter_deposits_at_the_start_and_has_no_cap() -> None:
    # RetryFilter.apply: retryBudget.deposit() before dispatch; no per-request limit, only the
    # retry policy's (RetryPolicy.tries: 2 retries) and the budget.
    chain = one_chain(RetryBudget(percent=20.0, min_retries_per_s=0), strategy=Constant(constant=0.0))
    for i in range(10):                                    # 10 requests that fail: 10 × 1000 deposited
        chain.on_attempt(float(i), 1, float(i))
    n, why = requeues(chain, [REJECTED] * 10, 20.0)      # + 1000 for this one: 11000 / 5000 = 2 retries
    assert n == 2 and why is not None and why.reason == "retry_budget"


# --- Envoy (resource_manager_impl.h RetryBudgetImpl, retry_state_impl.cc) ------------------------

def test_envoy_budget_is_min_concurrency_when_few_are_active() -> None:
    spec = ChainSpec(Constant(constant=5.0), (ConcurrencyBudget(),))
    chains = spec.build([random.random] * 10)
    granted = []
    for c, chain in enumerate(chains):
        chain.on_attempt(0.0, 1, 0.0)
    for c, chain in enumerate(chains):
        granted.append(isinstance(chain.on_failure(1.0, REJECTED, 1, 0.0), float))
    # max(int(0.2 × active), 3): the failed attempts are no longer active, so 3 retries at once.
    assert granted == [True] * 3 + [False] * 7
    # A retry's slot is held through its backoff and attempt; its outcome frees it.
    chains[0].on_attempt(6.0, 2, 0.0)
    chains[0].on_success(7.0, 2, 0.0)
    chains[3].on_attempt(7.0, 1, 7.0)
    assert isinstance(chains[3].on_failure(8.0, REJECTED, 1, 7.0), float)


def test_envoy_budget_scales_with_active_requests() -> None:
    spec = ChainSpec(Constant(constant=5.0), (ConcurrencyBudget(),))
    chains = spec.build([random.random] * 200)
    for chain in chains:
        chain.on_attempt(0.0, 1, 0.0)
    # 200 in flight; as each fails the active count drops: grant while retries < int(0.2 × active).
    granted = 0
    for i, chain in enumerate(chains):
        if isinstance(chain.on_failure(1.0, REJECTED, 1, 0.0), float):
            granted += 1
    active_left = [200 - i - 1 for i in range(200)]
    expected, retries = 0, 0
    for active in active_left:
        if retries < max(int(0.2 * active), 3):
            retries += 1
            expected += 1
    assert granted == expected


def test_envoy_budget_frees_a_slot_when_a_later_limit_gives_up() -> None:
    spec = ChainSpec(Constant(constant=5.0), (ConcurrencyBudget(min_concurrency=1),
                                              Deadline(total=3.0, stop_before=True)))
    a, b = spec.build([random.random] * 2)
    a.on_attempt(0.0, 1, 0.0)
    assert isinstance(a.on_failure(1.0, REJECTED, 1, 0.0), GiveUp)   # 1 + 5 ≥ 3: the deadline refuses
    b.on_attempt(0.5, 1, 0.5)
    b_verdict = b.on_failure(1.0, REJECTED, 1, 0.5)
    assert isinstance(b_verdict, GiveUp) and b_verdict.reason == "deadline"   # not the budget: a's slot was freed
    assert a.links[0].cluster.retries == 0  # type: ignore[attr-defined]


# --- Polly v8 breaker (CircuitStateController, AdvancedCircuitBehavior, RollingHealthMetrics) -----

def test_polly_breaker_opens_probes_and_closes() -> None:
    breaker = CircuitBreaker(kind="ratio", unit_seconds=1.0)   # 0.1 over 30 s, ≥ 100 calls, 5 s break
    link = breaker.link()
    states = []
    link.listener = lambda t, s: states.append((t, s))  # type: ignore[attr-defined]
    # 90 successes, then failures: the 10th makes 100 calls at ratio 0.1, both thresholds met.
    for i in range(90):
        link.on_attempt(0.0, 1, 0.0)
        link.on_success(0.5, 1, 0.0)
    for i in range(9):
        link.on_failure(1.0, REJECTED, 1, 0.0, 0.0)
    assert link.state == CLOSED  # type: ignore[attr-defined]      # 99 calls: below the minimum
    link.on_failure(1.0, REJECTED, 1, 0.0, 0.0)
    assert states == [(1.0, OPEN)]
    assert isinstance(link.on_attempt(5.5, 1, 5.5), GiveUp)        # 4.5 s into the 5 s break
    assert link.on_attempt(6.0, 1, 6.0) is None                    # the probe
    assert states[-1] == (6.0, HALF_OPEN)
    assert isinstance(link.on_attempt(6.25, 1, 6.25), GiveUp)      # one probe at a time
    link.on_failure(6.5, TIMED_OUT, 1, 6.0, 0.0)                   # the probe failed: open again
    assert states[-1] == (6.5, OPEN)
    assert link.on_attempt(11.5, 1, 11.5) is None
    link.on_success(11.75, 1, 11.5)
    assert states[-1] == (11.75, CLOSED)
    # Closing reset the metrics: 99 failures do not reach the minimum throughput of 100.
    for i in range(99):
        link.on_failure(12.0, REJECTED, 1, 0.0, 0.0)
    assert link.state == CLOSED  # type: ignore[attr-defined]


def test_polly_breaker_forgets_failures_older_than_the_sampling_duration() -> None:
    link = CircuitBreaker(kind="ratio", minimum_throughput=10, unit_seconds=1.0).link()
    for i in range(9):
        link.on_failure(float(i), REJECTED, 1, 0.0, 0.0)           # 9 failures in 0–8 s
    link.on_failure(40.0, REJECTED, 1, 0.0, 0.0)                   # 30 s later they have rolled out
    assert link.state == CLOSED  # type: ignore[attr-defined]
    for i in range(9):
        link.on_failure(41.0 + i, REJECTED, 1, 0.0, 0.0)
    assert link.state == OPEN  # type: ignore[attr-defined]


# --- resilience4j count breaker (CircuitBreakerStateMachine, CircuitBreakerConfig defaults) -------

def test_resilience4j_breaker_defaults() -> None:
    link = CircuitBreaker(kind="count", unit_seconds=1.0).link()   # 50% of 100 calls, 60 s, 10 probes
    for i in range(50):
        link.on_success(float(i), 1, 0.0)
    for i in range(49):
        link.on_failure(50.0 + i, REJECTED, 1, 0.0, 0.0)
    assert link.state == CLOSED  # type: ignore[attr-defined]    # 99 calls: below the minimum
    link.on_failure(99.0, REJECTED, 1, 0.0, 0.0)                   # 50/100 = 50% ≥ 50%
    assert link.state == OPEN  # type: ignore[attr-defined]
    assert isinstance(link.on_attempt(159.0, 1, 159.0), GiveUp)    # not strictly after 60 s
    permitted = [link.on_attempt(159.5, 1, 159.5) is None for _ in range(12)]
    assert permitted == [True] * 10 + [False] * 2
    assert link.state == HALF_OPEN  # type: ignore[attr-defined]
    for i in range(5):
        link.on_success(160.0, 1, 0.0)
    for i in range(4):
        link.on_failure(160.0, REJECTED, 1, 0.0, 0.0)
    assert link.state == HALF_OPEN  # type: ignore[attr-defined]   # 9 of 10 recorded
    link.on_failure(160.0, REJECTED, 1, 0.0, 0.0)                  # 5/10 = 50%: open again
    assert link.state == OPEN  # type: ignore[attr-defined]
    for _ in range(10):
        link.on_attempt(221.0, 1, 221.0)
    for _ in range(6):
        link.on_success(222.0, 1, 0.0)
    for _ in range(4):
        link.on_failure(222.0, REJECTED, 1, 0.0, 0.0)
    assert link.state == CLOSED  # type: ignore[attr-defined]     # 40% < 50%


def test_a_broken_circuit_refuses_first_attempts_but_the_chain_may_retry_them() -> None:
    spec = ChainSpec(Constant(constant=2.0), (MaxAttempts(max_attempts=3),
                                              CircuitBreaker(kind="count", minimum_throughput=1, window=1)))
    chain = spec.build([random.random])[0]
    chain.on_attempt(0.0, 1, 0.0)
    chain.on_failure(1.0, REJECTED, 1, 0.0)
    refused = chain.on_attempt(3.0, 2, 0.0)
    assert isinstance(refused, GiveUp) and refused.denied
    assert chain.on_failure(3.0, DENIED, 2, 0.0) == 2.0        # Polly/resilience4j retry a broken circuit
    assert isinstance(chain.on_attempt(100.0, 1, 100.0), GiveUp)  # a new call is refused too


# --- x/time/rate (client-go BucketRateLimiter) --------------------------------------------------

def test_rate_limit_reserves_tokens_into_debt() -> None:
    link = RateLimit(unit_seconds=1.0).link()   # 10 qps, burst 100, starts full
    waits = [link.on_failure(0.0, REJECTED, 1, 0.0, 0.0) for _ in range(103)]
    assert waits[:100] == [0.0] * 100
    assert waits[100:] == pytest.approx([0.1, 0.2, 0.3])
    # MaxOf: the retry waits the larger of the strategy's delay and the reservation.
    assert link.on_failure(10.0, REJECTED, 1, 0.0, 0.05) == 0.05


def test_client_go_preset_is_max_of_expo_and_bucket() -> None:
    spec = chain_from_data(expand_preset({"preset": "client-go"}, 1.0))
    chains = spec.build([random.random] * 200)
    delays = [chains[c].on_failure(0.0, REJECTED, 1, 0.0) for c in range(200)]
    # The first 100 retries ride the burst (5 ms each); then the shared bucket spaces them 0.1 s.
    assert delays[:100] == [0.005] * 100
    assert delays[100:103] == pytest.approx([0.1, 0.2, 0.3])
    assert all(itertools.starmap(lambda a, b: a <= b, zip(delays[100:], delays[101:])))
