"""Time units in the app: a tick-based config (``time_unit = "tick"``) is labelled in ticks
everywhere on screen (status, timeline ruler, log header, latency table, charts, the go-to
prompt), and nothing says ms or per second; goodput is per tick, without a hidden ×1000."""

from __future__ import annotations

import html
import re
from collections import defaultdict

import pytest
from tui_support import FIXTURES, pilot_test, settle

from sim.settings.config import load_config
from tui.app import BackoffApp
from tui.state.source import ConfigSource, ReplaySource
from tui.widgets.analysis.latency_table import LatencyTable

TICKS = FIXTURES / "tiny_ticks.toml"
MS_WORDS = re.compile(r"\bms\b|milliseconds|/s\b(?<!tick/s)|per second")


def screen_text(svg: str) -> str:
    """The characters of an app screenshot (an SVG), row by row, spans joined in order."""
    rows: dict[float, list[tuple[float, str]]] = defaultdict(list)
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', svg):
        text = html.unescape(m.group(3)).replace("\xa0", " ")
        rows[float(m.group(2))].append((float(m.group(1)), text))
    return "\n".join("".join(t for _, t in sorted(spans)) for _, spans in sorted(rows.items()))


def tick_app(tmp_path) -> BackoffApp:
    return BackoffApp(ConfigSource(load_config(TICKS)), sweep_workers=1, out_dir=tmp_path)


# The main view at 80x24 in the default run; the other sizes and views under -m slow.
@pytest.mark.parametrize("size, keys", [
    pytest.param((120, 40), (), marks=pytest.mark.slow), ((80, 24), ()),
    *(pytest.param(size, keys, marks=pytest.mark.slow)
      for size, keys in (((80, 24), ("a",)), ((120, 40), ("a",)), ((120, 40), ("v",))))], ids=str)
@pilot_test
async def test_a_tick_config_never_says_ms(tmp_path, size, keys) -> None:
    app = tick_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await settle(pilot)
        await pilot.press("right_square_bracket", *keys)
        await settle(pilot)
        await settle(pilot)  # the comparison view (v) records its runs in a worker
        text = screen_text(app.export_screenshot())
        assert "tick" in text
        assert not MS_WORDS.search(text), MS_WORDS.search(text)


@pilot_test
async def test_tick_labels_in_each_part(tmp_path) -> None:
    app = tick_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await settle(pilot)
        screen = app.screen
        assert "time tick" in str(screen.query_one("#log-header").render())
        assert str(screen.query_one("#timeline").render_line(0).text).startswith("tick")
        status = str(screen.query_one("#status").render())
        assert "900.0 tick" in status and "tick/s" in status
        table = screen.query_one(LatencyTable)
        assert table.header("goodput") == "Goodput/tick"
        sweep = table._result
        # goodput per tick as the CLI and the CSV have it: successes over the horizon
        goodput = sweep.open_mean("goodput", 0, 0)
        assert goodput < 1 and table.rows[0].cells["goodput"] == f"{goodput:.3g}"
        await pilot.press("g")
        await pilot.pause()
        assert "tick, 0 to" in screen_text(app.export_screenshot())


@pilot_test
async def test_replay_takes_its_time_unit(tmp_path) -> None:
    from sim.export.csv_files import read_events_csv, write_events_csv
    from sim.export.runs import representative_runs

    spec = load_config(TICKS).simulations[0]
    path = write_events_csv(representative_runs(spec), tmp_path / "ticks_events.csv")
    app = BackoffApp(ReplaySource(read_events_csv(path), path, "tick"), out_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        text = screen_text(app.export_screenshot())
        assert "time tick" in text and not MS_WORDS.search(text)
