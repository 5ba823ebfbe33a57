"""A server that fails each attempt independently: Brooker's retry_sim server.

Source: mbrooker/simulator_example ``retry_sim/client.py`` (``Server.handle``): every attempt fails
with probability ``failure_rate``, whatever the load; there is no capacity limit and no queue. Here
each attempt is also served for ``latency`` (0 in his model), concurrently. A failure is a transient
server error (an HTTP 500), not throttling: it reaches the client as the failure kind
``SERVER_ERROR`` of ``sim.vocabulary.outcomes``, which kind-aware policies treat as their libraries treat a
500 (botocore: the transient retry cost and base delay, no slow-down in adaptive mode). It is still
the event ``server_rejects`` (the server answered no) and the series ``rejected``. Its draws come from the
run's server stream, one uniform per attempt in arrival order, so every strategy of a run sees the
same failures for the same arrivals.
"""

from __future__ import annotations

from dataclasses import dataclass
from heapq import heappush
from typing import TYPE_CHECKING, ClassVar

from sim.core import events as ev
from sim.core.streams import uniform01
from sim.vocabulary.errors import ParamError
from sim.models.controls import Capabilities, Control, ServerHandlers, register
from sim.models.incidents import IncidentHooks
from sim.vocabulary.params import at_least

if TYPE_CHECKING:
    from sim.core.wiring import Wiring


@register
@dataclass(frozen=True, kw_only=True)
class FlakyServer(Control):
    """Fails each attempt with probability ``failure_rate``, after ``latency``, at any load.

    Incidents: it has no capacity to take away (no limit, no queue: Brooker's model), so only an
    outage (capacity 0); a slowdown stretches the ``latency`` of attempts that arrive in the
    window; an error rate fails attempts before its own draw (together 1 − (1 − e)(1 − f)).
    """

    CAPS: ClassVar[Capabilities] = Capabilities(
        replies=True, keeps_series=True, latencies=True,
        events=frozenset({ev.SERVER_ACCEPTS, ev.SERVER_REJECTS, ev.SERVER_COMPLETES}),
        series=("accepted", "rejected"), state_sample=True)
    INCIDENTS: ClassVar[frozenset[str]] = frozenset({"slowdown", "error_rate"})
    CALLS_TIERS: ClassVar[bool] = True
    failure_rate: float
    latency: float = 0.0

    def validate(self) -> None:
        if not 0 <= self.failure_rate <= 1:
            raise ParamError("failure_rate", f"must be between 0 and 1, got {self.failure_rate!r}")
        at_least(self, 0, "latency")

    def incident_problem(self, kind: str) -> tuple[str, str] | None:
        if kind == "slowdown" and self.latency == 0:
            return ("has nothing to stretch: FlakyServer's latency is 0",
                    "give the server a latency, or use error_rate or capacity = 0 (an outage)")
        if kind == "capacity":
            return ("FlakyServer has no capacity to take away (no limit, no queue)",
                    "use capacity = 0 (an outage), slowdown or error_rate")
        return super().incident_problem(kind)

    def build(self, wiring: Wiring) -> ServerHandlers:
        heap, seq, net, gate = wiring.heap, wiring.seq, wiring.net, wiring.gate
        near = wiring.near  # replies on their way (``Wiring.near``: no outage moves them)
        rejected, succeeded, series = wiring.client_server_error, wiring.client_succeeded, wiring.series
        draw = wiring.server_stream(uniform01)
        failure_rate, latency, normal = float(self.failure_rate), float(self.latency), float(self.latency)
        accepted_series, rejected_series, inv = series.accepted, series.rejected, series.inverse_width
        accepts, rejects = ev.pack(ev.SERVER_ACCEPTS), ev.pack(ev.SERVER_REJECTS)
        completes_code, shift = ev.SERVER_COMPLETES, ev.DETAIL_SHIFT
        tag = wiring.event_tag  # a fleet host's events name the host (sim.models.fleet)
        in_service = 0
        calls_down = wiring.downstream is not None  # each success calls the tier below first

        def receive_write(t: float, c: int, token: int) -> int:
            nonlocal in_service
            if draw() < failure_rate:
                rejected_series[int(t * inv)] += 1
                reply, code = rejected, rejects
            else:
                accepted_series[int(t * inv)] += 1
                reply, code = succeeded, accepts
            if latency or calls_down:
                in_service += 1
                if reply is succeeded:
                    heappush(heap, (t + latency, seq(), served, c, token))
                else:
                    heappush(heap, (t + latency, seq(), complete, c, ~token))
            else:
                heappush(near, (t + net[c](), seq(), reply, c, token))
            return code

        def complete(t: float, c: int, token: int) -> int:
            # ``~token`` (negative) marks a failed attempt: the reply says so.
            nonlocal in_service
            in_service -= 1
            if token < 0:
                heappush(near, (t + net[c](), seq(), rejected, c, ~token))
            else:
                heappush(near, (t + net[c](), seq(), succeeded, c, token))
            return completes_code | ((in_service + 1) << shift) | tag  # a failed one's: not through served

        def set_slowdown(t: float, factor: float) -> None:
            nonlocal latency
            latency = normal * factor

        def set_capacity(t: float, fraction: float) -> None:
            raise AssertionError("FlakyServer has no capacity incidents (refused by the config)")

        served = wiring.after_service(complete)  # complete, or the call to a tier below first
        if gate is not None:
            gate.freeze(served)
            gate.freeze(complete)
        wiring.server_state = lambda: (in_service, 0)
        wiring.incident_hooks = IncidentHooks(set_capacity, set_slowdown)
        return ServerHandlers(receive_write)
