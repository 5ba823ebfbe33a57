"""A run's tiers below the first (``[[simulation.tiers]]``): wired onto the run's heap.

Each tier gets a ``Wiring`` of its own, sharing the run's heap and sequence: its own streams
(network, jitter, server, incidents), keyed by the run's coordinates and the tier's number on
top of the purpose (``TIER_PURPOSE_STRIDE``), so the first tier's streams, and with them every
run of a config without tiers, are exactly as before. Its callers (``sim.models.tiers``) are
the processes of the server above; their ids follow the clients' and the upper tiers' in one
numbering (``TierLayout``). Outages and incidents of a tier stop or degrade that tier alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.analysis.tiers import TierRunCounts
from sim.core.series import Series, extra_series
from sim.models.fleet import build_fleet
from sim.core.streams import clipped_normal, generator
from sim.core.wiring import Wiring
from sim.models.controls import Handler
from sim.models.incidents import Incidents
from sim.models.outage import AcceptQueue, OutageGate
from sim.models.tiers import TierCaller, stopping_both
from sim.settings.spec import SimulationSpec

# A tier's stream for a purpose is the run's generator for ``purpose + STRIDE * tier`` (tier >= 2);
# the purposes of ``sim.core.streams`` are below it, so no tier shares a stream with another.
TIER_PURPOSE_STRIDE = 16


@dataclass(frozen=True)
class TierLayout:
    """Where each tier's callers sit in a run's numbering of clients and processes: ids below
    ``starts[0]`` are clients (tier 1's callers); ids from ``starts[i]`` on call tier ``i + 2``."""

    clients: int
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def tier_of(self, c: int) -> int:
        """The tier whose callers include id ``c`` as a caller (1: a client); events a tier's
        server records carry its callers' ids, so this is also the tier of such an event."""
        for i in range(len(self.starts) - 1, -1, -1):
            if c >= self.starts[i]:
                return i + 2
        return 1

    def tiers_of(self, ids: np.ndarray) -> np.ndarray:
        """``tier_of`` for an array of ids at once (int8; a server-wide id, -1, is tier 1's)."""
        tiers = np.searchsorted(np.asarray(self.starts, dtype=np.int64), ids, side="right") + 1
        return np.where(ids < self.clients, 1, tiers).astype(np.int8)

    def callers(self, tier: int) -> range:
        """The ids of the processes that call ``tier`` (2 or more): the workers of the tier above."""
        return range(self.starts[tier - 2], self.ends[tier - 2])

    @classmethod
    def seen(cls, clients: int, ids_by_tier: dict[int, tuple[int, int]]) -> TierLayout:
        """The layout an events file shows: ``ids_by_tier`` maps each tier below the first to
        the lowest and highest caller id recorded at it. Tier 2's callers start after the
        clients and a tier's range ends where the next one's begins (the lowest id seen there);
        a lower tier whose callers recorded nothing gets no ids, and the bottom tier's range
        ends after the highest id seen (callers that recorded nothing are not known)."""
        top = max(ids_by_tier, default=1)
        starts: list[int] = []
        ends: list[int] = []
        for tier in range(top, 1, -1):  # bottom up: an empty tier ends where the next begins
            low, high = ids_by_tier.get(tier, (starts[0] if starts else clients,) * 2)
            if tier not in ids_by_tier:
                high = low - 1
            ends.insert(0, starts[0] if starts else high + 1)
            starts.insert(0, low)
        if starts:
            starts[0] = clients
        return cls(clients, tuple(starts), tuple(ends))

    @property
    def ids(self) -> int:
        """Every id of the run: clients and every tier's processes."""
        return self.ends[-1] if self.ends else self.clients


def layout(spec: SimulationSpec, clients: int) -> TierLayout:
    """The numbering of a run of ``spec`` with ``clients`` clients."""
    starts, ends = [], []
    base, upper = clients, spec.control
    for tier in spec.tiers:
        n = upper.caller_processes
        starts.append(base)
        ends.append(base + n)
        base, upper = base + n, tier.control
    return TierLayout(clients, tuple(starts), tuple(ends))


class RunTiers:
    """The tiers of one run below the first: built before the first tier's server (which then
    calls tier 2), counting arrivals at every tier."""

    def __init__(self, spec: SimulationSpec, top: Wiring, clients: int, repetition: int) -> None:
        self.layout = where = layout(spec, clients)
        self.top_requests = [0]
        self.callers: list[TierCaller] = []
        wirings: list[Wiring] = []
        upper, upper_waiting = top, top.still_waiting
        network = clipped_normal(spec.network_mu, spec.network_sigma)
        for index, tier in enumerate(spec.tiers):
            number = index + 2
            base, n = where.starts[index], where.ends[index] - where.starts[index]

            def rng(purpose: int, number: int = number) -> np.random.Generator:
                return generator(spec.seed, spec.title, clients, repetition,
                                 purpose + TIER_PURPOSE_STRIDE * number)

            caps = tier.control.CAPS
            series = Series(spec.horizon, spec.bucket_width, extra_series(caps.series))
            wiring = Wiring(rng, n, network, series)
            # One run: one order (the heap, the near items of ``Wiring.near``, the sequence).
            wiring.heap, wiring.near, wiring.seq = top.heap, top.near, top.seq
            wiring.net = [None] * base + wiring.net  # indexed by the processes' global ids
            wiring.jitter = [None] * base + wiring.jitter
            if tier.stops:
                wiring.gate = OutageGate(wiring, tier.stops, AcceptQueue(), marker=base)
            caller = TierCaller(wiring, tier.retry, tier.timeout, tier.propagate_deadline, base, n)
            caller.install(upper, upper_waiting)
            self.callers.append(caller)
            wirings.append(wiring)
            upper, upper_waiting = wiring, caller.still_waiting
        # Every tier's downstream is installed: build the servers, tier 2 first.
        for index, (tier, wiring, caller) in enumerate(zip(spec.tiers, wirings, self.callers)):
            marker = where.starts[index]  # recorded on the tier's first caller: its tier is known
            incidents = Incidents(wiring, tier.degradations, marker) if tier.degradations else None
            handlers = (tier.control.build(wiring) if tier.fleet is None
                        else build_fleet(tier.fleet, tier.control, wiring))  # a tier may be a fleet
            receive_write = handlers.receive_write
            if incidents is not None:
                incidents.bind(wiring.incident_hooks)
                receive_write = incidents.wrap(receive_write)
            if wiring.gate is not None:
                receive_write = wiring.gate.wrap(receive_write)
            below = self.callers[index + 1] if index + 1 < len(self.callers) else None
            caller.bind(receive_write, stopping_both(handlers.stopped_waiting,
                                                     None if below is None else below.upstream_stopped))
        self.wirings = wirings

    @property
    def stopped_waiting(self) -> Handler | None:
        """What the clients tell when they stop waiting for an attempt: tier 2's callers abandon
        the call made for it when tier 2 propagates deadlines."""
        return self.callers[0].upstream_stopped if self.callers else None

    def entry(self, receive_write: Handler) -> Handler:
        """The first tier's door, counting every arrival (``requests`` at tier 1)."""
        count = self.top_requests

        def arrives(t: float, c: int, tok: int) -> int:
            count[0] += 1
            return receive_write(t, c, tok)
        return arrives

    def counts(self, successes: int, latencies: np.ndarray, retries_denied: int) -> tuple[TierRunCounts, ...]:
        """Every tier's counts, tier 1 first (its successes, latencies and denied retries are the
        clients'; a lower tier's denied retries are its callers' policy's)."""
        top = TierRunCounts(self.top_requests[0], successes, latencies, retries_denied)
        return (top, *(TierRunCounts(c.requests, c.counts["successes"],
                                     np.asarray(c.latencies, dtype=np.float64),
                                     0 if c.policy is None else c.policy.retries_denied)
                       for c in self.callers))
