"""Outages: a stopped server (study 003's SIGSTOP), as every control and server sees it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from heapq import heapify, heappush

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.core.wiring import Wiring
from sim.models.workloads import Outage

# What becomes of an arrival that finds the accept queue (``backlog``) full, and of a held request
# whose client stopped waiting before the resume (``abandoned``). The first of each is the default.
BACKLOG_OVERFLOWS = ("syn-retry", "drop")
ABANDONED_RULES = ("serve", "drop")

# A config's accept queue when it gives no ``backlog`` (sim.settings.config): what a Go server on Linux
# before 5.4 gets, study 003's server in 2014. Go's net.Listen passes the kernel's somaxconn to
# listen(2) (golang/go, src/net/sock_linux.go, src/pkg/net/ in 2014, maxListenerBacklog: it reads
# /proc/sys/net/core/somaxconn, falling back to syscall.SOMAXCONN = 128); Linux's somaxconn
# default was 128 until 5.4 and is 4096 since (commit 19f92a030ca6, "net: increase SOMAXCONN to
# 4096"). ``backlog = UNBOUNDED`` asks for no bound (no real server has one: warned about).
DEFAULT_BACKLOG = 128
UNBOUNDED = "unbounded"

# Linux's SYN retransmits (net.ipv4.tcp_syn_retries = 6, initial timeout 1 s, doubling): again
# 1, 3, 7, 15, 31 and 63 s after the first try, i.e. gaps of 1, 2, 4, 8, 16 and 32 s; after the
# last, one more doubled wait (64 s, 127 s from the first try) and connect() fails (ETIMEDOUT).
SYN_RETRY_GAPS_S = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
SYN_GIVE_UP_GAP_S = 64.0
_TRY_BITS = 3  # a SYN retry's arg packs (token << 3) | retransmit index (0..5)
_TRY_MASK = (1 << _TRY_BITS) - 1


@dataclass(frozen=True)
class AcceptQueue:
    """How a stopped server's accept queue treats arrivals (the simulation's ``backlog``,
    ``backlog_overflow`` and ``abandoned`` keys).

    ``unit_seconds`` is the length of the simulation's time unit in seconds (None for a unit
    without one, e.g. ticks): SYN retransmits are timed in seconds, so ``"syn-retry"`` needs it.
    """

    backlog: int | None = None
    overflow: str = BACKLOG_OVERFLOWS[0]
    abandoned: str = ABANDONED_RULES[0]
    unit_seconds: float | None = 1e-3

    @property
    def syn_gaps(self) -> tuple[float, ...]:
        """The gaps between SYN retransmits, then the wait before connect() fails, in time units."""
        if self.unit_seconds is None:
            raise ValueError("SYN retransmits need a time unit with a length in seconds")
        return tuple(g / self.unit_seconds for g in (*SYN_RETRY_GAPS_S, SYN_GIVE_UP_GAP_S))


class OutageGate:
    """Stops the server during outage windows (study 003's SIGSTOP).

    - Arrivals wait, as connections in a stopped server's accept queue do: at most ``backlog`` of
      them (None: no bound). Beyond it (``overflow``) an arrival's SYN is dropped and its
      client's TCP stack sends it again 1, 3, 7, 15, 31 and 63 s after the first try
      (``"syn-retry"``, Linux's), as long as the client still waits for that attempt: a
      retransmit that finds room is held, one that comes after the resume is served at once;
      after the last, connect() fails at 127 s and the client hears it as a timeout. With
      ``"drop"`` the arrival is lost and its client only hears its own timeout.
    - At the resume, held requests are served in arrival order. Those whose client no longer
      waits for that very attempt (timed out, given up, superseded by a newer attempt) are
      served too (``abandoned = "serve"``: a Go ``net/http`` server reads a request already in
      the socket's buffer and runs its handler; the reply is lost) or dropped (``"drop"``, as
      if the server noticed the closed connection first). Stale held requests keep their
      backlog slot until the resume, as closed connections stay in the accept queue until
      accepted.
    - Work in progress on the server's own clock (``freeze``: writes, service, rejections, window
      expiries) stops with it and resumes with its remaining time: at the pause, every such
      scheduled step is moved later by the outage's duration. Steps on the wall clock (``wall``:
      a latency fixed at the start) that fall inside the outage happen at the resume.
    - ``on_resume`` callbacks run first at each resume (LatencyServer restarts its checks there).
    - ``stopped_for``: the total length of the outages ended so far, so ``t - stopped_for`` is the
      server's own clock at any moment it runs (a ``QueueServer``'s ticks are on that clock).

    Nothing here touches the hot loop: steps are moved once per pause, SYN retransmits exist only
    while the queue is full, and the pause and resume markers are recorded only while the run
    still has work (a marker after the last client finished changes neither duration nor cost).
    """

    EVENTS = frozenset({ev.SERVER_PAUSES, ev.SERVER_RESUMES})  # every event code it records
    # ``marker``: the client id its pause and resume are recorded with: -1 (the whole server), or
    # for a tier below the first one of its callers' ids, which says the tier (sim.runs.tiers).

    def __init__(self, wiring: Wiring, outages: tuple[Outage, ...],
                 queue: AcceptQueue | None = None, marker: int = -1) -> None:
        queue = AcceptQueue() if queue is None else queue
        self.paused = False
        self.stopped_for = 0.0
        self.backlog = queue.backlog
        self.refused = 0  # arrivals that found the queue full (first tries)
        self.dropped = 0  # held requests dropped at a resume (``abandoned = "drop"``)
        self.syn_retries = 0  # SYN retransmits sent (``"syn-retry"``)
        self.abandoned_served = 0  # held requests served after their client stopped waiting
        # Set by clients that can stop waiting for an attempt: (client, token) -> still waiting?
        self.still_waiting: Callable[[int, int], bool] | None = None
        # Set by clients that can time out: what a failed connect() is heard as (their timeout).
        self.connect_failed: Callable[[float, int, int], int] | None = None
        self._serve_abandoned = queue.abandoned == "serve"
        self._syn_gaps = queue.syn_gaps if queue.backlog is not None and queue.overflow == "syn-retry" else None
        self._wiring = wiring
        self._outages = outages
        self._held: list[tuple[Callable, int, int]] = []
        self._frozen: set[Callable] = set()
        self._wall: set[Callable] = set()
        self._resume_hooks: list[Callable[[float], None]] = []
        self._markers = 2 * len(outages)  # still in the heap
        heap, seq = wiring.heap, wiring.seq
        for i, outage in enumerate(outages):
            heappush(heap, (outage.start, seq(), self._pause, marker, i))
            heappush(heap, (outage.end, seq(), self._resume, marker, i))

    def wrap(self, handler: Callable | None) -> Callable | None:
        """An entry point that holds arrivals while the server is paused."""
        if handler is None:
            return None
        held, backlog, gaps = self._held, self.backlog, self._syn_gaps
        heap, seq = self._wiring.heap, self._wiring.seq

        def gated(t: float, c: int, a: int) -> int:
            if self.paused:
                if backlog is not None and len(held) >= backlog:
                    self.refused += 1
                    if gaps is not None:
                        heappush(heap, (t + gaps[0], seq(), syn_again, c, a << _TRY_BITS))
                else:
                    held.append((handler, c, a))
                return NO_EVENT
            return handler(t, c, a)

        def syn_again(t: float, c: int, packed: int) -> int:
            # Retransmit number ``k`` (0 for the first) of the SYN of attempt ``a``: nothing if
            # the client has stopped waiting for it (it closed the socket).
            a, k = packed >> _TRY_BITS, packed & _TRY_MASK
            still_waiting = self.still_waiting
            if still_waiting is not None and not still_waiting(c, a):
                return NO_EVENT
            if k == len(gaps) - 1:  # the wait after the last retransmit: connect() fails
                failed = self.connect_failed
                return NO_EVENT if failed is None else failed(t, c, a)
            self.syn_retries += 1
            if not self.paused:
                return handler(t, c, a)
            if len(held) >= backlog:
                heappush(heap, (t + gaps[k + 1], seq(), syn_again, c, packed + 1))
            else:
                held.append((handler, c, a))
            return NO_EVENT

        return gated

    def freeze(self, handler: Callable) -> Callable:
        """Register a server step on the server's own clock: it waits out a pause."""
        self._frozen.add(handler)
        return handler

    def wall(self, handler: Callable) -> Callable:
        """Register a server step on the wall clock: one due inside a pause happens at the resume."""
        self._wall.add(handler)
        return handler

    def on_resume(self, hook: Callable[[float], None]) -> None:
        self._resume_hooks.append(hook)

    def _has_work(self) -> bool:
        """True while anything but outage markers is scheduled or held."""
        return len(self._wiring.heap) + len(self._wiring.near) > self._markers or bool(self._held)

    def _pause(self, t: float, c: int, i: int) -> int:
        self._markers -= 1
        self.paused = True
        outage = self._outages[i]
        shift, end = outage.duration, outage.end
        heap, frozen, wall = self._wiring.heap, self._frozen, self._wall
        moved = False
        for j, item in enumerate(heap):
            due, handler = item[0], item[2]
            if due >= t:
                if handler in frozen:
                    heap[j] = (due + shift, *item[1:])
                    moved = True
                elif handler in wall and due < end:
                    heap[j] = (end, *item[1:])
                    moved = True
        if moved:
            heapify(heap)
        return ev.pack(ev.SERVER_PAUSES) if self._has_work() else NO_EVENT

    def _resume(self, t: float, c: int, i: int) -> int:
        self._markers -= 1
        self.paused = False
        self.stopped_for += self._outages[i].duration
        heap, seq = self._wiring.heap, self._wiring.seq
        for hook in self._resume_hooks:
            hook(t)
        still_waiting = self.still_waiting
        recorded = self._has_work()
        for handler, client, arg in self._held:
            if still_waiting is None or still_waiting(client, arg):
                heappush(heap, (t, seq(), handler, client, arg))
            elif self._serve_abandoned:
                self.abandoned_served += 1
                heappush(heap, (t, seq(), handler, client, arg))
            else:
                self.dropped += 1
        self._held.clear()
        return ev.pack(ev.SERVER_RESUMES) if recorded else NO_EVENT
