"""One run by the compiled kernel ``sim.kernels.latency_closed``: its arrays, built as
``engine._build`` builds the reference's objects, and the room and draws the loop that drives it
(``fast_run.ArrayRun.drive``) gives it. Imported only when a run takes that fast path
(``sim.runs.fast``).
"""

from __future__ import annotations

import numpy as np

from sim.core.series import SERIES_NAMES, Series, extra_series
from sim.core.streams import PURPOSE_JITTER, PURPOSE_NETWORK, PURPOSE_WORKLOAD, clipped_normal, generator, uniform01
from sim.kernels import delays, heap
from sim.kernels import latency_closed as k
from sim.kernels.blocks import ClientBlocks
from sim.core import latency_sample
from sim.models.servers import LatencyServer
from sim.models.outage import AcceptQueue
from sim.models.strategies import NormalJitterExpo
from sim.models.workloads import Outage, Poisson
from sim.policies.chain import ChainSpec
from sim.policies.entries import seconds_per_unit
from sim.policies.retry_budget import SLICES, RetryBudget
from sim.runs import kernel_boundary
from sim.runs.counters import RunCounters
from sim.runs.fast_run import START, ArrayRun, grown
from sim.settings.spec import SimulationSpec


def jitter_draws(code: int, jitter: float) -> int:
    """Uniforms one backoff of the strategy of ``code`` (``sim.kernels.delays``; ``jitter``:
    its own, for those that draw a normal) draws at most: what the kernel needs in hand."""
    if code in (delays.S_NORMAL_JITTER, delays.S_THINK_TIME):  # a normal variate: two uniforms
        return 2 if jitter else 0
    return 1 if code in (delays.S_FULL_JITTER, delays.S_EQUAL_JITTER) else 0


class LatencyClosedRun(ArrayRun):
    """One run of ``sim.kernels.latency_closed``: its arrays, built as ``engine._build`` builds
    the reference's objects (the same streams, the same first items in the same order)."""

    codes = k

    def __init__(self, spec: SimulationSpec, chain: ChainSpec, clients: int, repetition: int,
                 record: bool, kernel=None) -> None:
        self.kernel = kernel or k.run
        control, workload = spec.control, spec.workload

        def rng(purpose: int) -> np.random.Generator:
            return generator(spec.seed, spec.title, clients, repetition, purpose)

        n = clients
        slots = kernel_boundary.pack(kernel_boundary.LATENCY_CLOSED, spec, chain, k)  # the model's own
        cfg_i, cfg_f = slots.i, slots.f
        draws = jitter_draws(int(cfg_i[k.C_STRATEGY]), float(cfg_f[k.G_JITTER]))
        self.net = ClientBlocks(rng(PURPOSE_NETWORK), n, clipped_normal(spec.network_mu, spec.network_sigma))
        self.jitter = ClientBlocks(rng(PURPOSE_JITTER), n, uniform01) if draws else None
        self.jitter_draws = draws
        stream = rng(PURPOSE_WORKLOAD)
        starts = workload.start_times(stream, n)
        self.gaps = ClientBlocks(stream, n, workload.gap_draw())
        self.series_spec = Series(spec.horizon, spec.bucket_width, extra_series(control.CAPS.series))
        assert self.series_spec.names == SERIES_NAMES  # the kernel's rows (R_*)
        buckets = self.series_spec.buckets
        # What the run adds: its outputs, what its draws and series are.
        cfg_i[k.C_JITTER_DRAWS] = draws
        cfg_i[k.C_LAST_BUCKET] = buckets - 1
        cfg_i[k.C_RECORD] = record
        cfg_i[k.C_LATENCY_SAMPLE] = latency_sample.LATENCY_SAMPLE  # the one rule's
        cfg_f[k.G_WIDTH] = self.series_spec.width
        cfg_f[k.G_INVERSE_WIDTH] = self.series_spec.inverse_width
        # One budget for all clients (scope = "shared"), or one each; one unused without a budget.
        budgets = n if cfg_i[k.C_BUDGET] and not cfg_i[k.C_BUDGET_SHARED] else 1
        self.b_buf = np.zeros((budgets, SLICES - 1), dtype=np.int64)
        self.b_state = np.zeros((budgets, 3), dtype=np.int64)  # writer, index, old: 0 at t = 0
        self.remaining = np.zeros(n, dtype=np.int64)
        self.cfg_i, self.cfg_f = cfg_i, cfg_f
        self.st_i = np.zeros(k.I_SIZE, dtype=np.int64)
        self.st_i[k.I_STRIDE] = 1
        self.st_f = np.zeros(k.F_SIZE, dtype=np.float64)
        self.hf = np.zeros(max(START, 2 * n + 8), dtype=np.float64)
        self.hi = np.zeros((self.hf.shape[0], 4), dtype=np.int64)
        self.fl_f = np.zeros(START, dtype=np.float64)
        self.fl_i = np.zeros((START, 2), dtype=np.int64)
        self.df = np.zeros(START, dtype=np.float64)
        self.di = np.zeros((START, 3), dtype=np.int64)
        self.held = np.zeros((START, 2), dtype=np.int64)
        self.token = np.zeros(n, dtype=np.int64)
        self.waiting = np.zeros(n, dtype=np.int64)
        self.active = np.zeros(n, dtype=np.int64)
        self.tries = np.zeros(n, dtype=np.int64)
        self.first = np.zeros(n, dtype=np.float64)
        self.bo = np.zeros(n, dtype=np.float64)
        self.attempts = np.zeros(n, dtype=np.int64)
        self.call_of = np.full(n, -1, dtype=np.int64)  # each client's current call id
        self.series = np.zeros((len(SERIES_NAMES), buckets + 1), dtype=np.int64)
        self._make_outputs(record)
        self._no_jitter = (np.zeros((n, 0), dtype=np.float64), np.zeros(n, dtype=np.int64))
        # Each client's last think time, its first start time at first (``Clients``).
        self.last_think = np.array(starts, dtype=np.float64).reshape(n)
        queue = AcceptQueue(spec.backlog, spec.backlog_overflow, spec.abandoned, seconds_per_unit(spec.time_unit))
        syn = queue.backlog is not None and queue.overflow == "syn-retry"  # C_BACKLOG: the bound
        self.syn_gaps = np.array(queue.syn_gaps if syn else (), dtype=np.float64)
        stops = spec.stops
        self.has_gate = bool(stops)
        self._push_first(stops, starts, spec.horizon)

    @classmethod
    def warm_up(cls) -> None:
        """Load the compiled kernel (``sim.runs.fast.warm_up``): a tiny run of two clients."""
        spec = SimulationSpec(title="warm-up", clients=(2,), repeat=1, network_mu=1.0, network_sigma=0.2,
                              work_to_duration=0.0, strategies=(), workload=Poisson(think_time=20.0),
                              control=LatencyServer(base_latency=10.0, concurrency_limit=1, factor=1.05, k=1.0),
                              horizon=200.0, timeout=30.0, outages=(Outage(start=50.0, duration=20.0),))
        budget = RetryBudget(percent=20, min_retries_per_s=10, ttl=10000)
        run = cls(spec, ChainSpec(NormalJitterExpo(min_delay=5.0, factor=2.0, max_delay=50.0), (budget,)), 2, 0,
                  record=True)
        run.drive(None, 1 << 40)

    def arguments(self) -> tuple:
        """The kernel's arguments, the draws held set in its state."""
        jitter_values, jitter_pos = ((self.jitter.values, self.jitter.pos) if self.jitter is not None
                                     else self._no_jitter)
        st = self.st_i
        st[k.I_NET_HAVE] = self.net.have
        st[k.I_JITTER_HAVE] = jitter_values.shape[1]
        st[k.I_GAP_HAVE] = self.gaps.have
        return (self.cfg_i, self.cfg_f, st, self.st_f, self.hf, self.hi, self.fl_f, self.fl_i, self.df,
                self.di, self.held, self.token, self.waiting, self.active, self.tries, self.first, self.bo,
                self.attempts, self.series, self.lat_v, self.lat_c, self.lat_t, self.net.values,
                self.net.pos, jitter_values, jitter_pos, self.gaps.values, self.gaps.pos, self.rec_t,
                self.rec_c, self.rec_p, self.b_buf, self.b_state, self.remaining, self.last_think,
                self.syn_gaps, self.call_of, self.rec_k)

    def _refill(self) -> None:
        for blocks, need in ((self.net, 1), (self.gaps, 1), (self.jitter, self.jitter_draws)):
            # A block more where some client holds fewer values than one event may draw (two
            # uniforms for NormalJitterExpo): drawn earlier than the reference, the same values.
            if blocks is not None and int(blocks.pos.max()) + need > blocks.have:
                blocks.refill()

    def _grow(self) -> None:
        st = self.st_i
        self._grow_ring("fl_f", "fl_i", k.I_FLIGHT_HEAD, k.I_FLIGHT)
        self._grow_ring("df", "di", k.I_DUE_HEAD, k.I_DUE)
        if st[k.I_HELD] + 2 > self.held.shape[0]:
            self.held = grown(self.held)
        while st[heap.I_HEAP] + st[k.I_FLIGHT] + st[k.I_HELD] + 8 > self.hf.shape[0]:
            self.hf, self.hi = grown(self.hf), grown(self.hi)
        self._grow_outputs()

    @property
    def events(self) -> int:
        """Recorded events: every seq taken, less the items the horizon cleared, the silent ones
        and the timeouts that never entered the heap (``Clients``' ``wiring.unscheduled``)."""
        st = self.st_i
        unscheduled = int(st[k.I_SKIPPED]) + max(int(st[k.I_DUE]) - 1, 0)
        return int(st[heap.I_SEQ] - st[k.I_DROPPED_AT_END] - st[k.I_SILENT]) - unscheduled

    def refused(self) -> int:
        return int(self.st_i[k.I_REFUSED])

    def _count(self, counters: RunCounters) -> None:
        counters.unfinished = int(self.active.sum())
        counters.retries_denied = int(self.st_i[k.I_DENIED])
