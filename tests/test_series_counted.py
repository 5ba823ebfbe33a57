"""A replayed events file has no series: they are counted back with ``sim.analysis.run_series.
count_series``, which must count the flows exactly as the engine's handlers do."""

from __future__ import annotations

import numpy as np
import pytest
from test_overload_model import LATENCY, QUEUE, spec_of

from sim.analysis.run_series import FLOW_NAMES, count_series
from sim.core import events as ev
from sim.models import marking_events
from sim.runs.engine import record_run


def counted_flows(run, horizon: float) -> dict[str, np.ndarray]:
    """The run's series counted back from its events with the engine's buckets."""
    m = run.open_metrics
    history = run.history
    times = np.asarray(history.times)
    at = times < horizon  # an event at the horizon falls in the engine's spare slot
    return count_series(times[at], history.codes()[at], history.details()[at], m.bucket,
                        len(m.series["offered"]))


@pytest.mark.parametrize("base", [QUEUE, LATENCY], ids=["QueueServer", "LatencyServer"])
def test_counted_flows_equal_the_engines_series(base: dict) -> None:
    spec = spec_of(base)
    for label in spec.labels:
        run = record_run(spec, label, 40, 0)
        counted = counted_flows(run, spec.horizon)
        for name in FLOW_NAMES:
            assert np.array_equal(counted[name], run.open_metrics.series[name]), (label, name)
            assert counted[name].sum() > 0 or name in ("rejected", "timed_out")


def test_replying_runs_are_marked_by_the_declared_events() -> None:
    """The codes that mark a replay as an overload run come from the capabilities: every one is
    recorded by a replying server or its clients, none by the contention kinds."""
    marks = marking_events("keeps_series")
    assert marks == {ev.CLIENT_SUCCEEDS, ev.CLIENT_TIMES_OUT, ev.SERVER_COMPLETES, ev.SERVER_QUEUES,
                     ev.SERVER_DROPS,  # PoolServer's drops
                     ev.CLIENT_HEDGES}  # hedging needs a replying server


def test_a_call_an_open_breaker_refused_counts_as_offered() -> None:
    # FlakyServer failing often and a ratio breaker per client: many calls start while the
    # breaker is open (client_call_refused, no write); the engine counts them offered all the same.
    from sim.settings.config import parse_config

    from support import sim_table

    table = sim_table("FlakyServer", [{"type": "Constant", "constant": 5.0, "max_attempts": 3, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 4, "break_duration": 200.0}]}],
        failure_rate=0.8, workload="poisson", think_time=50.0, horizon=3000.0, clients=[5], repeat=1)
    spec = parse_config({"simulation": [table]}).simulations[0]
    run = record_run(spec, spec.labels[0], 5, 0)
    assert run.open_metrics.calls_refused > 0
    counted = counted_flows(run, spec.horizon)
    for name in FLOW_NAMES:
        assert np.array_equal(counted[name], run.open_metrics.series[name]), name
