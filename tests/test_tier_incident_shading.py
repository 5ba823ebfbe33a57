"""An incident on a lower tier is shaded in the time-series PNG and the app's charts, named
with its tier (issue 39, item 5; examples/three_tiers.toml's bottom loses half its workers)."""

from __future__ import annotations

from pathlib import Path

from sim.settings.config import parse_config
from sim.settings.config import read_document
from sim.export.overload_plots import timeseries_figure
from sim.runs.sweep import run_sweeps
from tui.state.recorder import record_run_data

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "three_tiers.toml"


def short_every_layer():
    """three_tiers.toml's first simulation at 64 clients over 8 s, its bottom's incident from
    2 s to 4 s (the example's, scaled), one repetition."""
    data = read_document(EXAMPLE)
    block = dict(data["simulation"][0], clients=[64], repeat=1, horizon=8000.0)
    tiers = [dict(t) for t in block["tiers"]]
    tiers[1]["incidents"] = [{"start": 2000.0, "duration": 2000.0, "capacity": 0.5}]
    block["tiers"] = tiers
    return parse_config({"seed": 0, "simulation": [block]}, str(EXAMPLE)).simulations[0]


def test_the_png_shades_and_names_a_lower_tiers_incident() -> None:
    spec = short_every_layer()
    assert not spec.incidents and spec.tiers[1].incidents  # the top tier has none of its own
    (result,) = run_sweeps([spec], workers=1)
    fig = timeseries_figure(result)
    ax = fig.axes[0]
    assert [t.get_text().strip() for t in ax.texts] == ["tier 3: capacity 50%"]
    spans = [p for p in ax.patches if p.get_label() == "incident"]
    assert len(spans) == 1
    x0, x1 = spans[0].get_x(), spans[0].get_x() + spans[0].get_width()
    assert (x0, x1) == (2000.0, 4000.0)


def test_the_apps_charts_shade_a_lower_tiers_incident() -> None:
    spec = short_every_layer()
    data = record_run_data(spec, spec.labels[0], 64, 0)
    assert data.tiers is not None and not data.tiers.top.incidents
    assert data.series is not None and data.series.incidents == ((2000.0, 4000.0),)
