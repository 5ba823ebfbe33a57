"""What a run's models share: the heap, the seeded streams, and the entry points models set.

Controls and servers read the heap, the sequence counter and the network streams from here and
set their own entry points (``server_state``); clients set theirs (``client_rejected``, ...). Built
by the engine from plain values, so this module knows nothing of specs or models.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import Any

import numpy as np

from sim.core.series import Series
from sim.core.streams import (
    PURPOSE_JITTER,
    PURPOSE_LIMITER,
    PURPOSE_NETWORK,
    PURPOSE_SERVER,
    ClientStreams,
    Draw,
    serial_stream,
    uniform01,
)


class Wiring:
    """What a control's handlers need from the run: the heap, streams and client entry points."""

    def __init__(self, rng: Callable[[int], np.random.Generator], clients: int, network: Draw,
                 series: Series | None) -> None:
        self.heap: list[tuple] = []
        # A second heap of the same items for those due within about a network delay or at
        # this very instant (a reply, a request on its way, a drop, a timeout's decision, the
        # completions of a check, a retry without backoff, a write of no duration): the engine
        # pops whichever head is due first, so the order is the one heap's, but an item due soon
        # sifts through a handful of items rather than the whole run's (its 1,000 clients' next
        # arrivals, work in service, timeouts). A PoolServer run became ~15% faster, server_outage's
        # sweep ~15% and the sample's OCC sweep ~8%. Only items no outage moves
        # (``OutageGate.freeze``, ``wall``) go there: the gate shifts those in ``heap`` alone.
        self.near: list[tuple] = []
        self.seq: Callable[[], int] = count().__next__
        self._rng = rng  # the run's generator for a purpose (sim.core.streams.PURPOSE_*)
        self.net: list[Callable[[], float]] = ClientStreams(
            rng(PURPOSE_NETWORK), clients, network).next_functions()
        self.jitter: list[Callable[[], float]] = ClientStreams(
            rng(PURPOSE_JITTER), clients, uniform01).next_functions()
        self._server_rng: np.random.Generator | None = None
        # Per-bucket counters, for servers that reply (they need a horizon).
        self.series = series
        # Set by the engine when the simulation has outages (sim.models.outage.OutageGate).
        self.gate: Any = None
        # Set by servers that honour capacity and slowdown incidents (sim.models.incidents.IncidentHooks).
        self.incident_hooks: Any = None
        self.dropped_at_end = 0
        # The call id of the event the handler just run returns (``History.calls``): a client
        # handler that returns an event of a call sets ``call[0]``; the engine's recording loop
        # reads it with the event and puts back ``NO_CALL`` (-1), so an event no client set it
        # for (a server's) belongs to no call.
        self.call = [-1]
        # Sequence numbers taken by items that never entered a queue (a client's timeouts of
        # attempts answered in time, ``sim.models.clients``): not events, like the stale items
        # they stand for.
        self.unscheduled: Callable[[], int] = lambda: 0
        # Set by the client side before the control builds its handlers.
        self.client_rejected: Callable[[float, int, int], int]
        # Clients of replying servers: a transient server error (``sim.vocabulary.outcomes.SERVER_ERROR``).
        self.client_server_error: Callable[[float, int, int], int]
        self.client_version_reply: Callable[[float, int, int], int]
        # A run that keeps no history may let the clients of a contention control take their own
        # steps ahead of time (set by the engine, ``ahead``; see ``Clients``): a failure or a
        # version read the server sends client c, arriving at T, is then
        # ``client_rejected_at(T, c, kind)`` / ``client_version_at(T, c, version)``, taken at once,
        # instead of an item (``controls.message_to_client``). None: the server pushes the item.
        # ``taken_ahead[0]`` counts the events so taken, which the engine counts as it counts
        # the items.
        self.ahead = False
        # ``backoff_from = "send"`` (sim.models.clients): a retry's backoff counts from when the
        # failed attempt was sent, not from its failure (set by the engine).
        self.backoff_from_send = False
        self.client_rejected_at: Callable[[float, int, int], None] | None = None
        self.client_version_at: Callable[[float, int, int], None] | None = None
        self.taken_ahead = [0]
        self.client_succeeded: Callable[[float, int, int], int]
        # Clients of a contention control that keep a policy chain hear a commit here (None:
        # nobody listens).
        self.client_committed: Callable[[float, int], None] | None = None
        # Clients of replying servers: is client c still waiting for its attempt ``token``? (False
        # once it timed out, gave up or sent a newer attempt.) None without replies.
        self.still_waiting: Callable[[int, int], bool] | None = None
        # Set by servers that can be changed while they run (PoolServer's ``PoolHooks``).
        self.server_hooks: Any = None
        # Set by replying servers: (in service, queued), sampled at bucket ends.
        self.server_state: Callable[[], tuple[int, int]] = lambda: (0, 0)
        # Set when the server calls a tier below it (``sim.models.tiers.TierCaller``): a request
        # whose own service ended is handed to it instead of completing (``after_service``).
        self.downstream: Any = None
        # Set by the engine on the first tier's wiring of a tiered run (``sim.runs.tiers.RunTiers``).
        self.tiers: Any = None
        # Set by replying clients: ``attempt_of(c, token)`` is ``(call, k)``, the call that client
        # c's attempt ``token`` belongs to (a key unique among calls in flight) and its attempt
        # number (1 for the first): a fleet's retries to another host read it (``sim.models.fleet``).
        self.attempt_of: Callable[[int, int], tuple[int, int]] | None = None
        # Set by replying clients: ``call_id_of(c, token)`` is the id (``History.calls``) of the
        # call client c's attempt ``token`` belongs to, ``NO_CALL`` (-1) once given up on: a
        # hedge's event carries it (``sim.models.fleet``).
        self.call_id_of: Callable[[int, int], int] | None = None
        # Set by a fleet's build (``sim.models.fleet.FleetRun``): its hosts' counts for the outputs.
        self.fleet: Any = None
        # Set by replying clients that keep policy chains: ``chain_of(c, token)`` is the chain
        # (``sim.policies.seam.Chain``) of the call attempt ``token`` belongs to, or None; hedges
        # ask it (``sim.models.fleet``).
        self.chain_of: Callable[[int, int], Any] | None = None
        # OR-ed into the events a server makes of itself (its drops): a fleet host's tag
        # (``sim.core.events.host_tag``), 0 elsewhere.
        self.event_tag = 0

    def after_service(self, complete: Callable[[float, int, int], int]) -> Callable[[float, int, int], int]:
        """The handler a server schedules when a request's own service ends: ``complete`` itself,
        or, when the server calls a tier below, one that makes that call and runs ``complete``
        when it is over (the request holds its place in service meanwhile)."""
        return complete if self.downstream is None else self.downstream.after(complete)

    def server_stream(self, draw: Draw) -> Callable[[], float]:
        """The server's own stream (write durations); one per run."""
        if self._server_rng is None:
            self._server_rng = self._rng(PURPOSE_SERVER)
        return serial_stream(self._server_rng, draw)

    def limiter_stream(self) -> Callable[[], float]:
        """U[0, 1) draws for the server's admission limiter, a stream of its own (so a limiter
        leaves every other draw of the run as it was)."""
        return serial_stream(self._rng(PURPOSE_LIMITER), uniform01)
