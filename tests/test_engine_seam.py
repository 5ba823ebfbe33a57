"""The retry-policy seam wired into the engine: every client asks its chain after each attempt and
hears every outcome, on every control and server; a strategy alone keeps the inline path."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from sim.runs.engine import Run, record_run, run_metrics
from sim.vocabulary.outcomes import ABORTED, REJECTED, TIMED_OUT
from sim.policies.seam import Link, Policy
from sim.policies.token_bucket import TokenBucket
from support import decode, make_spec


class _Ear(Link):
    """Records every hook call: (hook, client-independent args)."""

    def __init__(self, log: list) -> None:
        self.log = log

    def on_attempt(self, t, attempt, start):
        self.log.append(("attempt", attempt))
        return None

    def on_failure(self, t, kind, attempt, start, verdict):
        self.log.append(("failure", kind))
        return verdict

    def on_success(self, t, attempt, start):
        self.log.append(("success", attempt))


@dataclass(frozen=True, kw_only=True)
class Ear(Policy):
    """A policy that changes nothing and hears everything (shared: one log for the run)."""

    log: list = field(default_factory=list, compare=False)
    scope: str = "shared"

    def link(self) -> Link:
        return _Ear(self.log)


def _with(spec, *policies):
    s = spec.strategies[0]
    return replace(spec, strategies=(replace(s, policies=policies),))


def _count(events, name):
    return sum(1 for e in events if e[2] == name)


@pytest.mark.parametrize("control, failure, kind", [
    ("LockingServer", "server_rejects", REJECTED),
    ("ThrottlingServer", "server_rejects", REJECTED),
    ("WriteOnlyOCCServer", "server_aborts", ABORTED),
    ("ReadWriteOCCServer", "server_aborts", ABORTED),
])
def test_contention_clients_hear_each_outcome(control, failure, kind):
    ear = Ear()
    spec = _with(make_spec(control, clients=[8], repeat=1), ear)
    events = decode(record_run(spec, spec.labels[0], 8, 0))
    log = ear.log
    # A policy that changes nothing changes nothing: the same history as the strategy alone.
    plain = make_spec(control, clients=[8], repeat=1)
    assert events == decode(record_run(plain, plain.labels[0], 8, 0))
    assert sum(1 for x in log if x == ("failure", kind)) == _count(events, failure) > 0
    assert not [x for x in log if x[0] == "failure" and x[1] != kind]
    # Each client succeeds once (its one call), heard at the commit (or, throttling, the accept).
    assert sum(1 for x in log if x[0] == "success") == 8
    requests = "client_requests_version" if control == "ReadWriteOCCServer" else "client_requests_write"
    assert sum(1 for x in log if x[0] == "attempt") == _count(events, requests)


def test_replying_clients_hear_successes_rejections_and_timeouts():
    ear = Ear()
    base = make_spec("QueueServer", clients=[30], repeat=1, service_time=5.0, concurrency=2, queue_size=2,
                     reject_delay=1.0, horizon=400.0, timeout=12.0, workload="poisson", think_time=10.0,
                     network_mu=1.0, network_sigma=0.2)
    spec = _with(base, ear)
    events = decode(record_run(spec, spec.labels[0], 30, 0))
    assert events == decode(record_run(base, base.labels[0], 30, 0))
    log = ear.log
    # Every failure is heard once (a rejection arriving after its attempt timed out is stale).
    assert sum(1 for x in log if x[0] == "failure") == (
        _count(events, "client_backs_off") + _count(events, "client_gives_up"))
    assert 0 < sum(1 for x in log if x == ("failure", REJECTED)) <= _count(events, "server_rejects")
    assert sum(1 for x in log if x == ("failure", TIMED_OUT)) == _count(events, "client_times_out") > 0
    assert sum(1 for x in log if x[0] == "success") == _count(events, "client_succeeds") > 0
    assert sum(1 for x in log if x[0] == "attempt") == _count(events, "client_requests_write")


def test_a_token_bucket_cuts_retries_against_an_overloaded_lock():
    # Brooker's bucket: a retry needs more than `cost` tokens; refills of 0.1 per call start cannot
    # keep up with 20 clients retrying against one lock, so retries stop early and clients give up.
    base = make_spec("LockingServer", clients=[20], repeat=1,
                     strategies=[{"type": "Constant", "constant": 1.0}])
    spec = _with(base, TokenBucket(capacity=5.0, refill=0.1, scope="shared"))
    free = run_metrics(base, base.strategies[0].chain, 20, 0)
    budgeted = run_metrics(spec, spec.strategies[0].chain, 20, 0)
    assert free.gave_up == 0 and budgeted.gave_up > 0
    assert budgeted.work < free.work


def test_a_strategy_alone_takes_the_inline_path_and_its_limits_the_chain():
    spec = make_spec(clients=[20], repeat=1, strategies=[{"type": "Constant", "constant": 1.0}])
    assert spec.strategies[0].chain.plain
    limited = make_spec(clients=[20], repeat=1,
                        strategies=[{"type": "Constant", "constant": 1.0, "max_attempts": 2}])
    assert not limited.strategies[0].chain.plain
    run = Run(limited, limited.labels[0], 20, 0).run()
    assert run.metrics().gave_up > 0  # MaxAttempts, a link of the chain, gave up
