"""The kernels' boundary, declared: for each compiled kernel (``sim.kernels``), the classes it
transcribes and, for each class, the fields it honours and how each value reaches the kernel.

A run (its ``SimulationSpec`` and its strategy entry's ``ChainSpec``) goes to a kernel only if
every object in it is of a class the kernel's table holds, and every field of each that differs
from its default is declared there (and, where a declaration says ``when``, has a value the
kernel honours). So it fails closed: a field added to a model is not declared, and a run that
sets it takes the reference engine until the kernel transcribes it and the field is declared.
``tests/test_kernel_boundary.py`` enumerates every transcribed class's dataclass fields and fails
when one is neither declared nor listed in ``not_honoured``. (Attributes that are not fields,
such as ``PoolServer``'s samples read from its ``service_file``, follow from fields.)

The same declarations pack the kernel's configuration (``pack``): a declared field's ``pack``
writes its value into the ``C_*`` (integers) or ``G_*`` (floats) slots of the kernel's arrays,
a class's ``pack`` what it derives from several fields (a strategy's code, a budget's numbers);
fields without one are read where the run's arrays are built (``read``: streams, series, first
items) or by the engine around every run, whichever path runs it.

This module imports neither numba nor the kernels: slots are named, and found in the kernel's
module (``codes``) when a run packs them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields, is_dataclass
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

from sim.models.controls import LockingServer, ReadWriteOCCServer, ThrottlingServer, WriteOnlyOCCServer
from sim.models.incidents import Incident, slot_speed
from sim.models.pool import PoolServer
from sim.models.servers import LatencyServer
from sim.models.strategies import (Constant, EqualJitteredExpo, Expo, FullJitteredExpo, NoBackoff, NormalJitterExpo,
                                   ThinkTimeExpo)
from sim.models.workloads import Burst, Open, Outage, Poisson, Spike
from sim.policies.chain import ChainSpec
from sim.policies.grpc_throttle import GrpcThrottle
from sim.policies.retry_budget import SLICES, RetryBudget
from sim.policies.retry_quota import RetryQuota
from sim.policies.token_bucket import TokenBucket
from sim.settings.spec import SimulationSpec

# The kernels (modules of ``sim.kernels``).
POOL_OPEN = "pool_open"
LATENCY_CLOSED = "latency_closed"
CONTENTION = "contention"


class Slots:
    """A kernel's configuration arrays, written by slot name: ``C_*`` in the integers, ``G_*``
    in the floats, their indices (and sizes, ``C_SIZE``, ``G_SIZE``) the kernel module's."""

    def __init__(self, codes: ModuleType) -> None:
        self.codes = codes
        self.i = np.zeros(codes.C_SIZE, dtype=np.int64)
        self.f = np.zeros(codes.G_SIZE, dtype=np.float64)

    def put(self, name: str, value: float | int | bool) -> None:
        (self.i if name.startswith("C_") else self.f)[getattr(self.codes, name)] = value


Packer = Callable[[Slots, Any], None]


@dataclass(frozen=True)
class Field:
    """A field a kernel honours. ``pack(slots, value)`` puts its value in the configuration; a
    field without one is read where the run is built or around it (``read`` says where).
    ``when(owner)``: the owner's non-default values of this field the kernel honours (None: any).
    ``walked``: the objects its value holds are part of the run, checked (and packed) in turn;
    False for what is not one run's model (the sweep's other strategies)."""

    pack: Packer | None = None
    read: str = ""
    when: Callable[[Any], bool] | None = None
    walked: bool = True


def slot(name: str, none: float | int | None = None) -> Field:
    """Packed as it is into slot ``name`` (``none``: what None packs as)."""
    def pack(slots: Slots, value: Any) -> None:
        slots.put(name, none if value is None else value)
    return Field(pack)


def optional(flag: str, name: str) -> Field:
    """An optional number: ``flag`` says it is set, ``name`` holds it (0 when it is not)."""
    def pack(slots: Slots, value: Any) -> None:
        slots.put(flag, value is not None)
        slots.put(name, 0.0 if value is None else float(value))
    return Field(pack)


def equals(name: str, choice: str) -> Field:
    """A choice of two: slot ``name`` is 1 for ``choice``, 0 for the other."""
    def pack(slots: Slots, value: Any) -> None:
        slots.put(name, value == choice)
    return Field(pack)


def read(where: str, when: Callable[[Any], bool] | None = None) -> Field:
    """Honoured without a slot of its own: read ``where`` (the run's build, the engine)."""
    return Field(None, where, when)


def outside(where: str) -> Field:
    """Not part of one run's model (``where`` reads it): honoured, its objects not walked."""
    return Field(None, where, None, walked=False)


@dataclass(frozen=True)
class Transcribed:
    """One class as a kernel transcribes it: the fields it honours (``fields``), those it does
    not (``not_honoured``: a run that sets one takes the reference engine), and what the class
    itself packs from its fields (``pack(slots, obj)``: a strategy's code, a budget's numbers)."""

    fields: Mapping[str, Field]
    not_honoured: tuple[str, ...] = ()
    pack: Packer | None = None


def strategy_code(name: str) -> Packer:
    """A strategy's class as the kernel's ``C_STRATEGY``: ``sim.kernels.delays``' code ``name``."""
    def pack(slots: Slots, strategy: Any) -> None:
        from sim.kernels import delays  # the kernels are loaded by then: a run packs them
        slots.put("C_STRATEGY", getattr(delays, name))
    return pack


def _surge(slots: Slots, workload: Poisson) -> None:
    """``Poisson.surge`` (from ``surge_start``, ``surge_duration``, ``surge_factor``)."""
    surge = workload.surge
    slots.put("C_HAS_SURGE", surge is not None)
    if surge is not None:
        for name, value in zip(("G_SURGE_START", "G_SURGE_END", "G_SURGE_FACTOR"), surge):
            slots.put(name, value)


def _budget(slots: Slots, policy: RetryBudget) -> None:
    """The numbers the budget's own state computes (``RetryBudget.state``) from ``percent``,
    ``min_retries_per_s``, ``ttl`` and ``unit_seconds``."""
    state = policy.state()
    assert state.adder.n == SLICES - 1 and state.adder.old == 0  # the kernel's window: 0 at t = 0
    slots.put("C_BUDGET", 1)
    slots.put("C_BUDGET_EMPTY", state.empty)
    slots.put("C_BUDGET_WINDOW", state.adder.window)
    slots.put("C_BUDGET_RESERVE", state.reserve)
    slots.put("C_BUDGET_DEPOSIT", state.deposit_amount)
    slots.put("C_BUDGET_WITHDRAWAL", state.withdrawal)
    slots.put("G_BUDGET_MS", state.ms_per_unit)


def policy_code(name: str) -> Packer:
    """A policy's class as the contention kernel's ``C_POLICY``: its code ``name`` (``P_*``)."""
    def pack(slots: Slots, policy: Any) -> None:
        slots.put("C_POLICY", getattr(slots.codes, name))
    return pack


def _throttle(slots: Slots, policy: GrpcThrottle) -> None:
    """``_ThrottleLink``'s threshold, from ``max_tokens``: no retry at or below half of it."""
    slots.put("C_POLICY", slots.codes.P_GRPC_THROTTLE)
    slots.put("G_THRESHOLD", float(policy.max_tokens) / 2)


def _quota(slots: Slots, policy: RetryQuota) -> None:
    """What a rejection costs (``throttle_cost``, else ``retry_cost``)."""
    slots.put("C_POLICY", slots.codes.P_RETRY_QUOTA)
    slots.put("C_THROTTLE_COST", policy.retry_cost if policy.throttle_cost is None else policy.throttle_cost)


def _contention_budget(slots: Slots, policy: RetryBudget) -> None:
    """The budget's numbers (``_budget``) and the contention kernel's ``C_POLICY``."""
    _budget(slots, policy)
    slots.put("C_POLICY", slots.codes.P_RETRY_BUDGET)


def _one_policy(chain: ChainSpec) -> bool:
    """A chain of one policy (its class is then checked in turn): the contention kernel asks one."""
    return len(chain.policies) == 1


def _unbounded_while_stopped(spec: SimulationSpec) -> bool:
    """The accept queue holds every arrival while the server is stopped (or it never stops)."""
    return spec.backlog is None or not spec.stops


def _whole_slots(spec: SimulationSpec) -> bool:
    """The pool kernel keeps ``kept_slots`` workers in a capacity incident, each at full speed:
    true of a capacity that leaves a whole number of them (``slot_speed`` 1), not of one worker
    at 0.3, which the reference serves at 30% of its speed."""
    workers = getattr(spec.control, "workers", 1)
    return all(slot_speed(workers, i.level) == 1.0 for i in spec.degradations if i.kind == "capacity")


def _has_strategy(chain: ChainSpec) -> bool:
    """A chain with a strategy (a preset's may have none): its class is then checked in turn."""
    return chain.strategy is not None


STREAMS = "the run's streams (seed, title, clients, repetition)"
BUILT = "the run's build (its arrays, streams and first items)"
ENGINE = "the engine, around every run (metrics, guard)"
SWEEP = "the sweep and its messages, not one run"
BY_CLASS = "its class's pack"

# SimulationSpec, as both kernels read it; ``backlog``, ``backlog_overflow`` and ``time_unit``
# (the accept queue's) and ``incidents`` (which kinds) are each kernel's.
_SPEC_FIELDS: dict[str, Field] = {
    "title": read(STREAMS), "seed": read(STREAMS),
    "clients": outside(SWEEP), "repeat": outside(SWEEP), "strategies": outside(SWEEP),
    "shared_policies": outside(SWEEP), "source": outside(SWEEP), "clients_key": outside(SWEEP),
    "warmup": outside(SWEEP),  # which successes the sweep pools into the latency table
    "soft_limits": read(ENGINE), "work_to_duration": read(ENGINE),
    "network_mu": read(BUILT), "network_sigma": read(BUILT),
    "control": read(BUILT), "workload": read(BUILT), "horizon": read(BUILT), "bucket": read(BUILT),
    "outages": read(BUILT), "incidents": read(BUILT),
    "timeout": optional("C_HAS_TIMEOUT", "G_TIMEOUT"),
    "abandoned": equals("C_DROP_ABANDONED", "drop"),
}
# A fleet: sim.models.fleet, reference engine only; ``backoff_from = "send"``, the reference's
# clients alone.
_SPEC_NOT_HONOURED = ("tiers", "fleet", "backoff_from")
_OUTAGE = Transcribed({"start": read(BUILT), "duration": read(BUILT)})
# The plain strategies both kernels draw delays for (``sim.kernels.delays``).
_PLAIN_STRATEGIES: dict[type, tuple[str, dict[str, Field]]] = {
    Constant: ("S_CONSTANT", {"constant": slot("G_BASE")}),
    NoBackoff: ("S_NO_BACKOFF", {}),
    Expo: ("S_EXPO", {"base": slot("G_BASE"), "cap": slot("G_CAP")}),
    FullJitteredExpo: ("S_FULL_JITTER", {"base": slot("G_BASE"), "cap": slot("G_CAP")}),
    EqualJitteredExpo: ("S_EQUAL_JITTER", {"base": slot("G_BASE"), "cap": slot("G_CAP")}),
}
_LIMITS = ("max_attempts", "max_elapsed")  # the strategy's own limits (``ChainSpec.ordered``)
# A retry sent only with a probability (``Strategy.retry_probability``): drawn by the reference
# models alone, so no kernel honours it.
_SOMETIMES = ("retry_probability",)

# ``sim.kernels.pool_open``: open arrivals against a PoolServer (``sim.models.open_clients``,
# ``sim.models.pool``), a plain strategy with its own limits, outages with an unbounded accept
# queue, incidents of every kind.
POOL_OPEN_TABLE: dict[type, Transcribed] = {
    SimulationSpec: Transcribed({
        **_SPEC_FIELDS,
        "backlog": read("inert: the accept queue holds every arrival", _unbounded_while_stopped),
        "backlog_overflow": read("inert: the accept queue holds every arrival", _unbounded_while_stopped),
        "time_unit": read("labels (the accept queue's SYN gaps: none here)"),
        "incidents": read(BUILT, _whole_slots),
    }, _SPEC_NOT_HONOURED),
    ChainSpec: Transcribed({"strategy": read(BUILT, _has_strategy)}, ("policies", "hedging")),
    PoolServer: Transcribed({
        "workers": slot("C_WORKERS"),
        "service_time": slot("G_SERVICE", none=0.0),
        "service_distribution": read(BUILT), "service_p99": read(BUILT), "service_file": read(BUILT),
        "queue_size": slot("C_QUEUE_SIZE", none=-1),
        "queue_timeout": optional("C_HAS_QUEUE_TIMEOUT", "G_QUEUE_TIMEOUT"),
        # Read only by CoDel and adaptive LIFO, neither of which is here.
        "codel_interval": read("inert without CoDel under FIFO",
                               lambda pool: pool.codel_target is None and pool.discipline == "fifo"),
    }, ("discipline", "codel_target", "cancel", "concurrency_limit", "factor", "k", "slowdown_above",
        "load_curve_file", "controlled_delay")),
    Open: Transcribed({"think_time": read(BUILT)}, ("rate_profile",)),  # drawn by the reference alone
    Outage: _OUTAGE,
    Incident: Transcribed({name: read(BUILT) for name in ("start", "duration", "capacity", "slowdown",
                                                          "error_rate")}, ("ramp",)),  # the reference's steps
    **{cls: Transcribed({"max_attempts": slot("C_MAX_ATTEMPTS", none=0),
                         "max_elapsed": optional("C_HAS_MAX_ELAPSED", "G_MAX_ELAPSED"), **params},
                        _SOMETIMES, strategy_code(code))
       for cls, (code, params) in _PLAIN_STRATEGIES.items()},
}

# ``sim.kernels.latency_closed``: study 003's model, closed-loop Poisson clients against a
# LatencyServer under its "current" rule, a strategy without limits alone or after one
# RetryBudget, outages (and incidents of capacity 0) with any accept queue.
LATENCY_CLOSED_TABLE: dict[type, Transcribed] = {
    SimulationSpec: Transcribed({
        **_SPEC_FIELDS,
        "backlog": slot("C_BACKLOG", none=-1),
        "backlog_overflow": read(BUILT), "time_unit": read(BUILT),  # the SYN retries' gaps
    }, _SPEC_NOT_HONOURED),
    ChainSpec: Transcribed({"strategy": read(BUILT, _has_strategy),
                            "policies": read(BY_CLASS, lambda chain: len(chain.policies) == 1)},
                           ("hedging",)),  # hedged copies: sim.models.fleet, the reference engine only
    LatencyServer: Transcribed({
        "base_latency": slot("G_LATENCY"), "concurrency_limit": slot("G_LIMIT"),
        "factor": Field(lambda slots, factor: slots.put("G_LOG_FACTOR", math.log(factor))),  # as ``law``
        "k": slot("G_K"), "check_interval": slot("G_INTERVAL"),
    }, ("latency_rule",)),
    Poisson: Transcribed({"think_time": read(BUILT), "surge_start": read(BY_CLASS),
                          "surge_duration": read(BY_CLASS), "surge_factor": read(BY_CLASS)}, (), _surge),
    Outage: _OUTAGE,
    # An incident of capacity 0 is an outage (``SimulationSpec.stops``); no other is transcribed.
    Incident: Transcribed({"start": read(BUILT), "duration": read(BUILT),
                           "capacity": read(BUILT, lambda incident: incident.capacity == 0)},
                          ("slowdown", "error_rate", "ramp")),
    RetryBudget: Transcribed({
        "scope": equals("C_BUDGET_SHARED", "shared"),
        "deposit": equals("C_BUDGET_AT_SUCCESS", "success"),
        "max_retries_per_request": optional("C_BUDGET_HAS_CAP", "G_BUDGET_CAP"),
        **{name: read(BY_CLASS) for name in ("percent", "min_retries_per_s", "ttl", "unit_seconds")},
    }, (), _budget),
    **{cls: Transcribed(params, _LIMITS + _SOMETIMES, strategy_code(code))
       for cls, (code, params) in _PLAIN_STRATEGIES.items()},
    NormalJitterExpo: Transcribed({"min_delay": slot("G_BASE"), "max_delay": slot("G_CAP"),
                                   "factor": slot("G_FACTOR"), "jitter": slot("G_JITTER")},
                                  _LIMITS + _SOMETIMES, strategy_code("S_NORMAL_JITTER")),
    ThinkTimeExpo: Transcribed({"max_delay": slot("G_CAP"), "factor": slot("G_FACTOR"),
                                "jitter": slot("G_JITTER")}, _LIMITS + _SOMETIMES, strategy_code("S_THINK_TIME")),
}

# ``sim.kernels.contention``: the sample's model, clients that make one call each (a burst or a
# spike) against a contention control (a lock, OCC write-only or read-then-write, throttling),
# a plain strategy with its own limits (``max_attempts``, ``max_elapsed``) and at most one policy
# (a TokenBucket, a GrpcThrottle, a RetryQuota, a RetryBudget), outages (and incidents of
# capacity 0) with an unbounded accept queue; no tier or fleet. Such a server keeps no series
# and sends no reply: the keys of the horizon, the series and timeouts mean nothing to its runs
# (``Clients`` without replies reads none of them), nor does what a quota charges after a timeout.
_WRITES = {"write_mu": read(BUILT), "write_sigma": read(BUILT)}
INERT = "inert: a contention control keeps no series and sends no reply"
# The accept queue while a contention control is stopped: a config gives none (``backlog`` is a
# replying server's key, ``config._parse_backlog``), so it holds every arrival; a spec made with
# one (its SYNs retransmitted beyond it) takes the reference.
NEVER_FULL = "inert: the accept queue holds every arrival"
CONTENTION_TABLE: dict[type, Transcribed] = {
    SimulationSpec: Transcribed({
        **_SPEC_FIELDS,
        "horizon": read(INERT), "bucket": read(INERT), "timeout": read(INERT),
        # Its clients never stop waiting (``OutageGate.still_waiting`` unset): every held
        # arrival is served at the resume.
        "abandoned": read("inert: a contention control's clients never stop waiting"),
        "backlog": read(NEVER_FULL, _unbounded_while_stopped),
        "backlog_overflow": read(NEVER_FULL, _unbounded_while_stopped),
        "time_unit": read("labels (the accept queue's SYN gaps: none, it has no bound)"),
    }, _SPEC_NOT_HONOURED),
    Outage: _OUTAGE,
    # An incident of capacity 0 is an outage (``SimulationSpec.stops``); a contention control
    # has no other (``Control.incident_problem``).
    Incident: Transcribed({"start": read(BUILT), "duration": read(BUILT),
                           "capacity": read(BUILT, lambda incident: incident.capacity == 0)},
                          ("slowdown", "error_rate", "ramp")),
    ChainSpec: Transcribed({"strategy": read(BUILT, _has_strategy), "policies": read(BY_CLASS, _one_policy)},
                           ("hedging",)),  # hedged copies: sim.models.fleet, the reference engine only
    TokenBucket: Transcribed({
        "capacity": slot("G_TOKENS"), "refill": slot("G_REFILL"), "cost": slot("G_COST"),
        "refill_on": equals("C_REFILL_ON_SUCCESS", "success"), "strict": slot("C_STRICT"),
        "scope": equals("C_POLICY_SHARED", "shared"),
    }, (), policy_code("P_TOKEN_BUCKET")),
    GrpcThrottle: Transcribed({
        "max_tokens": slot("G_TOKENS"), "token_ratio": slot("G_REFILL"),
        "scope": equals("C_POLICY_SHARED", "shared"),
    }, (), _throttle),
    RetryQuota: Transcribed({
        "capacity": slot("G_TOKENS"), "retry_cost": slot("C_RETRY_COST"), "success_refund": slot("C_REFUND"),
        "throttle_cost": read(BY_CLASS), "timeout_cost": read(INERT),
        "scope": equals("C_POLICY_SHARED", "shared"),
    }, (), _quota),
    # Finagle's budget as the latency kernel transcribes it (its slots at the same indices).
    RetryBudget: Transcribed(LATENCY_CLOSED_TABLE[RetryBudget].fields, (), _contention_budget),
    LockingServer: Transcribed(_WRITES),
    WriteOnlyOCCServer: Transcribed(_WRITES),
    ReadWriteOCCServer: Transcribed(_WRITES),
    ThrottlingServer: Transcribed({"window": slot("G_WINDOW"), "limit": slot("C_LIMIT")}),
    Burst: Transcribed({}),
    Spike: Transcribed({name: read(BUILT) for name in ("spike_fraction", "spike_width", "arrival_window")}),
    **{cls: Transcribed({"max_attempts": slot("C_MAX_ATTEMPTS", none=0),
                         "max_elapsed": optional("C_HAS_MAX_ELAPSED", "G_MAX_ELAPSED"), **params},
                        _SOMETIMES, strategy_code(code))
       for cls, (code, params) in _PLAIN_STRATEGIES.items()},
}

# Every kernel's table, in the order a run is offered to them.
TABLES: dict[str, dict[type, Transcribed]] = {POOL_OPEN: POOL_OPEN_TABLE, LATENCY_CLOSED: LATENCY_CLOSED_TABLE,
                                              CONTENTION: CONTENTION_TABLE}

_REQUIRED = object()  # a field without a default: any value of it must be declared


@cache
def _plan(kernel: str, cls: type) -> tuple[tuple[str, Any, Field | None], ...]:
    """Each dataclass field of ``cls``, its default (``_REQUIRED`` for none) and its
    declaration in ``kernel``'s table (None: not honoured)."""
    declared = TABLES[kernel][cls].fields
    out = []
    for f in fields(cls):
        default = (f.default if f.default is not MISSING else f.default_factory()
                   if f.default_factory is not MISSING else _REQUIRED)
        out.append((f.name, default, declared.get(f.name)))
    return tuple(out)


def _objects(value: Any) -> list[Any]:
    """The model objects a field's value holds: a dataclass instance, or those of a tuple."""
    if isinstance(value, (tuple, list)):
        return [item for item in value if is_dataclass(item) and not isinstance(item, type)]
    if is_dataclass(value) and not isinstance(value, type):
        return [value]
    return []


def _visit(kernel: str, spec: SimulationSpec, chain: ChainSpec, slots: Slots | None) -> bool:
    """Whether ``kernel`` honours every object of the run (its class in the kernel's table) and
    every field of each that differs from its default; with ``slots``, packing them on the way."""
    table = TABLES[kernel]
    # The objects that most often refuse a run, first (the walk below checks them again): the
    # choice costs a sweep of small runs of another server ~1 us a run instead of ~15.
    if type(spec.control) not in table or type(chain.strategy) not in table or type(spec.workload) not in table:
        return False
    stack: list[Any] = [spec, chain]  # the chain first: its policies refuse most runs a kernel does not take
    while stack:
        obj = stack.pop()
        cls = type(obj)
        if cls not in table:
            return False
        for name, default, field in _plan(kernel, cls):
            value = getattr(obj, name)
            if default is _REQUIRED or value != default:
                if field is None or (field.when is not None and not field.when(obj)):
                    return False
            elif field is None:  # undeclared at its default: whatever it holds must be transcribed
                field = _AT_DEFAULT
            if field.walked and value is not None and not isinstance(value, (int, float, str)):
                found = _objects(value)
                for item in found:  # refused at once: the rest of the run need not be looked at
                    if type(item) not in table:
                        return False
                stack.extend(found)
            if slots is not None and field.pack is not None:
                field.pack(slots, value)
        pack = table[cls].pack
        if slots is not None and pack is not None:
            pack(slots, obj)
    return True


_AT_DEFAULT = Field()  # an undeclared field at its default: nothing packed, its objects walked


# Verdicts of ``honours`` by kernel and the run's (frozen) objects, the spec and its chain's
# strategy, policies and hedging (a strategy entry makes a new ChainSpec of them at each ask): a sweep
# asks for every run of an entry (thousands of runs of ~0.3 ms each for the sample, of which a
# walk was a third). Each holds its objects (so their ids stay theirs) and the ``_plan`` cache
# it was walked with: the tables are fixed while ``_plan`` caches them (a test that changes a
# table starts a fresh ``_plan``, and so fresh verdicts).
_verdicts: dict[tuple[str, int, int, int, int], tuple[tuple[Any, ...], bool]] = {}
_VERDICTS_KEPT = 1024


def run_objects(spec: SimulationSpec, chain: ChainSpec) -> tuple[Any, ...]:
    """What makes a run's model, by identity: its spec, its chain's strategy, policies and
    hedging (two entries that differ only in hedging are two runs)."""
    return spec, chain.strategy, chain.policies, chain.hedging


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return all(x is y for x, y in zip(a, b))


def honours(kernel: str, spec: SimulationSpec, chain: ChainSpec) -> bool:
    """Whether ``kernel`` honours every object and non-default field of this run (above)."""
    objects = (*run_objects(spec, chain), _plan)
    key = (kernel, *map(id, objects[:4]))
    kept = _verdicts.get(key)
    if kept is not None and _same(kept[0], objects):
        return kept[1]
    verdict = _visit(kernel, spec, chain, None)
    if len(_verdicts) >= _VERDICTS_KEPT:
        _verdicts.clear()
    _verdicts[key] = (objects, verdict)
    return verdict


def pack(kernel: str, spec: SimulationSpec, chain: ChainSpec, codes: ModuleType) -> Slots:
    """The configuration of a run of ``kernel`` (its module ``codes``), packed from the
    declarations: every declared field's slots, every class's own."""
    slots = Slots(codes)
    if not _visit(kernel, spec, chain, slots):
        raise ValueError(f"the {kernel} kernel does not honour this run ({spec.title!r}): run it by the reference")
    return slots
