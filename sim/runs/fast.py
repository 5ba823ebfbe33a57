"""The compiled fast path: which runs it takes (``kernel_fits``), and running them by the kernel.

The engine asks ``kernel_fits`` before each run; a run the kernel expresses, and large enough, (open arrivals, a
PoolServer with FIFO, ``queue_size``, ``queue_timeout``, a strategy with its own limits
(``max_attempts``, ``max_elapsed``) and no other policy, outages with an
unbounded accept queue, incidents; no tier, other policy, CoDel, limiter, cancellation or load
curve) goes to ``sim.kernels.pool_open`` when
numba is installed and ``BACKOFF_SIM_PURE`` is not set; every other run takes the reference
models. The kernel's results are the reference's, byte for byte (tests/test_fast_path.py).
This module imports neither numba nor the kernel; the engine does when a run takes it
(``engine.kernel_metrics``, ``engine.kernel_record``, over ``sim.runs.fast_run``).
"""

from __future__ import annotations

from sim.kernels import jit
from sim.models.pool import PoolServer
from sim.models.strategies import Constant, EqualJitteredExpo, Expo, FullJitteredExpo, NoBackoff
from sim.models.workloads import Open
from sim.policies.chain import ChainSpec
from sim.runs.resources import expected_events
from sim.spec import SimulationSpec

# A run expected to record fewer events takes the reference engine: it is over in about the
# time a fresh process takes to load the compiled kernel (numba's import and its cache: ~1.5 s
# on an idle 2-core machine, the reference's time for ~0.5 M events).
MIN_EVENTS = 500_000
# The plain strategies the kernel draws delays for (``pool_open.backoff``).
STRATEGIES = (Constant, NoBackoff, Expo, FullJitteredExpo, EqualJitteredExpo)


def kernel_expresses(spec: SimulationSpec, chain: ChainSpec) -> bool:
    """True when ``sim.kernels.pool_open`` runs exactly this model (see the module docstring)."""
    control, strategy = spec.control, chain.strategy
    return (type(control) is PoolServer and type(spec.workload) is Open and not chain.policies
            and type(strategy) in STRATEGIES and (not spec.stops or spec.backlog is None)
            and not spec.tiers and control.discipline == "fifo" and control.cancel == "none"
            and control.codel_target is None and control.concurrency_limit is None
            and control.load_multiplier() is None)


def kernel_fits(spec: SimulationSpec, chain: ChainSpec, clients: int) -> bool:
    """True when the engine should run this with the compiled kernel: numba is installed, not
    switched off, the kernel expresses the run, and the run is large enough to pay for loading
    the kernel (``MIN_EVENTS``)."""
    return (jit.COMPILED and not jit.pure_requested() and kernel_expresses(spec, chain)
            and expected_events(spec, clients) >= MIN_EVENTS)
