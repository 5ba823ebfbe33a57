"""A recorded run's totals, latencies and outage windows derived from its events
(``sim.analysis.replay``) are the engine's own metrics of the same run: what a replayed events
file shows is what the simulation measured."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from support import sim_table
from tui_support import FIXTURES

from sim.analysis.recovery import recovery_verdict
from sim.analysis.replay import (
    backoff_waits,
    merged_times,
    outage_windows,
    step_time,
    success_latencies,
    summarize,
)
from sim.analysis.run_series import count_series
from sim.settings.config import load_config, parse_config
from sim.core import events as ev
from sim.runs.engine import Run, record_run
from sim.settings.spec import SimulationSpec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# (config, client counts: None for the config's own). The examples are cut to a few clients.
CONFIGS = [
    (FIXTURES / "snapshot.toml", None),        # contention (LockingServer)
    (FIXTURES / "tiny.toml", None),            # LockingServer and read-then-write OCC
    (FIXTURES / "tiny_outage.toml", None),     # LatencyServer paused: recovery or never
    (FIXTURES / "policy_lanes.toml", None),    # FlakyServer, gRPC throttle, breakers, buckets
    (EXAMPLES / "server_outage.toml", [100]),  # study 003's outage
    (EXAMPLES / "retry_budgets.toml", [20]),   # Brooker's retry budgets, a breaker
]


def columns(run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    history = run.history
    return (np.asarray(history.times), np.asarray(history.clients), history.codes(),
            history.details())


def runs(path: Path, counts: list[int] | None):
    for spec in load_config(path).simulations:
        for label in spec.labels:
            for clients in counts or spec.clients:
                yield spec, label, record_run(spec, label, clients, 0)


def same(a: float | None, b: float | None) -> bool:
    """Equal, nan equal to nan."""
    return a == b or (a is not None and b is not None and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("path, counts", CONFIGS, ids=[p.stem for p, _ in CONFIGS])
def test_a_run_s_totals_from_its_events_are_the_engines(path: Path, counts: list[int] | None) -> None:
    successes = 0
    for spec, label, run in runs(path, counts):
        m = run.metrics()
        summary = summarize(*columns(run), spec.caps, recovery=getattr(m, "recovery_time", None))
        where = (spec.title, label, run.clients)
        assert (summary.work, summary.gave_up) == (m.work, m.gave_up), where
        if not spec.runs_to_horizon:  # a run to a horizon lasts to it, past its last event
            assert summary.duration == m.duration, where
        if spec.caps.latencies:
            assert summary.successes == m.successes, where
            expected = m.latency_percentiles()  # the engine's percentiles, p50 to max
            assert summary.latency.keys() == expected.keys(), where
            assert all(same(summary.latency[k], expected[k]) for k in expected), where
        successes += summary.successes
    assert successes > 0 or not load_config(path).simulations[0].caps.latencies


OUTAGES = [c for c in CONFIGS if "outage" in c[0].stem]


@pytest.mark.parametrize("path, counts", OUTAGES, ids=[p.stem for p, _ in OUTAGES])
def test_outages_and_recovery_from_events_are_the_engines(path: Path, counts: list[int] | None) -> None:
    for spec, label, run in runs(path, counts):
        m = run.open_metrics
        times, clients, codes, details = columns(run)
        assert outage_windows(times, clients, codes) == tuple((o.start, o.end) for o in spec.outages)
        # Counted back with the engine's buckets (an event at the horizon falls in its spare
        # slot), the goodput and the latencies give the engine's verdict.
        at = times < spec.horizon
        goodput = count_series(times[at], codes[at], details[at], m.bucket, len(m.series["goodput"]))["goodput"]
        derived = recovery_verdict(goodput, m.bucket, spec.outages,
                                   *success_latencies(times, clients, codes, details), time_unit=spec.time_unit)
        # A verdict to compare: recovered, nan (never), or not judged with its reason (at 100
        # clients the tiny outage's baseline is too noisy to tell 80% from 90%).
        assert m.recovery_time is not None or m.recovery_note
        assert same(derived.time, m.recovery_time), (label, run.clients, derived, m.recovery_time)
        assert derived.note == m.recovery_note


def policy_lanes() -> SimulationSpec:
    return load_config(FIXTURES / "policy_lanes.toml").simulations[0]


def test_a_call_an_open_breaker_refused_is_timed_from_the_refusal() -> None:
    # The breakers of policy_lanes refuse first attempts (client_call_refused); a call that then
    # succeeds began at the refusal, as the engine times it.
    spec = policy_lanes()
    run = record_run(spec, spec.labels[0], 6, 0)
    times, clients, codes, details = columns(run)
    assert np.count_nonzero(codes == ev.CLIENT_CALL_REFUSED) > 0
    m = run.open_metrics
    when, latencies = success_latencies(times, clients, codes, details)
    assert np.array_equal(when, m.latency_times) and np.array_equal(latencies, m.latencies)


def test_a_call_held_before_its_first_attempt_is_timed_from_that_attempt() -> None:
    # botocore's adaptive limiter, enabled by a throttling QueueServer, holds first attempts
    # (no event): the events time such a call from its first write, the engine from its start.
    table = sim_table("QueueServer", [{"type": "Constant", "constant": 5.0, "max_attempts": 4,
                                       "policies": [{"type": "AdaptiveRateLimiter"}]}],
                      concurrency=2, service_time=5.0, queue_size=2, workload="poisson",
                      think_time=5.0, horizon=20000.0, clients=[20], repeat=1)
    spec = parse_config({"simulation": [table]}).simulations[0]
    run = record_run(spec, spec.labels[0], 20, 0)
    m = run.open_metrics
    when, latencies = success_latencies(*columns(run))
    assert np.array_equal(when, m.latency_times)
    assert (latencies <= m.latencies).all() and (latencies < m.latencies).any()


def test_a_refused_retry_is_no_give_up() -> None:
    # A retry an open breaker refused (client_retry_denied, policy=breaker_open) lets the call go
    # on; the give-ups are the engine's only without those.
    spec = policy_lanes()
    run = record_run(spec, spec.labels[0], 6, 0)
    times, clients, codes, details = columns(run)
    refused = (codes == ev.CLIENT_RETRY_DENIED) & (details == ev.DENY_REASON_INDEX["breaker_open"])
    assert refused.any()
    assert summarize(times, clients, codes, details, spec.caps).gave_up == run.open_metrics.gave_up


def test_each_wait_ends_at_the_client_s_next_event() -> None:
    times = np.array([0.0, 1.0, 2.0, 3.0, 5.0])
    clients = np.array([0, 1, 0, 0, 1])
    codes = np.array([ev.CLIENT_BACKS_OFF, ev.CLIENT_BACKS_OFF, ev.CLIENT_REQUESTS_WRITE,
                      ev.CLIENT_BACKS_OFF, ev.CLIENT_REQUESTS_WRITE])
    starts, ends, who = backoff_waits(times, clients, codes)
    assert starts.tolist() == [0.0, 1.0, 3.0]
    assert ends.tolist() == [2.0, 5.0, 5.0]  # the last wait of client 0 lasts to the run's end
    assert who.tolist() == [0, 1, 0]


def test_the_shared_clock_stops_at_every_event_of_every_run() -> None:
    stops = merged_times([np.array([0.0, 2.0, 5.0]), np.array([0.0, 3.0, 5.0, 9.0])])
    assert stops.tolist() == [0.0, 2.0, 3.0, 5.0, 9.0]
    assert step_time(stops, 0.0, 1) == 2.0 and step_time(stops, 2.5, 1) == 3.0
    assert step_time(stops, 2.5, -1) == 0.0 and step_time(stops, 9.0, 10) == 9.0
    assert step_time(stops, -1.0, 1) == 0.0  # before the first stop: the first step lands on it
    assert merged_times([]).size == 0 and step_time(merged_times([]), 1.0, 1) == 0.0
