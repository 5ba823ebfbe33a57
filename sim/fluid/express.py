"""Which (cell, strategy) pairs the fluid model can express, and their parameters.

``fluid_case(spec, s)`` gives a ``FluidCase`` or a reason string: one line saying what has no
fluid form (a server kind, a workload, a policy, a key), so ``explore --method fluid`` can say
so and simulate that cell instead. What is expressed, and how:

- servers that reply: ``LatencyServer`` (``latency_rule = "current"``: the study's rule, whose
  oldest-first completions are exactly a first-in-first-out front in the model), ``QueueServer``
  (slots, a bounded queue, rejections, the overload threshold) and ``PoolServer`` (workers, a
  FIFO queue, constant, exponential or lognormal service: its mean);
- ``poisson`` (closed: clients think, call, wait; surges) and ``open`` workloads;
- a client timeout (required: without one a collapsed server never returns a call);
- outages (held arrivals, ``abandoned`` serve or drop; no ``backlog`` bound) and capacity and
  slowdown incidents;
- every strategy (its delays are sampled: ``sim.fluid.delays``) with ``max_attempts`` and
  ``max_elapsed``; the ``RetryBudget`` policy (deposits on requests or on successes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.models.incidents import Incident
from sim.models.workloads import Outage
from sim.policies.retry_budget import RetryBudget
from sim.settings.spec import SimulationSpec, StrategySpec

MAX_STEPS = 40_000  # model steps per run at most: the step grows on longer horizons


@dataclass(frozen=True)
class Budget:
    """A RetryBudget in the model's terms: retries allowed over the last ``window`` steps are
    ``reserve`` + ``fraction`` × the deposits (calls, or successes) of that window."""

    reserve: float
    fraction: float
    window: int
    on_success: bool


@dataclass(frozen=True)
class FluidCase:
    """One (cell, strategy) as the model runs it. Times are in the simulation's unit."""

    kind: str  # "latency" or "slots"
    step: float
    steps: int
    clients: int
    closed: bool
    think_time: float
    surge: tuple[float, float, float] | None
    timeout: float
    network: float  # one network leg, on average
    stops: tuple[Outage, ...]
    abandoned: str
    degradations: tuple[Incident, ...]
    disruptions: tuple[Outage, ...]
    bucket: float
    horizon: float
    strategy: StrategySpec
    seed: int
    budget: Budget | None
    # latency server
    base_latency: float = 0.0
    limit: float = 0.0
    growth: float = 0.0  # ln(factor) / k: latency grows by e^growth per request above the limit
    # slots server
    slots: int = 0
    service_time: float = 0.0  # mean
    queue_size: float = math.inf
    reject_delay: float = 0.0
    overload_threshold: int = 0
    work_to_duration: float = 0.0


def _budget(policy: RetryBudget, clients: int, step: float) -> Budget:
    seconds = policy.ttl * policy.unit_seconds
    per_state = policy.min_retries_per_s * math.floor(seconds)  # Finagle's reserve, whole seconds
    states = 1 if policy.scope == "shared" else clients  # a budget per client: their sum
    return Budget(per_state * states, policy.percent / 100.0, max(1, round(policy.ttl / step)),
                  policy.deposit == "success")


def fluid_case(spec: SimulationSpec, s: int) -> FluidCase | str:
    """The fluid form of strategy ``s`` of a one-client-count spec, or why there is none."""
    from sim.models.pool import PoolServer
    from sim.models.servers import LatencyServer, QueueServer
    from sim.vocabulary.bounds import MAX_TIME
    from sim.models.service_times import lognormal_mean

    control, workload, entry = spec.control, spec.workload, spec.strategies[s]
    if spec.timeout is None:
        return "no client timeout (the fluid model needs one)"
    if spec.horizon is None:
        return "no horizon"
    if workload.NAME not in ("poisson", "open"):
        return f"workload {workload.NAME!r} (fluid: poisson or open)"
    if spec.backlog is not None:
        return "a backlog bound during outages"
    if any(i.kind == "error_rate" for i in spec.degradations):
        return "an error_rate incident"
    if getattr(entry.strategy, "FROM_THINK_TIME", False):
        return f"strategy {entry.strategy.type_name} (its backoff starts from each think time)"
    if getattr(entry.strategy, "retry_probability", None) is not None:
        return "retry_probability"
    budget = None
    for policy in entry.policies:
        if not isinstance(policy, RetryBudget) or budget is not None:
            return f"policy {type(policy).__name__} (fluid: one RetryBudget)"
        if policy.max_retries_per_request is not None:
            return "RetryBudget's max_retries_per_request"
        budget = policy
    surge = getattr(workload, "surge", None)
    if surge is not None and workload.NAME == "open":
        return "an open workload's surge (fluid: a closed one's)"
    common = dict(clients=spec.clients[0], closed=workload.NAME == "poisson",
                  think_time=float(workload.think_time), surge=surge, timeout=float(spec.timeout),
                  network=max(0.0, float(spec.network_mu)), stops=spec.stops, abandoned=spec.abandoned,
                  degradations=spec.degradations, disruptions=spec.disruptions,
                  bucket=spec.bucket_width, horizon=float(spec.horizon), strategy=entry, seed=spec.seed,
                  work_to_duration=float(spec.work_to_duration))
    if isinstance(control, LatencyServer):
        if control.latency_rule != "current":
            return 'LatencyServer latency_rule = "at_start"'
        step = float(control.check_interval)  # the server's own grid of checks
        steps = math.ceil(spec.horizon / step)
        if steps > MAX_STEPS:
            return f"a horizon of {steps:,} check intervals (fluid: at most {MAX_STEPS:,})"
        return FluidCase(kind="latency", step=step, steps=steps,
                         budget=_budget(budget, spec.clients[0], step) if budget else None,
                         base_latency=float(control.base_latency), limit=float(control.concurrency_limit),
                         growth=math.log(control.factor) / control.k, **common)
    if isinstance(control, QueueServer):
        slots, mean, queue = control.concurrency, float(control.service_time), float(control.queue_size)
        reject, threshold = float(control.reject_delay), int(control.overload_threshold)
    elif isinstance(control, PoolServer):
        for key in ("queue_timeout", "codel_target", "concurrency_limit", "controlled_delay", "factor",
                    "load_curve_file"):
            if getattr(control, key) is not None:
                return f"PoolServer {key}"
        if control.discipline != "fifo" or control.cancel != "none":
            return f"PoolServer discipline {control.discipline!r}, cancel {control.cancel!r} (fluid: fifo, none)"
        dist = control.service_distribution
        if dist in ("constant", "exponential"):
            mean = float(control.service_time)
        elif dist == "lognormal":  # service_time is the median: mean = median · e^(sigma²/2)
            mean = lognormal_mean(float(control.service_time), float(control.service_p99))
            if not mean <= MAX_TIME:
                return (f"PoolServer's lognormal service time has a mean of {mean:g}, beyond {MAX_TIME:g} "
                        "(its p99 / median is too large for the fluid model)")
        else:
            return f"PoolServer service_distribution {dist!r}"
        slots, queue = int(control.workers), math.inf if control.queue_size is None else float(control.queue_size)
        reject, threshold = 0.0, 0
    else:
        return f"server {type(control).__name__} (fluid: LatencyServer, QueueServer, PoolServer)"
    # A step of at most the service time (work in service is resolved within a service) and a
    # 40th of the timeout (a deadline to 2.5% of it); longer horizons take longer steps (MAX_STEPS).
    step = max(min(mean, spec.timeout / 40.0), spec.horizon / MAX_STEPS)
    return FluidCase(kind="slots", step=step, steps=math.ceil(spec.horizon / step),
                     budget=_budget(budget, spec.clients[0], step) if budget else None,
                     slots=slots, service_time=mean, queue_size=queue, reject_delay=reject,
                     overload_threshold=threshold, **common)
