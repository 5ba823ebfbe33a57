"""Both strategy tables fit their pane: optional columns give way first, then strategy names end
in "…"; the caption says how many columns are hidden."""

from __future__ import annotations

import asyncio
import math

import numpy as np
from support import make_spec
from tui_support import WidgetApp

from sim.runs.sweep import run_sweep
from tui.view.success_cells import success_cell
from tui.view.table_sort import Sort, next_sort, sort_order
from tui.widgets.analysis.metrics_table import MetricsTable

STRATEGIES = [{"type": "Constant", "constant": 0.5, "name": "constant half a millisecond"},
              {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}]
# The same strategy without and with a shared gRPC throttle (a retry policy: policy columns).
THROTTLED = [{"type": "Constant", "constant": 0.5, "name": "plain"},
             {"type": "Constant", "constant": 0.5, "name": "throttled",
              "policies": [{"type": "GrpcThrottle", "scope": "shared"}]}]


def test_metrics_table_drops_columns_then_shortens_names() -> None:
    sweep = run_sweep(make_spec(strategies=STRATEGIES, clients=[1, 4], repeat=3), workers=1)

    async def body() -> None:
        table = MetricsTable()
        app = WidgetApp(table)
        async with app.run_test(size=(120, 12)) as pilot:
            table.show(sweep, 1)
            await pilot.pause()
            assert table.columns == ["Strategy", "Work", "Duration", "Cost", "Success",
                                     "Cost vs best"]
            assert str(table.table.get_row_at(0)[0]).endswith("constant half a millisecond")
            await pilot.resize_terminal(44, 12)
            await pilot.pause()
            assert table.columns == ["Strategy", "Cost", "Cost vs best"]
            label = str(table.table.get_row_at(0)[0])
            assert label.endswith("…") and len(label) < len("● constant half a millisecond")
            assert "3 more columns" in str(table.query_one("#caption").render())
            table.set_more_hint("widen the terminal")
            await pilot.pause()
            assert "3 more columns: widen the terminal" in str(table.query_one("#caption").render())
    asyncio.run(body())


def test_a_table_filled_before_its_final_width_lays_out_again_at_that_width() -> None:
    """The order a loaded machine produces: the sweep lands while the pane is still at an
    interim width (or before it has any), then the layout settles. The table must end up as
    if it had been filled at the final width, also when the interim width shows the same
    columns (only strategy names cut shorter), which a resize used to leave as it was."""
    sweep = run_sweep(make_spec(strategies=STRATEGIES, clients=[1, 4], repeat=3), workers=1)
    final, interim = 56, 50  # both narrow enough for the required columns alone (checked below)

    def state(table: MetricsTable) -> tuple:
        grid = table.table
        return (table.columns, [column.width for column in grid.columns.values()],
                [[str(cell) for cell in grid.get_row_at(i)] for i in range(grid.row_count)],
                str(table.query_one("#caption").render()))

    async def filled_at(width: int, then: int | None = None, before_layout: bool = False):
        table = MetricsTable()
        if before_layout:
            table.show(sweep, 1)  # rows known before the table has a size
        async with WidgetApp(table).run_test(size=(width, 12)) as pilot:
            if not before_layout:
                table.show(sweep, 1)
            await pilot.pause()
            if then is not None:
                await pilot.resize_terminal(then, 12)
                await pilot.pause()
            return state(table)

    async def body() -> None:
        direct, early = await filled_at(final), await filled_at(interim)
        # The interim width keeps the same columns but cuts names shorter: the case at stake.
        assert direct[0] == early[0] == list(MetricsTable.REQUIRED)
        assert direct[2] != early[2]
        assert await filled_at(interim, then=final) == direct
        assert await filled_at(final, then=interim) == early
        assert await filled_at(final, before_layout=True) == direct
    asyncio.run(body())


def test_the_table_s_tooltip_names_the_highlighted_strategy_s_whole_chain() -> None:
    spec = make_spec(strategies=[
        {"type": "Constant", "constant": 0.5, "name": "plain"},
        {"type": "Constant", "constant": 0.5, "max_attempts": 4, "name": "budgeted",
         "policies": [{"type": "GrpcThrottle", "scope": "shared"}]}], clients=[4], repeat=1)
    sweep = run_sweep(spec, workers=1)

    async def body() -> None:
        table = MetricsTable()
        async with WidgetApp(table).run_test(size=(120, 12)) as pilot:
            table.show(sweep, 0)
            await pilot.pause()
            assert table.table.tooltip == "plain: Constant(constant=0.5)"
            table.highlight(1)
            await pilot.pause()
            assert table.table.tooltip == ("budgeted: Constant(max_attempts=4, constant=0.5)"
                                           " + GrpcThrottle(scope=shared)")
    asyncio.run(body())


def test_a_simulation_with_policies_shows_what_they_did_in_both_tables() -> None:
    # A shared gRPC throttle on one lock: rejections drain it, so it denies retries; no breaker,
    # so "calls refused" and "breaker open" are zero in every run and left out.
    from sim.report.policies import policy_table
    from tui.widgets.analysis.latency_table import LatencyTable

    spec = make_spec(strategies=THROTTLED, clients=[20], repeat=2)
    sweep = run_sweep(spec, workers=1)
    assert sweep.retries_denied[1].sum() > 0 and not sweep.calls_refused.any()
    flaky = make_spec("FlakyServer", strategies=[
        {"type": "Constant", "constant": 0.0, "max_attempts": 3, "name": "breaker", "policies": [
            {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 1e9}]}],
        failure_rate=1.0, workload="poisson", think_time=100.0, horizon=2000.0, clients=[2], repeat=1)
    broken = run_sweep(flaky, workers=1)
    assert broken.calls_refused.sum() > 0

    async def body() -> None:
        table = MetricsTable()
        async with WidgetApp(table).run_test(size=(160, 12)) as pilot:
            table.show(sweep, 0)
            await pilot.pause()
            assert table.columns[-2:] == ["amplification", "retries denied"]
            denied = str(table.table.get_row_at(1)[-1])
            assert float(denied) == sweep.retries_denied[1, 0].mean()
        latency = LatencyTable()
        async with WidgetApp(latency).run_test(size=(200, 12)) as pilot:
            latency.show(broken, 0)
            await pilot.pause()
            assert latency.columns[-4:] == ["amplification", "retries denied", "calls refused",
                                            "breaker open"]
            assert str(latency.table.get_row_at(0)[-2]) == f"{broken.calls_refused[0, 0, 0]:,}"
    asyncio.run(body())
    # Without policies: no policy columns, no policy table.
    plain = run_sweep(make_spec(strategies=STRATEGIES, clients=[2], repeat=1), workers=1)
    assert policy_table(plain) is None
    assert "calls refused" in [c.header for c in policy_table(broken).columns]


def test_the_success_rate_is_the_share_of_calls_that_did_not_give_up() -> None:
    """A run that drains: every call succeeds or gives up, so the success rate is (calls − give-
    ups) / calls; a capped strategy at a crowded lock gives some up, the table says it with its
    CI in points; an open run's is its successes over the calls offered."""
    from sim.analysis.metrics import RunMetrics
    from sim.analysis.open_metrics import OpenRunMetrics
    from sim.analysis.stats import estimate

    assert RunMetrics(work=30, duration=1.0, cost=0.0, gave_up=3, events=0, calls=12).success_rate == 0.75
    assert math.isnan(RunMetrics(work=0, duration=0.0, cost=0.0, gave_up=0, events=0).success_rate)
    assert OpenRunMetrics(work=9, duration=1.0, cost=0.0, gave_up=1, events=0, calls=8,
                          successes=6, unfinished=1).success_rate == 0.75
    spec = make_spec(strategies=[{"type": "Constant", "constant": 0.5, "max_attempts": 2, "name": "capped"},
                                 {"type": "Constant", "constant": 0.5, "name": "patient"}],
                     clients=[8], repeat=3)
    sweep = run_sweep(spec, workers=1)
    rates = sweep.success_rate[0, 0]
    assert np.allclose(rates, 1 - sweep.gave_up[0, 0] / 8) and rates.min() < 1
    assert (sweep.success_rate[1] == 1).all()
    expected = estimate(rates)
    assert success_cell(sweep, 0, 0) == f"{expected.mean:.1%} ± {expected.ci95 * 100:.1f}"
    assert success_cell(sweep, 1, 0) == "100.0% ± 0.0"
    assert success_cell(sweep, 0, 0, ci=False) == f"{expected.mean:.1%}"


def test_sorting_orders_rows_by_a_column_with_its_arrow_and_keeps_the_cursor_on_its_strategy() -> None:
    assert sort_order([3.0, None, 1.0, float("nan"), 1.0]) == [2, 4, 0, 1, 3]
    assert sort_order([3.0, None, 1.0, 1.0], descending=True) == [0, 2, 3, 1]
    assert sort_order(["b", "A", "c"]) == [1, 0, 2]
    assert next_sort(["a", "b"], None) == Sort("a")
    assert next_sort(["a", "b"], Sort("a", True)) == Sort("b", True)
    assert next_sort(["a", "b"], Sort("b")) is None
    sweep = run_sweep(make_spec(strategies=STRATEGIES, clients=[1, 4], repeat=3), workers=1)
    costs = sweep.cost[:, 1, :].mean(axis=1)

    async def body() -> None:
        table = MetricsTable()
        async with WidgetApp(table).run_test(size=(120, 12)) as pilot:
            table.show(sweep, 1)
            table.highlight(0)
            await pilot.pause()
            assert table.sort_by_next() == Sort("Strategy")
            assert table.sort_by_next() == Sort("Work")
            assert table.sort_by_next() == Sort("Duration")
            assert table.sort_by_next() == Sort("Cost")
            await pilot.pause()
            headers = [str(column.label) for column in table.table.columns.values()]
            assert "Cost ▲" in headers
            order = [int(key.value) for key in table.table.rows]
            assert order == sorted(range(2), key=lambda s: costs[s])
            assert table.reverse_sort() == Sort("Cost", True)
            await pilot.pause()
            assert [int(key.value) for key in table.table.rows] == order[::-1]
            assert "Cost ▼" in [str(column.label) for column in table.table.columns.values()]
            # The cursor stays on the highlighted strategy, wherever its row went.
            assert table.table.cursor_row == [int(key.value) for key in table.table.rows].index(0)
    asyncio.run(body())


def test_the_column_picker_brings_back_a_hidden_column_and_r_fits_the_width_again() -> None:
    """At 100 columns the policy columns give way; the picker (T) shows them whatever the width."""
    from tui.screens.columns import ColumnPicker

    spec = make_spec(strategies=THROTTLED, clients=[20], repeat=2)
    sweep = run_sweep(spec, workers=1)

    async def body() -> None:
        table = MetricsTable()
        app = WidgetApp(table)
        async with app.run_test(size=(100, 16)) as pilot:
            table.show(sweep, 0)
            await pilot.pause()
            fitted = table.columns
            assert "amplification" not in fitted
            app.push_screen(ColumnPicker(table))
            await pilot.pause()
            keys = [key for key, _, _ in table.column_choices()]
            await pilot.press(*["down"] * keys.index("amplification"), "space")
            await pilot.pause()
            assert "amplification" in table.columns and table.chosen is not None
            await pilot.press("r")
            await pilot.pause()
            assert table.columns == fitted and table.chosen is None
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, ColumnPicker)
    asyncio.run(body())
