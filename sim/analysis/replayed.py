"""A recorded run's record rebuilt from its events alone: what ``sim.replay`` reports of a file.

The engine counts a run's metrics as it goes (``OpenRunMetrics``); an events file holds only the
events, its horizon and bucket width (the end marker, for runs that keep series) and each
event's call. ``replayed_metrics`` counts them back by the engine's rules, so the tables a
replay gives come out of the same functions as the run's (``sim.export.replay``): the latencies
paired by call id and kept by the one sampling rule (``sim.analysis.calls``), the series in the
run's own buckets and the recovery verdict judged from them (``RunSeries.from_events``).

The hedges are the copies recorded as hedges (``client_hedges``, ``replay.hedges_sent``), as
the latency table counts them; an older file that holds no such event does not say them.
What the events do not say stays unknown: the cost (the config's ``work_to_duration``) is NaN,
the per-client attempts are counted from the writes, and a server's state at bucket ends
(``in_service``, ``queued``) is the requests it holds, as ``count_series`` counts them.
"""

from __future__ import annotations

import math

import numpy as np

from sim.analysis.calls import call_latencies, call_starts, derived_calls, pairing_note
from sim.analysis.open_metrics import OpenRunMetrics
from sim.analysis.replay import gives_up, hedges_sent
from sim.analysis.run_series import RunSeries
from sim.core import events as ev
from sim.core.history import History, unpack_hosts
from sim.core.latency_sample import sampled


def replayed_metrics(history: History, clients: int) -> tuple[OpenRunMetrics, str]:
    """The run record of a replayed run against a server that replies (its events, ``clients``
    clients), and a note on what may be off (``calls.pairing_note``: an older file's derived
    calls under open traffic), empty when nothing is."""
    times = np.asarray(history.times, dtype=np.float64)
    ids = np.asarray(history.clients, dtype=np.int64)
    codes, details = history.codes(), history.details()
    calls = history.call_column()
    derived = calls is None
    if derived:
        calls = derived_calls(ids, codes, details)
    horizon, width = history.clock if history.clock is not None else (None, None)
    hosts = unpack_hosts(history.packed)  # a fleet's incidents end on their own host
    series = RunSeries.from_events(times, ids, codes, details, calls=calls, horizon=horizon, width=width,
                                   hosts=hosts if hosts.size and int(hosts.max()) >= 0 else None)
    end = float(horizon) if horizon is not None else (float(times[-1]) if times.size else 0.0)
    success_times, latencies = call_latencies(times, codes, calls)
    done = np.flatnonzero((codes == ev.CLIENT_SUCCEEDS) & (calls >= 0))
    work = int(np.count_nonzero(codes == ev.CLIENT_REQUESTS_WRITE))
    offered = int(series.series["offered"].sum())
    successes = int(np.count_nonzero(codes == ev.CLIENT_SUCCEEDS))
    gave_up = int(np.count_nonzero(gives_up(codes, details)))
    attempts = np.bincount(ids[(codes == ev.CLIENT_REQUESTS_WRITE) & (ids >= 0)], minlength=clients)
    metrics = OpenRunMetrics(
        work=work, duration=end, cost=math.nan, gave_up=gave_up, events=int(times.size),
        retries_denied=int(np.count_nonzero(codes == ev.CLIENT_RETRY_DENIED)),
        calls_refused=int(np.count_nonzero(codes == ev.CLIENT_CALL_REFUSED)), calls=offered,
        offered=offered, successes=successes,
        rejections=int(np.count_nonzero(codes == ev.SERVER_REJECTS)),
        timeouts=int(np.count_nonzero(codes == ev.CLIENT_TIMES_OUT)),
        unfinished=max(int(np.count_nonzero(call_starts(codes, details))) - successes - gave_up, 0),
        horizon=end, latencies=sampled(latencies), latency_clients=sampled(ids[done]),
        latency_times=sampled(success_times), attempts_per_client=attempts[:clients].astype(np.int64),
        bucket=series.bucket, series=series.series, recovery_time=series.recovery_time,
        recovery_note=series.recovery_note, hedges=hedges_sent(codes))
    return metrics, pairing_note(ids, codes, details, derived)
