"""Issue 39, item 12: the cosmetic list, one behaviour each (the offered load's test checks that
``run``'s output to a file has no trailing spaces; the snapshots show the rest on screen)."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from support import make_spec

from sim.analysis.replay import RunSummary
from sim.models.controls import Capabilities
from tui.view.compare_columns import COLUMNS
from tui.widgets.replay.event_log import CURSOR_MARK, time_cell
from tui.widgets.status import Status, _forms, clock_parts


def test_the_cursor_mark_never_runs_into_a_long_time() -> None:
    for t in (0.31, 9_999.999, 11_999.424, 99_999.994, 123_456.789, 12_345_678.0):
        cell = time_cell(t)
        assert len(cell) == len(time_cell(0.0)) and cell[0] == " "  # the mark's neighbour is blank
        assert abs(float(cell) - t) < 0.5  # fewer decimals, never a wrong number
    assert (CURSOR_MARK + time_cell(11_999.424)).startswith(CURSOR_MARK + " ")


def test_the_status_line_writes_event_counts_as_the_log_title_does() -> None:
    status = Status(title="T", strategy="s", clients=160, repetition=1, repetitions=2,
                    index=0, count=138_659, total=40_000.0)
    assert any("1 / 138,659" in p.plain for p in clock_parts(status))
    short = [p.plain for form in _forms(status) for p in form[1]]
    assert "#1/138,659" in short


def test_the_status_lines_clock_has_thousands_separators_as_the_comparisons_does() -> None:
    # The walk-through's main view said "0.0/39999.8 ms" where the comparison said
    # "0.0/39,999.9 ms" (tui.screens.compare's clock) and the log "#1/138,659".
    status = Status(title="T", strategy="s", clients=160, time=12_345.6, total=39_999.8,
                    index=0, count=138_659)
    assert clock_parts(status)[0].plain.endswith("t = 12,345.6 / 39,999.8 ms")
    short = [p.plain for form in _forms(status) for p in form[1]]
    assert "❚❚ 12,345.6/40,000 ms" in short  # the run's length rounded, still separated


def test_the_comparisons_recovered_column_keeps_one_unit() -> None:
    caps = Capabilities(replies=True, keeps_series=True, latencies=True, events=frozenset())
    assert caps.recovery
    column = next(c for c in COLUMNS if c.header == "Recovered")
    cells = [column.cell(RunSummary(1, 40_000.0, 0, caps, recovery=r)) for r in (7_792.0, 17_100.0)]
    assert cells == ["1/1 · 7,792 ms", "1/1 · 17,100 ms"]


def test_the_apps_goodput_is_per_second_as_runs() -> None:
    from sim.runs.sweep import run_sweep
    from tui.view.latency_rows import goodput_rate, latency_rows

    spec = make_spec("PoolServer", clients=[16], repeat=1, network_mu=1.0, network_sigma=0.2,
                     work_to_duration=0.0, workers=8, service_time=10.0, workload="open",
                     think_time=250.0, horizon=1000.0, timeout=100.0,
                     strategies=[{"type": "Constant", "constant": 0.0, "max_attempts": 1}])
    result = run_sweep(spec, workers=1)
    assert goodput_rate(result) == (1000.0, "s")  # 64 calls/s is under 1 per ms
    rows, _ = latency_rows(result, 0)
    goodput = result.open_run(0, 0, 0).goodput * 1000.0
    assert rows[0].cells["goodput"].replace(",", "") == f"{goodput:.0f}" or \
        abs(float(rows[0].cells["goodput"].replace(",", "")) - goodput) < 1


def test_the_comparison_caption_keeps_the_cost_formula_on_one_line() -> None:
    from sim.runs.sweep import run_sweep
    from tui.view.comparison_rows import comparison_caption, comparison_rows

    result = run_sweep(make_spec("LockingServer"), workers=1)
    caption = comparison_caption(result, 0, comparison_rows(result, 0), 0, "")
    formula = next(part for part in caption.split(" · ") if part.startswith("cost = "))
    assert " " not in formula.removeprefix("cost = ").split(" (")[0]  # no place to wrap inside


def test_the_top_level_help_lists_every_command() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import sys; from tui.entry import main; sys.exit(main())",
                           "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    for command in ("replay FILE", "run [CONFIG]", "explore CONFIG", "phase CONFIG"):
        assert f"backoff-sim {command}" in done.stdout


def test_the_latency_pngs_request_dots_are_visible() -> None:
    from sim.export.overload_plots import REQUEST_DOT, latency_figure
    from sim.runs.sweep import run_sweep

    spec = make_spec("PoolServer", clients=[16], repeat=1, network_mu=1.0, network_sigma=0.2,
                     work_to_duration=0.0, workers=8, service_time=10.0, workload="open",
                     think_time=250.0, horizon=1000.0, timeout=100.0,
                     strategies=[{"type": "Constant", "constant": 0.0, "max_attempts": 1}])
    fig = latency_figure(run_sweep(spec, workers=1))
    dots = [c for ax in fig.axes for c in ax.collections if c.get_label() == "requests sent (right axis)"]
    assert dots and all(c.get_sizes()[0] >= REQUEST_DOT >= 9 and c.get_alpha() >= 0.7 for c in dots)


def test_the_phase_pngs_healthy_marker_is_as_its_legend_shows() -> None:
    from matplotlib.colors import to_hex

    from sim.settings.config import load_config
    from sim.export.palette import load_palette
    from sim.phase.figure import phase_figure
    from sim.phase.portrait import PhaseSettings, compute_portrait
    from tui_support import FIXTURES

    spec = load_config(FIXTURES / "tiny_outage.toml").simulations[0]
    portrait = compute_portrait(spec, "constant", PhaseSettings(size=3, runs=2, clients=30))
    palette = load_palette()
    fig = phase_figure([portrait], palette)
    ax = fig.axes[0]
    (marker,) = [line for line in ax.lines if line.get_label().startswith("healthy")]
    # Its face the success colour, its ring the foreground, above the shading: it reads on the
    # green cells as in the legend (a green ring round the background's colour read as a black dot).
    assert to_hex(marker.get_markerfacecolor()) == palette.base["success"].lower()
    assert to_hex(marker.get_markeredgecolor()) == palette.foreground.lower()
    assert marker.get_zorder() > max(c.get_zorder() for c in ax.collections)
    (handle,) = [h for h, label in zip(*ax.get_legend_handles_labels()) if label.startswith("healthy")]
    assert handle is marker


def test_the_tiers_pngs_log_axis_labels_do_not_overlap() -> None:
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from sim.export.tier_plots import _log_labels

    fig = Figure(figsize=(5, 4.5), dpi=100)
    ax = fig.subplots()
    ax.set_yscale("log")
    ax.plot([1, 2, 3], [1.0, 4.0, 40.0])
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    _log_labels(ax, plain)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    boxes = sorted((t.get_window_extent(renderer) for t in
                    ax.yaxis.get_majorticklabels() + ax.yaxis.get_minorticklabels()
                    if t.get_text() and t.get_visible()), key=lambda b: b.y0)
    lo, hi = ax.get_ylim()
    assert len(boxes) >= 2
    assert all(a.y1 <= b.y0 for a, b in zip(boxes, boxes[1:]))


def test_a_repetition_is_counted_from_1_in_the_pngs_and_run_as_in_the_app() -> None:
    # The walk-through read "repetition 0" in the PNGs and run's event table, "rep 1/2" in the
    # app and `--repetition 1` in the command y copies, for the same run.
    from sim.export.overload_plots import timeseries_figure
    from sim.runs.sweep import run_sweep
    from sim.vocabulary.repetitions import repetition_text
    from tui.widgets.status import selection_parts

    spec = make_spec("PoolServer", clients=[4], repeat=2, network_mu=1.0, network_sigma=0.2,
                     work_to_duration=0.0, workers=2, service_time=10.0, workload="open",
                     think_time=50.0, horizon=500.0, timeout=200.0)
    fig = timeseries_figure(run_sweep(spec, workers=1))
    assert "4 clients, repetition 1 of 2" in fig._suptitle.get_text()
    assert repetition_text(0, 2) == "repetition 1 of 2"
    shown = [p.plain for p in selection_parts(Status(title="T", repetition=0, repetitions=2))]
    assert "rep 1 of 2" in shown
