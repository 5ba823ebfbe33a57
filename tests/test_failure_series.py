"""Every way a request fails has its series, in the app's failures chart and in the time-series
PNG, named the same way (``sim.analysis.run_series.FAILURE_LINES``; issue 39, item 1)."""

from __future__ import annotations

import asyncio

import numpy as np
from support import make_spec
from tui_support import WidgetApp

from sim.analysis.run_series import FAILURE_LINES, count_series
from sim.core import events as ev
from sim.export.overload_plots import timeseries_figure
from sim.runs.engine import record_run
from sim.runs.sweep import run_sweeps
from tui.view.rundata import RunData
from tui.widgets.analysis.series_chart import SeriesChart

# A pool that drops on a queue timeout through a half-capacity incident: ~1/4 of the requests
# in the incident are dropped, none time out (the client's timeout is far longer).
DROPPING = dict(clients=[16], repeat=1, network_mu=1.0, network_sigma=0.2, work_to_duration=0.0,
                workers=8, service_time=10.0, workload="open", think_time=25.0, horizon=3000.0,
                timeout=2000.0, queue_timeout=30.0,
                incidents=[{"start": 1000.0, "duration": 500.0, "capacity": 0.5}],
                strategies=[{"type": "Constant", "constant": 0.0, "max_attempts": 4, "name": "4 attempts"}])
# The same pool behind an adaptive concurrency limit, its incident a second long: the queue
# grows past the limit, which refuses requests on arrival.
LIMITED = {**DROPPING, "queue_timeout": None, "concurrency_limit": {"algorithm": "aimd"},
           "incidents": [{"start": 1000.0, "duration": 1000.0, "capacity": 0.5}]}


def spec_of(table: dict):
    return make_spec("PoolServer", **{k: v for k, v in table.items() if v is not None})


def chart_text(data: RunData) -> str:
    async def body() -> str:
        chart = SeriesChart("failures")
        async with WidgetApp(chart).run_test(size=(90, 24)) as pilot:
            chart.show(data.series)
            await pilot.pause()
            return chart.render().plain
    return asyncio.run(body())


def legend_of(spec) -> list[str]:
    (result,) = run_sweeps([spec], workers=1, record=True)
    fig = timeseries_figure(result)
    return fig.axes[0].get_legend_handles_labels()[1], fig


def test_drops_by_the_server_are_in_the_apps_failures_chart_and_the_png() -> None:
    spec = spec_of(DROPPING)
    run = record_run(spec, "4 attempts", 16, 0)
    drops = int(np.sum(run.open_metrics.series["server_drops"]))
    assert drops > 0 and int(np.sum(run.open_metrics.series["timed_out"])) == 0
    data = RunData.from_history(run.history, 16, run.open_metrics)
    text = chart_text(data)
    label = dict(FAILURE_LINES)["server_drops"]
    assert label == "dropped by the server" and label in text
    assert "timed out" not in text  # a line that is zero throughout is left out
    labels, fig = legend_of(spec)
    assert label in labels
    assert f"{drops:,} dropped by the server" in fig.axes[0].get_title(loc="left")


def test_refusals_by_a_limit_are_counted_apart_from_the_drops() -> None:
    spec = spec_of(LIMITED)
    run = record_run(spec, "4 attempts", 16, 0)
    history = run.history
    codes, details = history.codes(), history.details()
    limited = int(np.sum((codes == ev.SERVER_DROPS) & (details == ev.DROP_REASON_INDEX["limiter"])))
    assert limited > 0
    data = RunData.from_history(history, 16, run.open_metrics)
    series = data.series.series
    assert int(series["limit_refused"].sum()) == limited
    # Taken out of the drops, not counted twice: the two add up to the engine's drops.
    engine = np.asarray(run.open_metrics.series["server_drops"])
    assert np.array_equal(series["limit_refused"] + series["server_drops"], engine)
    assert dict(FAILURE_LINES)["limit_refused"] in chart_text(data)
    labels, _ = legend_of(spec)
    assert dict(FAILURE_LINES)["limit_refused"] in labels


def test_a_replay_counts_the_same_failures_as_the_simulated_run() -> None:
    spec = spec_of(LIMITED)
    run = record_run(spec, "4 attempts", 16, 0)
    simulated = RunData.from_history(run.history, 16, run.open_metrics).series.series
    h = run.history
    times = np.asarray(h.times)
    at = times < spec.horizon  # an event at the horizon falls in the engine's spare slot
    counted = count_series(times[at], h.codes()[at], h.details()[at], run.open_metrics.bucket,
                           len(simulated["offered"]))
    for name, _ in FAILURE_LINES:
        assert np.array_equal(counted[name], simulated[name]), name


def test_the_app_and_the_png_name_the_failures_alike() -> None:
    from sim.export.overload_plots import FLOW_LINES
    from tui.widgets.analysis.series_chart import PANELS

    failures = next(p for p in PANELS if p.name == "failures")
    assert failures.lines == FAILURE_LINES
    png = {name: label for name, label, _ in FLOW_LINES}
    assert all(png[name] == label for name, label in FAILURE_LINES)


def test_calls_a_breaker_refused_are_refusals_by_a_limit() -> None:
    from sim.settings.config import parse_config
    from support import sim_table

    # FlakyServer failing often and a ratio breaker per client: calls start while it is open.
    table = sim_table("FlakyServer", [{"type": "Constant", "constant": 5.0, "max_attempts": 3, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 4, "break_duration": 200.0}]}],
        failure_rate=0.8, workload="poisson", think_time=50.0, horizon=3000.0, clients=[5], repeat=1)
    spec = parse_config({"simulation": [table]}).simulations[0]
    run = record_run(spec, spec.labels[0], 5, 0)
    refused = run.open_metrics.calls_refused
    assert refused > 0
    data = RunData.from_history(run.history, 5, run.open_metrics)
    assert int(data.series.series["limit_refused"].sum()) == refused
    assert "refused by a limit" in chart_text(data)
