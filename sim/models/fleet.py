"""A fleet (issue 35): ``hosts`` copies of the simulation's server behind one load balancer.

``[simulation.fleet]`` makes the server the clients call a fleet: every host is a full copy of
the simulation's (replying) server, with its own workers, queue, defences and server stream,
and a balancer in front routes each attempt to one host. The balancer is the clients' side
proxy (an Envoy sidecar): its view of a host's load is the attempts it sent there that are not
yet answered, timed out or abandoned (``outstanding``), never the host's true queue.

Balancers (``BALANCERS``), each over the hosts the balancer may use (below):

- ``round_robin``: in turn; with ``weights``, smooth weighted round robin (nginx's), whose
  picks follow the weights exactly in every window of ``sum(weights)`` picks.
- ``random``: uniformly, or in proportion to ``weights``.
- ``least_request``: the host with the fewest outstanding attempts (per unit of weight), ties
  broken at random: join the shortest queue as the balancer sees it. (Envoy's LEAST_REQUEST
  samples ``choice_count = 2`` hosts by default, which is ``p2c`` here.)
- ``p2c``: the less loaded of two hosts drawn at random (with replacement, as Envoy's
  ``unweightedHostPick`` draws them and as the supermarket model assumes), the first on a tie.
- ``ring_hash``: consistent hashing on the client id over a ring of ``RING_SIZE`` points
  (Envoy's ``minimum_ring_size``), each host owning points in proportion to its weight: a client
  sticks to its host; a re-pick walks on to the next distinct host on the ring (Envoy's
  ``Ring::chooseHost(h, attempt)``).

Host-aware retries, as Envoy's router does them: with ``retry_other_host`` (the
``envoy.retry_host_predicates.previous_hosts`` predicate) a retry's host selection rejects the
hosts this call already tried and picks again, at most ``host_selection_attempts`` more times
(``host_selection_retry_max_attempts``, default 1); after the last it keeps the host it picked
last, tried or not (``LoadBalancerBase::chooseHost``: "If we didn't find anything, return the
last host"). With 2 hosts, random balancing and the default, a retry thus lands on the host it
just failed on with probability 0.5^2, not 0.

Outlier detection (``OutlierDetection``), Envoy's consecutive-5xx detector
(``source/common/upstream/outlier_detection_impl.cc``): every error the balancer sees from a
host (a failure reply, a refused connection, a timeout: with ``split_external_local_origin_errors``
off, Envoy's default, local-origin failures count as 503/504) adds one to its consecutive
errors, a success resets them; the ``consecutive_errors``-th ejects it at once, unless that would
put more than ``max_ejection_percent`` of the hosts out (``ejectHost``: ``100 * (ejected + 1) /
hosts <= max_ejection_percent``, so 10% of fewer than 10 hosts ejects none), and the count
starts again. Each ejection raises the host's multiplier by one (while ``multiplier ·
base_ejection_time < max_ejection_time + base_ejection_time``); a timer every ``interval``
returns each host ejected for at least ``min(multiplier · base_ejection_time,
max_ejection_time)`` and lowers by one the multiplier of every host back for an ``interval`` or
more. ``panic_threshold`` (percent, Envoy's ``healthy_panic_threshold``, default 50): when fewer
than that share of the hosts are in, the balancer ignores ejections and uses every host (with
none in it does so at any threshold, where Envoy would answer 503 itself). Active health
checks (``HealthCheck``) take a host out too; ejections and failed checks both count as out.

Per-host incidents (``HostIncident``; a whole-fleet incident that does not stop the fleet is
made every host's own by the config, so the balancer sees its errors host by host): the kinds
of ``sim.models.incidents`` on the hosts named,
``"outage"`` (an outage, or capacity 0, on those hosts: each stops as a whole server does in
``sim.models.outage``, with its own gate and the simulation's accept-queue keys), and
``"crash"``: the host refuses connections at once (a fast failure, ``server_rejects`` and a
rejection heard after the network delay); work it holds when it crashes still completes.

Events name their host (``sim.core.events.host_tag``): those a host returns at its door, its
completions, its incidents, and the ejections. Streams: host 0 draws from the run's own server
and incident streams, so a fleet of one host behind any balancer is the server alone, event for
event; host h > 0 from the purposes ``p + h · HOST_PURPOSE_STRIDE``; the balancer from its own
(``PURPOSE_BALANCER``), so no other stream moves.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from heapq import heappush
from itertools import accumulate
from typing import TYPE_CHECKING

from sim.core import events as ev
from sim.core.events import NO_EVENT
from sim.core.streams import serial_stream, uniform01
from sim.vocabulary.errors import ParamError
from sim.models.controls import Control, ServerHandlers
from sim.models.incidents import KINDS, Incident, IncidentHooks, Incidents
from sim.models.outage import AcceptQueue, OutageGate
from sim.models.workloads import Outage
from sim.vocabulary.outcomes import REJECTED, SERVER_ERROR
from sim.models.hedging import HEDGE_BURST, Hedging  # noqa: F401 (Hedging: re-exported, its old home)

if TYPE_CHECKING:
    from sim.core.wiring import Wiring

BALANCERS = ("round_robin", "random", "least_request", "p2c", "ring_hash")
HOST_KINDS = KINDS + ("crash", "outage")  # what a per-host incident changes
CRASH_INDEX = ev.INCIDENT_DETAILS.index("crash")
# The balancer's own stream, and the offset of host h's streams (h >= 1) from the run's purposes:
# past every purpose of ``sim.core.streams`` (below 64), so no stream of a run without a fleet moves.
PURPOSE_BALANCER = 64
HOST_PURPOSE_STRIDE = 256
# Hedging: copy k of an attempt reaches its host as token ``tok | k << COPY_SHIFT`` (tokens of
# attempts stay far below 2**40).
COPY_SHIFT = 40
TOKEN_MASK = (1 << COPY_SHIFT) - 1
# Envoy's ring hash: ``minimum_ring_size`` 1024 points.
RING_SIZE = 1024
# Attempt latencies kept per host (a sample as the clients keep theirs: every other one dropped
# and the interval doubled when full).
HOST_LATENCY_SAMPLE = 1 << 16
# Envoy's defaults (ms): ``interval`` 10 s, ``base_ejection_time`` 30 s, ``max_ejection_time``
# max(300 s, base), ``consecutive_5xx`` 5, ``max_ejection_percent`` 10; ``healthy_panic_threshold`` 50.
ENVOY_INTERVAL_S, ENVOY_BASE_EJECTION_S, ENVOY_MAX_EJECTION_S = 10.0, 30.0, 300.0
ENVOY_CONSECUTIVE_5XX, ENVOY_MAX_EJECTION_PERCENT, ENVOY_PANIC_THRESHOLD = 5, 10.0, 50.0


@dataclass(frozen=True)
class OutlierDetection:
    """Envoy's consecutive-errors outlier detection (see the module docstring); times in the
    simulation's unit (the defaults are Envoy's in ms)."""

    consecutive_errors: int = ENVOY_CONSECUTIVE_5XX
    interval: float = ENVOY_INTERVAL_S * 1000
    base_ejection_time: float = ENVOY_BASE_EJECTION_S * 1000
    max_ejection_percent: float = ENVOY_MAX_EJECTION_PERCENT
    max_ejection_time: float | None = None  # None: max(300 s, base_ejection_time), as Envoy

    def __post_init__(self) -> None:
        if not self.consecutive_errors >= 1:
            raise ParamError("consecutive_errors", f"must be >= 1, got {self.consecutive_errors!r}")
        for name in ("interval", "base_ejection_time"):
            if not getattr(self, name) > 0:
                raise ParamError(name, f"must be > 0, got {getattr(self, name)!r}")
        if not 0 <= self.max_ejection_percent <= 100:
            raise ParamError("max_ejection_percent", f"must be between 0 and 100, got {self.max_ejection_percent!r}")
        if self.max_ejection_time is not None and not self.max_ejection_time >= self.base_ejection_time:
            raise ParamError("max_ejection_time", f"must be >= base_ejection_time ({self.base_ejection_time:g}), "
                             f"got {self.max_ejection_time!r}", "Envoy refuses a smaller one too")

    def longest(self, unit_ms: float = 1.0) -> float:
        """``max_ejection_time``, or Envoy's default max(300 s, base) in units of ``unit_ms`` ms."""
        if self.max_ejection_time is not None:
            return float(self.max_ejection_time)
        return max(ENVOY_MAX_EJECTION_S * 1000 / unit_ms, float(self.base_ejection_time))


@dataclass(frozen=True)
class HealthCheck:
    """Active health checks, as Envoy's: every ``interval`` the balancer probes each host; a host
    is out after ``unhealthy_threshold`` failed probes in a row and back after
    ``healthy_threshold`` passed ones (the lag of both). A probe fails while the host is down
    (crashed, or stopped by an outage) and passes otherwise: a health endpoint sees a dead host,
    not a slow or erring one. A passed probe also returns a host outlier detection ejected
    (Envoy's ``successful_active_health_check_uneject_host``, on by default)."""

    interval: float
    unhealthy_threshold: int
    healthy_threshold: int

    def __post_init__(self) -> None:
        if not self.interval > 0:
            raise ParamError("interval", f"must be > 0, got {self.interval!r}")
        for name in ("unhealthy_threshold", "healthy_threshold"):
            if not getattr(self, name) >= 1:
                raise ParamError(name, f"must be >= 1, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class HostIncident:
    """An incident on some hosts of a fleet: ``kind`` one of ``HOST_KINDS`` at ``level``
    (None for a crash), from ``start`` for ``duration``, on the hosts ``hosts`` (ids)."""

    start: float
    duration: float
    kind: str
    level: float | None
    hosts: tuple[int, ...]

    @property
    def end(self) -> float:
        return self.start + self.duration

    def incident(self) -> Incident:
        """The same window as a whole-server incident (not for a crash or an outage)."""
        return Incident(self.start, self.duration, **{self.kind: self.level})

    def outage(self) -> Outage:
        return Outage(self.start, self.duration)


@dataclass(frozen=True)
class FleetSpec:
    """``[simulation.fleet]``, validated (``sim.settings.fleet`` builds it)."""

    hosts: int
    balancer: str = "round_robin"
    weights: tuple[float, ...] | None = None
    retry_other_host: bool = False
    host_selection_attempts: int = 1
    outlier_detection: OutlierDetection | None = None
    panic_threshold: float = ENVOY_PANIC_THRESHOLD
    incidents: tuple[HostIncident, ...] = ()
    health_check: HealthCheck | None = None
    hedging: Hedging | None = None

    def __post_init__(self) -> None:
        if not self.hosts >= 1:
            raise ParamError("hosts", f"must be >= 1, got {self.hosts!r}")
        if self.balancer not in BALANCERS:
            raise ParamError("balancer", f"must be one of {', '.join(map(repr, BALANCERS))}, got {self.balancer!r}")
        if self.weights is not None:
            if len(self.weights) != self.hosts:
                raise ParamError("weights", f"must give one weight per host ({self.hosts}), got {len(self.weights)}")
            if not all(w > 0 and math.isfinite(w) for w in self.weights):
                raise ParamError("weights", f"must all be finite and > 0, got {list(self.weights)}")
        if not self.host_selection_attempts >= 0:
            raise ParamError("host_selection_attempts", f"must be >= 0, got {self.host_selection_attempts!r}")
        if not 0 <= self.panic_threshold <= 100:
            raise ParamError("panic_threshold", f"must be between 0 and 100 (percent), got {self.panic_threshold!r}")
        for incident in self.incidents:  # a map over hosts may leave an incident's host behind
            if not all(0 <= h < self.hosts for h in incident.hosts):
                raise ParamError("hosts", f"an incident names host {max(incident.hosts)}, but the fleet's hosts "
                                 f"are 0 to {self.hosts - 1}", "name hosts the fleet has")

    @property
    def host_weights(self) -> tuple[float, ...]:
        return self.weights if self.weights is not None else (1.0,) * self.hosts


def _mix64(x: int) -> int:
    """SplitMix64's finaliser: a fixed, well-spread 64-bit hash (the ring's points)."""
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def hash_ring(weights: Sequence[float]) -> tuple[list[int], list[int]]:
    """The ring's points in order and the host owning each: host h gets
    ``max(1, round(RING_SIZE · w_h / Σw))`` points, at hashes of (h, replica)."""
    total = sum(weights)
    points = sorted((_mix64((h << 32) | r), h) for h, w in enumerate(weights)
                    for r in range(max(1, round(RING_SIZE * w / total))))
    return [p for p, _ in points], [h for _, h in points]


class _HostIncidents(Incidents):
    """A host's own incidents: as a server's, their starts and ends naming the host."""

    def __init__(self, wiring: Wiring, incidents: Sequence[Incident], tag: int) -> None:
        self._tag = tag
        super().__init__(wiring, incidents)

    def _begin(self, t: float, c: int, i: int) -> int:
        return super()._begin(t, c, i) | self._tag

    def _finish(self, t: float, c: int, i: int) -> int:
        return super()._finish(t, c, i) | self._tag


class _HostGate(OutageGate):
    """A host's own outages: it stops as a whole server does (arrivals held in its accept
    queue, its work frozen), its pause and resume naming the host."""

    def __init__(self, wiring: Wiring, outages: tuple[Outage, ...], queue: AcceptQueue, host: int) -> None:
        self._tag = ev.host_tag(host)
        super().__init__(wiring, outages, queue)

    def _pause(self, t: float, c: int, i: int) -> int:
        p = super()._pause(t, c, i)
        return p if p == NO_EVENT else p | self._tag

    def _resume(self, t: float, c: int, i: int) -> int:
        p = super()._resume(t, c, i)
        return p if p == NO_EVENT else p | self._tag


class FleetRun:
    """One run's fleet: the hosts' handlers, the balancer and what it counted per host (the
    ``_hosts.csv`` columns: ``requests``, ``successes``, ``errors`` (failure replies),
    ``timeouts``, ``ejections``, ``ejected_time``, attempt ``latencies``)."""

    def __init__(self, fleet: FleetSpec, control: Control, wiring: Wiring, queue: AcceptQueue | None = None,
                 unit_ms: float = 1.0, tag_hosts: bool = True) -> None:
        n = self.n = fleet.hosts
        self.requests = requests = [0] * n
        self.successes = successes = [0] * n
        self.errors = errors = [0] * n
        self.timeouts = timeouts = [0] * n
        self.ejections = ejections = [0] * n
        self.hedges = hedges = [0] * n  # copies sent as hedges (in requests too)
        self.hedges_denied = 0  # hedges the hedging budget or a policy (a gRPC throttle) refused
        self._ejected_at: list[float | None] = [None] * n
        self._ejected_for = [0.0] * n
        self.latencies: list[list[float]] = [[] for _ in range(n)]
        self.max_ejected = 0  # the most hosts out at once
        heap, near, seq = wiring.heap, wiring.near, wiring.seq
        width = len(wiring.net)  # route keys: token · width + client
        draw = serial_stream(wiring._rng(PURPOSE_BALANCER), uniform01)
        self.outstanding = outstanding = [0] * n
        route: dict[int, tuple[int, float]] = {}  # attempt key -> (host, sent at)
        self._route = route
        # Events name their host; a lone server's hedging (``tag_hosts`` false) names none.
        tags = [ev.host_tag(h) if tag_hosts else 0 for h in range(n)]
        weights = fleet.host_weights
        weighted = fleet.weights is not None and len(set(weights)) > 1
        parent_ok, parent_rejected, parent_error = (wiring.client_succeeded, wiring.client_rejected,
                                                    wiring.client_server_error)
        od = fleet.outlier_detection
        threshold = od.consecutive_errors if od is not None else 0
        consecutive = [0] * n
        ejected = self.ejected = [False] * n
        multiplier = [0] * n
        returned_at: list[float | None] = [None] * n
        every = list(range(n))
        healthy = [every]  # the hosts the balancer may use (all, in panic)
        panic_share = fleet.panic_threshold / 100.0
        stride = [1] * n
        since = [0] * n

        # --- what the balancer hears back ---------------------------------------------------
        def ejected_event(t: float, c: int, h: int) -> int:
            return ev.pack(ev.HOST_EJECTED, multiplier[h]) | tags[h]

        def returns_event(t: float, c: int, h: int) -> int:
            return ev.pack(ev.HOST_RETURNS, multiplier[h]) | tags[h]

        unhealthy = self.unhealthy = [False] * n  # failed active health checks

        def refresh() -> None:
            # The hosts in; every host when fewer than the panic threshold's share are in.
            inside = [h for h in every if not ejected[h] and not unhealthy[h]]
            healthy[0] = inside if inside and len(inside) >= panic_share * n else every

        longest = od.longest(unit_ms) if od is not None else 0.0
        base = float(od.base_ejection_time) if od is not None else 0.0

        def eject(t: float, h: int) -> None:
            out = sum(ejected)
            if 100.0 * (out + 1) / n > od.max_ejection_percent:
                return  # Envoy's ejections_overflow: never more than max_ejection_percent out
            ejected[h] = True
            ejections[h] += 1
            self._ejected_at[h] = t
            if multiplier[h] * base < longest + base:
                multiplier[h] += 1
            self.max_ejected = max(self.max_ejected, out + 1)
            refresh()
            heappush(near, (t, seq(), ejected_event, -1, h))

        def error_seen(t: float, h: int) -> None:
            consecutive[h] += 1
            if consecutive[h] == threshold and not ejected[h]:
                consecutive[h] = 0
                eject(t, h)

        def uneject(t: float, h: int) -> None:
            ejected[h] = False
            consecutive[h] = 0
            self._ejected_for[h] += t - self._ejected_at[h]
            self._ejected_at[h] = None
            returned_at[h] = t
            heappush(near, (t, seq(), returns_event, -1, h))

        def sweep(t: float, c: int, a: int) -> int:
            # Envoy's onIntervalTimer: return hosts out long enough, then lower the multiplier
            # of those back for an interval or more.
            changed = False
            for h in every:
                if ejected[h] and min(base * multiplier[h], longest) <= t - self._ejected_at[h]:
                    uneject(t, h)
                    changed = True
            for h in every:
                if (not ejected[h] and returned_at[h] is not None and t - returned_at[h] >= interval
                        and multiplier[h]):
                    multiplier[h] -= 1
            if changed:
                refresh()
            heappush(heap, (t + interval, seq(), sweep, -1, 0))
            return NO_EVENT

        if od is not None:
            interval = float(od.interval)
            heappush(heap, (interval, seq(), sweep, -1, 0))

        def answered(key: int) -> int:
            # The host an attempt went to, now answered (-1: already counted, e.g. timed out).
            entry = route.pop(key, None)
            if entry is None:
                return -1
            outstanding[entry[0]] -= 1
            return entry[0]

        hedging = fleet.hedging
        # hedging: key -> [copies in flight [(host, sent, copy)], copies sent, hosts tried]. Copy k of
        # attempt ``tok`` reaches its host as token ``tok | k << COPY_SHIFT`` (copy 0: ``tok``), so
        # two copies on one host are two requests there; the replies are mapped back.
        live: dict[int, list] = {}
        ghosts: dict[int, int] = {}  # hedging: key -> replies still to come from cancelled copies

        def hedged_replies(h: int) -> tuple[Callable, Callable, Callable]:
            lat = self.latencies[h]

            def answer(ok: bool, parent: Callable, kind: int) -> Callable:
                def reply(t: float, c: int, copy_tok: int) -> int:
                    tok, k = copy_tok & TOKEN_MASK, copy_tok >> COPY_SHIFT
                    key = tok * width + c
                    entry = live.get(key)
                    if entry is None:
                        left = ghosts.get(key)
                        if left is not None:  # a cancelled copy's reply: ignored
                            if left <= 1:
                                del ghosts[key]
                            else:
                                ghosts[key] = left - 1
                            return NO_EVENT
                        return parent(t, c, tok)  # its client stopped waiting: late, as ever
                    flying = entry[0]
                    sent = next(x for x in flying if x[2] == k)
                    flying.remove(sent)
                    outstanding[h] -= 1
                    if ok:
                        successes[h] += 1
                        consecutive[h] = 0
                        if len(lat) < HOST_LATENCY_SAMPLE:
                            lat.append(t - sent[1])
                        del live[key]
                        if flying:  # the first answer wins: the other copies are cancelled
                            ghosts[key] = ghosts.get(key, 0) + len(flying)
                            for other, _, j in flying:
                                outstanding[other] -= 1
                                if stops[other] is not None:
                                    stops[other](t, c, tok | j << COPY_SHIFT)
                        return parent(t, c, tok)
                    errors[h] += 1
                    if threshold:
                        error_seen(t, h)
                    if flying:
                        copy_failed(t, c, tok, kind)  # the call goes on: the failure costs what it costs
                        return NO_EVENT  # other copies are still out: wait for them
                    if entry[1] < copies_max and allowed(t, c, tok, kind):
                        return send_copy(t, c, tok, entry)  # gRPC: a failure sends the next hedge at once
                    del live[key]
                    return parent(t, c, tok)
                return reply
            return (answer(True, parent_ok, 0), answer(False, parent_rejected, REJECTED),
                    answer(False, parent_error, SERVER_ERROR))

        def replies(h: int) -> tuple[Callable, Callable, Callable]:
            if hedging is not None:
                return hedged_replies(h)
            lat = self.latencies[h]

            def ok(t: float, c: int, tok: int) -> int:
                key = tok * width + c
                entry = route.get(key)
                if entry is not None:
                    del route[key]
                    outstanding[h] -= 1
                    successes[h] += 1
                    consecutive[h] = 0
                    since[h] += 1
                    if since[h] >= stride[h]:
                        since[h] = 0
                        lat.append(t - entry[1])
                        if len(lat) > HOST_LATENCY_SAMPLE:
                            del lat[1::2]
                            stride[h] *= 2
                return parent_ok(t, c, tok)

            def failing(parent: Callable) -> Callable:
                def failed(t: float, c: int, tok: int) -> int:
                    if answered(tok * width + c) >= 0:
                        errors[h] += 1
                        if threshold:
                            error_seen(t, h)
                    return parent(t, c, tok)
                return failed
            return ok, failing(parent_rejected), failing(parent_error)

        # --- the hosts ------------------------------------------------------------------------
        crashes: list[list[HostIncident]] = [[] for _ in range(n)]
        outages: list[list[Outage]] = [[] for _ in range(n)]
        others: list[list[Incident]] = [[] for _ in range(n)]
        for incident in fleet.incidents:
            for h in incident.hosts:
                if incident.kind == "crash":
                    crashes[h].append(incident)
                elif incident.kind == "outage":
                    outages[h].append(incident.outage())
                else:
                    others[h].append(incident.incident())
        crashed = [False] * n
        doors: list[Callable] = []
        stops: list[Callable | None] = []
        self.host_wirings: list[Wiring] = []
        for h in range(n):
            w = copy.copy(wiring)
            if h:
                offset, rng = h * HOST_PURPOSE_STRIDE, wiring._rng
                w._rng = lambda purpose, rng=rng, offset=offset: rng(purpose + offset)
            w._server_rng = None
            w.client_succeeded, w.client_rejected, w.client_server_error = replies(h)
            w.incident_hooks = None
            w.server_hooks = None
            w.server_state = _idle
            w.fleet = None
            w.after_service = _tagging_after(wiring, tags[h])
            w.event_tag = tags[h]  # a server's own events (a PoolServer's drops) name the host
            if hedging is not None and wiring.still_waiting is not None:
                w.still_waiting = _copy_waiting(wiring.still_waiting)
            if outages[h]:  # its own gate (the config refuses whole-fleet outages with these)
                w.gate = _HostGate(w, tuple(sorted(outages[h], key=lambda o: o.start)),
                                   queue if queue is not None else AcceptQueue(), h)
                w.gate.still_waiting = w.still_waiting
            handlers = control.build(w)
            door = _tagging(handlers.receive_write, tags[h])
            if others[h]:
                incidents = _HostIncidents(w, others[h], tags[h])
                incidents.bind(w.incident_hooks)
                door = incidents.wrap(door)  # its error replies name no host: tag at the door
                door = _tagging(door, tags[h])
            if outages[h]:
                door = w.gate.wrap(door)  # errors inside the gate: a stopped host sends none
            if crashes[h]:
                door = _crashing(w, h, door, crashes[h], crashed, tags[h])
            doors.append(door)
            stops.append(handlers.stopped_waiting)
            self.host_wirings.append(w)
        wirings = self.host_wirings

        hc = fleet.health_check
        if hc is not None:
            failed_in_row, passed_in_row = [0] * n, [0] * n
            down_bound, up_bound = hc.unhealthy_threshold, hc.healthy_threshold
            parent_gate = wiring.gate

            def health_event(code: int) -> Callable:
                def event(t: float, c: int, h: int) -> int:
                    return ev.pack(code) | tags[h]
                return event
            goes_unhealthy, goes_healthy = health_event(ev.HOST_UNHEALTHY), health_event(ev.HOST_HEALTHY)

            def probe(t: float, c: int, a: int) -> int:
                changed = False
                for h in every:
                    gate = wirings[h].gate
                    down = crashed[h] or (gate is not None and gate.paused) or (parent_gate is not None
                                                                               and parent_gate.paused)
                    if down:
                        passed_in_row[h] = 0
                        failed_in_row[h] += 1
                        if not unhealthy[h] and failed_in_row[h] >= down_bound:
                            unhealthy[h] = changed = True
                            heappush(near, (t, seq(), goes_unhealthy, -1, h))
                        continue
                    failed_in_row[h] = 0
                    passed_in_row[h] += 1
                    if unhealthy[h] and passed_in_row[h] >= up_bound:
                        unhealthy[h] = False
                        changed = True
                        heappush(near, (t, seq(), goes_healthy, -1, h))
                    if not unhealthy[h] and ejected[h]:
                        uneject(t, h)  # successful_active_health_check_uneject_host
                        changed = True
                if changed:
                    refresh()
                heappush(heap, (t + hc.interval, seq(), probe, -1, 0))
                return NO_EVENT
            heappush(heap, (float(hc.interval), seq(), probe, -1, 0))

        def server_state() -> tuple[int, int]:
            busy = queued = 0
            for w in wirings:
                b, q = w.server_state()
                busy += b
                queued += q
            return busy, queued
        wiring.server_state = server_state
        hooks = [w.incident_hooks for w in wirings if w.incident_hooks is not None]
        if hooks:
            wiring.incident_hooks = IncidentHooks(
                lambda t, f: [hk.set_capacity(t, f) for hk in hooks] and None,
                lambda t, f: [hk.set_slowdown(t, f) for hk in hooks] and None)

        # --- the balancer -----------------------------------------------------------------------
        pick = _balancer(fleet.balancer, weights, weighted, outstanding, draw)
        retry_other, tries_more = fleet.retry_other_host, fleet.host_selection_attempts
        attempt_of = wiring.attempt_of
        tried: dict[int, list[int]] = {}  # call -> the hosts its attempts went to

        def choose(c: int, tok: int) -> int:
            pool = healthy[0]
            if not retry_other or attempt_of is None:
                return pick(pool, c, 0)
            call, k = attempt_of(c, tok)
            if k <= 1:
                h = pick(pool, c, 0)
                tried[call] = [h]
                return h
            before = tried.setdefault(call, [])
            h = pick(pool, c, 0)
            for i in range(1, tries_more + 1):
                if h not in before:
                    break
                h = pick(pool, c, i)
            before.append(h)
            return h

        def receive_write(t: float, c: int, tok: int) -> int:
            h = choose(c, tok)
            route[tok * width + c] = (h, t)
            outstanding[h] += 1
            requests[h] += 1
            return doors[h](t, c, tok)

        def reset(t: float, h: int, c: int, tok: int) -> None:
            # The client stopped waiting for its attempt on host h (its timeout): the balancer
            # resets the request (Envoy: a 504, an error for outlier detection), the host hears it.
            timeouts[h] += 1
            if threshold:
                error_seen(t, h)
            if stops[h] is not None:
                stops[h](t, c, tok)

        def stopped_waiting(t: float, c: int, tok: int) -> int:
            h = answered(tok * width + c)
            if h >= 0:
                reset(t, h, c, tok)
            return NO_EVENT

        if hedging is not None:
            copies_max, delay = hedging.max_attempts, float(hedging.delay)
            # The run's hedges counter (a tier's series keep none: its wiring's own counters)
            hedged_series = getattr(wiring.series, "hedges", None) or defaultdict(int)
            inverse = wiring.series.inverse_width
            deposit = None if hedging.budget is None else hedging.budget / 100.0
            tokens = [HEDGE_BURST]
            chain_of = wiring.chain_of  # the client's policies, which gate hedges (None: a plain strategy)

            def allowed(t: float, c: int, tok: int, kind: int | None = None) -> bool:
                # The hedging budget first (a look, no token taken), then the entry's policies
                # (a gRPC throttle; ``kind``: the failed copy this hedge would follow at once).
                if deposit is not None and tokens[0] < 1.0:
                    self.hedges_denied += 1
                    return False
                chain = chain_of(c, tok) if chain_of is not None else None
                if chain is not None and not chain.on_hedge(t, kind):
                    self.hedges_denied += 1
                    return False
                if deposit is not None:
                    tokens[0] -= 1.0
                return True

            def copy_failed(t: float, c: int, tok: int, kind: int) -> None:
                # A copy failed while others are out: what a failed attempt costs (A6).
                chain = chain_of(c, tok) if chain_of is not None else None
                if chain is not None:
                    chain.on_copy_failure(t, kind)

            # A hedge sent while the whole fleet is stopped waits at its gate as any arrival
            # (the gate reads a copy's token as its attempt's).
            parent_gate = wiring.gate
            if parent_gate is not None and parent_gate.still_waiting is not None:
                parent_gate.still_waiting = _copy_waiting(parent_gate.still_waiting)
            hedge_doors = doors if parent_gate is None else [parent_gate.wrap(d) for d in doors]
            cell, call_id = wiring.call, wiring.call_id_of or _no_call

            def send_copy(t: float, c: int, tok: int, entry: list) -> int:
                # A hedge: to a host this attempt has not tried, if the balancer finds one.
                pool, tried = healthy[0], entry[2]
                h = pick(pool, c, 0)
                for i in range(1, len(pool) + 1):
                    if h not in tried:
                        break
                    h = pick(pool, c, i)
                tried.append(h)
                k = entry[1]
                entry[0].append((h, t, k))
                entry[1] = k + 1
                outstanding[h] += 1
                requests[h] += 1
                hedges[h] += 1
                hedged_series[int(t * inverse)] += 1
                # The hedge is an event of its call (``client_hedges``, copy k); the copy's
                # arrival, handled now, is recorded just after it, at the same time.
                arrival = hedge_doors[h](t, c, tok | k << COPY_SHIFT)
                if arrival != NO_EVENT:
                    heappush(near, (t, seq(), _recorded, c, arrival))
                cell[0] = call_id(c, tok)
                return ev.pack(ev.CLIENT_HEDGES, k)

            def hedge_due(t: float, c: int, tok: int) -> int:
                entry = live.get(tok * width + c)
                if entry is None or entry[1] >= copies_max or not allowed(t, c, tok):
                    return NO_EVENT  # answered, given up on, all copies sent, or no budget
                if entry[1] + 1 < copies_max:
                    heappush(heap, (t + delay, seq(), hedge_due, c, tok))
                return send_copy(t, c, tok, entry)

            def receive_write(t: float, c: int, tok: int) -> int:
                h = choose(c, tok)
                live[tok * width + c] = [[(h, t, 0)], 1, [h]]
                outstanding[h] += 1
                requests[h] += 1
                if deposit is not None:
                    tokens[0] = min(HEDGE_BURST, tokens[0] + deposit)
                heappush(heap, (t + delay, seq(), hedge_due, c, tok))
                return doors[h](t, c, tok)

            def stopped_waiting(t: float, c: int, tok: int) -> int:
                entry = live.pop(tok * width + c, None)
                if entry is not None:
                    for h, _, k in entry[0]:  # every copy in flight
                        outstanding[h] -= 1
                        reset(t, h, c, tok | k << COPY_SHIFT)
                return NO_EVENT

        self.handlers = ServerHandlers(receive_write, None, stopped_waiting)

    def ejected_time(self, end: float) -> list[float]:
        """Each host's time out of the balancer's set up to ``end`` (an ejection still on counts to it)."""
        return [spent + (max(0.0, end - at) if at is not None else 0.0)
                for spent, at in zip(self._ejected_for, self._ejected_at)]


def _recorded(t: float, c: int, packed: int) -> int:
    """An event already handled, recorded now (a hedged copy's arrival, after its hedge)."""
    return packed


def _no_call(c: int, tok: int) -> int:
    return -1


def _idle() -> tuple[int, int]:
    return 0, 0


def _copy_waiting(still_waiting: Callable[[int, int], bool]) -> Callable[[int, int], bool]:
    """A host's ``still_waiting`` under hedging: a copy's token read as its attempt's."""
    def waiting(c: int, tok: int) -> bool:
        return still_waiting(c, tok & TOKEN_MASK)
    return waiting


def _tagging(door: Callable, tag: int) -> Callable:
    """A host's door whose events name the host."""
    def tagged(t: float, c: int, tok: int) -> int:
        p = door(t, c, tok)
        return p if p == NO_EVENT else p | tag
    return tagged


def _tagging_after(wiring: Wiring, tag: int) -> Callable:
    """A host's ``after_service``: the run's (a completion, or a call to the tier below), its
    events naming the host."""
    def after_service(complete: Callable) -> Callable:
        return _tagging(wiring.after_service(complete), tag)
    return after_service


def _crashing(w: Wiring, h: int, door: Callable, windows: Sequence[HostIncident], crashed: list[bool],
              tag: int) -> Callable:
    """Host h's door while its crash windows last: each arrival is refused at once (the client
    hears a rejection after the network delay); the windows' starts and ends are events."""
    heap, near, seq, net, series = w.heap, w.near, w.seq, w.net, w.series
    refused = w.client_rejected
    rejected_series, inv = series.rejected, series.inverse_width
    rejects = ev.pack(ev.SERVER_REJECTS) | tag
    starts = ev.pack(ev.SERVER_INCIDENT_STARTS, CRASH_INDEX) | tag
    ends = ev.pack(ev.SERVER_INCIDENT_ENDS, CRASH_INDEX) | tag

    def begin(t: float, c: int, a: int) -> int:
        crashed[h] = True
        return starts

    def finish(t: float, c: int, a: int) -> int:
        crashed[h] = False
        return ends

    for window in windows:
        heappush(heap, (window.start, seq(), begin, -1, 0))
        heappush(heap, (window.end, seq(), finish, -1, 0))

    def crashing(t: float, c: int, tok: int) -> int:
        if crashed[h]:
            rejected_series[int(t * inv)] += 1
            heappush(near, (t + net[c](), seq(), refused, c, tok))
            return rejects
        return door(t, c, tok)
    return crashing


def _balancer(name: str, weights: Sequence[float], weighted: bool, outstanding: list[int],
              draw: Callable[[], float]) -> Callable[[list[int], int, int], int]:
    """``pick(pool, client, i)``: the host for an attempt among ``pool`` (the hosts in), ``i``
    the re-pick of this selection (0 first; ``retry_other_host``'s further picks)."""
    if name == "round_robin":
        if not weighted:
            turn = [0]

            def round_robin(pool: list[int], c: int, i: int) -> int:
                k = turn[0]
                turn[0] = k + 1
                return pool[k % len(pool)]
            return round_robin
        current = [0.0] * len(weights)

        def smooth_weighted(pool: list[int], c: int, i: int) -> int:
            best, total = pool[0], 0.0
            for h in pool:
                current[h] += weights[h]
                total += weights[h]
                if current[h] > current[best]:
                    best = h
            current[best] -= total
            return best
        return smooth_weighted
    if name == "random":
        if not weighted:
            def uniform(pool: list[int], c: int, i: int) -> int:
                return pool[int(draw() * len(pool))]
            return uniform

        def proportional(pool: list[int], c: int, i: int) -> int:
            cumulative = list(accumulate(weights[h] for h in pool))
            return pool[min(bisect_right(cumulative, draw() * cumulative[-1]), len(pool) - 1)]
        return proportional
    if name == "least_request":
        def least(pool: list[int], c: int, i: int) -> int:
            loads = [outstanding[h] / weights[h] for h in pool] if weighted else [outstanding[h] for h in pool]
            low = min(loads)
            ties = [h for h, load in zip(pool, loads) if load == low]
            return ties[0] if len(ties) == 1 else ties[int(draw() * len(ties))]
        return least
    if name == "p2c":
        def two_choices(pool: list[int], c: int, i: int) -> int:
            size = len(pool)
            first, second = pool[int(draw() * size)], pool[int(draw() * size)]
            if weighted:
                return second if outstanding[second] / weights[second] < outstanding[first] / weights[first] else first
            return second if outstanding[second] < outstanding[first] else first
        return two_choices
    points, owners = hash_ring(weights)

    def ring(pool: list[int], c: int, i: int) -> int:
        # The i-th distinct host in the pool clockwise from the client's point.
        inside = set(pool)
        at = bisect_left(points, _mix64(c ^ 0x5BD1E995))
        seen: list[int] = []
        for step in range(len(points)):
            h = owners[(at + step) % len(points)]
            if h in inside and h not in seen:
                if len(seen) == i:
                    return h
                seen.append(h)
        return seen[i % len(seen)] if seen else pool[0]
    return ring


def build_fleet(fleet: FleetSpec, control: Control, wiring: Wiring, queue: AcceptQueue | None = None,
                unit_ms: float = 1.0, tag_hosts: bool = True) -> ServerHandlers:
    """The fleet's entry points for one run (``wiring.fleet`` holds its ``FleetRun``); ``queue``:
    the simulation's accept queue, for the hosts' own outages; ``tag_hosts`` false: a lone
    server's hedging (a fleet of one host whose events name no host)."""
    run = FleetRun(fleet, control, wiring, queue, unit_ms, tag_hosts)
    wiring.fleet = run
    return run.handlers
