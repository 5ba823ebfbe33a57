"""The app opens on a sweep already known (issue 37): read back from the cache ``backoff-sim run``
shares, with a notice saying so, no sweep simulated; ``w`` simulates it again; its export's
``--events`` says which events files it writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_support import TINY, pilot_test, settle

from sim.export.csv_files import read_events_csv
from sim.export.palette import load_palette
from sim.settings.config import load_config
from tui.app import BackoffApp
from tui.main import build_app_parser
from tui.state.export import export_view
from tui.state.source import ConfigSource
from sim.exploration.cache import SweepCache

TITLE = "Tiny_Locking"


@pytest.fixture
def sweeps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The simulations the app's source sweeps (``run_sweeps`` as ``tui.state.source`` calls it)."""
    import tui.state.source as source_module

    calls: list[str] = []
    real = source_module.run_sweeps

    def counted(specs, **kwargs):
        calls.extend(s.title for s in specs)
        return real(specs, **kwargs)
    monkeypatch.setattr(source_module, "run_sweeps", counted)
    return calls


def cached_notes(app: BackoffApp) -> list[str]:
    return [str(n.message) for n in app._notifications if "results from the cache of" in str(n.message)]


@pilot_test
async def test_the_app_opens_on_the_cached_sweep_and_says_so(tmp_path: Path, sweeps) -> None:
    cache = SweepCache(tmp_path / "cache")
    ConfigSource(load_config(TINY), cache=cache).sweep(TITLE, workers=1)  # as `run` left it
    assert sweeps == [TITLE]
    app = BackoffApp(ConfigSource(load_config(TINY), cache=cache), sweep_workers=1, out_dir=tmp_path / "out")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert sweeps == [TITLE]  # nothing simulated: the table is the cached sweep's
        (note,) = cached_notes(app)
        assert note.startswith(f"{TITLE}: results from the cache of ") and "--no-cache" in note
        await pilot.press("w")  # the sweep again: simulated, not read back
        await settle(pilot)
        assert sweeps == [TITLE, TITLE]
        assert len(cached_notes(app)) == 1


def test_the_apps_events_option_and_no_cache() -> None:
    args = build_app_parser().parse_args(["--events", "none", "--no-cache"])
    assert args.events == "none" and args.no_cache
    assert build_app_parser().parse_args([]).events == "sample"


@pytest.mark.parametrize("events", ["none", "all"])
def test_the_exports_events_files(events: str, tmp_path: Path) -> None:
    source = ConfigSource(load_config(TINY))
    result = source.sweep(TITLE, workers=1)
    selection = source.initial()
    written = export_view(tmp_path, selection, source.history(selection), result, "<svg/>",
                          load_palette(), events=events)
    names = [p.name for p in written]
    spec = result.spec
    if events == "none":
        assert not any(name.endswith("_events.csv") for name in names)
        assert not list(tmp_path.glob("*_events.csv"))
        return
    every = read_events_csv(tmp_path / "Tiny_Locking_events.csv")
    assert {(k.strategy, k.clients, k.repetition) for k in every} == {
        (label, n, r) for label in spec.labels for n in spec.clients for r in range(spec.repeat)}
    assert sum(name.endswith("_events.csv") for name in names) == 2  # and the run on screen's
