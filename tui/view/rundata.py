"""A recorded run as numpy columns: what the timeline, the log and the status line index into.

A ``History`` keeps Python lists (cheap to append while the engine runs); the views need random
access, slicing and vectorised filtering over up to millions of events, so the columns are
converted once, in a worker, and shared read-only by every widget. What the charts draw (the
requests' points, an overload run's time series) and a worker pool's state are derived there
too, by ``sim.analysis`` (``replay``, ``run_series``, ``policy_state``, ``pool_state``), so
showing a run of a million events costs the UI thread nothing but drawing. Only the drawing
ranks and the server lane are the app's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from sim.analysis.calls import derived_calls, overlapping
from sim.analysis.client_trace import ClientTrace
from sim.analysis.open_metrics import OpenRunMetrics
from sim.analysis.policy_state import PolicyState, Scopes, policy_kinds
from sim.analysis.pool_state import PoolCapacity, PoolSnapshot, PoolState, records_pool
from sim.analysis.replay import (
    RequestPoints,
    RunSummary,
    backoff_waits,
    incident_windows,
    outage_windows,
    present_codes,
    recorded_caps,
    summarize,
)
from sim.analysis.run_series import FAILURE_LINES, RunSeries  # noqa: F401 (FAILURE_LINES: the charts')
from sim.core import events as ev
from sim.core.history import History, unpack_codes, unpack_details, unpack_hosts
from sim.models.controls import Capabilities
from sim.runs.tiers import TierLayout
from sim.vocabulary.units import DEFAULT_TIME_UNIT

from .marks import CODE_RANK

# A cell of the timeline that holds several events shows the one with the highest rank (a
# give-up matters more than a backoff in the same cell): see ``marks``.
IS_SERVER_CODE = np.array([ev.is_server_event(code) for code in range(len(ev.EVENT_NAMES))])
# A tier's pauses and incidents are recorded on its first caller's id (``sim.runs.tiers``); in
# the tier's own part they are server-wide (id -1), as tier 1's are.
SERVER_WIDE_CODES = np.zeros(len(ev.EVENT_NAMES), dtype=bool)
SERVER_WIDE_CODES[[ev.SERVER_PAUSES, ev.SERVER_RESUMES, ev.SERVER_INCIDENT_STARTS,
                   ev.SERVER_INCIDENT_ENDS, ev.HOST_EJECTED, ev.HOST_RETURNS,
                   ev.HOST_UNHEALTHY, ev.HOST_HEALTHY]] = True


# --- a tiered run's parts ----------------------------------------------------------------------
# A tiered run records every tier's events in one stream, a tier's with its callers' ids after
# the clients' (``sim.runs.tiers.TierLayout``). The cursor, the log and the playback walk that
# whole stream; the timeline's client lanes, the charts, the pool line and the policy state read
# the clients' part as before, and each tier's lane group (``tier_rows``) reads its own part.
# Each part keeps the indices of its events in the whole run, so a run's cursor maps to a part's.


def part_cursor(index: np.ndarray, cursor: int) -> int:
    """The last event of a part (``index``: its events' indices in the whole run) at or before
    the run's event ``cursor``; -1 when none is."""
    return int(np.searchsorted(index, cursor, side="right")) - 1


@dataclass(frozen=True, eq=False)
class TierGroup:
    """One tier below the first: its callers' ids in the run, and its events as a run of those
    callers numbered from 0 (its pauses and incidents as server-wide events, id -1)."""

    tier: int
    ids: range
    index: np.ndarray   # indices in the whole run of the tier's events
    run: RunData

    def label(self, lo: int, hi: int) -> str:
        """A lane's label: the callers' ids in the whole run (as the log and the CSV give them)."""
        lo, hi = self.ids.start + lo, self.ids.start + hi
        return f"{lo}" if lo >= hi else f"{lo}-{hi}"


@dataclass(frozen=True, eq=False)
class TierParts:
    """A tiered run's parts: the tier of each event, the clients' part and every lower tier's."""

    layout: TierLayout
    tier: np.ndarray        # int8, the tier of each event of the run (1: the clients')
    top_index: np.ndarray   # indices of the clients' part's events in the run
    top: RunData            # the clients and the server they call, as an untiered run
    groups: tuple[TierGroup, ...]

    def top_cursor(self, cursor: int) -> int:
        """The clients' part's cursor for the run's ``cursor`` (0 before its first event)."""
        return max(part_cursor(self.top_index, cursor), 0)



@dataclass(frozen=True, eq=False)
class RunData:
    """One run's events, in order, as parallel read-only arrays."""

    times: np.ndarray      # float64, non-decreasing
    clients: np.ndarray    # int32, the client each event concerns (-1: the server alone)
    codes: np.ndarray      # int8, ``sim.core.events`` codes
    details: np.ndarray    # int64, ``NO_DETAIL`` when none
    n_clients: int
    ranks: np.ndarray      # int8, drawing rank of each event's mark (see ``marks.MARKS``)
    server_mask: np.ndarray  # bool, True for events that happen at the server
    requests: RequestPoints  # the write requests, for the requests chart
    outages: tuple[tuple[float, float], ...] = ()  # (start, end) of each server pause
    series: RunSeries | None = None  # time series of a run against a replying server
    source_history: History | None = None  # the history converted, when there was one
    time_unit: str = DEFAULT_TIME_UNIT  # what the times are in (the config's ``time_unit``)
    # The timeline's binnings of this run by (lanes, columns), see ``timeline_grid``.
    grids: dict = field(default_factory=dict, repr=False)
    # Which policy state is shared by all clients (the server lane's); a replay cannot tell.
    scopes: Scopes = Scopes()
    # (start, end, kind) of each incident that does not stop the server (sim.models.incidents).
    incidents: tuple[tuple[float, float, str], ...] = ()
    # A worker pool's state at every event (``sim.analysis.pool_state``); None for other servers.
    pool: PoolState | None = None
    # A tiered run's parts (``tier_rows``): the arrays above hold every tier's events, the
    # derived views (requests, series, pool, outages) the clients' part's; None without tiers.
    tiers: TierParts | None = None
    # int64, each event's call id (``History.calls``; -1: none): what pairs a success with its
    # call's start. Derived from the clients' latest call starts for an older events file that
    # has none (``calls_derived``; ``sim.analysis.calls``).
    calls: np.ndarray | None = None
    calls_derived: bool = False
    # A fleet's runs: the host each event names (``NO_HOST`` for none); None when none does.
    hosts: np.ndarray | None = None

    @classmethod
    def from_history(cls, history: History, n_clients: int | None = None,
                     open_metrics: OpenRunMetrics | None = None,
                     time_unit: str = DEFAULT_TIME_UNIT, scopes: Scopes = Scopes(),
                     capacity: PoolCapacity | None = None,
                     layout: TierLayout | None = None) -> RunData:
        """Convert a history's columns once (see ``from_columns``)."""
        return cls.from_columns(np.asarray(history.times, dtype=np.float64),
                                np.asarray(history.clients, dtype=np.int32),
                                np.asarray(history.packed, dtype=np.int64), n_clients,
                                open_metrics, history, time_unit, scopes, capacity, layout,
                                history.call_column(), history.clock)

    @classmethod
    def from_columns(cls, times: np.ndarray, clients: np.ndarray, packed: np.ndarray,
                     n_clients: int | None = None, open_metrics: OpenRunMetrics | None = None,
                     history: History | None = None, time_unit: str = DEFAULT_TIME_UNIT,
                     scopes: Scopes = Scopes(), capacity: PoolCapacity | None = None,
                     layout: TierLayout | None = None, calls: np.ndarray | None = None,
                     clock: tuple[float, float] | None = None) -> RunData:
        """Derive every view's arrays; ``n_clients`` defaults to the highest client id + 1.

        ``open_metrics`` (a simulated overload run's) gives the exact time series; without them
        an overload run's series are counted back from its events (a replay). ``capacity``: a
        worker pool's size over time (the spec's; an events file does not record it).
        ``layout``: a tiered run's numbering; its tiers' events are kept (``tiers``). ``calls``:
        each event's call id (None: derived, an older file's). ``clock``: the run's (horizon,
        bucket width) where its file says them, so a replay counts the run's own buckets.
        """
        if layout is not None and n_clients is not None and layout.starts:
            return cls._tiered(times, clients, packed, n_clients, open_metrics, history,
                               time_unit, scopes, capacity, layout, calls, clock)
        if n_clients is not None and len(clients) and int(clients.max()) >= n_clients:
            # A tiered run: its lower tiers' events carry their callers' ids after the clients'
            # (sim.runs.tiers.TierLayout). The views show the clients and the server they call.
            keep = clients < n_clients
            times, clients, packed = times[keep], clients[keep], packed[keep]
            calls = None if calls is None else calls[keep]
            history = None
        codes = unpack_codes(packed).astype(np.int8)
        details = unpack_details(packed)
        calls_derived = calls is None
        calls = derived_calls(clients, codes, details) if calls is None else np.asarray(calls, dtype=np.int64)
        if n_clients is None:
            n_clients = int(clients.max()) + 1 if len(clients) else 1
        ranks = CODE_RANK[codes]
        server_mask = IS_SERVER_CODE[codes]
        for array in (times, clients, codes, details, ranks, server_mask, calls):
            array.flags.writeable = False
        n_clients = max(1, n_clients)
        requests = RequestPoints.from_columns(times, clients, codes, n_clients)
        hosts = unpack_hosts(packed)
        if hosts.size and int(hosts.max()) >= 0:
            hosts.flags.writeable = False
        else:
            hosts = None
        outages = outage_windows(times, clients, codes)
        incidents = incident_windows(times, clients, codes, details, hosts)  # a fleet's: each host's own
        series = None
        if open_metrics is not None:
            series = RunSeries.from_metrics(open_metrics, outages, tuple((s, e) for s, e, _ in incidents),
                                            (times, codes, details))
        elif recorded_caps(codes).keeps_series:
            horizon, width = clock if clock is not None else (None, None)
            series = RunSeries.from_events(times, clients, codes, details, calls=calls,
                                           horizon=horizon, width=width, hosts=hosts, time_unit=time_unit)
        # A fleet's hosts each have their own pool: one pool line would mix them.
        pool = (PoolState(times, codes, details, capacity) if hosts is None and records_pool(codes, details)
                else None)
        return cls(times, clients, codes, details, n_clients, ranks, server_mask, requests,
                   outages, series, history, time_unit, scopes=scopes, incidents=incidents,
                   pool=pool, calls=calls, calls_derived=calls_derived, hosts=hosts)

    @classmethod
    def _tiered(cls, times: np.ndarray, clients: np.ndarray, packed: np.ndarray, n_clients: int,
                open_metrics: OpenRunMetrics | None, history: History | None, time_unit: str,
                scopes: Scopes, capacity: PoolCapacity | None, layout: TierLayout,
                calls: np.ndarray | None = None, clock: tuple[float, float] | None = None) -> RunData:
        """A tiered run: every event kept, the clients' part and each lower tier's split off
        (``tier_rows``); the derived views are the clients' part's."""
        tier = layout.tiers_of(clients)
        top_index = np.flatnonzero(tier == 1)
        top = cls.from_columns(times[top_index], clients[top_index], packed[top_index], n_clients,
                               open_metrics, None, time_unit, scopes, capacity,
                               calls=None if calls is None else calls[top_index], clock=clock)
        codes_all = unpack_codes(packed)
        groups = []
        for number in range(2, len(layout.starts) + 2):
            ids = layout.callers(number)
            index = np.flatnonzero(tier == number)
            own = clients[index] - np.int32(ids.start)
            own[SERVER_WIDE_CODES[codes_all[index]] & (own == 0)] = -1
            part = cls.from_columns(times[index], own, packed[index], max(len(ids), 1),
                                    time_unit=time_unit)
            groups.append(TierGroup(number, ids, index, part))
        codes = codes_all.astype(np.int8)
        details = unpack_details(packed)
        ranks = CODE_RANK[codes]
        server_mask = IS_SERVER_CODE[codes]
        for array in (times, clients, codes, details, ranks, server_mask, tier, top_index):
            array.flags.writeable = False
        parts = TierParts(layout, tier, top_index, top, tuple(groups))
        series = top.series
        # A lower tier's outages and incidents shape the clients' traffic too: the charts shade
        # them as incidents (the first tier keeps serving), beside the first tier's own.
        below = tuple(w for g in groups for w in (*g.run.outages, *((s, e) for s, e, _ in g.run.incidents)))
        if series is not None and below:
            series = replace(series, incidents=tuple(sorted(series.incidents + below)))
        all_calls = (np.full(times.shape, -1, dtype=np.int64) if calls is None
                     else np.array(calls, dtype=np.int64))
        all_calls[top_index] = top.calls
        all_calls.flags.writeable = False
        return cls(times, clients, codes, details, n_clients, ranks, server_mask, top.requests,
                   top.outages, series, history, time_unit, scopes=scopes,
                   incidents=top.incidents, pool=top.pool, tiers=parts, calls=all_calls,
                   calls_derived=top.calls_derived)

    @property
    def top(self) -> RunData:
        """The clients and the server they call (the whole run when it has no tiers)."""
        return self if self.tiers is None else self.tiers.top

    def top_cursor(self, cursor: int) -> int:
        """The clients' part's event at or before the run's event ``cursor``."""
        return cursor if self.tiers is None else self.tiers.top_cursor(cursor)

    def pool_at(self, cursor: int) -> PoolSnapshot:
        """The worker pool's state at the run's event ``cursor`` (``pool`` must be set)."""
        assert self.pool is not None
        return self.pool.at(self.top_cursor(cursor))

    def tier_at(self, i: int) -> int:
        """The tier event ``i`` belongs to (1 without tiers)."""
        return 1 if self.tiers is None else int(self.tiers.tier[i])

    @cached_property
    def history(self) -> History:
        """The run as a ``History`` (the one converted, or rebuilt from the columns)."""
        if self.source_history is not None:
            return self.source_history
        return History.from_columns(self.times, self.clients, self.codes, self.details,
                                    None if self.calls_derived else self.calls)

    def summary(self, caps: Capabilities) -> RunSummary:
        """The run's totals for a server kind offering ``caps`` (``sim.analysis.replay``)."""
        if self.tiers is not None:
            return self.tiers.top.summary(caps)
        recovery = self.series.recovery_time if self.series is not None else None
        note = self.series.recovery_note if self.series is not None else ""
        return summarize(self.times, self.clients, self.codes, self.details, caps,
                         recovery=recovery, time_unit=self.time_unit, recovery_note=note,
                         calls=self.calls, calls_derived=self.calls_derived)

    def policy_state(self) -> PolicyState:
        """A fresh reader of the run's policy state (each view keeps its own cursor in it); the
        clients' part's in a tiered run."""
        if self.tiers is not None:
            return self.tiers.top.policy_state()
        return PolicyState(self.codes, self.clients, self.details, self.n_clients, self.scopes)

    @cached_property
    def policy_kinds(self) -> tuple[bool, bool]:
        """(tokens, breaker): does the run record a budget's tokens, a breaker's transitions?"""
        if self.tiers is not None:
            return self.tiers.top.policy_kinds
        return policy_kinds(self.codes, self.details)

    @cached_property
    def shows_calls(self) -> bool:
        """Whether the log shows each event's call: its ids are recorded (not derived) and some
        client has several calls in flight, where the client alone does not say which call an
        event belongs to."""
        return not self.calls_derived and overlapping(self.clients, self.codes, self.details, self.calls)

    @cached_property
    def codes_present(self) -> frozenset[int]:
        """The event codes this run holds (for the legend's entries and words)."""
        return frozenset(present_codes(self.codes))

    @cached_property
    def waits(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each backoff's wait as (start time, end time, client) (``replay.backoff_waits``)."""
        if self.tiers is not None:
            return self.tiers.top.waits
        return backoff_waits(self.times, self.clients, self.codes)

    def client_trace(self, client: int) -> ClientTrace:
        """``client``'s attempts in this run (``sim.analysis.client_trace``): what following a
        client highlights and jumps between."""
        return ClientTrace.of(self.clients, self.codes, client)

    def __len__(self) -> int:
        return len(self.times)

    @property
    def total_time(self) -> float:
        return float(self.times[-1]) if len(self.times) else 0.0

    def in_outage(self, t: float) -> bool:
        """True while the server is paused (an outage window) at simulated time ``t``."""
        return any(start <= t < end for start, end in self.outages)

    def incidents_at(self, t: float) -> tuple[str, ...]:
        """The kinds of the incidents under way at simulated time ``t`` (``slowdown``, ...)."""
        return tuple(kind for start, end, kind in self.incidents if start <= t < end)

    def index_at_time(self, t: float) -> int:
        """Index of the last event at or before ``t`` (0 when ``t`` precedes every event)."""
        return max(0, int(np.searchsorted(self.times, t, side="right")) - 1)

    def row(self, i: int) -> tuple[float, int, int, str, str]:
        """``(time, client, code, event name, detail text)`` of event ``i``."""
        code = int(self.codes[i])
        detail = int(self.details[i])
        return (float(self.times[i]), int(self.clients[i]), code, ev.EVENT_NAMES[code],
                ev.format_detail(code, detail))
