"""Helpers for the terminal app's tests: run async Pilot bodies, wait for workers, host a widget."""

from __future__ import annotations

import asyncio
import functools
import io
from pathlib import Path

from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Static

from sim.settings.config import load_config
from tui.app import BackoffApp
from tui.state.source import ConfigSource, Source
from tui.theme import register_themes, theme_variable_defaults

FIXTURES = Path(__file__).parent / "fixtures"
TINY = FIXTURES / "tiny.toml"
TINY_OUTAGE = FIXTURES / "tiny_outage.toml"


def pilot_test(test):
    """Run an async test body with ``asyncio.run`` (the project has no async pytest plugin)."""
    @functools.wraps(test)
    def run(*args, **kwargs) -> None:
        asyncio.run(test(*args, **kwargs))
    return run


async def settle(pilot) -> None:
    """Let messages, then workers, then the messages they posted, run to completion."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def fake_clock(monkeypatch) -> list[float]:
    """Replace the app's real-time clock: playback advances only when the test moves ``now[0]``."""
    now = [100.0]
    monkeypatch.setattr("tui.app.monotonic", lambda: now[0])
    return now


def make_app(tmp_path: Path, config: Path = TINY, source: Source | None = None, **kwargs) -> BackoffApp:
    """The app on ``config`` (or on ``source``) with one sweep worker, writing its files to ``tmp_path``."""
    return BackoffApp(source or ConfigSource(load_config(config)), sweep_workers=1, out_dir=tmp_path,
                      **kwargs)


async def run_from_palette(pilot, words: str) -> None:
    """Type ``words`` in the command palette (ctrl+p), run the first match and let it finish."""
    await pilot.press("ctrl+p")
    await pilot.press(*words)
    await pilot.pause(0.3)
    await pilot.press("enter")
    await settle(pilot)


def help_keys_text(app: App) -> str:
    """The open help screen's key table as plain text (200 columns wide, so nothing wraps)."""
    console = Console(width=200, file=io.StringIO())
    console.print(app.screen.query_one("#help-keys", Static).content)
    return console.file.getvalue()


async def pause_until(pilot, condition, tries: int = 100) -> None:
    """Let the app run in short pauses until ``condition()`` holds (a worker got somewhere), at
    most ``tries`` of them; the caller asserts what it needs afterwards."""
    for _ in range(tries):
        await pilot.pause(0.02)
        if condition():
            return


class WidgetApp(App):
    """Registers our themes on mount and shows the given widgets."""

    def __init__(self, *widgets) -> None:
        super().__init__()
        self.widgets = widgets

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return theme_variable_defaults()

    def compose(self) -> ComposeResult:
        yield from self.widgets

    def on_mount(self) -> None:
        register_themes(self)
        self.theme = "backoff-dark"
