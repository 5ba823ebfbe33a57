"""Both strategy tables fit their pane: optional columns give way first, then strategy names end
in "…"; the caption says how many columns are hidden."""

from __future__ import annotations

import asyncio

from support import make_spec
from tui_support import WidgetApp

from sim.sweep import run_sweep
from tui.widgets.metrics_table import MetricsTable

STRATEGIES = [{"type": "Constant", "constant": 0.5, "name": "constant half a millisecond"},
              {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}]


def test_metrics_table_drops_columns_then_shortens_names() -> None:
    sweep = run_sweep(make_spec(strategies=STRATEGIES, clients=[1, 4], repeat=3), workers=1)

    async def body() -> None:
        table = MetricsTable()
        app = WidgetApp(table)
        async with app.run_test(size=(120, 12)) as pilot:
            table.show(sweep, 1)
            await pilot.pause()
            assert table.columns == ["Strategy", "Work", "Duration", "Cost", "Cost vs best"]
            assert str(table.table.get_row_at(0)[0]).endswith("constant half a millisecond")
            await pilot.resize_terminal(44, 12)
            await pilot.pause()
            assert table.columns == ["Strategy", "Cost", "Cost vs best"]
            label = str(table.table.get_row_at(0)[0])
            assert label.endswith("…") and len(label) < len("● constant half a millisecond")
            assert "2 more columns" in str(table.query_one("#caption").render())
            table.set_more_hint("widen the terminal")
            await pilot.pause()
            assert "2 more columns: widen the terminal" in str(table.query_one("#caption").render())
    asyncio.run(body())
