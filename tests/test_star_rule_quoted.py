"""Issue 33, item 2: the ★ rule is stated once (``sim.analysis.best.star_rule``) and every caption
and help text quotes it; a single run's recovery verdict reads as ``RecoverySummary.text`` of a
summary of that one run (the comparison's column, the time-series PNG's title, the app's chart).
"""

from __future__ import annotations

import math

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from support import make_spec
from tui_support import TINY_OUTAGE

from sim.analysis.best import star_rule
from sim.analysis.recovery import TOO_NOISY, RecoverySummary
from sim.analysis.replay import RunSummary
from sim.analysis.run_series import RunSeries
from sim.commands.cli import RUN_DESCRIPTION, build_parser
from sim.export.overload_plots import _recovery_notes, _short, shown_runs, timeseries_figure
from sim.report.latency import latency_table
from sim.runs.sweep import SweepResult, run_sweep
from sim.settings.config import load_config
from tui.view.compare_columns import COLUMNS
from tui.view.latency_rows import format_time, latency_caption, latency_rows
from tui.widgets.analysis.series_chart import recovery_note


def _words(text: str) -> str:
    """``text`` with every run of whitespace one space (help texts are wrapped)."""
    return " ".join(text.split())


@pytest.fixture(scope="module")
def outage_sweep() -> SweepResult:
    # At 300 clients constant retries never recover, exponential backoff does; at 30 the
    # baseline is too noisy to judge (the fixture's comments): every kind of verdict.
    return run_sweep(load_config(TINY_OUTAGE).simulations[0], workers=1)


@pytest.fixture(scope="module")
def calm_sweep() -> SweepResult:
    spec = make_spec("PoolServer", clients=[16], repeat=1, network_mu=1.0, network_sigma=0.2,
                     work_to_duration=0.0, workers=8, service_time=10.0, workload="open",
                     think_time=250.0, horizon=1000.0, timeout=100.0,
                     strategies=[{"type": "Constant", "constant": 0.0, "max_attempts": 1}])
    return run_sweep(spec, workers=1)


def test_the_rule_for_any_simulation_adds_the_outages_condition_to_the_calm_one() -> None:
    calm, general = star_rule(False), star_rule(None)
    assert star_rule(True).startswith(calm) and general.startswith(calm)
    assert "recovered in every run" in general and "outage" in general
    assert "recovered" not in calm


def test_run_help_quotes_the_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert star_rule(None) in _words(RUN_DESCRIPTION)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    assert star_rule(None) in _words(capsys.readouterr().out)


def test_the_help_screen_quotes_the_rule() -> None:
    from tui.screens.help import READING, reading_table

    assert star_rule(None) in dict(READING)["Latency table"]
    found = reading_table("fewest requests")  # what the search finds is the quoted rule's part
    assert found is not None and list(found.columns[0].cells) == ["Latency table"]


def test_the_latency_captions_quote_the_rule(outage_sweep: SweepResult, calm_sweep: SweepResult) -> None:
    for result, has_outage in ((outage_sweep, True), (calm_sweep, False)):
        assert bool(result.spec.disruptions) is has_outage
        assert star_rule(has_outage) in _words(str(latency_table(result).caption))  # the CLI's
        for k in range(len(result.spec.clients)):  # the app's
            rows, silent = latency_rows(result, k)
            assert star_rule(has_outage) in latency_caption(result, k, rows, silent, 0, "")


def _one_run(outage_sweep: SweepResult) -> list[tuple[float | None, str]]:
    """Every run's verdict and note, and each kind once more by hand (recovered, never, not
    judged with a note and without)."""
    spec = outage_sweep.spec
    runs = [outage_sweep.open_run(s, k, r) for s in range(len(spec.labels))
            for k in range(len(spec.clients)) for r in range(spec.repeat)]
    verdicts = [(m.recovery_time, m.recovery_note) for m in runs]
    kinds = {None if t is None else math.isnan(t) for t, _ in verdicts}
    assert kinds == {None, True, False}  # the fixture has runs of every kind
    return verdicts + [(7_792.0, ""), (math.nan, ""), (None, TOO_NOISY), (None, "")]


def test_the_comparisons_recovered_cell_is_the_tables_text_for_one_run(outage_sweep: SweepResult) -> None:
    caps, unit = outage_sweep.spec.caps, outage_sweep.spec.time_unit
    column = next(c for c in COLUMNS if c.header == "Recovered")
    for time, note in _one_run(outage_sweep):
        cell = column.cell(RunSummary(1, 60_000.0, 0, caps, recovery=time, time_unit=unit,
                                      recovery_note=note))
        one = RecoverySummary.of([time])
        if one is None:
            assert cell.startswith("—")
        else:  # as the latency table's Recovery cell (tui.view.latency_rows.format_recovery)
            assert cell == one.text(lambda v: format_time(v, unit), compact=True, glyph=True)


def test_the_apps_chart_title_gives_the_tables_text_for_one_run(outage_sweep: SweepResult) -> None:
    unit = outage_sweep.spec.time_unit
    for time, note in _one_run(outage_sweep):
        title = recovery_note(RunSeries(100.0, {}, (), time, recovery_note=note), unit)
        one = RecoverySummary.of([time])
        if one is None:
            assert title == (f" · recovery —: {note}" if note else "")
        else:
            assert title == f" · recovery: {one.text(lambda v: format_time(v, unit), glyph=True)}"


def test_the_pngs_shown_run_gives_the_tables_text_for_one_run(outage_sweep: SweepResult) -> None:
    unit = outage_sweep.spec.time_unit
    _, shown = shown_runs(outage_sweep)
    figure = timeseries_figure(outage_sweep)
    FigureCanvasAgg(figure)
    titles = [" ".join(ax.get_title(loc="left").split("\n")) for ax in figure.axes]  # unwrapped
    for label, m in shown.items():
        one = RecoverySummary.of([m.recovery_time])
        assert one is not None  # the largest client count's runs are judged
        text = f" · this run: {one.text(_short, unit)}"
        assert _recovery_notes(outage_sweep, label, m)[0] == text
        assert any(t.startswith(f"{label}: ") and t.endswith(text) for t in titles)
