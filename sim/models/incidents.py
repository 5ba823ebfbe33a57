"""Incidents: for a window the server keeps part of its capacity, slows down, or fails attempts.

``incidents = [{ start, duration, capacity = 0.5 }, { start, duration, slowdown = 3.0 },
{ start, duration, error_rate = 0.3 }]``; each incident changes one knob of the whole server:

- ``capacity`` (0 to 1): the fraction of its capacity the server keeps. What capacity is belongs
  to the server kind (``Control.INCIDENTS`` says which kinds a server honours; it applies them
  through the ``IncidentHooks`` it sets on ``wiring.incident_hooks``): a ``QueueServer`` keeps
  that fraction of its service slots (``kept_slots``, each slower where the fraction of them
  is not whole: ``slot_speed``), a ``PoolServer`` of its workers likewise, a ``LatencyServer`` of
  its concurrency limit. Work in service finishes; new work starts only while fewer than the kept slots are busy.
  ``capacity = 0`` is an outage, exactly as ``outages`` (``sim.models.outage``: the server stops,
  arrivals wait in the backlog), so the engine hands such incidents to the ``OutageGate`` and
  they never reach this module (``SimulationSpec.stops``).
- ``slowdown`` (>= 1): work the server starts in the window takes that many times longer (a
  ``LatencyServer`` under its ``"current"`` rule re-judges its requests in flight at each check,
  as it does for a change of load).
- ``error_rate`` (0 to 1): each attempt that reaches the server in the window fails with that
  probability, at once and at no cost: an error reply (``sim.vocabulary.outcomes.SERVER_ERROR``, as
  ``FlakyServer``'s) after the network delay, the event ``server_rejects`` and the series
  ``rejected``. The draws come from the run's own incident stream
  (``sim.core.streams.PURPOSE_INCIDENTS``), one uniform per attempt in the window in arrival
  order, so no other stream moves and every strategy of a run sees the same draws.

Incidents of different kinds may overlap (a bad deploy that slows the server and fails some
requests); two of one kind may not (which capacity would hold?), and capacity incidents may not
overlap outages. The engine records ``server_incident_starts`` and ``server_incident_ends``
(detail: the kind) with client -1, as an outage's pause and resume.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from heapq import heappush
from typing import TYPE_CHECKING, NamedTuple

from sim.vocabulary.bounds import MAX_TIME
from sim.core import events as ev
from sim.core.streams import PURPOSE_INCIDENTS, serial_stream, uniform01
from sim.vocabulary.errors import ParamError

if TYPE_CHECKING:
    from sim.core.wiring import Wiring
    from sim.models.controls import Control
    from sim.models.workloads import Outage

KINDS = ev.INCIDENT_KINDS  # ("capacity", "slowdown", "error_rate")
_KIND_INDEX = {kind: i for i, kind in enumerate(KINDS)}
# The level of no incident of each kind: what a server runs at outside every window.
NORMAL = {"capacity": 1.0, "slowdown": 1.0, "error_rate": 0.0}
# A ramp back to normal is this many equal steps (``Incident.ramp_level``): capacity comes back in
# 1/64ths of the change, finer than a pool of 16 workers' one worker in 16.
RAMP_STEPS = 64


@dataclass(frozen=True)
class Incident:
    """One window of ``duration`` from ``start`` in which exactly one of ``capacity``,
    ``slowdown`` or ``error_rate`` is set (the others None)."""

    start: float
    duration: float
    capacity: float | None = None
    slowdown: float | None = None
    error_rate: float | None = None
    # The time the knob takes, after ``duration``, to return linearly to normal (a cold cache, an
    # autoscaler adding capacity back): 0, at once. The incident ``end``s when it is back.
    ramp: float = 0.0

    def __post_init__(self) -> None:
        given = [kind for kind in KINDS if getattr(self, kind) is not None]
        if len(given) != 1:
            raise ParamError(given[1] if len(given) > 1 else "capacity",
                             f"an incident sets exactly one of {', '.join(KINDS)}, got "
                             f"{' and '.join(given) if given else 'none'}",
                             "write one incident per kind; incidents of different kinds may overlap"
                             if given else "add e.g. capacity = 0.5, slowdown = 3.0 or error_rate = 0.3")
        for name in ("start", "duration", "ramp", *given):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ParamError(name, f"must be a finite number, got {value!r}")
        if not self.start >= 0:
            raise ParamError("start", f"must be >= 0, got {self.start!r}")
        if not self.duration > 0:
            raise ParamError("duration", f"must be > 0, got {self.duration!r}")
        if not self.ramp >= 0:
            raise ParamError("ramp", f"must be >= 0 (the time back to normal after the incident), got {self.ramp!r}")
        level = self.level
        if self.ramp and self.kind == "capacity" and level == 0.0:
            raise ParamError("ramp", "an outage (capacity 0) resumes at once",
                             "follow it with a capacity incident that starts at its end, e.g. "
                             "{ start = <its end>, duration = 1.0, capacity = 0.1, ramp = 60.0 }")
        if self.kind == "slowdown":
            if not level >= 1:
                raise ParamError("slowdown", f"must be >= 1 (work takes that many times longer), got {level!r}")
        elif not 0 <= level <= 1:
            raise ParamError(self.kind, f"must be between 0 and 1, got {level!r}")

    @property
    def kind(self) -> str:
        """``capacity``, ``slowdown`` or ``error_rate``: the knob this incident turns."""
        return next(kind for kind in KINDS if getattr(self, kind) is not None)

    @property
    def level(self) -> float:
        """The knob's value in the window."""
        return float(getattr(self, self.kind))

    @property
    def ramp_start(self) -> float:
        """When the ramp back to normal begins: the end of ``duration``."""
        return self.start + self.duration

    @property
    def end(self) -> float:
        """When the knob is back to normal: after ``duration`` and the ``ramp``."""
        return self.start + self.duration + self.ramp

    def ramp_level(self, step: int) -> float:
        """The knob over step ``step`` of the ramp's ``RAMP_STEPS``: the linear ramp's mean over
        that step, so the capacity (or slowdown, or error rate) the steps give over the ramp is
        the linear one's, within 1 / (2 · RAMP_STEPS) of the change at any instant."""
        normal = NORMAL[self.kind]
        return self.level + (normal - self.level) * (step + 0.5) / RAMP_STEPS

    @property
    def is_outage(self) -> bool:
        """Capacity 0: the server stops, as in an outage (``sim.models.outage``)."""
        return self.kind == "capacity" and self.level == 0.0


def incident_label(incident: Incident) -> str:
    """A few words for charts: ``capacity 50%``, ``slowdown ×3``, ``errors 30%`` (``outage`` for
    capacity 0)."""
    if incident.is_outage:
        return "outage"
    level = incident.level
    if incident.kind == "slowdown":
        return f"slowdown ×{level:g}"
    return f"{'capacity' if incident.kind == 'capacity' else 'errors'} {level * 100:.4g}%"


def kept_slots(slots: int, capacity: float) -> int:
    """Slots a server of ``slots`` keeps at ``capacity`` (0 < capacity <= 1): ``slots ·
    capacity`` rounded up, at least 1 (0 slots would stop service without an outage's rules:
    write capacity = 0 for those). Where that is not whole, each kept slot serves more slowly
    (``slot_speed``), so the server keeps exactly ``slots · capacity`` slots' worth of service:
    one worker at 0.3 is one worker at 30% of its speed, 3 at 0.5 are 2 at 75%."""
    return max(1, math.ceil(slots * capacity - _WHOLE))


def slot_speed(slots: int, capacity: float) -> float:
    """The speed of each slot kept at ``capacity`` (``kept_slots``), as a fraction of its own:
    1 where ``slots · capacity`` is whole; a slot's service takes 1 / speed times as long."""
    if capacity >= 1.0:
        return 1.0
    speed = slots * capacity / kept_slots(slots, capacity)
    return 1.0 if speed > 1.0 - _WHOLE else speed


_WHOLE = 1e-9  # slots · capacity this close to a whole number is that number (0.1 · 30 = 3.0000000000000004)


class IncidentHooks(NamedTuple):
    """What a server that honours capacity and slowdown incidents lets the engine change while it
    runs (set on ``wiring.incident_hooks`` by ``Control.build``): ``set_capacity(t, fraction)``
    (work in service finishes; slots freed or regained take queued work at once) and
    ``set_slowdown(t, factor)`` (work that starts from now on takes ``factor`` times longer). Each
    is called with the normal level (1.0) when the incident ends."""

    set_capacity: Callable[[float, float], None]
    set_slowdown: Callable[[float, float], None]


# --- validation: the spec-wide rules, for the config loader and explore's cells -----------------

Problem = tuple[str, str, "str | None"]  # (key suffix such as "[2].start", message, hint)


def schedule_problems(incidents: Sequence[Incident], outages: Sequence[Outage],
                      horizon: float | None) -> list[Problem]:
    """What is wrong with the list's windows, each as ``([i].key, message, hint)`` (``i`` counted
    from 0, as every key path): out of time order, overlapping one of the same kind (an outage is a capacity
    window), at or after the horizon, or ending after ``MAX_TIME``."""
    problems: list[Problem] = []
    previous: Incident | None = None
    for i, incident in enumerate(incidents):
        where = f"[{i}]"
        if previous is not None and incident.start < previous.start:
            problems.append((f"{where}.start", f"precedes the previous incident's start ({previous.start:g})",
                             "list incidents in time order"))
        elif horizon is not None and incident.start >= horizon:
            problems.append((f"{where}.start", f"is at or after the horizon ({horizon:g})", None))
        elif incident.end <= MAX_TIME:
            clash = _overlap(incident, incidents[:i], outages)
            if clash is not None:
                problems.append((f"{where}.start", clash, "incidents of one kind, and capacity incidents "
                                 "and outages, may not overlap; different kinds may"))
        if incident.end > MAX_TIME:  # the end's own mistake, beside the start's
            problems.append((f"{where}.duration", f"ends after {MAX_TIME:g}, got start + duration = "
                             f"{incident.end:g}", "larger times overflow or lose the clock's resolution"))
        previous = incident
    return problems


def _overlap(incident: Incident, earlier: Sequence[Incident], outages: Iterable[Outage]) -> str | None:
    kind = incident.kind
    for other in earlier:
        if other.kind == kind and incident.start < other.end and other.start < incident.end:
            return f"overlaps an earlier {kind} incident ({other.start:g} to {other.end:g})"
    if kind == "capacity":
        for outage in outages:
            if incident.start < outage.end and outage.start < incident.end:
                return f"overlaps an outage ({outage.start:g} to {outage.end:g}); capacity 0 is an outage"
    return None


def control_problems(control: Control, incidents: Sequence[Incident]) -> list[Problem]:
    """Incidents the server kind cannot run (``Control.incident_problem``), as ``schedule_problems``."""
    problems: list[Problem] = []
    for i, incident in enumerate(incidents):
        if incident.is_outage:
            continue  # an outage stops any server
        problem = control.incident_problem(incident.kind)
        if problem is not None:
            problems.append((f"[{i}].{incident.kind}", problem[0], problem[1]))
    return problems


def merged_windows(windows: Iterable[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """Overlapping or touching ``(start, end)`` windows joined, in time order."""
    out: list[list[float]] = []
    for start, end in sorted(windows):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return tuple((s, e) for s, e in out)


# --- the run: markers on the heap, the hooks of the server, the error draws --------------------

class Incidents:
    """One run's incidents (outages aside): each start and end is an item of the heap that sets
    the knob, tells the server (``IncidentHooks``) and is recorded; ``wrap`` fails attempts while
    an error-rate incident lasts. A capacity change that falls while an outage has the server
    stopped (at the outage's very start) is applied at the resume."""

    EVENTS = frozenset({ev.SERVER_INCIDENT_STARTS, ev.SERVER_INCIDENT_ENDS})  # every event code it records
    # ``marker``: the client id its starts and ends are recorded with, as ``OutageGate``'s.

    def __init__(self, wiring: Wiring, incidents: Sequence[Incident], marker: int = -1) -> None:
        self.capacity = 1.0
        self.slowdown = 1.0
        self.error_rate = 0.0
        self.failed = 0  # attempts failed by an error-rate incident
        self._wiring = wiring
        self._incidents = tuple(incidents)
        self._hooks: IncidentHooks | None = None
        self._pending: float | None = None  # a capacity to apply at the resume
        heap, seq = wiring.heap, wiring.seq
        for i, incident in enumerate(self._incidents):
            heappush(heap, (incident.start, seq(), self._begin, marker, i))
            if incident.ramp:  # the steps back to normal, unrecorded; the end when they are done
                width = incident.ramp / RAMP_STEPS
                for step in range(RAMP_STEPS):
                    heappush(heap, (incident.ramp_start + step * width, seq(), self._step, marker,
                                    i * RAMP_STEPS + step))
            heappush(heap, (incident.end, seq(), self._finish, marker, i))
        if wiring.gate is not None:
            wiring.gate.on_resume(self._resumed)

    def bind(self, hooks: IncidentHooks | None) -> None:
        """The server's hooks (after it is built); None for a server that needs none."""
        self._hooks = hooks

    def _set(self, t: float, kind: str, level: float) -> None:
        setattr(self, kind, level)
        hooks = self._hooks
        if kind == "capacity":
            gate = self._wiring.gate
            if gate is not None and gate.paused:
                self._pending = level
            else:
                hooks.set_capacity(t, level)
        elif kind == "slowdown":
            hooks.set_slowdown(t, level)

    def _resumed(self, t: float) -> None:
        if self._pending is not None:
            level, self._pending = self._pending, None
            self._hooks.set_capacity(t, level)

    def _begin(self, t: float, c: int, i: int) -> int:
        incident = self._incidents[i]
        self._set(t, incident.kind, incident.level)
        return ev.pack(ev.SERVER_INCIDENT_STARTS, _KIND_INDEX[incident.kind])

    def _step(self, t: float, c: int, arg: int) -> int:
        incident = self._incidents[arg // RAMP_STEPS]
        self._set(t, incident.kind, incident.ramp_level(arg % RAMP_STEPS))
        return ev.NO_EVENT

    def _finish(self, t: float, c: int, i: int) -> int:
        kind = self._incidents[i].kind
        self._set(t, kind, NORMAL[kind])
        return ev.pack(ev.SERVER_INCIDENT_ENDS, _KIND_INDEX[kind])

    def wrap(self, handler: Callable[[float, int, int], int]) -> Callable[[float, int, int], int]:
        """The server's entry point, failing each attempt with the current error rate (itself
        when no incident sets one)."""
        if not any(i.kind == "error_rate" for i in self._incidents):
            return handler
        wiring = self._wiring
        heap, seq, net, series = wiring.heap, wiring.seq, wiring.net, wiring.series
        fail = wiring.client_server_error
        draw = serial_stream(wiring._rng(PURPOSE_INCIDENTS), uniform01)
        rejected_series, inv = series.rejected, series.inverse_width
        rejects = ev.pack(ev.SERVER_REJECTS)

        def erring(t: float, c: int, token: int) -> int:
            rate = self.error_rate
            if rate and draw() < rate:
                self.failed += 1
                rejected_series[int(t * inv)] += 1
                heappush(heap, (t + net[c](), seq(), fail, c, token))
                return rejects
            return handler(t, c, token)
        return erring
