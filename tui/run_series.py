"""One overload run's time series (requests per bucket, server state) and its outage windows.

For a simulated run the series are the engine's own (``Run.open_metrics``, the numbers the
``_timeseries.csv`` export holds). A replayed events file carries no series, so they are counted
back from the events: flows exactly, the server's state as the requests it holds (accepted or
queued, not yet completed) at each bucket's end. Outage windows always come from the server's
pause and resume events. Nothing here imports Textual; it runs in the worker that loads a run.
"""

from __future__ import annotations

import math
from dataclasses import astuple, dataclass, field

import numpy as np

from sim.analysis.open_metrics import OpenRunMetrics, recovery_verdict
from sim.core import events as ev
from sim.core.series import SERIES_NAMES, count_series
from sim.models import recorded_capabilities
from sim.models.controls import Capabilities
from sim.models.workloads import Outage
from sim.spec import DEFAULT_BUCKETS

Window = tuple[float, float]


def present_codes(codes: np.ndarray) -> list[int]:
    """The distinct event codes of a run (codes are small non-negative ints: counted, not sorted)."""
    return np.flatnonzero(np.bincount(codes.astype(np.intp))).tolist()


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


@dataclass(frozen=True, eq=False)
class RunSeries:
    """Per-bucket counts of one run, by ``sim.models.clients.SERIES_NAMES``."""

    bucket: float
    series: dict[str, np.ndarray]
    outages: tuple[Window, ...] = ()
    recovery_time: float | None = None  # None: no outage, or not judged; nan: never recovered
    derived: bool = False  # counted back from events (a replay), not the engine's own series
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
    def from_metrics(cls, metrics: OpenRunMetrics, outages: tuple[Window, ...]) -> RunSeries:
        series = {name: np.asarray(metrics.series[name], dtype=np.int64) for name in SERIES_NAMES}
        return cls(metrics.bucket, series, outages, metrics.recovery_time,
                   recovery_note=metrics.recovery_note)

    @classmethod
    def from_events(cls, times: np.ndarray, clients: np.ndarray, codes: np.ndarray,
                    details: np.ndarray, buckets: int = DEFAULT_BUCKETS) -> RunSeries:
        """Count the series back from a run's events, in ``buckets`` buckets over its span."""
        span = float(times[-1]) if times.size else 1.0
        width = span / buckets if span > 0 else 1.0
        series = count_series(times, codes, details, width, buckets)
        windows = outage_windows(times, clients, codes)
        recovery, note = None, ""
        if windows:
            recovery, note = astuple(recovery_verdict(series["goodput"], width,
                                                      tuple(Outage(s, e - s) for s, e in windows),
                                                      *success_latencies(times, clients, codes, details)))
        return cls(width, series, windows, recovery, derived=True, recovery_note=note)


def success_latencies(times: np.ndarray, clients: np.ndarray, codes: np.ndarray,
                      details: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(time, latency)`` of each success, in time order: latency is from the client's latest
    first attempt (``client_requests_write`` with ``attempt=1``) to its success."""
    first = (codes == ev.CLIENT_REQUESTS_WRITE) & (details == 1)
    rows = np.flatnonzero(first | (codes == ev.CLIENT_SUCCEEDS))
    rows = rows[np.argsort(clients[rows], kind="stable")]  # by client, each in time order
    is_first = first[rows]
    latest = np.maximum.accumulate(np.where(is_first, np.arange(rows.size), -1))
    ok = ~is_first & (latest >= 0)
    ok[ok] = clients[rows[latest[ok]]] == clients[rows[ok]]  # a first attempt of the same client
    done, start = rows[ok], rows[latest[ok]]
    order = np.argsort(done, kind="stable")
    return times[done][order], (times[done] - times[start])[order]
