"""A recorded run's totals, latencies and outage and incident windows, derived from its event columns.

The engine counts these while it runs (``Run.metrics``, ``OpenRunMetrics``); an events file read
back (a replay) holds only the events, so the app derives them here, by the engine's rules, and
``tests/test_replay.py`` holds the two to be equal. Every function takes numpy columns in event
order: ``times``, ``clients`` (-1: the server), ``codes`` and ``details`` as ``History.codes()``
and ``History.details()`` unpack them. The time series are ``run_series``, the retry policies'
state ``policy_state``.

Latencies pair each success with its call's start by the call ids the events carry
(``sim.analysis.calls``), and keep the successes the engine keeps (the one sampling rule,
``sim.core.latency_sample``), so a replay's percentiles are the run's own. One limit of the
events: a call held before its first attempt (botocore's adaptive rate limiter,
``sim.policies.adaptive``) records nothing when it begins, so its latency is counted from that
attempt.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from sim.analysis.calls import derived_calls, kept_latencies, pairing_note
from sim.analysis.open_metrics import latency_summary
from sim.core import events as ev
from sim.core.history import History
from sim.models import recorded_capabilities
from sim.models.controls import Capabilities
from sim.vocabulary.units import DEFAULT_TIME_UNIT

Window = tuple[float, float]
_REFUSED_BEFORE_SENDING = ev.DENY_REASON_INDEX["breaker_open"]  # see ``gives_up``


def present_codes(codes: np.ndarray) -> list[int]:
    """The distinct event codes of a run (codes are small non-negative ints: counted, not sorted)."""
    return np.flatnonzero(np.bincount(np.asarray(codes).astype(np.intp))).tolist()


def recorded_caps(codes: np.ndarray) -> Capabilities:
    """What the server kind of a recorded run offers, as far as its event codes show: a replay's
    stand-in for ``SimulationSpec.caps`` (``sim.models.recorded_capabilities``)."""
    return recorded_capabilities(present_codes(codes))


def outage_windows(times: np.ndarray, clients: np.ndarray, codes: np.ndarray) -> tuple[Window, ...]:
    """``(start, end)`` of each pause of the whole server; a pause never resumed ends the run."""
    server = clients < 0
    pauses = times[server & (codes == ev.SERVER_PAUSES)]
    resumes = times[server & (codes == ev.SERVER_RESUMES)]
    end = float(times[-1]) if times.size else 0.0
    windows = []
    for start in pauses:
        later = resumes[resumes >= start]
        windows.append((float(start), float(later[0]) if later.size else end))
    return tuple(windows)


def incident_windows(times: np.ndarray, clients: np.ndarray, codes: np.ndarray,
                     details: np.ndarray, hosts: np.ndarray | None = None) -> tuple[tuple[float, float, str], ...]:
    """``(start, end, kind)`` of each incident (``sim.models.incidents``), in order of start; one
    not ended before the run did ends the run. A fleet's (``hosts``: each event's host,
    ``sim.core.history.unpack_hosts``) end on their own host: host 0's error window and host 1's
    shorter one inside it are two windows, not one cut short; a whole-fleet incident each host
    had (``sim.settings.fleet.absorb_incidents``) is one window."""
    server = clients < 0
    starts = np.flatnonzero(server & (codes == ev.SERVER_INCIDENT_STARTS))
    ends = np.flatnonzero(server & (codes == ev.SERVER_INCIDENT_ENDS))
    end_of_run = float(times[-1]) if times.size else 0.0
    kinds = ev.INCIDENT_DETAILS  # a fleet host's crash too
    windows = []
    for i in starts.tolist():
        kind = int(details[i])
        same = (ends > i) & (details[ends] == kind)
        if hosts is not None:
            same &= hosts[ends] == hosts[i]
        later = ends[same]
        name = kinds[kind] if 0 <= kind < len(kinds) else str(kind)
        windows.append((float(times[i]), float(times[later[0]]) if later.size else end_of_run, name))
    return tuple(dict.fromkeys(windows))


def success_latencies(times: np.ndarray, clients: np.ndarray, codes: np.ndarray,
                      details: np.ndarray, calls: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(time, latency)`` of the successes the engine keeps, in time order: from the start of
    each success's call to the client hearing of it, paired by ``calls`` (``History.calls``;
    None: an older file's, derived from the clients' latest call starts)."""
    if calls is None:
        calls = derived_calls(clients, codes, details)
    return kept_latencies(times, codes, calls)


def gives_up(codes: np.ndarray, details: np.ndarray) -> np.ndarray:
    """Where a call ends without success: a limit ran out (``client_gives_up``) or a policy
    denied the retry after a failure (``client_retry_denied``). A retry an open breaker refused
    before sending is a ``client_retry_denied`` too (``policy=breaker_open``, the only refusal
    before sending: ``PolicyEvents.refused``), but the call goes on: the chain then hears of a
    failure and decides, in an event of its own."""
    denied = (codes == ev.CLIENT_RETRY_DENIED) & (details != _REFUSED_BEFORE_SENDING)
    return (codes == ev.CLIENT_GIVES_UP) | denied


def hedge_events(codes: np.ndarray) -> np.ndarray:
    """Where a hedged copy was sent (``client_hedges``, ``sim.models.hedging``): one event per
    copy beside an attempt, as the engine counts ``RunMetrics.hedges`` (the latency table's
    ``hedges`` column)."""
    return codes == ev.CLIENT_HEDGES


def hedges_sent(codes: np.ndarray) -> int:
    """The hedged copies a run's record holds (``hedge_events``): its ``hedges`` count."""
    return int(np.count_nonzero(hedge_events(codes)))


def records_hedges(present: Iterable[int]) -> bool:
    """Whether runs whose records hold the event codes ``present`` (``present_codes``) say which
    copies were hedges: they hold a ``client_hedges`` event. An events file written before that
    event existed holds none, so its hedges are unknown (a replay then shows no hedges column
    rather than a 0)."""
    return ev.CLIENT_HEDGES in frozenset(present)


@dataclass(frozen=True)
class RunSummary:
    """One run's totals, counted from its events: the engine's ``work``, ``gave_up``,
    ``duration`` (time of the last event), ``successes`` and latency percentiles
    (``latency_summary``: p50 … p99, max), where its server kind measures them."""

    work: int  # write requests, every attempt
    duration: float
    gave_up: int  # calls ended without success: a limit ran out or a policy denied the retry
    caps: Capabilities  # what the run's server kind offers: which totals apply
    successes: int = 0
    latency: Mapping[str, float] = field(default_factory=lambda: latency_summary(np.zeros(0)))
    recovery: float | None = None  # None: no outage, or not judged; nan: never recovered
    time_unit: str = DEFAULT_TIME_UNIT  # what duration, latencies and recovery are in
    recovery_note: str = ""  # why an outage's recovery was not judged (sim.analysis.recovery)
    # Why the latencies may be off: an older events file's calls, derived, under open traffic
    # (``sim.analysis.calls.pairing_note``); empty otherwise.
    latency_note: str = ""
    hedges: int = 0  # hedged copies sent beside the attempts (``hedges_sent``); not in work

    @property
    def p50(self) -> float:
        return self.latency["p50"]

    @property
    def p99(self) -> float:
        return self.latency["p99"]

    @property
    def recovered(self) -> bool | None:
        """None without an outage."""
        if self.recovery is None:
            return None
        return not math.isnan(self.recovery)


def summarize(times: np.ndarray, clients: np.ndarray, codes: np.ndarray, details: np.ndarray,
              caps: Capabilities, *, recovery: float | None = None,
              time_unit: str = DEFAULT_TIME_UNIT, recovery_note: str = "",
              calls: np.ndarray | None = None, calls_derived: bool = False) -> RunSummary:
    """Work, duration, give-ups and hedges (``hedges_sent``); successes and latency percentiles where the server kind
    measures latencies (paired by ``calls``, see ``success_latencies``), ``recovery``
    (``RunSeries.recovery_time``) and why it was not judged (``recovery_note``) where it has
    recovery verdicts (``caps``). ``calls_derived``: the calls are an older file's, derived
    (``latency_note`` then says so where calls overlap)."""
    work = int(np.count_nonzero(codes == ev.CLIENT_REQUESTS_WRITE))
    gave_up = int(np.count_nonzero(gives_up(codes, details)))
    duration = float(times[-1]) if times.size else 0.0
    hedges = hedges_sent(codes)
    if not caps.latencies:
        return RunSummary(work, duration, gave_up, caps, time_unit=time_unit, hedges=hedges)
    _, latencies = success_latencies(times, clients, codes, details, calls)
    successes = int(np.count_nonzero(codes == ev.CLIENT_SUCCEEDS))
    derived = calls is None or calls_derived
    return RunSummary(work, duration, gave_up, caps, successes, latency_summary(latencies),
                      recovery if caps.recovery else None, time_unit,
                      recovery_note if caps.recovery else "",
                      pairing_note(clients, codes, details, derived), hedges)


def backoff_waits(times: np.ndarray, clients: np.ndarray,
                  codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each backoff's wait as (start time, end time, client): it ends at the client's next
    event (the retry), or at the end of the run when there is none."""
    backoff = np.flatnonzero((codes == ev.CLIENT_BACKS_OFF) & (clients >= 0))
    if not backoff.size:
        empty = np.zeros(0)
        return empty, empty, np.zeros(0, dtype=np.int32)
    # Events grouped by client, in time order within each client (a stable sort).
    order = np.argsort(clients, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    following = position[backoff] + 1
    ends = np.full(backoff.size, float(times[-1]))
    has_next = following < order.size
    nxt = order[np.minimum(following, order.size - 1)]
    same = has_next & (clients[nxt] == clients[backoff])
    ends[same] = times[nxt[same]]
    return times[backoff], ends, clients[backoff]


@dataclass(frozen=True)
class RequestPoints:
    """A run's ``client_requests_write`` events as arrays: time (x) and client id (y)."""

    times: np.ndarray
    clients: np.ndarray
    n_clients: int
    end_time: float  # the run's last event, write or not

    @classmethod
    def from_columns(cls, times: np.ndarray, clients: np.ndarray, codes: np.ndarray,
                     n_clients: int | None = None) -> RequestPoints:
        """``n_clients`` defaults to the highest client id + 1."""
        mask = codes == ev.CLIENT_REQUESTS_WRITE
        if n_clients is None:
            n_clients = int(clients.max()) + 1 if clients.size else 0
        end_time = float(times[-1]) if times.size else 0.0
        return cls(times[mask], clients[mask].astype(np.int64), n_clients, end_time)

    @classmethod
    def from_history(cls, history: History) -> RequestPoints:
        return cls.from_columns(np.asarray(history.times, dtype=np.float64),
                                np.asarray(history.clients, dtype=np.int64), history.codes())


def merged_times(times: Sequence[np.ndarray]) -> np.ndarray:
    """Every distinct event time of several runs, in order: the stops of a clock that steps
    through them all without skipping an event of any."""
    if not times:
        return np.zeros(0)
    return np.unique(np.concatenate(list(times)))


def step_time(stops: np.ndarray, time: float, events: int) -> float:
    """The time ``events`` stops after (negative: before) the last stop at or before ``time``,
    kept within the first and the last stop."""
    if not stops.size:
        return 0.0
    index = int(np.searchsorted(stops, time, side="right")) - 1
    if index < 0 and events > 0:
        index, events = 0, events - 1  # before the first stop: the first step lands on it
    index = min(max(index + events, 0), stops.size - 1)
    return float(stops[index])
