"""The tuned variant in the app: u runs the simulation's [simulation.tune] in a worker (progress,
x cancels), reading back what `backoff-sim explore` cached; the best trial joins the strategy
table as its last row and is selected and replayed like any strategy."""

from __future__ import annotations

import csv
import threading
from pathlib import Path

import pytest
import tui_support
from tui_support import FIXTURES, TINY, pause_until, pilot_test, settle

from sim.commands import cli
from sim.runs.sweep import SweepCancelled
from tui import main as tui_main
from tui.app import BackoffApp
from tui.state import tuning
from tui.widgets.analysis.metrics_table import MetricsTable
from tui.widgets.status import StatusLine

TINY_TUNE = FIXTURES / "tiny_tune.toml"


def make_app(tmp_path: Path, config: Path = TINY_TUNE, cache: Path | None = None) -> BackoffApp:
    """The app on ``config`` with its tune tables (as `backoff-sim CONFIG` loads it)."""
    return tui_support.make_app(tmp_path, source=tui_main._config_source(config, None, tmp_path, 1, False),
                                explore_cache=cache)


def table_labels(app: BackoffApp) -> list[str]:
    return list(app.screen.query_one(MetricsTable)._result.spec.labels)


@pilot_test
async def test_u_adds_the_commands_tuned_variant_from_its_cache_and_it_replays(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli.main(["explore", str(TINY_TUNE), "--out", str(out), "-q", "-j", "1"]) == 0
    with open(out / "Tiny_tune_pareto.csv", newline="") as f:
        tuned_row = next(r for r in csv.DictReader(f) if r["strategy"] == "jitter tuned")
    app = make_app(tmp_path, cache=out / ".backoff-sim-cache")
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        assert table_labels(app) == ["constant", "jitter"]
        await pilot.press("u")
        await settle(pilot)
        # 4 trials and the held-out evaluation: every cell read back, none computed.
        assert app.explore_cache.hits == 5
        assert app.source.strategies("Tiny tune") == ["constant", "jitter", "jitter tuned"]
        assert table_labels(app) == ["constant", "jitter", "jitter tuned"]
        tuned = app.source.spec("Tiny tune").strategy("jitter tuned")
        # the CSV rounds to 12 significant digits (format_float)
        assert f"{tuned.strategy.base:.12g}" == f"{float(tuned_row['base']):.12g}"
        assert any("jitter tuned: base = " in str(n.message) for n in app._notifications)
        await pilot.press("s", "s")  # constant → jitter → jitter tuned
        await settle(pilot)
        assert app.selection.strategy == "jitter tuned"
        assert app.run_data is not None and len(app.run_data) > 0
        expected = app.source.history(app.selection)
        assert list(app.run_data.history.codes()) == list(expected.codes())
        assert "jitter tuned" in str(app.screen.query_one(StatusLine).render())


@pilot_test
async def test_x_cancels_the_tune_and_no_row_is_added(tmp_path: Path, monkeypatch) -> None:
    started = threading.Event()

    def wait_until_cancelled(plan, backend, cache, *, progress, should_stop):
        progress(0, 10)
        started.set()
        while not should_stop():
            threading.Event().wait(0.01)
        raise SweepCancelled()

    monkeypatch.setattr(tuning, "run_tune", wait_until_cancelled)
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await pause_until(pilot, started.is_set)
        assert app.screen.has_class("-tuning")
        await pilot.press("u")  # a second u while it runs starts nothing
        assert any("already running" in str(n.message) for n in app._notifications)
        await pilot.press("x")
        await settle(pilot)
        assert not app.screen.has_class("-tuning")
        assert app.source.strategies("Tiny tune") == ["constant", "jitter"]
        assert any("Tune cancelled" in str(n.message) for n in app._notifications)


# explore's case in the default run; tune's, a second of the same message, under -m slow.
@pytest.mark.parametrize("key, table", [pytest.param("u", "tune", marks=pytest.mark.slow), ("p", "explore")])
@pilot_test
async def test_a_simulation_without_the_table_says_so(tmp_path: Path, key: str, table: str) -> None:
    app = make_app(tmp_path, TINY)
    async with app.run_test(size=(120, 34)) as pilot:
        await settle(pilot)
        main = app.screen
        await pilot.press(key)
        await pilot.pause()
        assert app.screen is main and not main.has_class("-tuning")  # no map, no tune
        assert any(f"has no [simulation.{table}] table" in str(n.message) for n in app._notifications)
