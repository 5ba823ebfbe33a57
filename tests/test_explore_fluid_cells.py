"""Explore's output and PNG say which cells are fluid estimates, not ``1/1`` or ``0/1`` as if a
run had been simulated, and the PNG's cell labels are large enough to read (issue 39, item 3)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from tui_support import FIXTURES

from sim.exploration.backends import LocalBackend
from sim.exploration.cache import CellCache
from sim.exploration.figure import CELL_FONT, explore_figure
from sim.exploration.grid import FLUID_NOTE, fluid_text
from sim.exploration.methods import run_explores_by
from sim.exploration.plan import load_document
from sim.exploration.report import explore_summary

TINY_MAP = FIXTURES / "tiny_map.toml"


def fluid_map():
    (plan,) = load_document(TINY_MAP).explores
    (result,), _ = run_explores_by("fluid", [plan], LocalBackend(1), CellCache(None))
    return result


def printed(result) -> str:
    out = io.StringIO()
    Console(file=out, width=200).print(explore_summary(result))
    return out.getvalue()


def test_a_fluid_map_prints_its_verdicts_as_fluid_estimates() -> None:
    result = fluid_map()
    assert all(m == "fluid" for cell in result.methods for m in cell)  # the tiny map has a form
    text = printed(result)
    assert "1/1" not in text and "0/1" not in text
    expected = {fluid_text(cell.verdict(s)) for cell in result.cells for s in range(2)}
    assert expected <= {"fluid ✓", "fluid ✗"} and all(e in text for e in expected)
    assert FLUID_NOTE in " ".join(text.split())


def test_the_png_labels_fluid_cells_as_such_in_a_readable_size() -> None:
    result = fluid_map()
    fig = explore_figure(result)
    heatmaps = [ax for ax in fig.axes if ax.texts]
    assert len(heatmaps) == 2
    for s, ax in enumerate(heatmaps):
        labels = sorted(t.get_text() for t in ax.texts)
        assert labels == sorted(fluid_text(cell.verdict(s)) for cell in result.cells)
        assert all(t.get_fontsize() >= CELL_FONT >= 9 for t in ax.texts)
    # Each label fits inside its cell: the cells are sized for them.
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    ax = heatmaps[0]
    columns = len(result.plan.axes[0].values)
    cell_width = ax.get_window_extent(renderer).width / columns
    assert all(t.get_window_extent(renderer).width < cell_width for t in ax.texts)


def test_a_simulated_map_keeps_its_recovered_runs(tmp_path: Path) -> None:
    from sim.exploration.runner import run_explores

    (plan,) = load_document(TINY_MAP).explores
    (result,) = run_explores([plan], LocalBackend(1), CellCache(None))
    text = printed(result)
    assert "fluid" not in text and "/2" in text
