"""Helpers for the terminal app's tests: run async Pilot bodies, wait for workers, host a widget."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

from textual.app import App, ComposeResult

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
