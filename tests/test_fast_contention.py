"""The compiled fast path of the contention models (``sim.kernels.contention``: clients that make
one call each, a burst or a spike, against a LockingServer, an OCC server write-only or
read-then-write, or a ThrottlingServer, a plain strategy, at most one policy, outages) against
the reference engine: every CSV byte for byte and every run's history, as the engine runs the
kernel (compiled when numba is installed), as its plain source, and in a process without numba;
then which runs take it.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from sim.core import events as ev
from sim.kernels import contention, jit
from sim.models.workloads import Outage
from sim.policies.circuit_breaker import CircuitBreaker
from sim.policies.grpc_throttle import GrpcThrottle
from sim.policies.retry_budget import RetryBudget
from sim.policies.retry_quota import RetryQuota
from sim.policies.token_bucket import TokenBucket
from sim.runs import engine, fast
from sim.settings.config import load_config

ROOT = Path(__file__).resolve().parent.parent

# The sample's two simulations (sim/sample.toml) at other seeds and fewer clients, then the
# other contention controls and a spike: every plain strategy, a strategy that retries at once
# (OCC's Constant 0), writes of no duration (OCC) and of |N(2, 1)| (the lock), a throttle whose
# window rejects most attempts, strategies with their own limits (calls given up); a few hundred
# to a few thousand events a run.
STRATEGIES = """strategies = [
  { type = "Constant", constant = 0.5 },
  { type = "FullJitteredExpo", base = 2.0, cap = 1000.0 },
  { type = "EqualJitteredExpo", base = 2.0, cap = 1000.0 },
  { type = "Expo", base = 1.0, cap = 64.0 },
  { type = "NoBackoff" },
]
"""
CONFIG = """
seed = 7

[[simulation]]
title = "Locking"
max_clients = 30
repeat = 3
network_mu = 10.0
network_sigma = 2.0
work_to_duration = 1.0
control = "LockingServer"
write_mu = 2.0
write_sigma = 1.0
""" + STRATEGIES + """
[[simulation]]
title = "Read write OCC"
max_clients = 30
repeat = 3
network_mu = 5.0
network_sigma = 1.0
write_mu = 0.0
write_sigma = 0.0
work_to_duration = 1.0
control = "ReadWriteOCCServer"
strategies = [
  { type = "Constant", constant = 0.0 },
  { type = "FullJitteredExpo", base = 5.0, cap = 2000.0 },
]

[[simulation]]
title = "Write only OCC"
clients = [1, 5, 20]
repeat = 2
network_mu = 5.0
network_sigma = 1.0
write_mu = 1.0
write_sigma = 0.5
work_to_duration = 0.5
control = "WriteOnlyOCCServer"
""" + STRATEGIES + """
[[simulation]]
title = "Throttling spike"
clients = [4, 25]
repeat = 2
network_mu = 3.0
network_sigma = 1.0
work_to_duration = 1.0
control = "ThrottlingServer"
window = 20.0
limit = 3
workload = "spike"
spike_fraction = 0.6
spike_width = 2.0
arrival_window = 50.0
""" + STRATEGIES + """
[[simulation]]
title = "Limits"
clients = [3, 40]
repeat = 2
network_mu = 4.0
network_sigma = 1.0
work_to_duration = 1.0
control = "ReadWriteOCCServer"
write_mu = 1.0
write_sigma = 0.5
strategies = [
  { type = "Constant", constant = 0.5, max_attempts = 3 },
  { type = "FullJitteredExpo", base = 2.0, cap = 100.0, max_elapsed = 60.0 },
  { type = "EqualJitteredExpo", base = 2.0, cap = 100.0, max_attempts = 5, max_elapsed = 80.0 },
  { type = "NoBackoff", max_attempts = 1 },
]

[[simulation]]
title = "Locking without network noise"
clients = [12]
repeat = 1
network_mu = 1.0
network_sigma = 0.0
work_to_duration = 1.0
control = "LockingServer"
write_mu = 1.0
write_sigma = 0.0
strategies = [{ type = "Constant", constant = 1.0 }, { type = "Expo", base = 0.5, cap = 8.0 }]
"""


# Each policy the kernel asks (TokenBucket, GrpcThrottle, RetryQuota) against every control,
# per client and shared, alone and after a strategy's own limits (a limit's give-up and the
# policy's denial in one run): a bucket of the sample's size (5, +0.1 a call), one refilled on
# success, one that empties exactly (1.5 tokens, 0.5 a retry, not strict, no refill: three
# retries, then 0 left), one of a single token (strict: 1 > 1 never, every retry denied);
# gRPC's throttle at A6's example and below it; a quota that never runs out (500) and small
# ones, with and without a throttle_cost; Finagle's budget at its defaults (never short here),
# shared and deposited on success, with a per-request cap (calls that reach it give up), empty
# (every retry denied). Each simulation has runs that deny retries.
POLICIES = """
[[simulation]]
title = "Token buckets"
clients = [1, 5, 30]
repeat = 2
network_mu = 10.0
network_sigma = 2.0
work_to_duration = 1.0
control = "LockingServer"
write_mu = 2.0
write_sigma = 1.0
strategies = [
  { type = "Constant", constant = 0.5, name = "bucket", policies = [{ type = "TokenBucket" }] },
  { type = "FullJitteredExpo", base = 2.0, cap = 100.0, max_attempts = 4, name = "shared bucket", policies = [
    { type = "TokenBucket", capacity = 2.0, refill = 1.0, refill_on = "success", strict = false, scope = "shared" }] },
  { type = "Expo", base = 1.0, cap = 64.0, name = "throttle", policies = [
      { type = "GrpcThrottle", max_tokens = 6.0, token_ratio = 0.5 }] },
  { type = "Constant", constant = 1.0, max_elapsed = 200.0, name = "shared quota", policies = [
      { type = "RetryQuota", capacity = 12, retry_cost = 2, throttle_cost = 3, scope = "shared" }] },
]

[[simulation]]
title = "Policies read write OCC"
clients = [2, 25]
repeat = 2
network_mu = 5.0
network_sigma = 1.0
write_mu = 0.0
write_sigma = 0.0
work_to_duration = 1.0
control = "ReadWriteOCCServer"
strategies = [
  { type = "Constant", constant = 0.0, name = "throttle", policies = [{ type = "GrpcThrottle" }] },
  { type = "FullJitteredExpo", base = 5.0, cap = 200.0, name = "shared throttle", policies = [
      { type = "GrpcThrottle", max_tokens = 8.0, token_ratio = 0.25, scope = "shared" }] },
  { type = "EqualJitteredExpo", base = 2.0, cap = 100.0, name = "quota", policies = [{ type = "RetryQuota" }] },
  { type = "Constant", constant = 1.0, name = "small shared quota", policies = [
      { type = "RetryQuota", capacity = 20, retry_cost = 3, success_refund = 2, scope = "shared" }] },
  { type = "Expo", base = 1.0, cap = 32.0, name = "bucket on success", policies = [
      { type = "TokenBucket", capacity = 3.0, refill = 0.5, refill_on = "success" }] },
]

[[simulation]]
title = "Policies write only OCC"
clients = [3, 20]
repeat = 2
network_mu = 5.0
network_sigma = 1.0
write_mu = 1.0
write_sigma = 0.5
work_to_duration = 0.5
control = "WriteOnlyOCCServer"
strategies = [
  { type = "NoBackoff", name = "bucket that empties", policies = [
      { type = "TokenBucket", capacity = 1.5, refill = 0.0, cost = 0.5, strict = false }] },
  { type = "Constant", constant = 2.0, max_elapsed = 12.0, name = "quota and a limit", policies = [
      { type = "RetryQuota", capacity = 10, retry_cost = 1, scope = "shared" }] },
  { type = "FullJitteredExpo", base = 2.0, cap = 50.0, max_attempts = 3, name = "throttle and a limit", policies = [
      { type = "GrpcThrottle", max_tokens = 20.0, token_ratio = 0.5, scope = "shared" }] },
]

[[simulation]]
title = "Policies throttling spike"
clients = [4, 25]
repeat = 2
network_mu = 3.0
network_sigma = 1.0
work_to_duration = 1.0
control = "ThrottlingServer"
window = 20.0
limit = 3
workload = "spike"
spike_fraction = 0.6
spike_width = 2.0
arrival_window = 50.0
strategies = [
  { type = "Constant", constant = 5.0, name = "shared bucket", policies = [
      { type = "TokenBucket", capacity = 4.0, refill = 0.2, scope = "shared" }] },
  { type = "Expo", base = 2.0, cap = 64.0, name = "throttle", policies = [
      { type = "GrpcThrottle", max_tokens = 3.0, token_ratio = 0.1 }] },
  { type = "FullJitteredExpo", base = 2.0, cap = 100.0, name = "quota", policies = [
      { type = "RetryQuota", capacity = 12, retry_cost = 1, throttle_cost = 2, success_refund = 1 }] },
  { type = "Constant", constant = 1.0, name = "bucket of one", policies = [{ type = "TokenBucket", capacity = 1.0 }] },
  { type = "NoBackoff", name = "empty budget", policies = [
      { type = "RetryBudget", percent = 0.0, min_retries_per_s = 0 }] },
]

[[simulation]]
title = "Retry budgets"
clients = [1, 10, 40]
repeat = 2
network_mu = 10.0
network_sigma = 2.0
work_to_duration = 1.0
control = "LockingServer"
write_mu = 2.0
write_sigma = 1.0
strategies = [
  { type = "Constant", constant = 0.5, name = "budget", policies = [{ type = "RetryBudget" }] },
  { type = "FullJitteredExpo", base = 2.0, cap = 100.0, max_attempts = 6, name = "shared budget", policies = [
      { type = "RetryBudget", percent = 10.0, min_retries_per_s = 1, deposit = "success", scope = "shared" }] },
  { type = "Expo", base = 1.0, cap = 64.0, name = "budget with a cap", policies = [
      { type = "RetryBudget", percent = 50.0, min_retries_per_s = 0, ttl = 2000, max_retries_per_request = 0.5 }] },
]
"""


# Outages (and an incident of capacity 0) against every control: arrivals held through them,
# writes, commits and a throttle's window expiries moved by their length, two outages in one run
# (the second after the work in the small runs: its pause and resume silent), a policy beside.
OUTAGES = """
[[simulation]]
title = "Locking outages"
clients = [1, 12, 40]
repeat = 2
network_mu = 10.0
network_sigma = 2.0
work_to_duration = 1.0
control = "LockingServer"
write_mu = 2.0
write_sigma = 1.0
outages = [{ start = 15.0, duration = 40.0 }, { start = 200.0, duration = 30.0 }]
strategies = [
  { type = "Constant", constant = 0.5 },
  { type = "FullJitteredExpo", base = 2.0, cap = 100.0, name = "bucket", policies = [{ type = "TokenBucket" }] },
]

[[simulation]]
title = "Read write OCC outages"
clients = [3, 25]
repeat = 2
network_mu = 5.0
network_sigma = 1.0
write_mu = 0.0
write_sigma = 0.0
work_to_duration = 1.0
control = "ReadWriteOCCServer"
outages = [{ start = 8.0, duration = 20.0 }]
incidents = [{ start = 60.0, duration = 15.0, capacity = 0.0 }]
strategies = [{ type = "Constant", constant = 0.0 }, { type = "FullJitteredExpo", base = 5.0, cap = 200.0 }]

[[simulation]]
title = "Write only OCC outage"
clients = [3, 20]
repeat = 2
network_mu = 5.0
network_sigma = 1.0
write_mu = 3.0
write_sigma = 0.5
work_to_duration = 0.5
control = "WriteOnlyOCCServer"
outages = [{ start = 6.0, duration = 25.0 }]
strategies = [{ type = "Expo", base = 1.0, cap = 16.0 }, { type = "NoBackoff", max_attempts = 5 }]

[[simulation]]
title = "Throttling outages"
clients = [4, 25]
repeat = 2
network_mu = 3.0
network_sigma = 1.0
work_to_duration = 1.0
control = "ThrottlingServer"
window = 20.0
limit = 3
workload = "spike"
spike_fraction = 0.6
spike_width = 2.0
arrival_window = 50.0
outages = [{ start = 10.0, duration = 30.0 }, { start = 300.0, duration = 10.0 }]
strategies = [{ type = "Constant", constant = 5.0 }, { type = "Expo", base = 2.0, cap = 64.0, policies = [
    { type = "GrpcThrottle" }] }]
"""


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("contention") / "contention.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return load_config(path).simulations


@pytest.fixture(scope="module")
def outage_specs(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("contention") / "outages.toml"
    path.write_text("seed = 5\n" + OUTAGES, encoding="utf-8")
    return load_config(path).simulations


@pytest.fixture(scope="module")
def policy_specs(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("contention") / "policies.toml"
    path.write_text("seed = 11\n" + POLICIES, encoding="utf-8")
    return load_config(path).simulations


@pytest.mark.parametrize("kernel", ["as the engine runs it", "plain source"])
@pytest.mark.parametrize("index", [0, 1, 2, 3, 4, 5])
def test_kernel_writes_the_reference_csvs_byte_for_byte(specs, index, kernel, kernel_matches_reference):
    spec = specs[index]
    assert all(fast.kernel_name(spec, s.chain) == fast.CONTENTION for s in spec.strategies)
    kernel_matches_reference(spec, contention, kernel == "plain source")


@pytest.mark.parametrize("kernel", ["as the engine runs it", "plain source"])
@pytest.mark.parametrize("index", [0, 1, 2, 3, 4])
def test_runs_with_a_policy_write_the_reference_csvs_byte_for_byte(policy_specs, index, kernel,
                                                                  kernel_matches_reference):
    spec = policy_specs[index]
    assert all(fast.kernel_name(spec, s.chain) == fast.CONTENTION for s in spec.strategies)
    kernel_matches_reference(spec, contention, kernel == "plain source")


@pytest.mark.parametrize("kernel", ["as the engine runs it", "plain source"])
@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_runs_with_outages_write_the_reference_csvs_byte_for_byte(outage_specs, index, kernel,
                                                                 kernel_matches_reference):
    spec = outage_specs[index]
    assert spec.stops and all(fast.kernel_name(spec, s.chain) == fast.CONTENTION for s in spec.strategies)
    kernel_matches_reference(spec, contention, kernel == "plain source")


def _same_history(ours: engine.Run, reference: engine.Run) -> None:
    a, b = ours.history, reference.history
    assert (a.times, a.clients, a.packed, a.calls) == (b.times, b.clients, b.packed, b.calls)
    assert ours.metrics() == reference.metrics()
    assert ours.time == reference.time  # the clock, past a silent pause or resume after the work


@pytest.mark.parametrize("kernel", ["as the engine runs it", "plain source"])
def test_every_outage_run_s_history_and_metrics_are_the_reference_s(outage_specs, kernel):
    # Every run of every size and repetition through its outages: the pauses and resumes (on
    # no client's lane), what was held at the door served at the resume, the server's steps
    # later by the outage's length; and the runs whose later outage comes after their work.
    chosen = None if kernel == "as the engine runs it" else jit.plain(contention.run)
    recorded = silent = 0
    for spec in outage_specs:
        for s in spec.strategies:
            for n in spec.clients:
                for r in range(spec.repeat):
                    ours = engine.kernel_record(spec, s.label, n, r, kernel=chosen)
                    reference = engine.Run(spec, s.label, n, r).run()
                    _same_history(ours, reference)
                    assert engine.kernel_metrics(spec, s.chain, n, r, kernel=chosen) == reference.metrics()
                    pauses = [c for c, p in zip(reference.history.clients, reference.history.packed)
                              if ev.unpack(p)[0] == ev.SERVER_PAUSES]
                    assert set(pauses) <= {-1}
                    recorded += len(pauses)
                    silent += len(spec.stops) - len(pauses)
    assert recorded > 0 and silent > 0


@pytest.mark.parametrize("kernel", ["as the engine runs it", "plain source"])
def test_every_run_s_history_and_metrics_are_the_reference_s(specs, kernel):
    # Each event (time, client, code, call) of runs of every size and repetition, and the
    # metrics of the same runs kept without history, against the reference engine's, whose
    # clients of a contention control then take their steps ahead of time (``Wiring.ahead``):
    # the same events in the same order.
    chosen = None if kernel == "as the engine runs it" else jit.plain(contention.run)
    events = 0
    for spec in specs:
        for s in spec.strategies:
            for n in sorted({1, 2, *spec.clients[::7], spec.max_clients}):
                for r in range(2):
                    ours = engine.kernel_record(spec, s.label, n, r, kernel=chosen)
                    reference = engine.Run(spec, s.label, n, r).run()
                    _same_history(ours, reference)
                    assert engine.kernel_metrics(spec, s.chain, n, r, kernel=chosen) == reference.metrics()
                    events += len(reference.history)
    assert events > 10_000  # about 25,000: the comparison saw real contention


@pytest.mark.parametrize("kernel", ["as the engine runs it", "plain source"])
def test_every_policy_run_s_history_and_metrics_are_the_reference_s(policy_specs, kernel):
    # Every run of every size and repetition, with each policy: its events (the backs-off with
    # the tokens left, the denied retries with the policy's reason, a limit's give-ups) and the
    # metrics (retries_denied among them) kept with and without history.
    chosen = None if kernel == "as the engine runs it" else jit.plain(contention.run)
    denied: dict[str, int] = {}
    codes: set[int] = set()
    for spec in policy_specs:
        for s in spec.strategies:
            for n in spec.clients:
                for r in range(spec.repeat):
                    ours = engine.kernel_record(spec, s.label, n, r, kernel=chosen)
                    reference = engine.Run(spec, s.label, n, r).run()
                    _same_history(ours, reference)
                    assert engine.kernel_metrics(spec, s.chain, n, r, kernel=chosen) == reference.metrics()
                    name = type(s.chain.policies[0]).__name__
                    denied[name] = denied.get(name, 0) + reference.metrics().retries_denied
                    codes.update(reference.history.packed)
    assert set(denied) == {"TokenBucket", "GrpcThrottle", "RetryQuota", "RetryBudget"} and min(denied.values()) > 0
    reasons = {ev.pack(ev.CLIENT_RETRY_DENIED, ev.DENY_REASON_INDEX[r]) for r in ("token_bucket", "grpc_throttle",
                                                                                  "retry_quota", "retry_budget")}
    assert reasons <= codes  # each policy's denial recorded
    assert any(ev.unpack(p)[0] == ev.CLIENT_GIVES_UP for p in codes)  # a limit's, beside them
    # backs-off with 0 whole tokens left and with more: the emptied buckets and the full quotas
    assert {ev.pack(ev.CLIENT_BACKS_OFF, 0), ev.pack(ev.CLIENT_BACKS_OFF, 1)} <= codes


def test_a_bucket_that_empties_denies_the_retries_after_its_tokens(policy_specs):
    # 1.5 tokens, 0.5 a retry, not strict, no refill: each client's fourth retry is denied, the
    # three before it leave 1.0, 0.5 and 0 tokens (their backs-off say 1, 0, 0).
    spec = policy_specs[2]
    label = spec.strategies[0].label
    assert label == "bucket that empties"
    run = engine.kernel_record(spec, label, 20, 1, kernel=jit.plain(contention.run))
    _same_history(run, engine.Run(spec, label, 20, 1).run())
    by_client: dict[int, list[int]] = {}
    history = run.history
    for c, p in zip(history.clients, history.packed):
        code, detail = ev.unpack(p)
        if code in (ev.CLIENT_BACKS_OFF, ev.CLIENT_RETRY_DENIED):
            by_client.setdefault(c, []).append(p)
    denied = ev.pack(ev.CLIENT_RETRY_DENIED, ev.DENY_REASON_INDEX["token_bucket"])
    steps = [ev.pack(ev.CLIENT_BACKS_OFF, d) for d in (1, 0, 0)]
    ended = [c for c, seen in by_client.items() if denied in seen]
    assert ended and all(by_client[c] == [*steps, denied] for c in ended)
    assert all(seen == steps[:len(seen)] for c, seen in by_client.items() if c not in ended)


def test_a_run_of_metrics_only_is_the_reference_s_taken_ahead(specs, monkeypatch):
    # ``run_metrics`` by the reference (its clients' steps taken ahead) and by the kernel.
    monkeypatch.setattr(fast, "kernel_fits", lambda spec, chain, clients: False)
    for spec in specs[:2]:
        assert engine.ahead_is_exact(spec)
        for s in spec.strategies:
            for n in (3, 17, 30):
                assert engine.kernel_metrics(spec, s.chain, n, 1) == engine.run_metrics(spec, s.chain, n, 1)


def test_the_sample_s_runs_take_the_kernel(specs):
    sample = load_config(ROOT / "sim" / "sample.toml").simulations
    for spec in [*sample, *specs]:
        for s in spec.strategies:
            assert fast.kernel_name(spec, s.chain) == fast.CONTENTION
    spec, chain = specs[0], specs[0].strategies[0].chain
    stopped = replace(spec, outages=(Outage(start=5.0, duration=5.0),))
    assert fast.kernel_name(stopped, chain) == fast.CONTENTION
    # A bounded accept queue (no config gives a contention control one): the reference's.
    assert fast.kernel_name(replace(stopped, backlog=spec.max_clients), chain) is None
    for policy in (TokenBucket(), GrpcThrottle(scope="shared"), RetryQuota(throttle_cost=2), RetryBudget()):
        assert fast.kernel_name(spec, replace(chain, policies=(policy,))) == fast.CONTENTION
    # Two policies, or one the kernel does not ask (a breaker): the reference's.
    assert fast.kernel_name(spec, replace(chain, policies=(TokenBucket(), GrpcThrottle()))) is None
    assert fast.kernel_name(spec, replace(chain, policies=(CircuitBreaker(),))) is None
    assert fast.kernel_name(spec, replace(chain, strategy=replace(chain.strategy, retry_probability=0.5))) is None
    assert fast.kernel_name(spec, replace(chain, strategy=replace(chain.strategy, max_attempts=3))) == fast.CONTENTION


def test_pure_switches_the_kernel_off(specs, monkeypatch):
    # BACKOFF_SIM_PURE=1: every run by the reference models, numba or not; the CSVs are the
    # reference's (the comparison above), so both settings write the same files.
    spec, chain = specs[0], specs[0].strategies[0].chain
    monkeypatch.setattr(fast, "_warm", True)
    monkeypatch.setenv(jit.PURE_ENV, "1")
    assert not fast.kernel_fits(spec, chain, 30)
    monkeypatch.setenv(jit.PURE_ENV, "0")
    assert fast.kernel_fits(spec, chain, 30) == jit.COMPILED


def test_the_kernel_runs_as_plain_python_without_numba(tmp_path):
    # Where numba is missing the kernel's one source is plain Python (``maybe_njit``): it still
    # gives the reference's histories, though the engine sends no run to it there.
    path = tmp_path / "contention.toml"
    path.write_text(CONFIG + POLICIES + OUTAGES, encoding="utf-8")
    probe = ("import sys; sys.modules['numba'] = None\n"
             "from sim.kernels import jit, contention; assert not jit.COMPILED\n"
             "assert jit.plain(contention.run) is contention.run\n"
             "from sim.settings.config import load_config; from sim.runs import engine, fast\n"
             "checked = 0\n"
             "for spec in load_config(sys.argv[1]).simulations:\n"
             "    for s in spec.strategies:\n"
             "        assert not fast.kernel_fits(spec, s.chain, 10**6)\n"
             "        ours = engine.kernel_record(spec, s.label, spec.max_clients, 0)\n"
             "        ref = engine.Run(spec, s.label, spec.max_clients, 0).run()\n"
             "        a, b = ours.history, ref.history\n"
             "        assert (a.times, a.clients, a.packed, a.calls) == (b.times, b.clients, b.packed, b.calls)\n"
             "        assert ours.metrics() == ref.metrics()\n"
             "        checked += len(b)\n"
             "print(checked)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 16_000  # about 21,300 events compared: 5,000 with a policy, 4,700 through outages


@pytest.mark.slow
@pytest.mark.parametrize("index", [0, 1])
def test_the_sample_writes_the_reference_csvs_at_full_size(index, kernel_matches_reference):
    # sim/sample.toml as shipped (100 clients, 20 and 30 repetitions): minutes by the reference.
    spec = load_config(ROOT / "sim" / "sample.toml").simulations[index]
    kernel_matches_reference(spec, contention, False)


def test_a_small_sweep_loads_the_kernels_once_before_its_workers_start(specs, monkeypatch):
    # The sample's sweep takes a second or two by the kernels: this process loads the one its
    # runs take before it forks the workers (which inherit it), rather than each worker loading
    # it; a larger sweep leaves it to the workers. The same results either way.
    from sim.runs import sweep
    loaded = []
    monkeypatch.setattr(fast, "worth_warming", lambda specs, processes=1: True)
    monkeypatch.setattr(fast, "warm_up", lambda names=None: loaded.append(tuple(names)))
    monkeypatch.setattr(fast, "kernels_loaded_by_fork", lambda: True)
    small = sweep.run_sweep(specs[2], workers=2)
    assert loaded == [(fast.CONTENTION,)]
    monkeypatch.setattr(sweep, "PARENT_WARM_EVENTS", 0)
    loaded.clear()
    large = sweep.run_sweep(specs[2], workers=2)
    assert loaded == []
    assert small.cost.tolist() == large.cost.tolist()


def test_kernels_built_ahead_pay_from_far_fewer_events_in_every_worker(monkeypatch):
    # On a terminal the progress line's thread makes the pool fork from a server, so each of
    # the sample's two workers loads its kernel: numba's ~0.45 s each is dearer than the
    # sample's 630,000 expected events on the reference (MIN_EVENTS each), a module built ahead
    # of time (~10 ms) is not, and one not built yet is built once for all of them.
    from sim.kernels import ahead
    from sim.runs.resources import expected_events
    sample = load_config(ROOT / "sim" / "sample.toml").simulations
    built: set[str] = set()
    monkeypatch.setattr(fast, "available", lambda: True)
    monkeypatch.setattr(fast, "_warm", False)
    monkeypatch.setattr(fast, "_loaded", set())
    monkeypatch.setattr(ahead, "ready", lambda name: ahead.enabled() and name in built)
    monkeypatch.setattr(ahead, "failed", lambda name: False)
    total = sum(len(s.strategies) * s.repeat * sum(expected_events(s, n) for n in s.clients) for s in sample)
    assert fast.MIN_EVENTS < total < 2 * fast.MIN_EVENTS

    monkeypatch.setattr(ahead, "_enabled", False)  # numba's jit: the app, a notebook
    assert fast.load_events(fast.CONTENTION, 2) == 2 * fast.MIN_EVENTS
    assert fast.worth_warming(sample, 1) and not fast.worth_warming(sample, 2)
    monkeypatch.setattr(ahead, "_enabled", True)  # the headless commands
    assert fast.load_events(fast.CONTENTION, 2) == fast.MIN_EVENTS + fast.BUILT_MIN_EVENTS
    assert fast.worth_warming(sample, 2)  # built once, by the first worker that asks
    monkeypatch.setattr(ahead, "failed", lambda name: True)  # a build failed today: the jit's cost
    assert fast.load_events(fast.CONTENTION, 2) == 2 * fast.MIN_EVENTS
    assert not fast.worth_warming(sample, 2)
    monkeypatch.setattr(ahead, "failed", lambda name: False)
    built.add(fast.CONTENTION)
    assert fast.load_events(fast.CONTENTION, 2) == 2 * fast.BUILT_MIN_EVENTS
    assert fast.worth_warming(sample, 2) and fast.worth_warming(sample, 64)
    assert not fast.worth_warming(sample, total // fast.BUILT_MIN_EVENTS + 1)

    # One run alone: the reference unless it is large enough to pay for the kernel's load.
    spec = sample[0]
    chain = spec.strategies[0].chain
    clients = next(n for n in range(1, 10**6) if expected_events(spec, n) >= fast.BUILT_MIN_EVENTS)
    assert expected_events(spec, clients) < fast.MIN_EVENTS
    assert fast.kernel_fits(spec, chain, clients) and not fast.kernel_fits(spec, chain, clients - 1)
    built.clear()
    assert not fast.kernel_fits(spec, chain, clients)
    monkeypatch.setattr(ahead, "_enabled", False)
    built.add(fast.CONTENTION)
    assert not fast.kernel_fits(spec, chain, clients)


def test_a_strategy_s_own_limits_end_calls_as_the_reference_s(specs):
    # max_attempts and max_elapsed: the calls given up and their events, run by run.
    spec = specs[4]
    assert spec.title == "Limits"
    plain = jit.plain(contention.run)
    gave_up = 0
    for s in spec.strategies:
        ours = engine.kernel_record(spec, s.label, 40, 1, kernel=plain)
        reference = engine.Run(spec, s.label, 40, 1).run()
        _same_history(ours, reference)
        gave_up += reference.metrics().gave_up
    assert gave_up > 0
