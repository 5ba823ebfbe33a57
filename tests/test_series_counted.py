"""A replayed events file has no series: the app counts them back with ``sim.core.series.
count_series``, which must count the flows exactly as the engine's handlers do."""

from __future__ import annotations

import numpy as np
import pytest
from test_overload_model import LATENCY, QUEUE, spec_of

from sim.core import events as ev
from sim.runs.engine import record_run
from sim.core.series import FLOW_NAMES, count_series
from sim.models import marking_events
from tui.run_series import RunSeries


@pytest.mark.parametrize("base", [QUEUE, LATENCY], ids=["QueueServer", "LatencyServer"])
def test_counted_flows_equal_the_engines_series(base: dict) -> None:
    spec = spec_of(base)
    for label in spec.labels:
        run = record_run(spec, label, 40, 0)
        m = run.open_metrics
        packed = np.asarray(run.history.packed)
        times = np.asarray(run.history.times)
        at = times < spec.horizon  # an event at the horizon falls in the engine's spare slot
        counted = count_series(times[at], packed[at] & ev.CODE_MASK,
                               (packed[at] >> ev.DETAIL_SHIFT) - 1, m.bucket, len(m.series["offered"]))
        for name in FLOW_NAMES:
            assert np.array_equal(counted[name], m.series[name]), (label, name)
            assert counted[name].sum() > 0 or name in ("rejected", "timed_out")


def test_the_app_counts_with_sims_function() -> None:
    spec = spec_of(QUEUE)
    run = record_run(spec, spec.labels[0], 40, 0)
    packed = np.asarray(run.history.packed)
    times, clients = np.asarray(run.history.times), np.asarray(run.history.clients)
    codes, details = packed & ev.CODE_MASK, (packed >> ev.DETAIL_SHIFT) - 1
    derived = RunSeries.from_events(times, clients, codes, details, buckets=50)
    expected = count_series(times, codes, details, derived.bucket, 50)
    assert all(np.array_equal(derived.series[n], expected[n]) for n in expected)


def test_replying_runs_are_marked_by_the_declared_events() -> None:
    """The codes that mark a replay as an overload run come from the capabilities: every one is
    recorded by a replying server or its clients, none by the contention kinds."""
    marks = marking_events("keeps_series")
    assert marks == {ev.CLIENT_SUCCEEDS, ev.CLIENT_TIMES_OUT, ev.SERVER_COMPLETES, ev.SERVER_QUEUES,
                     ev.SERVER_DROPS}  # PoolServer's drops


def test_a_call_an_open_breaker_refused_counts_as_offered() -> None:
    # FlakyServer failing often and a ratio breaker per client: many calls start while the
    # breaker is open (client_call_refused, no write); the engine counts them offered all the same.
    from sim.config import parse_config

    from support import sim_table

    table = sim_table("FlakyServer", [{"type": "Constant", "constant": 5.0, "max_attempts": 3, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 4, "break_duration": 200.0}]}],
        failure_rate=0.8, workload="poisson", think_time=50.0, horizon=3000.0, clients=[5], repeat=1)
    spec = parse_config({"simulation": [table]}).simulations[0]
    run = record_run(spec, spec.labels[0], 5, 0)
    m = run.open_metrics
    assert m.calls_refused > 0
    packed = np.asarray(run.history.packed)
    times = np.asarray(run.history.times)
    at = times < spec.horizon
    counted = count_series(times[at], packed[at] & ev.CODE_MASK, (packed[at] >> ev.DETAIL_SHIFT) - 1,
                           m.bucket, len(m.series["offered"]))
    for name in FLOW_NAMES:
        assert np.array_equal(counted[name], m.series[name]), name
