"""Outages: a stopped server (study 003's SIGSTOP), as every control and server sees it."""

from __future__ import annotations

from collections.abc import Callable
from heapq import heapify, heappush

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.core.wiring import Wiring
from sim.models.workloads import Outage


class OutageGate:
    """Stops the server during outage windows (study 003's SIGSTOP).

    - Arrivals wait, as connections in a stopped server's accept queue do: at most ``backlog`` of
      them (None: no bound); beyond it an arrival is refused, so its client only hears its own
      timeout. At the resume, held requests whose client still waits for that very attempt are
      served in arrival order; the others (timed out, given up, superseded by a newer attempt)
      are dropped, as a closed connection is. Stale held requests keep their backlog slot until
      the resume, as closed connections stay in the accept queue until accepted.
    - Work in progress on the server's own clock (``freeze``: writes, service, rejections, window
      expiries) stops with it and resumes with its remaining time: at the pause, every such
      scheduled step is moved later by the outage's duration. Steps on the wall clock (``wall``:
      a latency fixed at the start) that fall inside the outage happen at the resume.
    - ``on_resume`` callbacks run first at each resume (LatencyServer restarts its checks there).
    - ``stopped_for``: the total length of the outages ended so far, so ``t - stopped_for`` is the
      server's own clock at any moment it runs (a ``QueueServer``'s ticks are on that clock).

    Nothing here touches the hot loop: steps are moved once per pause, and the pause and resume
    markers are recorded only while the run still has work (a marker after the last client
    finished changes neither duration nor cost).
    """

    EVENTS = frozenset({ev.SERVER_PAUSES, ev.SERVER_RESUMES})  # every event code it records

    def __init__(self, wiring: Wiring, outages: tuple[Outage, ...], backlog: int | None) -> None:
        self.paused = False
        self.stopped_for = 0.0
        self.backlog = backlog
        self.refused = 0
        self.dropped = 0
        # Set by clients that can stop waiting for an attempt: (client, token) -> still waiting?
        self.still_waiting: Callable[[int, int], bool] | None = None
        self._wiring = wiring
        self._outages = outages
        self._held: list[tuple[Callable, int, int]] = []
        self._frozen: set[Callable] = set()
        self._wall: set[Callable] = set()
        self._resume_hooks: list[Callable[[float], None]] = []
        self._markers = 2 * len(outages)  # still in the heap
        heap, seq = wiring.heap, wiring.seq
        for i, outage in enumerate(outages):
            heappush(heap, (outage.start, seq(), self._pause, -1, i))
            heappush(heap, (outage.end, seq(), self._resume, -1, i))

    def wrap(self, handler: Callable | None) -> Callable | None:
        """An entry point that holds arrivals while the server is paused."""
        if handler is None:
            return None
        held = self._held

        def gated(t: float, c: int, a: int) -> int:
            if self.paused:
                if self.backlog is not None and len(held) >= self.backlog:
                    self.refused += 1
                else:
                    held.append((handler, c, a))
                return NO_EVENT
            return handler(t, c, a)
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
        return len(self._wiring.heap) > self._markers or bool(self._held)

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
            else:
                self.dropped += 1
        self._held.clear()
        return ev.pack(ev.SERVER_RESUMES) if recorded else NO_EVENT
