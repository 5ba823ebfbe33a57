"""The compiled fast paths: which runs they take (``kernel_fits``), and which kernel runs each.

Three kernels (``sim.kernels``), each a handler-by-handler transcription of the reference models
for one hot case, byte-identical to the reference engine (tests/test_fast_path.py,
tests/test_fast_latency.py, tests/test_fast_contention.py):

- ``pool_open``: open arrivals against a PoolServer with FIFO, ``queue_size``, ``queue_timeout``,
  a strategy with its own limits (``max_attempts``, ``max_elapsed``) and no other policy, outages
  with an unbounded accept queue, incidents; no tier, other policy, CoDel, limiter, cancellation
  or load curve;
- ``latency_closed``: study 003's model, closed-loop Poisson clients (a surge too) against a
  LatencyServer under its ``"current"`` rule, client timeouts, a strategy without limits
  (NormalJitterExpo and ThinkTimeExpo among them) alone or after a RetryBudget (Finagle's, any
  scope and deposit), outages with any accept queue (SYN retries too); no incident, tier or
  other policy;
- ``contention``: the sample's model, clients that make one call each (a burst or a spike)
  against a LockingServer, an OCC server or a ThrottlingServer, a plain strategy with its own
  limits and at most one policy (TokenBucket, GrpcThrottle, RetryQuota, RetryBudget), outages
  with an unbounded accept queue; no tier, fleet or other policy.

Which runs a kernel takes is declared, class by class and field by field, in
``sim.runs.kernel_boundary``: a run goes to a kernel only if the kernel honours every object in
it and every field that differs from its default (so a new field of a model takes the reference
until the kernel transcribes it); the same declarations pack the kernel's configuration.

The engine asks ``kernel_fits`` before each run: a run a kernel expresses goes to it when numba
is installed, ``BACKOFF_SIM_PURE`` is not set, and the run is large enough to pay for loading
the kernel, or the kernels are loaded in this process already (``warm_up``: each worker of a
sweep whose runs are worth it loads them as it starts). Every other run takes the reference
models. This module imports neither numba nor the kernels; the engine does when a run takes one
(``engine.kernel_metrics``, ``engine.kernel_record``, over ``run_class``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence

from sim.kernels import ahead, jit
from sim.policies.chain import ChainSpec
from sim.runs.kernel_boundary import CONTENTION, LATENCY_CLOSED, POOL_OPEN, TABLES, honours
from sim.runs.resources import expected_events
from sim.settings.spec import SimulationSpec

__all__ = ["BUILT_MIN_EVENTS", "CONTENTION", "LATENCY_CLOSED", "MIN_EVENTS", "POOL_OPEN", "available",
           "kernel_expresses", "kernel_fits", "kernel_name", "kernel_of_control", "kernels_of", "load_events",
           "min_events", "run_class", "use_built_kernels", "warm_up", "worth_warming"]

# A run expected to record fewer events takes the reference engine: it is over in about the
# time a fresh process takes to load the compiled kernels (numba's import, 0.4 s, and its cache,
# 0.8 s, on this 2-core machine: the reference's time for ~0.5-1 M events), unless the kernels are
# loaded in this process already (``warm_up``: a sweep's workers, whose runs share the cost).
MIN_EVENTS = 500_000
# The same for a kernel built ahead of time (``sim.kernels.ahead.ready``): its module and its
# run's import load in ~10 ms, the reference's time for ~2,500 expected events (the sample,
# 630,000 expected events, takes it 2.5 s besides start and files on one worker, ~250,000 a
# second); twice that, so that a run about even takes the reference.
BUILT_MIN_EVENTS = 5_000
# The classes that drive a run of each kernel (``sim.runs.kernel_boundary.TABLES``' keys).
_RUNS = {POOL_OPEN: "sim.runs.fast_run:PoolOpenRun", LATENCY_CLOSED: "sim.runs.fast_latency:LatencyClosedRun",
         CONTENTION: "sim.runs.fast_contention:ContentionRun"}
_warm = False  # every kernel is loaded in this process (``warm_up``)
_loaded: set[str] = set()  # the kernels loaded in this process (``warm_up`` of some)


def kernel_name(spec: SimulationSpec, chain: ChainSpec) -> str | None:
    """The kernel that honours every object and non-default field of this run (its declared
    boundary, ``sim.runs.kernel_boundary``), or None: the reference engine runs it."""
    for name in TABLES:
        if honours(name, spec, chain):
            return name
    return None


def kernel_of_control(spec: SimulationSpec) -> str | None:
    """The one kernel whose table holds the run's server class (the tables share none), which
    is the kernel that runs it once ``kernel_name`` (or ``kernel_fits``) found one does: its
    run's ``kernel_boundary.pack`` checks the whole run again as it packs it."""
    for name, table in TABLES.items():
        if type(spec.control) in table:
            return name
    return None


def kernel_expresses(spec: SimulationSpec, chain: ChainSpec) -> bool:
    """True when a kernel runs exactly this model (``kernel_name``)."""
    return kernel_name(spec, chain) is not None


def available() -> bool:
    """numba is installed and the compiled fast paths are not switched off."""
    return jit.available()


def use_built_kernels() -> None:
    """Take the kernels built ahead of time in this process (``sim.kernels.ahead``): for the
    headless commands, before any kernel is imported; not the app's, whose threads run them."""
    ahead.enable()


def kernel_fits(spec: SimulationSpec, chain: ChainSpec, clients: int) -> bool:
    """True when the engine should run this with a compiled kernel: numba is installed, not
    switched off, a kernel expresses the run, and the run is large enough to pay for loading
    the kernel (``min_events``) or the kernels are loaded already (``warm_up``)."""
    if not available():
        return False
    name = kernel_name(spec, chain)
    return name is not None and (_warm or name in _loaded or expected_events(spec, clients) >= min_events(name))


def min_events(name: str) -> int:
    """The events a run must be expected to record to pay for loading kernel ``name`` in this
    process: ``BUILT_MIN_EVENTS`` where it is built ahead of time, else ``MIN_EVENTS``."""
    return BUILT_MIN_EVENTS if ahead.ready(name) else MIN_EVENTS


def load_events(name: str, processes: int) -> int:
    """The events a sweep's runs of kernel ``name`` must be expected to record to pay for
    loading it in each of ``processes``: numba's jit loads in every process (also where a build
    failed within the day); a kernel built ahead of time loads in ~10 ms each. One not built
    yet is built once, by the first process that asks, while the others wait: 5-10 s on 2
    cores, as numba's first compilation took, paid once for every later command as that was;
    this sweep is charged numba's load for it, as it was for the first compilation."""
    processes = max(1, processes)
    if not ahead.enabled() or ahead.failed(name):
        return MIN_EVENTS * processes
    if ahead.ready(name):
        return BUILT_MIN_EVENTS * processes
    return MIN_EVENTS + BUILT_MIN_EVENTS * (processes - 1)


def run_class(name: str) -> type:
    """The class that builds and drives a run of kernel ``name`` (imports numba)."""
    module, _, attribute = _RUNS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def worth_warming(specs: Sequence[SimulationSpec], processes: int = 1) -> bool:
    """Whether a sweep of ``specs`` (every strategy at every client count and repetition) has
    enough events a kernel expresses to pay for loading the kernels once in each of its
    ``processes`` (``load_events`` of the dearest kernel they take: numba's import, most of a
    load, is paid once for all the kernels of a process, and a built module costs ~10 ms)."""
    if not available():
        return False
    names = kernels_of(specs)
    if not names:
        return False
    total, needed = 0.0, max(load_events(name, processes) for name in names)
    for spec in specs:
        chains = [s.chain for s in spec.strategies if kernel_expresses(spec, s.chain)]
        if chains:
            total += len(chains) * spec.repeat * sum(expected_events(spec, n) for n in spec.clients)
            if total >= needed:
                return True
    return False


def kernels_loaded_by_fork() -> bool:
    """Whether the workers a sweep starts now are forks of this process, so that kernels it
    loaded are loaded in them (``procpool``'s start method: fork when single-threaded)."""
    from sim.runs.procpool import default_context
    return default_context().get_start_method() == "fork"


def kernels_of(specs: Sequence[SimulationSpec]) -> tuple[str, ...]:
    """The kernels that some run of these simulations' sweeps takes (``kernel_name``)."""
    names: list[str] = []
    for spec in specs:
        for s in spec.strategies:
            name = kernel_name(spec, s.chain)
            if name is not None and name not in names:
                names.append(name)
    return tuple(names)


def warm_up(names: Iterable[str] | None = None) -> None:
    """Load the compiled kernels ``names`` (None: all of them) in this process (from numba's
    cache; compiled the first time), so that every run they express takes them from now on.
    Called where many runs follow: in each worker of a sweep's pool as it starts, or before a
    sweep in this process. Each kernel costs its own load (~0.2 s besides numba's import), so a
    sweep loads only those its runs take (``kernels_of``)."""
    global _warm
    if _warm or not available():
        return
    for name in (_RUNS if names is None else names):
        if name not in _loaded:
            run_class(name).warm_up()
            _loaded.add(name)
            jit.note_dispatched()
    _warm = _loaded >= set(_RUNS)
