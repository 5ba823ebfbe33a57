"""A worker pool's state counted back from its events (``sim.analysis.pool_state``): checked by
hand on a small made-up history, and against the engine's own samples of the pool (workers in
service and queue length at every bucket's end, buckets far shorter than the gaps between
events) for each server defence, a capacity incident and an outage, simulated and replayed
from an events file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import toml_text, write_config
from tui_support import FIXTURES

from sim.analysis.pool_state import PoolCapacity, PoolState, pool_capacity, records_pool
from sim.analysis.replay import outage_windows
from sim.settings.config import load_config
from sim.core import events as ev
from sim.core.history import unpack_codes, unpack_details
from sim.export.csv_files import read_events_csv, write_history_csv
from sim.runs.engine import record_run

TINY_POOL = FIXTURES / "tiny_pool.toml"
QT, CODEL, CANCELLED, LIMITER = (ev.DROP_REASON_INDEX[r] for r in ev.DROP_REASONS)

# (time, client, code, detail): two workers; every line says the state after it.
HAND_MADE = [
    (1.0, 0, ev.CLIENT_REQUESTS_WRITE, 1),  # nothing at the server yet      busy 0, queue 0
    (2.0, 0, ev.SERVER_ACCEPTS, 1),          #                                busy 1, queue 0
    (3.0, 1, ev.SERVER_ACCEPTS, 2),          #                                busy 2, queue 0
    (4.0, 2, ev.SERVER_QUEUES, 1),           #                                busy 2, queue 1
    (5.0, 3, ev.SERVER_QUEUES, 2),           #                                busy 2, queue 2
    (6.0, 0, ev.SERVER_COMPLETES, 2),        # its worker took client 2's     busy 2, queue 1
    (7.0, 3, ev.CLIENT_TIMES_OUT, 1),        # client 3 leaves ...
    (7.0, 3, ev.SERVER_DROPS, CANCELLED),    # ... its request leaves the queue: busy 2, queue 0
    (8.0, 4, ev.SERVER_DROPS, LIMITER),      # refused on arrival             busy 2, queue 0
    (9.0, 5, ev.SERVER_DROPS, CANCELLED),    # its client left before it came: busy 2, queue 0
    (10.0, 6, ev.SERVER_QUEUES, 1),          #                                busy 2, queue 1
    (11.0, 7, ev.SERVER_QUEUES, 2),          #                                busy 2, queue 2
    (12.0, 8, ev.SERVER_QUEUES, 3),          #                                busy 2, queue 3
    (13.0, 1, ev.SERVER_COMPLETES, 2),       # took client 6's (7's waited too long) busy 2, queue 2
    (13.0, 7, ev.SERVER_DROPS, QT),          #                                busy 2, queue 1
    (14.0, 2, ev.SERVER_COMPLETES, 2),       # took client 8's               busy 2, queue 0
    (15.0, 6, ev.SERVER_COMPLETES, 1),       # nothing waits                  busy 1, queue 0
    (16.0, 9, ev.SERVER_ACCEPTS, 2),         #                                busy 2, queue 0
    (17.0, 9, ev.CLIENT_TIMES_OUT, 1),       # client 9 leaves: its worker is freed (nothing
    (17.0, 9, ev.SERVER_DROPS, CANCELLED),   # was queued)                    busy 1, queue 0
    (18.0, 10, ev.SERVER_DROPS, CODEL),      # (a made-up CoDel drop)         busy 1, queue 0
]
EXPECTED = [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2), (2, 1), (2, 1), (2, 0), (2, 0), (2, 0),
            (2, 1), (2, 2), (2, 3), (2, 2), (2, 1), (2, 0), (1, 0), (2, 0), (2, 0), (1, 0),
            (1, 0)]


def columns(rows: list[tuple[float, int, int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    times, _, codes, details = (np.array(c) for c in zip(*rows))
    return times.astype(np.float64), codes.astype(np.int64), details.astype(np.int64)


def test_a_hand_made_history_step_by_step() -> None:
    state = PoolState(*columns(HAND_MADE))
    assert len(EXPECTED) == len(HAND_MADE)
    for cursor, (busy, queued) in enumerate(EXPECTED):
        snapshot = state.at(cursor)
        assert (snapshot.busy, snapshot.queued) == (busy, queued), cursor
        assert snapshot.workers is None and snapshot.full_workers is None  # an events file's
    last = state.at(len(HAND_MADE) - 1)
    assert last.drops_by_reason() == {"queue_timeout": 1, "codel": 1, "cancelled": 3, "limiter": 1}
    assert last.dropped == 6
    assert state.at(7).drops_by_reason()["cancelled"] == 1 and state.at(6).dropped == 0


def test_a_capacity_change_frees_workers_for_the_queue_at_once() -> None:
    # 2 workers, 1 kept from t = 5 to t = 20: at the end the regained worker takes a queued
    # request with no event of its own; knowing the capacity, the count says so at once.
    rows = [(1.0, 0, ev.SERVER_ACCEPTS, 1), (2.0, 1, ev.SERVER_ACCEPTS, 2),
            (5.0, -1, ev.SERVER_INCIDENT_STARTS, 0), (6.0, 0, ev.SERVER_COMPLETES, 1),
            (7.0, 2, ev.SERVER_QUEUES, 1), (8.0, 3, ev.SERVER_QUEUES, 2),
            (20.0, -1, ev.SERVER_INCIDENT_ENDS, 0), (21.0, 1, ev.SERVER_COMPLETES, 1)]
    known = PoolState(*columns(rows), PoolCapacity(2, ((5.0, 20.0, 1),)))
    unknown = PoolState(*columns(rows))
    at_end = known.at(6)
    assert (at_end.busy, at_end.queued, at_end.workers, at_end.full_workers) == (2, 1, 2, 2)
    assert (known.at(5).busy, known.at(5).workers) == (1, 1)
    # An events file does not say the pool's size: the regained worker shows at the next completion.
    assert (unknown.at(6).busy, unknown.at(6).queued) == (1, 2)
    assert (known.at(7).busy, known.at(7).queued) == (unknown.at(7).busy, unknown.at(7).queued) == (1, 1)


BASE: dict[str, Any] = {
    "title": "Pools", "clients": [12], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.2,
    "control": "PoolServer", "workers": 3, "service_time": 10.0,
    "service_distribution": "exponential", "workload": "open", "think_time": 40.0,
    "horizon": 1500.0, "bucket": 0.37, "timeout": 60.0,
    "strategies": [{"type": "Constant", "constant": 0.0, "max_attempts": 3}],
}
INCIDENT = [{"start": 400.0, "duration": 500.0, "capacity": 0.34}]
# Each defence, with an incident or an outage that builds a queue (12 clients / 40 ms = 0.3
# calls per ms, and retries, against 3 workers' 0.3 per ms, 1 per ms kept in the incident).
DEFENCES = {
    "fifo, incident": {"incidents": INCIDENT},
    "cancel dequeue, outage": {"cancel": "dequeue", "outages": [{"start": 400.0, "duration": 151.33}]},
    "cancel immediate, incident": {"cancel": "immediate", "incidents": INCIDENT},
    "cancel immediate, outage": {"cancel": "immediate", "outages": [{"start": 400.0, "duration": 151.33}]},
    "codel": {"codel_target": 5.0, "codel_interval": 50.0, "incidents": INCIDENT},
    "lifo, cancel dequeue": {"discipline": "lifo", "cancel": "dequeue", "incidents": INCIDENT},
    "queue_timeout, bounded queue": {"queue_timeout": 20.0, "queue_size": 6, "incidents": INCIDENT},
    "aimd limiter, adaptive lifo": {"concurrency_limit": {"algorithm": "aimd", "initial_limit": 4,
                                                          "min_limit": 2},
                                    "discipline": "adaptive_lifo", "codel_interval": 50.0,
                                    "cancel": "immediate", "incidents": INCIDENT},
}


def sampled(spec, times: np.ndarray, state: PoolState, run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(busy, queued) derived at each bucket's end, and the engine's own samples there."""
    series = run.open_metrics.series
    width = run.open_metrics.bucket
    ends = np.minimum((np.arange(len(series["in_service"])) + 1) * width, spec.horizon)
    cursors = np.searchsorted(times, ends, side="right") - 1
    derived = np.array([(s.busy, s.queued) for s in map(state.at, cursors.tolist())])
    engine = np.column_stack([series["in_service"], series["queued"]])
    return derived, engine, cursors


def record(tmp_path: Path, changes: dict[str, Any]):
    """A run of ``BASE`` with ``changes``: its spec, the run, its times, codes and details."""
    config = write_config(tmp_path / "pools.toml", toml_text({**BASE, **changes}))
    spec = load_config(config).simulations[0]
    run = record_run(spec, spec.labels[0], 12, 0)
    packed = np.asarray(run.history.packed, dtype=np.int64)
    times = np.asarray(run.history.times, dtype=np.float64)
    return spec, run, times, unpack_codes(packed), unpack_details(packed)


@pytest.mark.parametrize("name", list(DEFENCES))
def test_the_counts_are_the_engine_s_own_at_every_sample(tmp_path: Path, name: str) -> None:
    spec, run, times, codes, details = record(tmp_path, DEFENCES[name])
    assert records_pool(codes, details)
    state = PoolState(times, codes, details, pool_capacity(spec))
    derived, engine, cursors = sampled(spec, times, state, run)
    # Buckets of 0.37 ms against ~1.4 events per ms: a sample between most pairs of events.
    assert len(engine) > 0.5 * len(times)
    assert engine[:, 1].max() >= 5, "the queue should build"
    # An outage's resume releases its held arrivals after the engine's sample at that instant:
    # the outages above end off the bucket grid, so no sample falls between them.
    # While an outage has the server paused, a client's leaving (cancel = "immediate") takes
    # its request from the queue or from a worker, which the events do not tell apart (the
    # resume settles it): there only the requests held are exact.
    paused = np.zeros(len(engine), dtype=bool)
    if DEFENCES[name].get("cancel") == "immediate" and "outages" in DEFENCES[name]:
        at = times[cursors]
        server = np.full(codes.shape, -1)  # the pause and resume events' client
        paused = np.any([(at >= start) & (at < end)
                         for start, end in outage_windows(times, server, codes)], axis=0)
        assert paused.any() and (derived[paused] != engine[paused]).any()  # the case is met
        np.testing.assert_array_equal(derived[paused].sum(axis=1), engine[paused].sum(axis=1))
    np.testing.assert_array_equal(derived[~paused], engine[~paused])
    # Drops so far, by reason, are the events', and their total the engine's series.
    last = state.at(len(times) - 1)
    drops = details[codes == ev.SERVER_DROPS]
    assert last.drops == tuple(int((drops == r).sum()) for r in range(len(ev.DROP_REASONS)))
    assert last.dropped == int(np.sum(run.open_metrics.series["server_drops"]))


def test_the_defences_drop_for_each_reason(tmp_path: Path) -> None:
    # The runs above do exercise every reason (a check on the test, not on the code).
    seen = np.zeros(len(ev.DROP_REASONS), dtype=int)
    for name in DEFENCES:
        _, _, _, codes, details = record(tmp_path, DEFENCES[name])
        seen += np.bincount(details[codes == ev.SERVER_DROPS], minlength=len(ev.DROP_REASONS))
    assert (seen > 0).all(), dict(zip(ev.DROP_REASONS, seen))


def test_a_replayed_events_file_gives_the_same_counts(tmp_path: Path) -> None:
    # Without the pool's size, only the workers a capacity change frees for the queue show late:
    # at the next completion. Everywhere else the replay's counts are the simulated run's.
    spec = load_config(TINY_POOL).simulations[0]
    label = spec.labels[0]
    run = record_run(spec, label, 12, 0)
    path = write_history_csv(tmp_path / "pool_events.csv", spec.title, label, 12, 0, run.history)
    history = next(iter(read_events_csv(path).values()))
    times = np.asarray(history.times, dtype=np.float64)
    codes, details = history.codes(), history.details()
    replayed = PoolState(times, codes, details)
    simulated = PoolState(times, codes, details, pool_capacity(spec))
    ends = np.flatnonzero(codes == ev.SERVER_INCIDENT_ENDS)
    completions = np.flatnonzero(codes == ev.SERVER_COMPLETES)
    late = {int(i) for end in ends for i in range(end, completions[completions > end][0])}
    assert late  # the incident's end is in the run
    def counts(state: PoolState, i: int) -> tuple[int, int]:
        return state.at(i).busy, state.at(i).queued

    differ = {i for i in range(len(times)) if counts(replayed, i) != counts(simulated, i)}
    assert differ <= late
    derived, engine, _ = sampled(spec, times, simulated, run)
    np.testing.assert_array_equal(derived, engine)


def test_the_capacity_comes_from_the_spec() -> None:
    spec = load_config(TINY_POOL).simulations[0]
    capacity = pool_capacity(spec)
    # 4 workers, capacity = 0.5 from 1,000 to 2,000 ms: 2 kept (sim.models.incidents.kept_slots).
    assert capacity == PoolCapacity(4, ((1000.0, 2000.0, 2),))
    assert [capacity.at(t) for t in (999.9, 1000.0, 1999.9, 2000.0)] == [4, 2, 2, 4]
    other = load_config(FIXTURES / "tiny_outage.toml").simulations[0]  # a LatencyServer
    assert pool_capacity(other) is None


def test_only_a_pool_s_events_hold_its_state() -> None:
    for config, pool in ((TINY_POOL, True), (FIXTURES / "tiny_outage.toml", False),
                         (FIXTURES / "tiny_ticks.toml", False)):
        spec = load_config(config).simulations[0]
        history = record_run(spec, spec.labels[0], spec.clients[0], 0).history
        assert records_pool(history.codes(), history.details()) is pool, config
