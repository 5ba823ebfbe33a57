"""The PNGs' axes, read back from the figures (issue 23, item 8): milliseconds as seconds on a
time axis of ten seconds or more, thousands separators below that; each strategy's latency on
its own scale; no empty server-state panel for a server that keeps no queue; a bar per strategy
with its CI when there is one client count."""

from __future__ import annotations

from pathlib import Path

from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from sim.settings.config import load_config
from sim.export.figure_style import SECONDS_FROM, time_axis
from sim.export.overload_plots import latency_figure, timeseries_figure
from sim.export.plots import metrics_figure, scatter_figure
from sim.export.runs import representative_runs
from sim.runs.sweep import run_sweep
from support import make_spec

FIXTURES = Path(__file__).parent / "fixtures"


def _tick_texts(ax) -> list[str]:
    ax.figure.canvas.draw()  # tick labels exist once drawn
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text()]


def test_a_60_s_time_series_reads_in_seconds_and_latencies_have_their_own_scale() -> None:
    result = run_sweep(load_config(FIXTURES / "tiny_outage.toml").simulations[0], workers=1)
    fig = timeseries_figure(result)
    bottom = fig.axes[-1]
    assert bottom.get_xlabel() == "time (s)"
    ticks = _tick_texts(bottom)
    assert "60" in ticks and not any("000" in t for t in ticks)
    lat = latency_figure(result)
    lines = [ax for ax in lat.axes if ax.get_ylabel().startswith("latency")]
    assert len(lines) == 2
    assert not lines[0].get_shared_y_axes().joined(lines[0], lines[1])
    assert lines[0].get_ylim() != lines[1].get_ylim()  # constant never recovered: another scale


def test_a_short_ms_axis_keeps_ms_with_thousands_separators() -> None:
    spec = make_spec(clients=[3], repeat=1)
    runs = representative_runs(spec)
    assert max(float(r.history.times[-1]) for r in runs.values()) < SECONDS_FROM
    assert scatter_figure(run_sweep(spec, workers=1), runs).axes[-1].get_xlabel() == "time (ms)"
    fig = Figure()
    ax = fig.subplots()
    ax.set_xlim(0, 8000)
    assert time_axis(ax, "ms", 8000) == "time (ms)"
    assert "4,000" in _tick_texts(ax)
    ax.set_xlim(0, 40)
    assert time_axis(ax, "tick", 40) == "time (tick)"  # other units as given


def test_a_flaky_server_gets_no_empty_server_state_panel() -> None:
    spec = make_spec("FlakyServer", clients=[5], repeat=1, failure_rate=0.2, workload="poisson",
                     think_time=100.0, horizon=2000.0, work_to_duration=0.0)
    fig = timeseries_figure(run_sweep(spec, workers=1))
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert len(fig.axes) == len(spec.labels)  # one panel per strategy, the flows
    assert not any("server state" in t for t in titles)


def test_one_client_count_draws_a_bar_per_strategy_with_its_ci() -> None:
    spec = make_spec(clients=[5], repeat=3,
                     strategies=[{"type": "Constant", "constant": 1.0, "name": "constant"},
                                 {"type": "FullJitteredExpo", "base": 1.0, "cap": 50.0, "name": "jitter"}])
    fig = metrics_figure(run_sweep(spec, workers=1))
    for ax in fig.axes:
        bars = [c for c in ax.containers if isinstance(c, BarContainer)]
        assert len(bars) == 1 and len(bars[0]) == 2
        assert [t.get_text() for t in ax.get_xticklabels()] == ["constant", "jitter"]
        assert ax.get_xlabel() == "strategy, at 5 clients"
        assert any(len(line.get_xdata()) for line in ax.lines)  # the CI's error bars


def test_the_scatter_titles_count_writes_with_thousands_separators() -> None:
    # The walk-through of issue 39 read "33391 writes" there, "33,391 requests" in the others.
    # Open traffic of 16 clients, a call each 25 ms for 3 s: ~1,900 writes.
    spec = make_spec("PoolServer", clients=[16], repeat=1, network_mu=1.0, network_sigma=0.2,
                     work_to_duration=0.0, workers=8, service_time=10.0, workload="open",
                     think_time=25.0, horizon=3000.0, timeout=2000.0)
    runs = representative_runs(spec)
    fig = scatter_figure(run_sweep(spec, workers=1), runs)
    counts = [int(ax.get_title().split(": ")[1].split(" writes")[0].replace(",", "")) for ax in fig.axes]
    assert max(counts) >= 1000  # a count that needs a separator
    for ax, n in zip(fig.axes, counts):
        assert f": {n:,} writes by 16 clients" in ax.get_title()
