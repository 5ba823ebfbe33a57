"""The event engine: one seeded run of clients contending for a server.

A lean discrete-event loop in the manner of SimPy: a heap of plain tuples
``(time, seq, handler, client, arg)``; the monotonic ``seq`` breaks ties so simultaneous events
always pop in the order they were scheduled. Each popped item is exactly one event, which its
handler returns packed as an int (see ``events``).

The same run serves two uses:
- ``run_metrics`` (sweeps): drains the heap keeping only counters; no history.
- ``Run`` with ``record=True`` (the TUI and exports): ``step()`` one event at a time or ``run()``
  to the end, appending each event to a ``History`` from which any earlier state can be rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from heapq import heappop, heappush
from itertools import count
from typing import NamedTuple

import numpy as np

from . import events as ev
from .config import SimulationSpec
from .streams import (PURPOSE_JITTER, PURPOSE_NETWORK, PURPOSE_SERVER, ClientStreams, Draw,
                      clipped_normal, generator, serial_stream, uniform01)
from .strategies import Strategy


class RunKey(NamedTuple):
    """A run's coordinates within a sweep (the strategy is not part of the random key)."""

    clients: int
    repetition: int


@dataclass(frozen=True)
class RunMetrics:
    """What a sweep keeps of one run."""

    work: int
    duration: float
    cost: float
    gave_up: int
    events: int


class Wiring:
    """What a control's handlers need from the run: the heap, streams and client entry points."""

    def __init__(self, spec: SimulationSpec, clients: int, repetition: int) -> None:
        self.heap: list[tuple] = []
        self.seq: Callable[[], int] = count().__next__
        self._spec = spec
        self._clients = clients
        self._repetition = repetition
        net_rng = self._rng(PURPOSE_NETWORK)
        self.net: list[Callable[[], float]] = ClientStreams(
            net_rng, clients, clipped_normal(spec.network_mu, spec.network_sigma)).next_functions()
        self.jitter: list[Callable[[], float]] = ClientStreams(
            self._rng(PURPOSE_JITTER), clients, uniform01).next_functions()
        self._server_rng: np.random.Generator | None = None
        # Set by the client side before the control builds its handlers.
        self.client_rejected: Callable[[float, int, int], int]
        self.client_version_reply: Callable[[float, int, int], int]

    def _rng(self, purpose: int) -> np.random.Generator:
        return generator(self._spec.seed, self._spec.title, self._clients, self._repetition, purpose)

    def server_stream(self, draw: Draw) -> Callable[[], float]:
        """The server's own stream (write durations); one per run."""
        if self._server_rng is None:
            self._server_rng = self._rng(PURPOSE_SERVER)
        return serial_stream(self._server_rng, draw)


class _Clients:
    """Client-side handlers: request, back off or give up.

    Work is ``sum(attempts)``, so the hot path only bumps one list slot per request.
    """

    def __init__(self, wiring: Wiring, strategy: Strategy, reads_version: bool) -> None:
        self.gave_up = 0
        n = len(wiring.net)
        heap, seq, net = wiring.heap, wiring.seq, wiring.net
        self.attempts = attempts = [0] * n
        # When each client first acted; every client starts at 0 in a burst.
        self.first_request = first = [0.0] * n
        backoffs = [strategy.delays(u).__next__ for u in wiring.jitter]
        max_attempts = strategy.max_attempts or 0
        max_elapsed = strategy.max_elapsed
        limited = bool(max_attempts) or max_elapsed is not None
        receive: list[Callable] = [None, None]  # (receive_write, receive_read), set by bind()
        requests_write = ev.pack(ev.CLIENT_REQUESTS_WRITE)
        requests_version = ev.pack(ev.CLIENT_REQUESTS_VERSION)
        backs_off = ev.pack(ev.CLIENT_BACKS_OFF)
        gives_up, shift = ev.CLIENT_GIVES_UP, ev.DETAIL_SHIFT
        clients = self

        def write(t: float, c: int, version: int) -> int:
            # Sends the write; `version` is what the client read (read-then-write OCC) or 0.
            attempts[c] += 1
            heappush(heap, (t + net[c](), seq(), receive[0], c, version))
            return requests_write

        def read(t: float, c: int, a: int) -> int:
            heappush(heap, (t + net[c](), seq(), receive[1], c, 0))
            return requests_version

        start = read if reads_version else write

        def rejected(t: float, c: int, a: int) -> int:
            heappush(heap, (t + backoffs[c](), seq(), start, c, 0))
            return backs_off

        def rejected_limited(t: float, c: int, a: int) -> int:
            n_attempts = attempts[c]
            if (max_attempts and n_attempts >= max_attempts) or (
                    max_elapsed is not None and t - first[c] > max_elapsed):
                clients.gave_up += 1
                return gives_up | ((n_attempts + 1) << shift)
            heappush(heap, (t + backoffs[c](), seq(), start, c, 0))
            return backs_off

        self.start = start
        self._receive = receive
        wiring.client_rejected = rejected_limited if limited else rejected
        wiring.client_version_reply = write

    @property
    def work(self) -> int:
        return sum(self.attempts)

    def bind(self, receive_write: Callable, receive_read: Callable | None) -> None:
        self._receive[0] = receive_write
        self._receive[1] = receive_read


def _build(spec: SimulationSpec, strategy: Strategy, clients: int, repetition: int) -> tuple[Wiring, _Clients]:
    wiring = Wiring(spec, clients, repetition)
    side = _Clients(wiring, strategy, spec.control.READS_VERSION)
    handlers = spec.control.build(wiring)
    side.bind(handlers.receive_write, handlers.receive_read)
    heap, seq, start = wiring.heap, wiring.seq, side.start
    for c in range(clients):
        heappush(heap, (0.0, seq(), start, c, 0))
    return wiring, side


def run_metrics(spec: SimulationSpec, strategy: Strategy, clients: int, repetition: int) -> RunMetrics:
    """Run to completion keeping only metrics: the sweep's hot path."""
    wiring, side = _build(spec, strategy, clients, repetition)
    heap = wiring.heap
    pop = heappop
    t = 0.0
    while heap:
        t, _, handler, c, a = pop(heap)
        handler(t, c, a)
    events = wiring.seq()  # every event was scheduled exactly once, so this counts them
    work = side.work
    return RunMetrics(work, t, spec.work_to_duration * work + t, side.gave_up, events)


class History:
    """A run's events in order, as parallel columns (cheap to append, easy to index and slice)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.clients: list[int] = []
        self.packed: list[int] = []

    def __len__(self) -> int:
        return len(self.times)

    def append(self, t: float, c: int, packed: int) -> None:
        self.times.append(t)
        self.clients.append(c)
        self.packed.append(packed)

    def event(self, i: int) -> tuple[float, int, int, int]:
        """``(time, client, code, detail)`` of the i-th event."""
        code, detail = ev.unpack(self.packed[i])
        return self.times[i], self.clients[i], code, detail

    def rows(self) -> list[tuple[float, int, str, str]]:
        """``(time, client_id, event_type, event_detail)`` rows, as the reference prints them."""
        out = []
        for t, c, p in zip(self.times, self.clients, self.packed):
            code, detail = ev.unpack(p)
            out.append((t, c, ev.EVENT_NAMES[code], ev.format_detail(code, detail)))
        return out

    def codes(self) -> np.ndarray:
        return np.asarray(self.packed, dtype=np.int64) & ev.CODE_MASK

    def details(self) -> np.ndarray:
        return (np.asarray(self.packed, dtype=np.int64) >> ev.DETAIL_SHIFT) - 1


class Run:
    """A recorded run that can be stepped one event at a time (what the TUI replays)."""

    def __init__(self, spec: SimulationSpec, label: str, clients: int, repetition: int) -> None:
        self.spec = spec
        self.label = label
        self.clients = clients
        self.repetition = repetition
        self._wiring, self._side = _build(spec, spec.strategy(label).strategy, clients, repetition)
        self.history = History()
        self.time = 0.0

    @property
    def done(self) -> bool:
        return not self._wiring.heap

    def peek(self) -> float | None:
        """Time of the next event, or None when the run is over."""
        heap = self._wiring.heap
        return heap[0][0] if heap else None

    def step(self) -> tuple[float, int, int, int] | None:
        """Process one event and return it as ``(time, client, code, detail)``; None when done."""
        heap = self._wiring.heap
        if not heap:
            return None
        t, _, handler, c, a = heappop(heap)
        packed = handler(t, c, a)
        self.time = t
        self.history.append(t, c, packed)
        code, detail = ev.unpack(packed)
        return t, c, code, detail

    def run(self, until: float | None = None) -> Run:
        """Process events up to and including time ``until`` (or to the end); callable again."""
        heap = self._wiring.heap
        times, clients, packed = self.history.times, self.history.clients, self.history.packed
        t = self.time
        while heap and (until is None or heap[0][0] <= until):
            t, _, handler, c, a = heappop(heap)
            packed.append(handler(t, c, a))
            times.append(t)
            clients.append(c)
        self.time = t
        return self

    def metrics(self) -> RunMetrics:
        """Metrics of the events processed so far (final once ``done``)."""
        side = self._side
        t = self.history.times[-1] if self.history.times else 0.0
        return RunMetrics(side.work, t, self.spec.work_to_duration * side.work + t, side.gave_up,
                          len(self.history))


def record_run(spec: SimulationSpec, label: str, clients: int, repetition: int) -> Run:
    """Run to completion with the full history recorded."""
    return Run(spec, label, clients, repetition).run()
