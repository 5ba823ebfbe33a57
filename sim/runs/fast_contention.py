"""One run by the compiled kernel ``sim.kernels.contention``: its arrays, built as
``engine._build`` builds the reference's objects (the clients' network and jitter streams, the
server's write durations, each client's first call at its start time), and the draws and room
the loop that drives it (``fast_run.ArrayRun.drive``) gives it. Imported only when a run takes
that fast path (``sim.runs.fast``).
"""

from __future__ import annotations

import numpy as np

from sim.core.streams import (PURPOSE_JITTER, PURPOSE_NETWORK, PURPOSE_SERVER, PURPOSE_WORKLOAD, clipped_normal,
                              folded_normal, generator, uniform01)
from sim.kernels import contention as k
from sim.kernels import delays, heap
from sim.kernels.blocks import ClientBlocks, SerialBlocks
from sim.models.controls import LockingServer, ReadWriteOCCServer, ThrottlingServer, WriteOnlyOCCServer
from sim.models.strategies import FullJitteredExpo
from sim.policies.chain import ChainSpec
from sim.policies.retry_budget import SLICES
from sim.runs import kernel_boundary
from sim.runs.counters import RunCounters
from sim.kernels.jit import plain
from sim.runs.fast_run import START, ArrayRun, grown
from sim.settings.spec import SimulationSpec

JITTERED = (delays.S_FULL_JITTER, delays.S_EQUAL_JITTER)
# Each control as the kernel's ``C_CONTROL``.
CONTROLS = {LockingServer: k.K_LOCKING, WriteOnlyOCCServer: k.K_WRITE_ONLY_OCC,
            ReadWriteOCCServer: k.K_READ_WRITE_OCC, ThrottlingServer: k.K_THROTTLING}


# The configuration last packed (``kernel_boundary.pack``), by the run's spec and chain: a
# sweep's runs of one strategy entry share them, and a run is over in well under a millisecond,
# of which a pack was a tenth. Which kernel takes a run is decided afresh for each
# (``fast.kernel_fits`` walks the whole run), so this only skips packing it again.
_last_packed: list[tuple[tuple, np.ndarray, np.ndarray]] = []


def _packed(spec: SimulationSpec, chain: ChainSpec) -> tuple[np.ndarray, np.ndarray]:
    """Copies of the run's packed configuration (integers, floats), packed once per run model
    (``kernel_boundary.run_objects``: its spec, strategy, policies and hedging)."""
    objects = kernel_boundary.run_objects(spec, chain)
    if not (_last_packed and all(a is b for a, b in zip(_last_packed[0][0], objects))):
        slots = kernel_boundary.pack(kernel_boundary.CONTENTION, spec, chain, k)
        _last_packed[:] = [(objects, slots.i, slots.f)]
    _, cfg_i, cfg_f = _last_packed[0]
    return cfg_i.copy(), cfg_f.copy()


class ContentionRun(ArrayRun):
    """One run of ``sim.kernels.contention``: its arrays, built as ``engine._build`` builds the
    reference's objects (the same streams, the same first items in the same order)."""

    codes = k
    has_gate = False

    def __init__(self, spec: SimulationSpec, chain: ChainSpec, clients: int, repetition: int,
                 record: bool, kernel=None) -> None:
        self.kernel = kernel or k.run
        control, workload = spec.control, spec.workload

        def rng(purpose: int) -> np.random.Generator:
            return generator(spec.seed, spec.title, clients, repetition, purpose)

        n = clients
        cfg_i, cfg_f = _packed(spec, chain)
        code = int(cfg_i[k.C_STRATEGY])
        self.net = ClientBlocks(rng(PURPOSE_NETWORK), n, clipped_normal(spec.network_mu, spec.network_sigma))
        self.jitter = ClientBlocks(rng(PURPOSE_JITTER), n, uniform01) if code in JITTERED else None
        writes = type(control) is not ThrottlingServer
        self.writes = SerialBlocks(rng(PURPOSE_SERVER) if writes else None,
                                   folded_normal(float(control.write_mu), float(control.write_sigma))
                                   if writes else None)
        # start_clients: the workload's stream only for a workload that draws (a spike's starts).
        starts = workload.start_times(rng(PURPOSE_WORKLOAD) if workload.DRAWS else None, n)
        cfg_i[k.C_CONTROL] = CONTROLS[type(control)]
        cfg_i[k.C_JITTER] = code in JITTERED
        cfg_i[k.C_RECORD] = record
        cfg_i[k.C_WRITES] = writes
        self.cfg_i, self.cfg_f = cfg_i, cfg_f
        self.st_i = np.zeros(k.I_SIZE, dtype=np.int64)
        self.st_f = np.zeros(k.F_SIZE, dtype=np.float64)
        # One item per client at a time (or held at the door while the server is stopped), a
        # throttling server's per acceptance in its window, and the outages' pauses and resumes.
        stops = spec.stops
        self.outages = np.array([[o.start, o.duration] for o in stops], dtype=np.float64).reshape(len(stops), 2)
        self.held = np.zeros((n, 3), dtype=np.int64)
        self.has_gate = bool(stops)
        room = n + (int(cfg_i[k.C_LIMIT]) if not writes else 0) + 2 * len(stops) + 8
        self.hf = np.zeros(room, dtype=np.float64)
        self.hi = np.zeros((room, 4), dtype=np.int64)
        self.bo = np.zeros(n, dtype=np.float64)
        self.attempts = np.zeros(n, dtype=np.int64)
        self.call_of = np.full(n, -1, dtype=np.int64)
        self.first = np.zeros(n, dtype=np.float64)  # each call's start (``max_elapsed``)
        # The policy's tokens (a bucket's, a throttle's, a quota's available), full at the start:
        # one for all clients (scope = "shared") or one each; and what each client's last retry
        # acquired from a quota.
        holders = 1 if cfg_i[k.C_POLICY_SHARED] else n
        self.tokens = np.full(holders, cfg_f[k.G_TOKENS], dtype=np.float64)
        self.last = np.zeros(n, dtype=np.int64)
        # A RetryBudget's windows (``sim.runs.fast_latency``'s): one for all clients or one each
        # (one unused without a budget), and each request's retries left under its cap.
        budgets = n if cfg_i[k.C_BUDGET] and not cfg_i[k.C_BUDGET_SHARED] else 1
        self.b_buf = np.zeros((budgets, SLICES - 1), dtype=np.int64)
        self.b_state = np.zeros((budgets, 3), dtype=np.int64)  # writer, index, old: 0 at t = 0
        self.remaining = np.zeros(n, dtype=np.int64)
        self._no_jitter = (np.zeros((n, 0), dtype=np.float64), np.zeros(n, dtype=np.int64))
        size = START if record else 1
        self.rec_t = np.zeros(size, dtype=np.float64)
        self.rec_c = np.zeros(size, dtype=np.int64)
        self.rec_p = np.zeros(size, dtype=np.int64)
        self.rec_k = np.zeros(size, dtype=np.int64)
        # The first blocks of every stream, which the first event would ask for at once.
        self._refill()
        # The outage gate's pauses and resumes first (``engine._build`` makes it before the
        # clients), outage i's taking seqs 2i and 2i + 1; then each client's first call, client
        # c's taking seq 2 * len(stops) + c. Those are written in (time, seq) order, which is a
        # heap, and pop as the pushes' would (the keys are unique); the markers pushed after them.
        marks = 2 * len(stops)
        order = np.lexsort((np.arange(n), np.asarray(starts, dtype=np.float64)))
        self.hf[:n] = np.asarray(starts, dtype=np.float64)[order]
        self.hi[:n, 0] = order + marks
        self.hi[:n, 2] = order
        self.hi[:n, 1] = k.H_CALL
        self.st_i[heap.I_HEAP] = n
        push_seq = plain(heap.push_seq)  # a few items: not worth a compiled variant per Python type
        for i, outage in enumerate(stops):
            push_seq(self.hf, self.hi, self.st_i, float(outage.start), 2 * i, k.H_PAUSE, -1, i)
            push_seq(self.hf, self.hi, self.st_i, float(outage.end), 2 * i + 1, k.H_RESUME, -1, i)
        self.st_i[k.I_MARKERS] = marks
        self.st_i[heap.I_SEQ] = n + marks

    @classmethod
    def warm_up(cls) -> None:
        """Load the compiled kernel (``sim.runs.fast.warm_up``): a tiny run of two clients."""
        spec = SimulationSpec(title="warm-up", clients=(2,), repeat=1, network_mu=1.0, network_sigma=0.2,
                              work_to_duration=0.0, strategies=(),
                              control=LockingServer(write_mu=1.0, write_sigma=0.5))
        run = cls(spec, ChainSpec(FullJitteredExpo(base=1.0, cap=10.0)), 2, 0, record=True)
        run.drive(None, 1 << 40)

    def arguments(self) -> tuple:
        """The kernel's arguments, the draws held set in its state."""
        jitter_values, jitter_pos = ((self.jitter.values, self.jitter.pos) if self.jitter is not None
                                     else self._no_jitter)
        st = self.st_i
        st[k.I_NET_HAVE] = self.net.have
        st[k.I_JITTER_HAVE] = jitter_values.shape[1]
        st[k.I_WRITE_HAVE] = self.writes.values.shape[0]
        return (self.cfg_i, self.cfg_f, st, self.st_f, self.hf, self.hi, self.bo, self.attempts, self.call_of,
                self.first, self.tokens, self.last, self.net.values, self.net.pos, jitter_values, jitter_pos,
                self.writes.values, self.rec_t, self.rec_c, self.rec_p, self.rec_k, self.outages, self.held,
                self.b_buf, self.b_state, self.remaining)

    def _refill(self) -> None:
        for blocks in (self.net, self.jitter):
            if blocks is not None and blocks.exhausted:
                blocks.refill()
        st = self.st_i
        if self.cfg_i[k.C_WRITES] and st[k.I_WRITE_POS] >= self.writes.values.shape[0]:
            st[k.I_WRITE_POS] = self.writes.refill(int(st[k.I_WRITE_POS]))

    def _grow(self) -> None:
        if self.st_i[k.I_RECORDED] + 2 > self.rec_t.shape[0]:
            self.rec_t, self.rec_c, self.rec_p = grown(self.rec_t), grown(self.rec_c), grown(self.rec_p)
            self.rec_k = grown(self.rec_k)

    @property
    def duration(self) -> float:
        """The last recorded event's time (it ends when its clients are done): not the clock's,
        which a silent pause or resume after the work moves on (``Run.metrics``)."""
        return float(self.st_f[k.F_LAST])

    @property
    def events(self) -> int:
        """Recorded events: every seq taken, less the silent items (arrivals held while the
        server is stopped, a pause or resume after the work)."""
        return int(self.st_i[heap.I_SEQ] - self.st_i[k.I_SILENT])

    def counters(self) -> RunCounters:
        """The run's counters (``engine.counters_of`` without series): its work, calls, the
        calls a limit or a policy ended, and the retries a policy denied."""
        return RunCounters(int(self.attempts.sum()), len(self.attempts), int(self.st_i[k.I_GAVE_UP]),
                           int(self.st_i[k.I_DENIED]))
