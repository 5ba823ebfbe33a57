"""One run's time series (requests per bucket, server state), its outage windows and recovery.

A simulated run's series are the engine's own (``OpenRunMetrics.series``, what the
``_timeseries.csv`` export holds). A replayed events file carries no series, so they are counted
back from its events (``count_series``): the flows exactly as the engine's handlers count them,
the server's state as the requests it holds (accepted or queued, not yet completed) at each
bucket's end. Outage windows always come from the server's pause and resume events, incident
windows from its incident start and end events.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sim.analysis.open_metrics import OpenRunMetrics
from sim.analysis.recovery import recovery_verdict
from sim.analysis.calls import call_starts
from sim.analysis.replay import Window, hedge_events, incident_windows, outage_windows, success_latencies
from sim.core import events as ev
from sim.core.series import SERIES_NAMES, bucket_count
from sim.models.incidents import merged_windows
from sim.models.workloads import Outage
from sim.settings.spec import DEFAULT_BUCKETS

# The series events record exactly; in_service/queued are the server's state at bucket ends,
# which events give only as "held" (accepted or queued, not yet completed).
FLOW_NAMES = ("offered", "retries", "accepted", "rejected", "timed_out", "goodput")


def count_series(times: np.ndarray, codes: np.ndarray, details: np.ndarray, width: float,
                 buckets: int, to_horizon: bool = False) -> dict[str, np.ndarray]:
    """The series counted back from a run's events: the flows as the handlers count them
    (bucket ``int(t / width)``), ``in_service`` as the requests held at each bucket's end,
    ``queued`` zero, ``hedges`` the copies recorded as hedges (``hedge_events``; none in an older
    file, which does not say). ``to_horizon``: the buckets are the run's own, and an event at the horizon
    falls past the last, as in the engine's spare slot; else events past the last bucket are in it."""
    index = (times * (1.0 / width)).astype(np.int64)  # as the handlers
    if to_horizon:
        inside = index < buckets
    else:
        index = np.minimum(index, buckets - 1)
        inside = np.ones(index.shape, dtype=bool)

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(index[mask & inside], minlength=buckets).astype(np.int64)

    writes = codes == ev.CLIENT_REQUESTS_WRITE
    entered = (codes == ev.SERVER_ACCEPTS) | (codes == ev.SERVER_QUEUES)
    held = np.cumsum(count(entered) - count(codes == ev.SERVER_COMPLETES))
    drops = codes == ev.SERVER_DROPS
    limited = drops & (details == _LIMITER)
    return {
        "server_drops": count(drops & ~limited),
        "limit_refused": count(limited | (codes == ev.CLIENT_CALL_REFUSED)),
        "offered": count(call_starts(codes, details)),
        "retries": count(writes & (details > 1)),
        "accepted": count(entered),
        "rejected": count(codes == ev.SERVER_REJECTS),
        "timed_out": count(codes == ev.CLIENT_TIMES_OUT),
        "in_service": np.maximum(held, 0),
        "queued": np.zeros(buckets, dtype=np.int64),
        "goodput": count(codes == ev.CLIENT_SUCCEEDS),
        "hedges": count(hedge_events(codes)),
    }


# Every way a request fails, as the failures chart of the app and the time-series PNG name it
# (one table, so they say the same): the client stopped waiting; the server refused it (a full
# queue) or answered it with an error (an ``error_rate`` incident, FlakyServer); the server
# dropped it unserved (a queue timeout, CoDel, a cancelled request); a limit refused it (the
# pool's adaptive ``concurrency_limit``, or a client's breaker or concurrency budget refusing
# the call before sending it). ``limit_refused`` is counted from a run's events (``with_refusals``).
FAILURE_LINES: tuple[tuple[str, str], ...] = (
    ("timed_out", "timed out"), ("rejected", "rejected or error reply"),
    ("server_drops", "dropped by the server"), ("limit_refused", "refused by a limit"))
_LIMITER = ev.DROP_REASON_INDEX["limiter"]


def with_refusals(series: dict[str, np.ndarray], times: np.ndarray, codes: np.ndarray,
                  details: np.ndarray, width: float) -> dict[str, np.ndarray]:
    """``series`` with ``limit_refused`` counted from the run's events (calls a client's policy
    refused, requests the pool's limiter refused), the limiter's out of ``server_drops``. Each
    event in its bucket as the handlers count (``int(t / width)``); none past the last bucket,
    as the engine's series keep none."""
    buckets = len(next(iter(series.values()))) if series else 0
    index = (times * (1.0 / width)).astype(np.int64)
    inside = index < buckets
    limiter = (codes == ev.SERVER_DROPS) & (details == _LIMITER) & inside
    refused = ((codes == ev.CLIENT_CALL_REFUSED) & inside) | limiter
    out = dict(series)
    out["limit_refused"] = np.bincount(index[refused], minlength=buckets).astype(np.int64)
    if "server_drops" in out:
        by_limiter = np.bincount(index[limiter], minlength=buckets).astype(np.int64)
        out["server_drops"] = np.maximum(np.asarray(out["server_drops"], np.int64) - by_limiter, 0)
    return out


@dataclass(frozen=True, eq=False)
class RunSeries:
    """Per-bucket counts of one run, by ``sim.core.series.SERIES_NAMES``."""

    bucket: float
    series: dict[str, np.ndarray]
    outages: tuple[Window, ...] = ()
    recovery_time: float | None = None  # None: no outage, or not judged; nan: never recovered
    derived: bool = False  # counted back from events (a replay), not the engine's own series
    incidents: tuple[Window, ...] = ()  # windows of incidents that do not stop the server
    recovery_note: str = ""  # why an outage's recovery was not judged (too noisy, no baseline)
    starts: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        n = len(next(iter(self.series.values()))) if self.series else 0
        object.__setattr__(self, "starts", np.arange(n, dtype=np.float64) * self.bucket)

    @property
    def end(self) -> float:
        return float(self.starts[-1] + self.bucket) if self.starts.size else self.bucket

    @property
    def never_recovered(self) -> bool:
        return self.recovery_time is not None and math.isnan(self.recovery_time)

    def in_outage(self, t: float) -> bool:
        return any(start <= t < end for start, end in self.outages)

    @classmethod
    def from_metrics(cls, metrics: OpenRunMetrics, outages: tuple[Window, ...],
                     incidents: tuple[Window, ...] = (),
                     events: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> RunSeries:
        """The engine's series and recovery verdict of a simulated run; with its ``events``
        (times, codes, details) the refusals by a limit too (``with_refusals``)."""
        names = SERIES_NAMES + tuple(n for n in metrics.series if n not in SERIES_NAMES)
        series = {name: np.asarray(metrics.series[name], dtype=np.int64) for name in names}
        if events is not None:
            series = with_refusals(series, *events, metrics.bucket)
        return cls(metrics.bucket, series, outages, metrics.recovery_time, incidents=incidents,
                   recovery_note=metrics.recovery_note)

    @classmethod
    def from_events(cls, times: np.ndarray, clients: np.ndarray, codes: np.ndarray,
                    details: np.ndarray, buckets: int = DEFAULT_BUCKETS, calls: np.ndarray | None = None,
                    horizon: float | None = None, width: float | None = None,
                    hosts: np.ndarray | None = None, time_unit: str | None = None) -> RunSeries:
        """Count the series back from a run's events and judge its recovery from them as the
        engine does (``recovery.recovery_verdict``, latencies paired by ``calls``). The buckets
        are the run's own where the file says its ``horizon`` and bucket ``width`` (then
        ``horizon / width`` of them), else ``buckets`` over the events' span. ``time_unit``: the
        run's, for a verdict's note that quotes a rate (None: unknown, "per time unit")."""
        to_horizon = horizon is not None and width is not None and width > 0
        if to_horizon:
            buckets = bucket_count(horizon, width)
        else:
            span = float(times[-1]) if times.size else 1.0
            width = span / buckets if span > 0 else 1.0
        series = count_series(times, codes, details, width, buckets, to_horizon)
        windows = outage_windows(times, clients, codes)
        incidents = tuple((s, e) for s, e, _ in incident_windows(times, clients, codes, details, hosts))
        recovery, note = None, ""
        if windows or incidents:
            # Judged against every disruption, as the engine judges (SimulationSpec.disruptions).
            judged = windows if not incidents else merged_windows(windows + incidents)
            verdict = recovery_verdict(series["goodput"], width,
                                       tuple(Outage(s, e - s) for s, e in judged),
                                       *success_latencies(times, clients, codes, details, calls),
                                       time_unit=time_unit)
            recovery, note = verdict.time, verdict.note
        return cls(width, series, windows, recovery, derived=True, incidents=incidents,
                   recovery_note=note)
