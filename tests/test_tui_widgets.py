"""The terminal app's themes, metrics table and charts, each in a tiny test app (no TTY needed)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from rich.text import Text
from support import make_spec
from textual.app import App, ComposeResult
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import Static

from sim.analysis.stats import paired_difference
from sim.analysis.replay import RequestPoints
from sim.runs.sweep import SweepResult, run_sweep
from sim.analysis.versus import BEST_MARK
from sim.runs.engine import record_run
from sim.core.events import CLIENT_REQUESTS_WRITE, EVENT_NAMES, SERVER_ACCEPTS, pack
from sim.core.history import History
from sim.core.series import SERIES_NAMES
from sim.export.palette import CODE_KINDS, EVENT_KINDS, SERIES_COLOURS, available_themes, load_palette
from sim.report.tables import metrics_table, versus_best
from themes import THEMES_DIR
from tui.view.request_points import reduce_points
from tui.theme import EVENT_GLYPHS, event_style, event_styles, palette_for, register_themes, theme_variable_defaults
from tui.widgets.analysis.charts import (
    MetricsChart,
    RequestsChart,
    client_ticks,
    fit_title,
    hex_to_rgb,
    thin_ticks,
)
from tui.view.comparison_rows import comparison_rows
from tui.widgets.analysis.metrics_table import MetricsTable
from tui.widgets.analysis.strategy_table import PLACEHOLDER

STRATEGIES = [{"type": "Constant", "constant": 0.5},
              {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}]


def run(coro) -> None:
    asyncio.run(coro)


@pytest.fixture(scope="module")
def sweep() -> SweepResult:
    spec = make_spec(strategies=STRATEGIES, clients=[1, 4], repeat=3)
    return run_sweep(spec, workers=1)


@pytest.fixture(scope="module")
def history() -> History:
    spec = make_spec(strategies=STRATEGIES, clients=[6], repeat=1)
    return record_run(spec, spec.labels[1], 6, 0).history


class WidgetApp(App):
    """Registers our themes on mount and shows one widget."""

    CSS = "#probe { color: $event-give-up; background: $event-request; }"

    def __init__(self, widget, themes_dir: Path | None = None) -> None:
        super().__init__()
        self.widget = widget
        self.themes_dir = themes_dir
        self.registered: list[str] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return theme_variable_defaults()

    def compose(self) -> ComposeResult:
        yield self.widget

    def on_mount(self) -> None:
        self.registered = register_themes(self, self.themes_dir)
        if "backoff-dark" in self.registered:
            self.theme = "backoff-dark"


def text_colors(text: Text) -> set[tuple[int, int, int]]:
    """Every RGB foreground colour used in a rendered plot."""
    colors = set()
    for span in text.spans:
        style = span.style
        if not isinstance(style, str) and style.color is not None and style.color.triplet:
            colors.add(tuple(style.color.triplet))
    return colors


# Themes ----------------------------------------------------------------------------------------

def test_bundled_themes_register_with_event_variables() -> None:
    async def main() -> None:
        app = WidgetApp(Static("probe", id="probe"))
        async with app.run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            assert app.registered == available_themes()
            assert len(app.registered) == 3
            for name in app.registered:
                assert name in app.available_themes
                app.theme = name
                await pilot.pause()
                palette = load_palette(name)
                variables = app.theme_variables
                for kind in EVENT_KINDS:
                    assert variables["event-" + kind.replace("_", "-")] == palette.events[kind]
                assert variables["event-give-up"] == palette.events["give_up"]
                probe = app.query_one("#probe", Static)
                assert probe.styles.color.hex.upper() == palette.events["give_up"].upper()
    run(main())


def test_palette_for_our_themes_and_builtin_fallback() -> None:
    assert palette_for("backoff-light").name == "backoff-light"
    assert palette_for("backoff-contrast").dark is True
    assert palette_for("textual-dark").name == "backoff-dark"
    assert palette_for("no-such-theme").name == "backoff-dark"


def test_broken_theme_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    good = (THEMES_DIR / "backoff-light.toml").read_text("utf-8")
    (tmp_path / "a-good.toml").write_text(good.replace('"backoff-light"', '"tmp-good"'), "utf-8")
    (tmp_path / "b-bad-colour.toml").write_text(good.replace('"#0B5FD3"', '"blue"', 1), "utf-8")
    (tmp_path / "c-not-toml.toml").write_text("name = [", "utf-8")
    seen: dict[int, Notify] = {}

    def hook(message: Message) -> None:
        if isinstance(message, Notify):
            seen[id(message)] = message

    async def main() -> None:
        app = WidgetApp(Static("x"), themes_dir=tmp_path)
        async with app.run_test(size=(40, 10), message_hook=hook) as pilot:
            await pilot.pause()
            assert app.registered == ["tmp-good"]
            assert "tmp-good" in app.available_themes
            app.theme = "tmp-good"
            await pilot.pause()
            assert app.theme == "tmp-good"
            assert palette_for("tmp-good").name == "tmp-good"
    run(main())
    notes = list(seen.values())
    assert [n.notification.severity for n in notes] == ["warning", "warning"]
    assert "b-bad-colour.toml" in notes[0].notification.message
    assert "primary" in notes[0].notification.message
    assert "c-not-toml.toml" in notes[1].notification.message


def test_event_glyphs_and_styles_cover_every_kind() -> None:
    palette = load_palette("backoff-dark")
    assert set(EVENT_GLYPHS) == set(EVENT_KINDS)
    assert len(set(EVENT_GLYPHS.values())) == len(EVENT_GLYPHS)
    assert EVENT_GLYPHS["give_up"] == "⊘"
    styles = event_styles(palette)
    for kind in EVENT_KINDS:
        assert styles[kind].color.triplet == hex_to_rgb(palette.events[kind])
    assert event_style("failure", palette, bold=True).bold is True


def test_every_event_code_and_series_has_a_colour() -> None:
    assert set(CODE_KINDS) == set(range(len(EVENT_NAMES)))
    assert set(CODE_KINDS.values()) == set(EVENT_KINDS)
    # Every series, the ones only some runs keep (a pool's drops, a hedging entry's hedges) and
    # the failures a run's events add (run_series.FAILURE_LINES).
    from sim.analysis.run_series import FAILURE_LINES
    from sim.core.series import SERVER_SERIES

    assert set(SERIES_COLOURS) == set(SERIES_NAMES) | set(SERVER_SERIES) | {name for name, _ in FAILURE_LINES}


# Metrics table ---------------------------------------------------------------------------------

def test_metrics_table_rows_for_a_real_sweep(sweep: SweepResult) -> None:
    selected: dict[int, int] = {}  # the hook sees a bubbling message once per node it reaches

    def hook(message: Message) -> None:
        if isinstance(message, MetricsTable.StrategySelected):
            selected[id(message)] = message.strategy_index

    async def main() -> None:
        widget = MetricsTable()
        app = WidgetApp(widget)
        async with app.run_test(size=(120, 12), message_hook=hook) as pilot:
            widget.show(sweep, 1)
            await pilot.pause()
            table = widget.table
            assert table.row_count == 2
            best = sweep.best_by_cost(1)
            labels = [str(table.get_row_at(i)[0]) for i in range(2)]
            assert labels == ["● Constant", "▲ FullJitteredExpo"]  # the chart's markers
            marks = [str(table.get_row_at(i)[-1]) for i in range(2)]
            assert marks[best] == BEST_MARK
            assert marks[1 - best] != BEST_MARK
            cost = sweep.summary("cost", best, 1)
            assert str(table.get_row_at(best)[3]) == cost.format(1)
            assert "±" in str(table.get_row_at(best)[1])
            assert "4 clients" in str(widget.query_one("#caption", Static).render())
            widget.highlight(1)
            await pilot.pause()
            assert table.cursor_row == 1
            widget.show(sweep, 0)  # the highlighted strategy survives a new client count
            await pilot.pause()
            assert table.cursor_row == 1
            table.focus()
            await pilot.press("enter")
            await pilot.pause()
            widget.show(None, 0)
            await pilot.pause()
            assert table.row_count == 0
            assert PLACEHOLDER in str(widget.query_one("#caption", Static).render())
    run(main())
    assert list(selected.values()) == [1]


def hand_made_result(repeat: int, durations: list[list[float]]) -> SweepResult:
    spec = make_spec(strategies=[{"type": "Constant", "constant": 0.5},
                                 {"type": "Constant", "constant": 1.0},
                                 {"type": "Constant", "constant": 2.0}],
                     clients=[3], repeat=repeat)
    result = SweepResult.empty(spec)
    result.work[:, 0, :] = 10
    result.duration[:, 0, :] = np.asarray(durations, dtype=np.float64)
    return result


def test_significance_marks_with_known_arrays() -> None:
    base = [10.0, 11.0, 12.0, 13.0, 14.0]
    close = [b + d for b, d in zip(base, [0.5, -0.5, 0.3, -0.3, 0.1])]  # mean +0.02: noise
    worse = [b + d for b, d in zip(base, [5.1, 4.9, 5.0, 5.2, 4.8])]  # +5.0, clearly worse
    result = hand_made_result(5, [close, base, worse])
    rows = comparison_rows(result, 0)
    # close: differences 0.5, -0.5, 0.3, -0.3, 0.1: mean 0.02 (0.1% of the best's 22), sd 0.415,
    # CI 2.7764·0.415/√5 = 0.5, which includes zero
    assert [r.versus_best for r in rows][:2] == ["≈ +0.0 ± 0.5 (+0.1%)", BEST_MARK]
    assert rows[1].best and not rows[0].best and rows[0].same_as_best
    d = paired_difference(result.cost[2, 0], result.cost[1, 0])
    # worse: +5.0 ± 0.2, and 5/22 = 23% more than the best
    assert rows[2].versus_best == f"+{d.mean:.1f} ± {d.ci95:.1f} (+23%)" == "+5.0 ± 0.2 (+23%)"
    assert not rows[2].same_as_best
    assert rows[1].cost == "22.0 ± 2.0"
    assert rows[1].gave_up == "0.0"

    async def main() -> None:
        widget = MetricsTable()
        app = WidgetApp(widget)
        async with app.run_test(size=(100, 10)) as pilot:
            widget.show(result, 0)
            await pilot.pause()
            column = [str(widget.table.get_row_at(i)[-1]) for i in range(3)]
            assert column == ["≈ +0.0 ± 0.5 (+0.1%)", BEST_MARK, "+5.0 ± 0.2 (+23%)"]
    run(main())


def test_single_repetition_difference_has_no_interval_and_no_significance() -> None:
    """One repetition: the difference and its percentage, but "n/a" for the CI, and neither
    "≈" nor a significant verdict (costs 22, 20, 20: +2 is 10% of 20)."""
    result = hand_made_result(1, [[12.0], [10.0], [10.0]])
    rows = comparison_rows(result, 0)
    assert [r.versus_best for r in rows] == ["+2.0 ± n/a (+10%)", BEST_MARK, "+0.0 ± n/a (+0.0%)"]
    assert not any(r.same_as_best for r in rows)
    cli = Console(record=True, width=200, color_system=None, file=io.StringIO())
    cli.print(metrics_table(result))
    text = cli.export_text()
    assert "+2.0 ± n/a (+10%)" in text and "≈" not in text and "no CI or significance (n/a)" in text


def test_vs_best_reads_the_same_in_the_app_and_the_cli(sweep: SweepResult) -> None:
    for k in range(len(sweep.spec.clients)):
        app_cells = [row.versus_best for row in comparison_rows(sweep, k)]
        assert app_cells == [versus_best(sweep, s, k) for s in range(len(sweep.spec.labels))]
        assert BEST_MARK in app_cells
        cli = Console(record=True, width=200, color_system=None, file=io.StringIO())
        cli.print(metrics_table(sweep))
        text = cli.export_text()
        for cell in app_cells:
            assert cell in text


# Charts ----------------------------------------------------------------------------------------

def test_tick_helpers() -> None:
    assert thin_ticks([1, 3, 8], 60, 1) == [1, 3, 8]
    ticks = thin_ticks(list(range(1, 101)), 40, 3)
    assert ticks[0] == 1 and ticks[-1] == 100 and len(ticks) <= 10
    assert client_ticks(8, 30) == list(range(8))
    assert client_ticks(100, 30) == list(range(0, 100, 10))
    assert client_ticks(1000, 3) == [0]
    assert fit_title("cost vs clients", 80) == "cost vs clients"
    assert fit_title("cost vs clients", 10) == "cost…"


def test_metrics_chart_renders_result_none_and_tiny(sweep: SweepResult) -> None:
    async def main() -> None:
        chart = MetricsChart()
        app = WidgetApp(chart)
        async with app.run_test(size=(80, 24)) as pilot:
            chart.show(None)
            await pilot.pause()
            assert "running sweep…" in chart.render().plain
            palette = palette_for("backoff-dark")
            chart.show(sweep, "cost", palette)
            await pilot.pause()
            text = chart.render()
            assert "cost vs clients" in text.plain
            assert "Constant" in text.plain and "FullJitteredExpo" in text.plain
            assert "●" in text.plain and "▲" in text.plain  # a marker per strategy
            colors = text_colors(text)
            assert hex_to_rgb(palette.series_color(0)) in colors
            assert hex_to_rgb(palette.series_color(1)) in colors
            assert chart.cycle_metric() == "work"
            assert "work vs clients" in chart.render().plain
            chart.show(sweep, "duration")
            assert "duration vs clients" in chart.render().plain
            with pytest.raises(ValueError, match="unknown metric"):
                chart.show(sweep, "speed")
            await pilot.resize_terminal(20, 6)
            await pilot.pause()
            tiny = chart.render().plain.splitlines()
            assert len(tiny) <= 6 and all(len(line) <= 20 for line in tiny)
            assert tiny[0].strip() == "duration"  # the long title would not fit
            await pilot.resize_terminal(12, 4)  # too small for a plot: the title alone
            await pilot.pause()
            assert chart.render().plain.splitlines()[0].strip() == "duration"
    run(main())


def test_metrics_chart_follows_the_app_theme(sweep: SweepResult) -> None:
    async def main() -> None:
        chart = MetricsChart()
        app = WidgetApp(chart)
        async with app.run_test(size=(80, 24)) as pilot:
            chart.show(sweep, "cost")  # no palette: the app theme's
            app.theme = "backoff-light"
            await pilot.pause()
            light = load_palette("backoff-light")
            assert hex_to_rgb(light.series_color(0)) in text_colors(chart.render())
    run(main())


def test_requests_chart_scatter_and_cursor(history: History) -> None:
    async def main() -> None:
        chart = RequestsChart()
        app = WidgetApp(chart)
        async with app.run_test(size=(80, 24)) as pilot:
            chart.show(None)
            await pilot.pause()
            assert "no run" in chart.render().plain
            palette = palette_for("backoff-dark")
            chart.show(RequestPoints.from_history(history), palette, title="FullJitteredExpo, 6 clients")
            await pilot.pause()
            before = chart.render()
            assert "FullJitteredExpo, 6 clients" in before.plain
            assert "•" in before.plain
            assert hex_to_rgb(palette.events["request"]) in text_colors(before)
            assert hex_to_rgb(palette.events["backoff"]) not in text_colors(before)
            middle = history.times[len(history) // 2]
            chart.set_cursor(middle)
            await pilot.pause()
            assert chart.cursor == middle
            after = chart.render()
            colors = text_colors(after)
            assert hex_to_rgb(palette.base["accent"]) in colors  # the cursor line
            assert hex_to_rgb(palette.events["backoff"]) in colors  # requests still to come
            assert hex_to_rgb(palette.events["request"]) in colors  # requests already made
            assert after.plain.count("│") > before.plain.count("│")
            chart.set_cursor(None)
            assert chart.render().plain == before.plain
            await pilot.resize_terminal(20, 6)
            chart.set_cursor(middle)
            await pilot.pause()
            tiny = chart.render().plain.splitlines()
            assert len(tiny) <= 6 and all(len(line) <= 20 for line in tiny)
            assert tiny[0].strip() == "FullJitteredEx…"
    run(main())


def synthetic_history(events: int, clients: int) -> History:
    history = History()
    rng = np.random.default_rng(7)
    times = np.sort(rng.uniform(0.0, 1000.0, events))
    ids = rng.integers(0, clients, events)
    for i, (t, c) in enumerate(zip(times, ids)):
        history.append(float(t), int(c), pack(CLIENT_REQUESTS_WRITE if i % 3 else SERVER_ACCEPTS, 0))
    return history


def test_request_points_keep_requests_and_reduce_to_the_plot_resolution() -> None:
    history = synthetic_history(30_000, 300)
    points = RequestPoints.from_history(history)
    assert points.times.size == 20_000
    assert points.n_clients == 300
    times, clients, marker = reduce_points(points, 80, 20, 4000)
    assert times.size <= 4000 and marker in ("braille", "hd", "sd")
    assert np.all(np.diff(times) >= 0)
    small = RequestPoints.from_history(synthetic_history(30, 5))
    times, clients, marker = reduce_points(small, 200, 20, 4000)
    assert marker == "dot" and times.size == small.times.size  # nothing collides at this size
    assert reduce_points(RequestPoints.from_history(History()), 10, 5, 100)[0].size == 0
