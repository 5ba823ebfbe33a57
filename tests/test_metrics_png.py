"""The ``_metrics.png`` of traffic that runs to the horizon shows goodput, p99 and amplification
(its duration and cost would all equal the horizon), and its strategy names never overlap
(issue 39, item 4)."""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from support import make_spec

from sim.export.plots import metrics_figure
from sim.runs.sweep import run_sweep

LONG_NAMES = [{"type": "Constant", "constant": 0.0, "max_attempts": 1, "name": "no retries at all"},
              {"type": "FullJitteredExpo", "base": 5.0, "cap": 200.0, "max_attempts": 4,
               "name": "backoff, 4 attempts"},
              {"type": "Constant", "constant": 0.0, "max_attempts": 4, "name": "shared retry budget",
               "policies": [{"type": "RetryBudget", "percent": 10, "scope": "shared"}]}]
OPEN_POOL = dict(clients=[16], repeat=2, network_mu=1.0, network_sigma=0.2, work_to_duration=0.0,
                 workers=8, service_time=10.0, workload="open", think_time=25.0, horizon=2000.0,
                 timeout=100.0, strategies=LONG_NAMES,
                 incidents=[{"start": 500.0, "duration": 500.0, "capacity": 0.5}])


def ylabels(fig) -> list[str]:
    return [ax.get_ylabel() for ax in fig.axes]


def test_open_traffic_shows_goodput_p99_and_amplification() -> None:
    result = run_sweep(make_spec("PoolServer", **OPEN_POOL), workers=1)
    assert {r.duration for r in result.open_runs.values()} == {2000.0}  # why duration says nothing
    fig = metrics_figure(result)
    labels = ylabels(fig)
    assert [label.split(" (")[0].split(",")[0] for label in labels] == ["goodput", "p99 latency", "amplification"]
    assert "successes/s" in labels[0]  # below 1 per ms: per second, as run's table
    goodput, p99, amplification = ([p.get_height() for p in ax.patches] for ax in fig.axes)
    for s in range(len(LONG_NAMES)):
        runs = [result.open_run(s, 0, r) for r in range(2)]
        assert np.isclose(goodput[s], np.mean([m.goodput for m in runs]) * 1000.0)
        assert np.isclose(p99[s], np.mean([m.latency_percentiles()["p99"] for m in runs]))
        assert np.isclose(amplification[s], result.summary("amplification", s, 0).mean)


def test_strategy_names_under_the_bars_do_not_overlap() -> None:
    fig = metrics_figure(run_sweep(make_spec("PoolServer", **OPEN_POOL), workers=1))
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    for ax in fig.axes:
        boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels()]
        assert len(boxes) == len(LONG_NAMES)
        for left, right in zip(boxes, boxes[1:]):
            assert left.x1 < right.x0, (left, right)


def test_runs_that_end_when_their_clients_are_done_keep_work_duration_and_cost() -> None:
    fig = metrics_figure(run_sweep(make_spec("LockingServer"), workers=1))
    assert [label.split(" (")[0].split(",")[0] for label in ylabels(fig)] == ["work", "duration", "cost"]
