"""Runs by the compiled kernels: what every kernel's run shares (``ArrayRun``: the loop that gives
the kernel room, draws and the engine's guard checks; its counters, the record the metrics
read, ``sim.runs.counters``), and one run of ``sim.kernels.pool_open`` (``PoolOpenRun``: its
arrays, built as ``engine._build`` builds the reference's objects, its configuration packed by
``sim.runs.kernel_boundary``). Imported only when a run takes a fast path (``sim.runs.fast``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType

import numpy as np

from sim.core.series import Series, extra_series
from sim.core.streams import (PURPOSE_INCIDENTS, PURPOSE_JITTER, PURPOSE_NETWORK, PURPOSE_SERVER, PURPOSE_WORKLOAD,
                              clipped_normal, generator, uniform01)
from sim.core.history import History
from sim.kernels import delays, heap
from sim.kernels import pool_open as k
from sim.kernels.jit import plain
from sim.kernels.blocks import ClientBlocks, SerialBlocks
from sim.core import latency_sample
from sim.models.incidents import NORMAL, Incident, kept_slots
from sim.models.service_times import service_draw
from sim.models.pool import PoolServer
from sim.models.strategies import FullJitteredExpo
from sim.models.workloads import Open, Outage
from sim.policies.chain import ChainSpec
from sim.runs import kernel_boundary
from sim.runs.counters import RunCounters
from sim.settings.spec import SimulationSpec

JITTERED = (delays.S_FULL_JITTER, delays.S_EQUAL_JITTER)
START = 1024  # first size of every growing array


def _levels(incident: Incident, workers: int) -> tuple[float, float]:
    """An incident's knob at its start and at its end, as the kernel sets it: a capacity as the
    pool's workers (``PoolServer.build``'s hook: ``kept_slots``), the others as they are."""
    if incident.kind == "capacity":
        kept = workers if incident.level >= 1.0 else kept_slots(workers, incident.level)
        return float(kept), float(workers)
    return incident.level, NORMAL[incident.kind]


def grown(array: np.ndarray, fill: float | int = 0) -> np.ndarray:
    """``array`` with twice the rows; the new ones hold ``fill``."""
    bigger = np.full((2 * array.shape[0], *array.shape[1:]), fill, dtype=array.dtype)
    bigger[:array.shape[0]] = array
    return bigger


def unrolled(values: np.ndarray, head: int, count: int) -> np.ndarray:
    """A ring buffer's ``count`` items from ``head`` on, at twice the size, starting at 0."""
    index = (head + np.arange(count)) % values.shape[0]
    bigger = np.zeros((2 * values.shape[0], *values.shape[1:]), dtype=values.dtype)
    bigger[:count] = values[index]
    return bigger


class ArrayRun:
    """What every kernel's run shares: the loop that drives the kernel, its clock, its counters
    (``counters``: what the metrics read) and its history. ``codes``: the kernel's module (its
    statuses, ``I_CHECK``, ``F_TIME``, its counters' ``I_*``, ``I_RECORDED``); the arrays are
    the subclass's."""

    codes: ModuleType
    st_i: np.ndarray
    st_f: np.ndarray
    series: np.ndarray
    series_spec: Series
    has_gate: bool
    attempts: np.ndarray  # per client
    rec_t: np.ndarray
    rec_c: np.ndarray
    rec_p: np.ndarray
    rec_k: np.ndarray
    kernel: Callable[..., int]
    cfg_i: np.ndarray
    lat_v: np.ndarray
    lat_c: np.ndarray
    lat_t: np.ndarray
    hf: np.ndarray
    hi: np.ndarray

    def arguments(self) -> tuple:
        """The kernel's arguments (the subclass's arrays), the draws held set in its state."""
        raise NotImplementedError

    def _refill(self) -> None:
        raise NotImplementedError

    def _grow(self) -> None:
        raise NotImplementedError

    def _make_outputs(self, record: bool) -> None:
        """The latency sample's arrays and the history's (one slot when the run records none),
        grown as they fill (``_grow_outputs``)."""
        self.lat_v = np.zeros(START, dtype=np.float64)
        self.lat_c = np.zeros(START, dtype=np.int64)
        self.lat_t = np.zeros(START, dtype=np.float64)
        size = START if record else 1
        self.rec_t = np.zeros(size, dtype=np.float64)
        self.rec_c = np.zeros(size, dtype=np.int64)
        self.rec_p = np.zeros(size, dtype=np.int64)
        self.rec_k = np.zeros(size, dtype=np.int64)  # each event's call (``History.calls``)

    def _push_first(self, stops: Sequence[Outage], starts: Sequence[float], horizon: float,
                    after_gate: Sequence[tuple[float, int, int, int]] = ()) -> None:
        """The first items, in the reference's order: the outages' pauses and resumes
        (OutageGate), what is built after the gate (``after_gate``: incidents), each client's
        first call, then the bucket sampling and the horizon (engine._schedule_sampling)."""
        codes, st = self.codes, self.st_i
        push = plain(heap.push)  # a few items: not worth a compiled variant per Python type
        for i, outage in enumerate(stops):
            push(self.hf, self.hi, st, float(outage.start), codes.H_PAUSE, -1, i)
            push(self.hf, self.hi, st, float(outage.end), codes.H_RESUME, -1, i)
        st[codes.I_MARKERS] = 2 * len(stops)
        for t, handler, c, a in after_gate:
            push(self.hf, self.hi, st, float(t), handler, c, a)
        for c, t0 in enumerate(starts):
            push(self.hf, self.hi, st, float(t0), codes.H_CALL, c, 0)
        push(self.hf, self.hi, st, self.series_spec.width, codes.H_SAMPLE, -1, 0)
        push(self.hf, self.hi, st, float(horizon), codes.H_END, -1, 0)

    def _grow_ring(self, floats: str, ints: str, head: int, count: int) -> None:
        """Twice the room for the ring buffer held in attributes ``floats`` and ``ints`` (its
        head and count at ``st_i[head]``, ``st_i[count]``) when it is nearly full."""
        st = self.st_i
        if st[count] + 2 > getattr(self, floats).shape[0]:
            h, n = int(st[head]), int(st[count])
            setattr(self, floats, unrolled(getattr(self, floats), h, n))
            setattr(self, ints, unrolled(getattr(self, ints), h, n))
            st[head] = 0

    def _grow_outputs(self) -> None:
        """Twice the room for the latency sample and the history when they are nearly full."""
        st, codes = self.st_i, self.codes
        if st[codes.I_LATENCIES] + 2 > self.lat_v.shape[0]:
            self.lat_v, self.lat_c, self.lat_t = grown(self.lat_v), grown(self.lat_c), grown(self.lat_t)
        if self.cfg_i[codes.C_RECORD] and st[codes.I_RECORDED] + 2 > self.rec_t.shape[0]:
            self.rec_t, self.rec_c, self.rec_p = grown(self.rec_t), grown(self.rec_c), grown(self.rec_p)
            self.rec_k = grown(self.rec_k)

    def drive(self, guard, stall_events: int) -> None:
        """Run the kernel to the end, giving it room (``_grow``), draws (``_refill``) and the
        guard's checks (``engine._Guard.check``) every ``stall_events`` items on the way (None:
        a run that ends before its first, ``warm_up``'s)."""
        codes, st = self.codes, self.st_i
        st[codes.I_CHECK] = stall_events
        while True:
            status = self.kernel(*self.arguments())
            if status == codes.DONE:
                return
            if status == codes.NEED_DRAWS:
                self._refill()
            elif status == codes.NEED_ROOM:
                self._grow()
            else:  # GUARD
                s = int(self.hi[0, 0])
                guard.check(float(self.hf[0]), s)
                st[codes.I_CHECK] = s + stall_events

    @property
    def time(self) -> float:
        """The last item's time: the engine's clock (``Run.time``) when the run ends."""
        return float(self.st_f[self.codes.F_TIME])

    @property
    def duration(self) -> float:
        """The run's duration for its metrics: its clock, a run with series ending at its horizon."""
        return self.time

    def counters(self) -> RunCounters:
        """The run's counters (all ``engine._metrics`` reads), from the kernel's arrays."""
        st, codes, series = self.st_i, self.codes, self.series_spec
        n = int(st[codes.I_LATENCIES])
        buckets = series.buckets
        counters = RunCounters(
            int(self.attempts.sum()), len(self.attempts), int(st[codes.I_GAVE_UP]),
            series={name: self.series[row, :buckets].copy() for row, name in enumerate(series.names)},
            bucket=series.width, successes=int(st[codes.I_SUCCESSES]), timeouts=int(st[codes.I_TIMEOUTS]),
            attempts=self.attempts.copy(), latencies=self.lat_v[:n].copy(), latency_clients=self.lat_c[:n].copy(),
            latency_times=self.lat_t[:n].copy())
        if self.has_gate:
            counters.refused, counters.dropped = self.refused(), int(st[codes.I_GATE_DROPPED])
        self._count(counters)
        return counters

    def _count(self, counters: RunCounters) -> None:
        """The subclass's own counters: rejections, calls unfinished, retries denied."""
        raise NotImplementedError

    def refused(self) -> int:
        """Arrivals the outage gate's accept queue refused: none where it has no bound."""
        return 0

    def history(self) -> History:
        """The recorded events, as the reference's ``Run.history`` holds them."""
        history = History()
        n = int(self.st_i[self.codes.I_RECORDED])
        history.times = self.rec_t[:n].tolist()
        history.clients = self.rec_c[:n].tolist()
        history.packed = self.rec_p[:n].tolist()
        history.calls = self.rec_k[:n].tolist()
        return history


class PoolOpenRun(ArrayRun):
    """One run of ``sim.kernels.pool_open``: its arrays, built as ``engine._build`` builds the
    reference's objects (the same streams, the same first items in the same order)."""

    codes = k

    def __init__(self, spec: SimulationSpec, chain: ChainSpec, clients: int, repetition: int,
                 record: bool, kernel=None) -> None:
        self.spec = spec
        self.kernel = kernel or k.run
        control = spec.control

        def rng(purpose: int) -> np.random.Generator:
            return generator(spec.seed, spec.title, clients, repetition, purpose)

        n = clients
        slots = kernel_boundary.pack(kernel_boundary.POOL_OPEN, spec, chain, k)  # the model's own
        cfg_i, cfg_f = slots.i, slots.f
        code = int(cfg_i[k.C_STRATEGY])
        self.net = ClientBlocks(rng(PURPOSE_NETWORK), n, clipped_normal(spec.network_mu, spec.network_sigma))
        self.jitter = ClientBlocks(rng(PURPOSE_JITTER), n, uniform01) if code in JITTERED else None
        workload = rng(PURPOSE_WORKLOAD)
        starts = spec.workload.start_times(workload, n)
        self.gaps = ClientBlocks(workload, n, spec.workload.gap_draw())
        draw = service_draw(control.service_distribution, control.service_time, control.service_p99,
                            control.samples)
        self.service = SerialBlocks(rng(PURPOSE_SERVER) if draw is not None else None, draw)
        self.series_spec = Series(spec.horizon, spec.bucket_width, extra_series(control.CAPS.series))
        buckets = self.series_spec.buckets
        # What the run adds: its size, its outputs, what its draws and series are.
        cfg_i[k.C_CLIENTS] = n
        cfg_i[k.C_DRAWS_SERVICE] = draw is not None
        cfg_i[k.C_JITTER] = code in JITTERED
        cfg_i[k.C_LAST_BUCKET] = buckets - 1
        cfg_i[k.C_RECORD] = record
        cfg_i[k.C_LATENCY_SAMPLE] = latency_sample.LATENCY_SAMPLE  # the one rule's
        cfg_f[k.G_WIDTH] = self.series_spec.width
        cfg_f[k.G_INVERSE_WIDTH] = self.series_spec.inverse_width
        self.cfg_i, self.cfg_f = cfg_i, cfg_f
        self.st_i = np.zeros(k.I_SIZE, dtype=np.int64)
        self.st_i[k.I_STRIDE] = 1
        self.st_f = np.zeros(k.F_SIZE, dtype=np.float64)
        self.st_i[k.I_WORKERS] = int(control.workers)
        self.st_i[k.I_PENDING_WORKERS] = -1
        self.st_f[k.F_SLOWDOWN] = 1.0
        self.hf = np.zeros(max(START, 2 * n + 8), dtype=np.float64)
        self.hi = np.zeros((self.hf.shape[0], 4), dtype=np.int64)
        self.qf = np.zeros(START, dtype=np.float64)
        self.qi = np.zeros((START, 2), dtype=np.int64)
        self.df = np.zeros(START, dtype=np.float64)
        self.di = np.zeros((START, 2), dtype=np.int64)
        self.waiting = np.full(START, -1, dtype=np.int64)
        self.st_i[k.I_TOKEN] = 1  # tokens start at 1 (open_clients: count(1))
        self.tries = np.zeros(START, dtype=np.int64)
        self.first = np.zeros(START, dtype=np.float64)
        self.bo = np.zeros(START, dtype=np.float64)
        self.free = np.zeros(START, dtype=np.int64)
        self.calls = np.zeros(START, dtype=np.int64)  # each slot's call id
        self.attempts = np.zeros(n, dtype=np.int64)
        self.series = np.zeros((len(self.series_spec.names), buckets + 1), dtype=np.int64)
        self._make_outputs(record)
        stops = spec.stops
        self.outages = np.array([[o.start, o.duration] for o in stops], dtype=np.float64).reshape(len(stops), 2)
        self.held = np.zeros((START, 2), dtype=np.int64)
        self.has_gate = bool(stops)
        degradations = spec.degradations
        full = int(control.workers)
        self.incidents_kind = np.array([k.K_CAPACITY if i.kind == "capacity" else
                                        k.K_SLOWDOWN if i.kind == "slowdown" else k.K_ERROR_RATE
                                        for i in degradations], dtype=np.int64)
        self.incidents_level = np.array([_levels(i, full) for i in degradations],
                                        dtype=np.float64).reshape(len(degradations), 2)
        erring = any(i.kind == "error_rate" for i in degradations)
        self.errors = SerialBlocks(rng(PURPOSE_INCIDENTS) if erring else None, uniform01 if erring else None)
        cfg_i[k.C_ERRORS] = erring
        self._push_first(stops, starts, spec.horizon, [
            item for i, incident in enumerate(degradations)  # Incidents: built after the gate
            for item in ((incident.start, k.H_INCIDENT_BEGINS, -1, i), (incident.end, k.H_INCIDENT_ENDS, -1, i))])

    @classmethod
    def warm_up(cls) -> None:
        """Load the compiled kernel (``sim.runs.fast.warm_up``): a tiny run of two clients."""
        spec = SimulationSpec(title="warm-up", clients=(2,), repeat=1, network_mu=1.0, network_sigma=0.2,
                              work_to_duration=0.0, strategies=(), workload=Open(think_time=20.0),
                              control=PoolServer(workers=1, service_time=5.0, service_distribution="exponential"),
                              horizon=200.0, timeout=30.0, outages=(Outage(start=50.0, duration=20.0),))
        run = cls(spec, ChainSpec(FullJitteredExpo(base=5.0, cap=50.0)), 2, 0, record=True)
        run.drive(None, 1 << 40)

    def arguments(self) -> tuple:
        """The kernel's arguments, the draws held set in its state."""
        st = self.st_i
        st[k.I_NET_HAVE] = self.net.have
        st[k.I_JITTER_HAVE] = self.jitter.have if self.jitter is not None else 0
        st[k.I_GAP_HAVE] = self.gaps.have
        st[k.I_SERVICE_HAVE] = self.service.values.shape[0]
        st[k.I_ERROR_HAVE] = self.errors.values.shape[0]
        return (self.cfg_i, self.cfg_f, st, self.st_f, self.hf, self.hi, self.qf, self.qi, self.df,
                self.di, self.waiting, self.tries, self.first, self.bo, self.free, self.attempts,
                self.series, self.lat_v, self.lat_c, self.lat_t, self.net.values, self.net.pos,
                self.jitter.values if self.jitter is not None else self.net.values,
                self.jitter.pos if self.jitter is not None else self.net.pos,
                self.gaps.values, self.gaps.pos, self.service.values, self.rec_t, self.rec_c, self.rec_p,
                self.outages, self.held, self.incidents_kind, self.incidents_level, self.errors.values,
                self.calls, self.rec_k)

    def _refill(self) -> None:
        for blocks in (self.net, self.jitter, self.gaps):
            if blocks is not None and blocks.exhausted:
                blocks.refill()
        st = self.st_i
        if self.cfg_i[k.C_DRAWS_SERVICE]:  # a service time for every worker, as the kernel asks
            while self.service.values.shape[0] - st[k.I_SERVICE_POS] < self.cfg_i[k.C_WORKERS]:
                st[k.I_SERVICE_POS] = self.service.refill(int(st[k.I_SERVICE_POS]))
        if self.cfg_i[k.C_ERRORS] and st[k.I_ERROR_POS] >= self.errors.values.shape[0]:
            st[k.I_ERROR_POS] = self.errors.refill(int(st[k.I_ERROR_POS]))

    def _grow(self) -> None:
        st = self.st_i
        self._grow_ring("qf", "qi", k.I_Q_HEAD, k.I_QUEUED)
        self._grow_ring("df", "di", k.I_DUE_HEAD, k.I_DUE)
        if st[k.I_TOKEN] + 2 > self.waiting.shape[0]:
            self.waiting = grown(self.waiting, -1)
        if st[k.I_SLOTS] + 2 > self.tries.shape[0]:
            self.tries, self.first, self.bo, self.free, self.calls = (
                grown(self.tries), grown(self.first), grown(self.bo), grown(self.free), grown(self.calls))
        if st[k.I_HELD] + 2 > self.held.shape[0]:
            self.held = grown(self.held)
        if st[heap.I_HEAP] + st[k.I_QUEUED] + st[k.I_HELD] + 4 > self.hf.shape[0]:
            self.hf, self.hi = grown(self.hf), grown(self.hi)
        self._grow_outputs()

    def _count(self, counters: RunCounters) -> None:
        st = self.st_i
        counters.rejections = int(st[k.I_REJECTIONS])
        counters.unfinished = int(st[k.I_SLOTS] - st[k.I_FREE])

    @property
    def events(self) -> int:
        """Recorded events: every item scheduled, less those the horizon cleared and the silent."""
        st = self.st_i
        return int(st[heap.I_SEQ] - st[k.I_DROPPED_AT_END] - st[k.I_SILENT])
