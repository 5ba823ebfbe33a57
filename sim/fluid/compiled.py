"""The fluid model's step loop compiled (``sim.kernels.fluid``): which batches take it, and the
numpy ``Batch``'s arrays packed for it.

The kernel transcribes ``Batch._run`` (every step's resume, send, admit, complete and settle,
then ``series_of``), for both kinds (``latency``, ``slots``), open and closed workloads,
surges, capacity and slowdown incidents, outages (held bins, ``abandoned`` serve or drop) and
RetryBudgets. Its arrays are the ``Batch``'s own, built by its ``__init__``, so the two paths
share every number computed before the loop.

What it takes is declared field by field (``HONOURED``): a batch goes to the kernel only if
every field of ``FluidCase`` is declared and each case's value is one the kernel honours, so a
new field takes the numpy loop until the kernel transcribes it. The kernel runs only where numba
is installed and ``BACKOFF_SIM_PURE`` is not set (``sim.kernels.jit.available``), and only for a
batch big enough to pay for loading it (``worth_compiling``), or once it is loaded.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields

import numpy as np

from sim.fluid.delays import PackedTables
from sim.fluid.express import FluidCase
from sim.fluid.model import Batch, Series
from sim.kernels import ahead, jit

# FluidCase's fields and the values the kernel honours (None: any value; every one reaches the
# kernel through the Batch's arrays or is read after the loop only).
HONOURED: dict[str, frozenset | None] = {
    "kind": frozenset({"latency", "slots"}), "abandoned": frozenset({"serve", "drop"}),
    **{name: None for name in (
        "step", "steps", "clients", "closed", "think_time", "surge", "timeout", "network", "stops",
        "degradations", "disruptions", "bucket", "horizon", "strategy", "seed", "budget",
        "base_latency", "limit", "growth", "slots", "service_time", "queue_size", "reject_delay",
        "overload_threshold", "work_to_duration")},
}
# Incident kinds the per-step arrays hold (``model._per_step``): others would be ignored by both
# loops alike, but a kind the kernel was not checked against takes the numpy loop.
INCIDENT_KINDS = frozenset({"capacity", "slowdown"})

# When the kernel pays. Measured on this 2-core machine (load 3-4.5 from other work; the brief's
# idle figure for the 160-case map is 255 µs a step, these 1-1.6x that), 6000 steps of batches of
# 1 to 160 cases of bench/fluid_latency_map.toml and bench/fluid_pool_map.toml: the numpy loop
# costs about NUMPY_STEP + NUMPY_CASE_STEP × cases a step (89 µs a step for 1 case, 268-409 µs
# for 160), the compiled path about KERNEL_CASE_STEP a case and step with its packing and its
# ``series_of`` (0.31-0.55 µs then; since its helpers take no per-case arrays and it writes the
# series itself, 0.11-0.12 µs on one core, the 160-case map's batch in 0.11 s; 0.2 µs kept
# as the bound), once it is loaded. Loading it in a fresh process costs
# numba's import (0.16-0.35 s, NUMBA_IMPORT) and its first dispatch with the kernel's cache
# (0.35-0.9 s, KERNEL_LOAD; numba's registries, scipy.linalg among them for its BLAS probe until
# ``jit`` kept that from importing scipy; since, on an idle machine, numba's import takes
# 0.31-0.37 s and its first dispatch 0.14-0.19 s, so these bounds are now cautious):
# the first fluid_runs of the 160-case map took 0.9-1.2 s longer than the second with the
# kernel, 0.02-0.4 s with numpy. Once another kernel ran in the process (``sim.runs.fast``'s
# ``warm_up``) only the kernel's own cache is left (0.03-0.04 s, KERNEL_CACHE); once it ran,
# nothing. So a fresh process takes the kernel from ~40 cases × 6000 steps on (numpy ~1 s
# there), and a process that has loaded it, for every batch.
NUMPY_STEP = 90e-6
NUMPY_CASE_STEP = 2.0e-6
KERNEL_CASE_STEP = 0.2e-6
NUMBA_IMPORT = 0.3
KERNEL_LOAD = 0.6
KERNEL_CACHE = 0.04
# Its module built ahead of time (``sim.kernels.ahead``, the headless commands'): importing it
# took 5-12 ms in a fresh process on this machine; numba is then never imported.
AHEAD_LOAD = 0.02
_loaded = False  # the kernel has run in this process (its load is paid)


def takes(cases: list[FluidCase]) -> bool:
    """True when the kernel honours every field of every case (``HONOURED``)."""
    if set(HONOURED) != {f.name for f in fields(FluidCase)}:
        return False
    for case in cases:
        for name, allowed in HONOURED.items():
            if allowed is not None and getattr(case, name) not in allowed:
                return False
        if any(inc.kind not in INCIDENT_KINDS for inc in case.degradations):
            return False
    return True


def load_seconds() -> float:
    """What loading the kernel still costs in this process (see ``KERNEL_LOAD``; built ahead of
    time, ``AHEAD_LOAD``)."""
    if _loaded:
        return 0.0
    if ahead.ready("fluid"):
        return AHEAD_LOAD
    if jit.dispatched():
        return KERNEL_CACHE
    return KERNEL_LOAD + (0.0 if "numba" in sys.modules else NUMBA_IMPORT)


def expected_seconds(cases: int, steps: int, load: float) -> tuple[float, float]:
    """(numpy loop, compiled path with ``load`` seconds still to load it): the estimates
    ``worth_compiling`` compares."""
    return steps * (NUMPY_STEP + NUMPY_CASE_STEP * cases), load + cases * steps * KERNEL_CASE_STEP


def worth_compiling(cases: list[FluidCase]) -> bool:
    """Whether this batch should take the kernel: numba available, the kernel honours it, and
    it is big enough to pay for what is still to load in this process."""
    if not cases or not jit.available() or not takes(cases):
        return False
    numpy_s, kernel_s = expected_seconds(len(cases), cases[0].steps, load_seconds())
    return kernel_s < numpy_s


def _orbit(bt: Batch) -> tuple[np.ndarray, ...]:
    """Each case's own orbit ring (the ring and levels of its table) and its table's points,
    the two passes of ``Batch.fail`` one after the other."""
    b = bt.b
    o_ring, o_levels = np.zeros(b, dtype=np.int64), np.zeros(b, dtype=np.int64)
    p_start, p_end = np.zeros(b, dtype=np.int64), np.zeros(b, dtype=np.int64)
    source, weight, offset, level = [], [], [], []
    used = 0
    for rows, _, ring, levels, _, passes, _, _ in bt.points:
        first = used
        for s, w, o, lv in passes:
            source.append(s)
            weight.append(w)
            offset.append(o)
            level.append(lv)
            used += s.size
        o_ring[rows], o_levels[rows], p_start[rows], p_end[rows] = ring, levels, first, used
    size = o_ring * o_levels
    o_base = np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64)

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    return (np.zeros(int(size.sum())), o_base, o_ring, o_levels, p_start, p_end,
            cat(source, np.int64), cat(weight, np.float64), cat(offset, np.int64), cat(level, np.int64))


def arguments(bt: Batch) -> tuple:
    """The kernel's arguments from a fresh ``Batch`` (its state arrays, written in place)."""
    out, b = bt.out, bt.b
    latency = bt.kind == "latency"
    resume_step = np.zeros(bt.steps + 1, dtype=np.bool_)
    resume_step[list(out.resumes)] = True
    none = np.zeros(b)
    if latency:
        base, growth, limit_cap = bt.base, bt.growth, bt.limit[:, None] * bt.capacity
        slots_cap, queue, service, threshold, slots = np.zeros((b, 1)), none, none, none, none
    else:
        base, growth, limit_cap = none, none, np.zeros((b, 1))
        slots_cap, queue, service = bt.slots[:, None] * bt.capacity, bt.queue, bt.service
        threshold, slots = bt.threshold, bt.slots
    serve = np.array([c.abandoned == "serve" for c in bt.cases])
    state = np.zeros((b, 3))
    state[:, 0] = bt.thinking
    return (latency, bt.h, bt.steps, bt.levels, bt.ring, resume_step, bt.closed_f, bt.open_calls,
            np.ascontiguousarray(bt.call_share), bt.timeout, bt.live_base, bt.reject_off, serve, base, growth,
            np.ascontiguousarray(limit_cap), np.ascontiguousarray(slots_cap), queue, service, threshold,
            bt.slowdown, bt.out.stopped, bt.capacity, slots, out.hs, out.he, out.end, out.count,
            bt.table.give_up, bt.table.elapsed, bt.has_budget, bt.reserve, bt.share, bt.success_f,
            bt.deposit_step, bt.withdraw_step, bt.budget_now, bt.window, *_orbit(bt),
            bt.mix, bt.admitted, bt.sent, bt.rejected, bt.calls, bt.aged, bt.success, bt.middle,
            state, np.zeros((b, 5)), np.zeros((b, 2)), bt.net, *(np.empty((b, bt.steps)) for _ in range(4)),
            np.zeros((b, 2)))


# The kernel's arguments that hold the whole batch's (a step's, the flat orbit and budget
# columns a case reaches through its own offsets, the points): every other one is per case,
# its first dimension the batch's cases.
SHARED_ARGUMENTS = frozenset({"latency", "h", "steps", "levels", "ring", "resume_step", "stops", "deposit_step",
                              "withdraw_step", "orbit", "p_source", "p_weight", "p_offset", "p_level"})
MIN_PART = 16  # cases a thread takes at least: fewer are over before a thread starts


def parts_for(kernel: Callable, cases: int, cores: int) -> int:
    """How many threads run a batch on ``cores``: numba's jit releases the interpreter's lock
    (``nogil``), so one a core; a module built ahead of time and the plain source hold it, so one."""
    if not hasattr(kernel, "signatures"):  # numba's dispatchers alone list their signatures
        return 1
    return max(1, min(cores, cases // MIN_PART))


def split(args: tuple, cases: int, parts: int) -> list[tuple]:
    """The kernel's arguments for ``parts`` runs over consecutive ranges of the cases: each
    per-case array's rows (views, C-contiguous as the whole), the shared ones whole. A case's
    numbers never depend on another's, so the parts write what the whole batch would."""
    from sim.kernels import fluid as k

    names = list(inspect.signature(jit.plain(k.run)).parameters)
    bounds = np.linspace(0, cases, parts + 1).round().astype(int).tolist()
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        part = []
        for name, value in zip(names, args, strict=True):
            if name in SHARED_ARGUMENTS:
                part.append(value)
            elif isinstance(value, np.ndarray) and value.shape[0] == cases:
                part.append(value[lo:hi])
            else:  # a batch-wide argument missing from SHARED_ARGUMENTS: slicing it would be wrong
                raise TypeError(f"the fluid kernel's argument {name!r} is not one row a case")
        out.append(tuple(part))
    return out


def _run_parts(kernel: Callable, args: tuple, cases: int, parts: int) -> list[int]:
    if parts <= 1:
        return [kernel(*args)]
    with ThreadPoolExecutor(parts, thread_name_prefix="fluid") as pool:
        return list(pool.map(lambda a: kernel(*a), split(args, cases, parts)))


def run_compiled(cases: list[FluidCase], table: PackedTables, kernel=None, parts: int | None = None,
                 cores: int = 1) -> Series | None:
    """The batch's Series by the kernel (``kernel``: another build of it, e.g. the plain
    Python one for the tests), or None when the kernel could not be sure of numpy's bits (its
    ``AMBIGUOUS``): the caller then runs the numpy loop. It runs in ``parts`` threads, by
    default as many as pay on ``cores`` (``parts_for``)."""
    global _loaded
    from sim.kernels import fluid as k

    bt = Batch(cases, table)
    args = arguments(bt)
    run = kernel or k.run
    statuses = _run_parts(run, args, bt.b, parts_for(run, bt.b, cores) if parts is None else parts)
    if kernel is None:
        _loaded = True
        jit.note_dispatched()
    if any(status != k.OK for status in statuses):
        return None
    state, totals, _, _, first, retried, first_latency, retried_latency, sums = args[-9:]
    bt.thinking, bt.done, bt.front = state[:, 0].copy(), state[:, 1].copy(), state[:, 2].astype(np.int64)
    series = bt.series
    for c, name in enumerate(k.TOTALS):
        series.totals[name] = totals[:, c].copy()
    series.totals["unfinished"] = np.where(bt.closed, bt.clients - bt.thinking, np.nan)
    series.totals["work"], series.totals["offered"] = sums[:, 0].copy(), sums[:, 1].copy()
    series.first, series.retried = first, retried
    series.first_latency, series.retried_latency = first_latency, retried_latency
    return series
