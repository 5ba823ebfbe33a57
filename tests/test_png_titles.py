"""The time-series PNG's titles stay inside the figure and their panels (the walk-through of
issue 39: the supertitle ran off both edges, a strategy's flow title into its server-state
title): read back from the drawn figure, in pixels."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from support import make_spec

from sim.export.overload_plots import fit_title, timeseries_figure
from sim.runs.sweep import run_sweeps

# A pool that drops on a queue timeout through a half-capacity incident, with a long strategy
# name: its flow title (requests, successes, drops, this run's verdict) is longer than a panel.
LONG = dict(clients=[16], repeat=1, network_mu=1.0, network_sigma=0.2, work_to_duration=0.0,
            workers=8, service_time=10.0, workload="open", think_time=25.0, horizon=3000.0,
            timeout=2000.0, queue_timeout=30.0,
            incidents=[{"start": 1000.0, "duration": 500.0, "capacity": 0.5}],
            strategies=[{"type": "FullJitteredExpo", "base": 5.0, "cap": 200.0, "max_attempts": 4,
                         "name": "full jittered backoff, 4 attempts (3 retries), no budget"}])


def test_long_titles_wrap_inside_their_panels_and_the_figure() -> None:
    (result,) = run_sweeps([make_spec("PoolServer", **LONG)], workers=1, record=True)
    fig = timeseries_figure(result)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    width = fig.bbox.width
    flows, levels = fig.axes[0], fig.axes[1]
    flow_title, level_title = flows._left_title, levels._left_title
    assert "\n" in flow_title.get_text()  # it was too long for one line: wrapped
    # The flow title ends before the server-state panel (and its title) begins.
    assert flow_title.get_window_extent(renderer).x1 < levels.get_window_extent(renderer).x0
    assert level_title.get_window_extent(renderer).x1 <= width
    box = fig._suptitle.get_window_extent(renderer)
    assert 0 <= box.x0 and box.x1 <= width
    assert "\n(always 0, not drawn: " in fig._suptitle.get_text()  # the note on its own line


def test_a_wrapped_title_reads_back_whole_and_breaks_only_at_separators() -> None:
    text = ("no retries: 33,332 requests, 31,803 successes, 1,478 dropped by the server · "
            "this run: 1/1 recovered, median 531.4 ms")
    wrapped = fit_title(text, 60)
    lines = wrapped.split("\n")
    assert len(lines) > 1 and all(len(line) <= 60 for line in lines)
    assert " ".join(lines) == text
    assert all(line.endswith((",", "·")) for line in lines[:-1])  # never inside "1,478 dropped"
    assert fit_title(text, len(text)) == text  # one that fits is left alone
