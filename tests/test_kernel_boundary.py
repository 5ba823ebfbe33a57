"""The kernels' declared boundary (``sim.runs.kernel_boundary``): every field of every class a
kernel transcribes is declared or listed as not honoured, a run that sets a field no kernel
honours takes the reference engine (fail closed: a new field too), and the runs a kernel
honours take it.

The byte-for-byte comparisons of the kernels with the reference are tests/test_fast_path.py and
tests/test_fast_latency.py; the shipped configs' CSVs by both paths are compared last here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, make_dataclass, replace
from pathlib import Path
from typing import Callable

import pytest

from sim.settings.config import load_config, parse_config
from sim.models.adaptive_limits import AdaptiveLimit
from sim.models.controls import LockingServer, ReadWriteOCCServer, ThrottlingServer, WriteOnlyOCCServer
from sim.models.controlled_delay import ControlledDelay
from sim.models.fleet import FleetSpec
from sim.models.incidents import Incident
from sim.models.pool import PoolServer
from sim.models.rate_profile import RatePoint
from sim.models.servers import LatencyServer
from sim.models.strategies import (Constant, EqualJitteredExpo, Expo, FullJitteredExpo, NoBackoff, NormalJitterExpo,
                                   ThinkTimeExpo)
from sim.models.workloads import Burst, Open, Outage, Poisson, Spike
from sim.policies.chain import ChainSpec
from sim.models.hedging import Hedging
from sim.policies.circuit_breaker import CircuitBreaker
from sim.policies.concurrency_budget import ConcurrencyBudget
from sim.policies.grpc_throttle import GrpcThrottle
from sim.policies.limits import AttemptTimeout, Deadline, MaxAttempts
from sim.policies.retry_budget import RetryBudget
from sim.policies.retry_on import RetryOn
from sim.policies.retry_quota import RetryQuota
from sim.policies.token_bucket import TokenBucket
from sim.runs import engine, fast, kernel_boundary
from sim.runs.kernel_boundary import CONTENTION, LATENCY_CLOSED, POOL_OPEN, TABLES, Transcribed
from sim.settings.spec import SimulationSpec, TierSpec

ROOT = Path(__file__).resolve().parent.parent

# A small run of each kernel's model, every field it honours at work somewhere (outages and
# incidents, timeouts, queue limits, an accept-queue bound, a retry budget): a few hundred events.
POOL = {"title": "Pool", "clients": [6], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.2,
        "control": "PoolServer", "workers": 2, "service_time": 10.0, "service_distribution": "exponential",
        "queue_size": 4, "queue_timeout": 30.0, "workload": "open", "think_time": 40.0, "horizon": 1500.0,
        "timeout": 60.0, "abandoned": "drop", "backlog": "unbounded",
        "outages": [{"start": 300.0, "duration": 100.0}],
        "incidents": [{"start": 600.0, "duration": 200.0, "capacity": 0.5},
                      {"start": 900.0, "duration": 100.0, "error_rate": 0.2}],
        "strategies": [{"type": "FullJitteredExpo", "base": 5.0, "cap": 100.0, "max_attempts": 4,
                        "name": "jitter"}]}
LATENCY = {"title": "Latency", "clients": [6], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.2,
           "control": "LatencyServer", "base_latency": 10.0, "concurrency_limit": 3, "factor": 1.2, "k": 1.0,
           "workload": "poisson", "think_time": 40.0, "horizon": 1500.0, "timeout": 60.0, "backlog": 2,
           "outages": [{"start": 300.0, "duration": 100.0}],
           "incidents": [{"start": 600.0, "duration": 50.0, "capacity": 0.0}],
           "strategies": [{"type": "NormalJitterExpo", "min_delay": 5.0, "factor": 2.0, "max_delay": 100.0,
                           "name": "normal", "policies": [{"type": "RetryBudget", "scope": "shared"}]}]}

CONTENTION_RUN = {"title": "Locks", "clients": [30], "repeat": 1, "network_mu": 2.0, "network_sigma": 0.5,
                  "work_to_duration": 1.0, "control": "LockingServer", "write_mu": 1.0, "write_sigma": 0.5,
                  "outages": [{"start": 5.0, "duration": 10.0}],
                  "incidents": [{"start": 30.0, "duration": 5.0, "capacity": 0.0}],
                  "workload": "spike", "spike_fraction": 0.5, "spike_width": 1.0, "arrival_window": 20.0,
                  "strategies": [{"type": "FullJitteredExpo", "base": 2.0, "cap": 50.0, "name": "jitter",
                                  "policies": [{"type": "TokenBucket", "capacity": 3.0, "refill": 0.5,
                                                "refill_on": "success", "scope": "shared"}]}]}


def _spec(table: dict) -> SimulationSpec:
    return parse_config({"seed": 5, "simulation": [table]}).simulations[0]


@pytest.fixture(scope="module")
def bases() -> dict[str, tuple[SimulationSpec, ChainSpec]]:
    """Each kernel's base run: its spec and its one strategy entry's chain."""
    return bases_for_servers()


def unaccounted(cls: type, transcribed: Transcribed) -> set[str]:
    """The dataclass fields of ``cls`` its declaration neither declares nor lists as not honoured."""
    return {f.name for f in fields(cls)} - set(transcribed.fields) - set(transcribed.not_honoured)


CLASSES = [(kernel, cls) for kernel, table in TABLES.items() for cls in table]


@pytest.mark.parametrize("kernel, cls", CLASSES, ids=[f"{k}-{c.__name__}" for k, c in CLASSES])
def test_every_field_of_a_transcribed_class_is_declared_or_not_honoured(kernel, cls):
    transcribed = TABLES[kernel][cls]
    assert not unaccounted(cls, transcribed)
    assert not set(transcribed.fields) & set(transcribed.not_honoured)
    assert set(transcribed.fields) | set(transcribed.not_honoured) <= {f.name for f in fields(cls)}


def test_the_kernels_transcribe_the_classes_their_runs_drive():
    # What sim.runs.fast_run and fast_latency build each kernel's arrays from.
    plain = {Constant, NoBackoff, Expo, FullJitteredExpo, EqualJitteredExpo}
    common = {SimulationSpec, ChainSpec, Outage, Incident}
    assert set(TABLES[POOL_OPEN]) == common | plain | {PoolServer, Open}
    assert set(TABLES[LATENCY_CLOSED]) == common | plain | {NormalJitterExpo, ThinkTimeExpo, LatencyServer,
                                                            Poisson, RetryBudget}
    assert set(TABLES[CONTENTION]) == common | plain | {
        LockingServer, WriteOnlyOCCServer, ReadWriteOCCServer, ThrottlingServer, Burst, Spike, TokenBucket,
        GrpcThrottle, RetryQuota, RetryBudget}


def test_each_base_run_takes_its_kernel(bases, monkeypatch):
    # With the kernels loaded (where numba is installed), the engine asks for its run class.
    asked = []
    run_class = fast.run_class
    monkeypatch.setattr(fast, "_warm", True)
    monkeypatch.setattr(fast, "run_class", lambda name: asked.append(name) or run_class(name))
    for kernel, (spec, chain) in bases.items():
        assert fast.kernel_name(spec, chain) == kernel
        assert engine.run_metrics(spec, chain, spec.clients[0], 0).events > 100
    assert asked == (list(bases) if fast.available() else [])


# A run that sets each field a kernel does not honour (``not_honoured``), from that kernel's
# base run: by the class and field, how the run is changed (``replace`` of spec and chain).
Change = Callable[[SimulationSpec, ChainSpec, Path], tuple[SimulationSpec, ChainSpec]]


def _control(**changes) -> Change:
    return lambda spec, chain, tmp: (replace(spec, control=replace(spec.control, **changes)), chain)


def _strategy(**changes) -> Change:
    return lambda spec, chain, tmp: (spec, replace(chain, strategy=replace(chain.strategy, **changes)))


def _load_curve(spec: SimulationSpec, chain: ChainSpec, tmp: Path) -> tuple[SimulationSpec, ChainSpec]:
    curve = tmp / "curve.csv"
    curve.write_text("1, 1.0\n4, 2.0\n", encoding="utf-8")
    return replace(spec, control=replace(spec.control, load_curve_file=str(curve))), chain


def _tier(spec: SimulationSpec, chain: ChainSpec, tmp: Path) -> tuple[SimulationSpec, ChainSpec]:
    below = TierSpec(PoolServer(workers=2, service_time=2.0), ChainSpec(Constant(constant=1.0)), timeout=20.0)
    return replace(spec, tiers=(below,)), chain


def _fleet(spec: SimulationSpec, chain: ChainSpec, tmp: Path) -> tuple[SimulationSpec, ChainSpec]:
    return replace(spec, fleet=FleetSpec(hosts=2)), chain


def _workload(**changes) -> Change:
    return lambda spec, chain, tmp: (replace(spec, workload=replace(spec.workload, **changes)), chain)


def _incident(**level) -> Change:
    return lambda spec, chain, tmp: (replace(spec, incidents=(Incident(start=500.0, duration=100.0, **level),)),
                                     chain)


# The latency kernel's strategies, each with its own limits set (``_LIMITS``): made from these.
LATENCY_STRATEGIES = [Constant(constant=3.0), NoBackoff(), Expo(base=5.0, cap=100.0),
                      FullJitteredExpo(base=5.0, cap=100.0), EqualJitteredExpo(base=5.0, cap=100.0),
                      NormalJitterExpo(min_delay=5.0, factor=2.0, max_delay=100.0), ThinkTimeExpo()]


def _limited(strategy, **limit) -> Change:
    return lambda spec, chain, tmp: (spec, replace(chain, strategy=replace(strategy, **limit)))


CHANGES: dict[tuple[str, type, str], Change] = {
    (POOL_OPEN, SimulationSpec, "tiers"): _tier,
    (POOL_OPEN, SimulationSpec, "fleet"): _fleet,
    (POOL_OPEN, ChainSpec, "policies"): lambda spec, chain, tmp: (spec, replace(chain, policies=(TokenBucket(),))),
    # a strategy entry's hedging (issue 35): its copies are sim.models.fleet's, on a lone server too
    (POOL_OPEN, ChainSpec, "hedging"): lambda spec, chain, tmp: (spec, replace(chain, hedging=Hedging(2, 5.0))),
    (LATENCY_CLOSED, ChainSpec, "hedging"): lambda spec, chain, tmp: (spec, replace(chain, hedging=Hedging(2, 5.0))),
    (CONTENTION, ChainSpec, "hedging"): lambda spec, chain, tmp: (spec, replace(chain, hedging=Hedging(2, 5.0))),
    (POOL_OPEN, PoolServer, "discipline"): _control(discipline="lifo"),
    (POOL_OPEN, PoolServer, "codel_target"): _control(codel_target=5.0, codel_interval=100.0),
    (POOL_OPEN, PoolServer, "cancel"): _control(cancel="dequeue"),
    (POOL_OPEN, PoolServer, "concurrency_limit"): _control(concurrency_limit=AdaptiveLimit(algorithm="aimd")),
    (POOL_OPEN, PoolServer, "factor"): _control(factor=1.5, k=2.0, slowdown_above=1),
    (POOL_OPEN, PoolServer, "k"): _control(factor=1.0, k=3.0, slowdown_above=1),
    (POOL_OPEN, PoolServer, "slowdown_above"): _control(factor=1.0, k=1.0, slowdown_above=2),
    (POOL_OPEN, PoolServer, "load_curve_file"): _load_curve,
    (POOL_OPEN, PoolServer, "controlled_delay"): _control(queue_timeout=None, controlled_delay=ControlledDelay(short=5.0, long=100.0,
                                                                                                             interval=100.0)),
    (LATENCY_CLOSED, SimulationSpec, "tiers"): _tier,
    (LATENCY_CLOSED, SimulationSpec, "fleet"): _fleet,
    (LATENCY_CLOSED, LatencyServer, "latency_rule"): _control(latency_rule="at_start"),
    (LATENCY_CLOSED, Incident, "slowdown"): _incident(slowdown=2.0),
    (LATENCY_CLOSED, Incident, "error_rate"): _incident(error_rate=0.3),
    **{(LATENCY_CLOSED, type(s), name): _limited(s, **{name: value})
       for s in LATENCY_STRATEGIES for name, value in (("max_attempts", 3), ("max_elapsed", 200.0))},
    # backoff counted from the send, a rate profile, a ramp back after an incident (issue 34):
    # the reference's alone
    **{(kernel, SimulationSpec, "backoff_from"): (lambda spec, chain, tmp: (replace(spec, backoff_from="send"), chain))
       for kernel in (POOL_OPEN, LATENCY_CLOSED, CONTENTION)},
    (POOL_OPEN, Open, "rate_profile"): lambda spec, chain, tmp: (
        replace(spec, workload=replace(spec.workload, rate_profile=(RatePoint(at=500.0, rate=0.1),))), chain),
    (POOL_OPEN, Incident, "ramp"): _incident(capacity=0.5, ramp=50.0),
    (LATENCY_CLOSED, Incident, "ramp"): _incident(capacity=0.5, ramp=50.0),
    (CONTENTION, SimulationSpec, "tiers"): _tier,
    (CONTENTION, SimulationSpec, "fleet"): _fleet,
    # A contention control has no capacity to lower, no speed, no error replies
    # (``Control.incident_problem``): only an incident of capacity 0, an outage, is its.
    (CONTENTION, Incident, "slowdown"): _incident(slowdown=2.0),
    (CONTENTION, Incident, "error_rate"): _incident(error_rate=0.3),
    (CONTENTION, Incident, "ramp"): _incident(capacity=0.5, ramp=50.0),
    # a retry sent only with a probability: the reference models draw it, no kernel
    **{(kernel, type(s), "retry_probability"): _limited(s, retry_probability=0.5)
       for kernel, strategies in ((POOL_OPEN, LATENCY_STRATEGIES[:5]), (LATENCY_CLOSED, LATENCY_STRATEGIES),
                                  (CONTENTION, LATENCY_STRATEGIES[:5]))
       for s in strategies},
}
# Values a kernel honours only in part (a declaration's ``when``): beyond it, the reference.
BEYOND: dict[str, tuple[str, Change]] = {
    "a pool's bounded accept queue while stopped": (POOL_OPEN, lambda spec, chain, tmp: (replace(spec, backlog=3),
                                                                                        chain)),
    "CoDel's interval under adaptive LIFO": (POOL_OPEN, _control(discipline="adaptive_lifo", codel_interval=50.0)),
    "an incident that keeps half the latency server's capacity": (LATENCY_CLOSED, _incident(capacity=0.5)),
    "two policies before the latency kernel's strategy": (
        LATENCY_CLOSED, lambda spec, chain, tmp: (spec, replace(chain, policies=chain.policies * 2))),
    "a token bucket before it": (LATENCY_CLOSED, lambda spec, chain, tmp: (spec, replace(chain, policies=(TokenBucket(),)))),
    # An outage with a bounded accept queue (SYNs retransmitted beyond it; no config gives a
    # contention control one), the reference's.
    "a contention control's bounded accept queue": (
        CONTENTION, lambda spec, chain, tmp: (replace(spec, backlog=29), chain)),
    # The contention kernel asks one policy that keeps tokens: two, or one of another kind, the reference's.
    "two policies before the contention kernel's strategy": (
        CONTENTION, lambda spec, chain, tmp: (spec, replace(chain, policies=(TokenBucket(), GrpcThrottle())))),
    **{f"a {type(policy).__name__} before it": (CONTENTION, lambda spec, chain, tmp, policy=policy: (
        spec, replace(chain, policies=(policy,))))
       for policy in (CircuitBreaker(), ConcurrencyBudget(), Deadline(total=50.0), RetryOn(kinds=["aborted"]),
                      MaxAttempts(max_attempts=3), AttemptTimeout(timeout=5.0))},
    "a capacity incident that slows the pool's one worker": (
        POOL_OPEN, lambda spec, chain, tmp: (replace(spec, control=replace(spec.control, workers=1),
                                                     incidents=(Incident(start=500.0, duration=100.0, capacity=0.3),)),
                                             chain)),
    "a burst workload against a pool": (POOL_OPEN, lambda spec, chain, tmp: (replace(spec, workload=Burst()), chain)),
}


def test_every_field_not_honoured_has_a_run_that_sets_it():
    listed = {(kernel, cls, name) for kernel, table in TABLES.items() for cls, t in table.items()
              for name in t.not_honoured}
    assert set(CHANGES) == listed


def _takes_the_reference(spec: SimulationSpec, chain: ChainSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    """No kernel honours the run, and the engine runs it by the reference even with the
    kernels loaded (where numba is installed): a kernel's run class is never asked for."""
    assert fast.kernel_name(spec, chain) is None
    monkeypatch.setattr(fast, "_warm", True)

    def refused(name: str) -> type:
        raise AssertionError(f"the run went to the {name} kernel")
    monkeypatch.setattr(fast, "run_class", refused)
    assert engine.run_metrics(spec, chain, spec.clients[0], 0).events > 0


# Runs no config makes (a contention control neither calls tiers nor stands behind a balancer:
# ``Control.tier_problem``, the fleet's check), which the reference engine cannot run either:
# the boundary refuses them all the same.
# Runs the config refuses (a contention server replies to no one: no tiers, no fleet, no
# hedging): only the kernel's refusal is checked.
UNRUNNABLE = {(CONTENTION, SimulationSpec, "tiers"), (CONTENTION, SimulationSpec, "fleet"),
              (CONTENTION, ChainSpec, "hedging"), (CONTENTION, Incident, "slowdown"),
              (CONTENTION, Incident, "error_rate"), (CONTENTION, Incident, "ramp")}


@pytest.mark.parametrize("key", list(CHANGES), ids=[f"{k}-{c.__name__}.{n}" for k, c, n in CHANGES])
def test_a_run_that_sets_a_field_not_honoured_takes_the_reference(key, bases, tmp_path, monkeypatch):
    kernel, cls, name = key
    spec, chain = CHANGES[key](*bases[kernel], tmp_path)
    if key in UNRUNNABLE:
        assert fast.kernel_name(spec, chain) is None
        return
    _takes_the_reference(spec, chain, monkeypatch)


@pytest.mark.parametrize("what", list(BEYOND))
def test_a_value_beyond_what_a_declaration_honours_takes_the_reference(what, bases, tmp_path, monkeypatch):
    kernel, change = BEYOND[what]
    spec, chain = change(*bases[kernel], tmp_path)
    _takes_the_reference(spec, chain, monkeypatch)


def test_a_new_field_of_a_model_takes_the_reference_until_it_is_declared(bases, monkeypatch):
    # A PoolServer with one more field, transcribed as the pool is: undeclared, the test above
    # would name it, and a run that sets it goes to the reference; at its default the kernel
    # runs it as before.
    wider = make_dataclass("PoolServer", [("new_knob", int, field(default=0))], bases=(PoolServer,),
                           frozen=True, kw_only=True)
    pool = TABLES[POOL_OPEN][PoolServer]
    assert unaccounted(wider, pool) == {"new_knob"}
    monkeypatch.setitem(TABLES[POOL_OPEN], wider, pool)
    monkeypatch.setattr(kernel_boundary, "_plan", kernel_boundary._plan.__wrapped__)  # no cache kept
    spec, chain = bases[POOL_OPEN]
    values = {f.name: getattr(spec.control, f.name) for f in fields(PoolServer)}
    assert fast.kernel_name(replace(spec, control=wider(**values)), chain) == POOL_OPEN
    assert fast.kernel_name(replace(spec, control=wider(**values, new_knob=1)), chain) is None


def test_a_field_whose_declaration_is_taken_out_is_no_longer_honoured(bases, monkeypatch):
    spec, chain = bases[POOL_OPEN]
    pool = TABLES[POOL_OPEN][PoolServer]
    fewer = Transcribed({k: v for k, v in pool.fields.items() if k != "queue_timeout"},
                        (*pool.not_honoured, "queue_timeout"))
    monkeypatch.setitem(TABLES[POOL_OPEN], PoolServer, fewer)
    monkeypatch.setattr(kernel_boundary, "_plan", kernel_boundary._plan.__wrapped__)
    assert spec.control.queue_timeout is not None and fast.kernel_name(spec, chain) is None
    assert fast.kernel_name(replace(spec, control=replace(spec.control, queue_timeout=None)), chain) == POOL_OPEN


@dataclass(frozen=True)
class _Probe:
    """A value of a declared field that is a model object no kernel transcribes."""

    level: float = 1.0


def test_an_object_of_a_class_no_kernel_transcribes_takes_the_reference(bases):
    spec, chain = bases[POOL_OPEN]
    assert fast.kernel_name(replace(spec, outages=(*spec.outages, _Probe())), chain) is None
    assert fast.kernel_name(spec, replace(chain, strategy=None)) is None


def test_the_configuration_is_packed_from_the_declarations(bases):
    # The declared fields' slots hold the run's values (each kernel's module names them).
    from sim.kernels import delays, latency_closed, pool_open
    spec, chain = bases[POOL_OPEN]
    slots = kernel_boundary.pack(POOL_OPEN, spec, chain, pool_open)
    p = pool_open
    assert (slots.i[p.C_WORKERS], slots.i[p.C_QUEUE_SIZE], slots.i[p.C_MAX_ATTEMPTS]) == (2, 4, 4)
    assert (slots.i[p.C_STRATEGY], slots.i[p.C_HAS_TIMEOUT], slots.i[p.C_DROP_ABANDONED]) == \
           (delays.S_FULL_JITTER, 1, 1)
    assert (slots.f[p.G_TIMEOUT], slots.f[p.G_QUEUE_TIMEOUT], slots.f[p.G_BASE], slots.f[p.G_CAP]) == \
           (60.0, 30.0, 5.0, 100.0)
    spec, chain = bases[LATENCY_CLOSED]
    slots = kernel_boundary.pack(LATENCY_CLOSED, spec, chain, latency_closed)
    q = latency_closed
    assert (slots.i[q.C_BACKLOG], slots.i[q.C_BUDGET], slots.i[q.C_BUDGET_SHARED]) == (2, 1, 1)
    assert slots.i[q.C_BUDGET_WITHDRAWAL] == chain.policies[0].state().withdrawal
    assert (slots.f[q.G_LATENCY], slots.f[q.G_LIMIT], slots.f[q.G_FACTOR]) == (10.0, 3.0, 2.0)
    spec, chain = bases[CONTENTION]
    from sim.kernels import contention
    slots = kernel_boundary.pack(CONTENTION, spec, chain, contention)
    r = contention
    assert (slots.i[r.C_POLICY], slots.i[r.C_POLICY_SHARED], slots.i[r.C_REFILL_ON_SUCCESS], slots.i[r.C_STRICT]) == \
           (r.P_TOKEN_BUCKET, 1, 1, 1)
    assert (slots.f[r.G_TOKENS], slots.f[r.G_REFILL], slots.f[r.G_COST]) == (3.0, 0.5, 1.0)
    slots = kernel_boundary.pack(CONTENTION, spec, replace(chain, policies=(GrpcThrottle(max_tokens=7.0),)), contention)
    assert (slots.i[r.C_POLICY], slots.i[r.C_POLICY_SHARED], slots.f[r.G_TOKENS], slots.f[r.G_THRESHOLD]) == \
           (r.P_GRPC_THROTTLE, 0, 7.0, 3.5)
    for quota, rejection in ((RetryQuota(retry_cost=4), 4), (RetryQuota(retry_cost=4, throttle_cost=1), 1)):
        slots = kernel_boundary.pack(CONTENTION, spec, replace(chain, policies=(quota,)), contention)
        assert (slots.i[r.C_POLICY], slots.i[r.C_RETRY_COST], slots.i[r.C_THROTTLE_COST], slots.i[r.C_REFUND],
                slots.f[r.G_TOKENS]) == (r.P_RETRY_QUOTA, 4, rejection, 1, 500.0)
    budget = RetryBudget(percent=10.0, deposit="success", scope="shared")
    slots = kernel_boundary.pack(CONTENTION, spec, replace(chain, policies=(budget,)), contention)
    assert (slots.i[r.C_POLICY], slots.i[r.C_BUDGET_SHARED], slots.i[r.C_BUDGET_AT_SUCCESS]) == \
           (r.P_RETRY_BUDGET, 1, 1)
    assert slots.i[r.C_BUDGET_WITHDRAWAL] == budget.state().withdrawal
    with pytest.raises(ValueError, match="does not honour"):
        kernel_boundary.pack(POOL_OPEN, *bases[LATENCY_CLOSED], pool_open)


def test_the_kernels_run_the_base_runs_as_the_reference(bases, kernel_matches_reference):
    from sim.kernels import contention, latency_closed, pool_open
    for kernel, module in ((POOL_OPEN, pool_open), (LATENCY_CLOSED, latency_closed), (CONTENTION, contention)):
        kernel_matches_reference(bases[kernel][0], module, False)


# The shipped configs whose CSVs bench/csv_hashes.py hashes; metastability.toml's full-size
# cells have their own test (test_fast_latency.py) and take minutes.
GOLDEN = [ROOT / "sim" / "sample.toml", *sorted((ROOT / "examples").glob("*.toml")),
          *sorted((ROOT / "tests" / "fixtures").glob("*.toml"))]


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in GOLDEN if p.stem != "metastability"], ids=lambda p: p.stem)
def test_every_golden_config_writes_the_same_csvs_by_both_paths(path, monkeypatch, export_csvs):
    # Every run a kernel honours forced to it (whatever its size), against every run by the
    # reference: the same bytes. A simulation none of whose runs a kernel honours (features no
    # kernel transcribes) is written once, with the kernels open to it: none is asked for.
    run_class = fast.run_class
    for spec in load_config(path).simulations:
        expressed = any(fast.kernel_expresses(spec, s.chain) for s in spec.strategies)
        monkeypatch.setattr(fast, "kernel_fits", lambda spec, chain, clients: False)
        reference = export_csvs(spec) if expressed else None
        monkeypatch.setattr(fast, "kernel_fits", lambda spec, chain, clients: fast.kernel_expresses(spec, chain))
        monkeypatch.setattr(fast, "run_class", run_class if expressed else
                            lambda name: pytest.fail(f"{spec.title}: a run went to the {name} kernel"))
        ours = export_csvs(spec)
        assert reference is None or ours == reference, spec.title


def test_no_two_kernels_transcribe_one_server():
    # A kernel run takes the kernel of its server (``fast.kernel_of_control``), its packing
    # checking the whole run again: so no server class may be in two tables.
    from sim.models.controls import CONTROLS
    for control in CONTROLS.values():
        assert sum(control in table for table in TABLES.values()) <= 1, control.__name__
    for kernel, (spec, chain) in bases_for_servers().items():
        assert fast.kernel_of_control(spec) == kernel


def bases_for_servers() -> dict[str, tuple[SimulationSpec, ChainSpec]]:
    """Each kernel's base run (the ``bases`` fixture's)."""
    out = {}
    for name, table in ((POOL_OPEN, POOL), (LATENCY_CLOSED, LATENCY), (CONTENTION, CONTENTION_RUN)):
        spec = _spec(table)
        out[name] = (spec, spec.strategies[0].chain)
    return out
