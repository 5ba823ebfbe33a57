"""Every key a view's help lists does something there (issue 23.3): pressed in turn in one app
per view, each changes the screen (a notification counts: it says why nothing else moved) or
starts a worker; and the footer shows whole keys only (issue 23.6).

One walk per view, in an order where no key meets an end that would leave it nothing to do
(back after forward, home after end); a key that acts only in another view fails its walk.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Footer
from textual.worker import Worker, WorkerState
from tui_support import FIXTURES, fake_clock, make_app, pilot_test, settle

from tui.keys import COMPARE_VIEW, EXPLORE_VIEW, MAIN_VIEW, ViewKeys
from tui.screens.compare import CompareScreen
from tui.screens.explore import ExploreScreen
from tui.screens.help import HelpScreen

SNAPSHOT = FIXTURES / "snapshot.toml"  # three strategies, 2/4/6 clients, no explore or tune
TINY_MAP = FIXTURES / "tiny_map.toml"

# (key, keys pressed after it to get back: closing what it opened). Playback first: forward
# before back, end before home.
PLAYBACK = [(key, ()) for key in (
    "right", "left", "right_square_bracket", "shift+right", "left_square_bracket", "shift+left",
    "right_curly_bracket", "left_curly_bracket", "ctrl+right", "ctrl+left", "end", "home",
    "plus", "equals_sign", "minus", "underscore", "space", "space")] + [("g", ("escape",))]
RUN_KEYS = [(key, ()) for key in "cCrRnN"] + [("z", ("escape",)), ("t", ()),
                                              ("question_mark", ("escape",)), ("f1", ("escape",))]
MAIN_WALK = [*PLAYBACK, ("f", ()), ("F", ()), *RUN_KEYS, ("s", ()), ("S", ()), ("w", ()),
             ("x", ()), ("u", ()), ("slash", ("escape",)), ("ampersand", ("escape",)), ("y", ()),
             ("i", ()), ("o", ()), ("i", ()),
             ("0", ()), ("d", ()), ("j", ()), ("J", ()), ("E", ()), ("L", ("escape",)), ("k", ()), ("a", ()), ("a", ()), ("m", ()), ("l", ()), ("e", ()),
             ("T", ("escape",)), ("O", ()), ("D", ("a",)), ("v", ("escape",)), ("P", ("P",)), ("p", ())]
# The event log's keys, focused (Tab) with the cursor on event 21 and a search for "commit"
# (n at the end finds none after: the status line says so): its selection moves.
LOG_WALK = [(key, ()) for key in ("up", "down", "pageup", "pagedown", "home", "end", "up", "n",
                                  "N", "greater_than_sign", "less_than_sign",
                                  "right_parenthesis", "left_parenthesis", "enter", "escape")]
COMPARE_WALK = [*PLAYBACK, *RUN_KEYS, *[(digit, ()) for digit in "123456789"], ("1", ()),
                ("escape", ("v",)), ("v", ("v",)), ("q", ())]
EXPLORE_WALK = [(key, ()) for key in ("right", "left", "down", "up", "s", "S", "m", "x", "w",
                                      "t")] + [
    ("question_mark", ("escape",)), ("f1", ("escape",)), ("enter", ("p",)), ("escape", ("p",)),
    ("p", ("p",)), ("q", ())]


def listed(view: ViewKeys) -> set[str]:
    """Every key the view's help lists (each of a binding's keys)."""
    return {name for key in view.keys for name in key.keys.split(",")}


class Watch:
    """What a user sees (the screen as a picture: text, colours, notifications) and the
    workers started, to tell a key that acted from one that did nothing."""

    def __init__(self) -> None:
        self.started = 0

    def hook(self, message) -> None:
        if isinstance(message, Worker.StateChanged) and message.state == WorkerState.RUNNING:
            self.started += 1

    def seen(self, app) -> tuple[str, int]:
        return app.export_screenshot(), self.started


async def walk(pilot, watch: Watch, steps: list[tuple[str, tuple[str, ...]]]) -> set[str]:
    """Press each step's key and check that it changed something; return the keys pressed."""
    app = pilot.app
    for key, back in steps:
        app.clear_notifications()
        await pilot.pause()
        before = watch.seen(app)
        await pilot.press(key)
        await settle(pilot)
        assert watch.seen(app) != before, f"{key!r} changed nothing on {app.screen!r}"
        if back:
            await pilot.press(*back)
            await settle(pilot)
    return {key for key, _ in steps}


def assert_footer_fits(app) -> None:
    """Every key shown in the footer whole and left of the palette's key; Help among them."""
    footer = app.screen.query_one(Footer)
    shown = [key for key in footer.children if key.display]
    palette = [key for key in shown if key.has_class("-command-palette")]
    keys = [key for key in shown if key not in palette]
    end = palette[0].region.x if palette else footer.region.right
    assert keys and all(key.region.right <= end and key.region.width for key in keys)
    assert any(key.action.endswith("help") for key in keys)


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
@pilot_test
async def test_every_key_of_the_main_view_and_the_event_log_acts_and_the_footer_fits(tmp_path: Path,
                                                                 monkeypatch) -> None:
    fake_clock(monkeypatch)  # playing moves nothing by itself: the test sees the keys' effect
    watch = Watch()
    app = make_app(tmp_path, SNAPSHOT)
    async with app.run_test(size=(80, 24), message_hook=watch.hook,
                            notifications=True) as pilot:
        await settle(pilot)
        assert_footer_fits(app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen) and app.screen.view is MAIN_VIEW
        await pilot.press("escape")
        pressed = await walk(pilot, watch, MAIN_WALK)
        await pilot.press("right_square_bracket", "right_square_bracket", "tab")
        await settle(pilot)
        # The event log's keys come first in the footer: more than fit in 80 columns.
        assert_footer_fits(app)
        footer = app.screen.query_one(Footer)
        assert [key.key for key in footer.children if key.display][:3] == ["up", "enter", "escape"]
        await pilot.press("slash", *"commit", "enter")
        await settle(pilot)
        pressed |= await walk(pilot, watch, LOG_WALK)
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0  # q quits
    assert pressed | {"q"} >= listed(MAIN_VIEW)


@pytest.mark.slow  # a help key walk (every walk runs with -m slow)
@pilot_test
async def test_every_key_of_the_comparison_view_acts_and_its_footer_fits(tmp_path: Path, monkeypatch) -> None:
    now = fake_clock(monkeypatch)
    monkeypatch.setattr("tui.screens.compare.monotonic", lambda: now[0])
    watch = Watch()
    app = make_app(tmp_path, SNAPSHOT)
    async with app.run_test(size=(80, 24), message_hook=watch.hook,
                            notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert_footer_fits(app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen) and app.screen.view is COMPARE_VIEW
        await pilot.press("escape")
        pressed = await walk(pilot, watch, COMPARE_WALK)
        assert not isinstance(app.screen, CompareScreen)
    assert pressed >= listed(COMPARE_VIEW)


@pytest.mark.slow  # a help key walk (every walk runs with -m slow)
@pilot_test
async def test_every_key_of_the_explore_map_acts_and_its_footer_fits(tmp_path: Path) -> None:
    from tui.main import _config_source

    watch = Watch()
    app = make_app(tmp_path, source=_config_source(TINY_MAP, None, tmp_path, 1, False),
                   open_map=True)
    async with app.run_test(size=(80, 24), message_hook=watch.hook,
                            notifications=True) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ExploreScreen)
        assert_footer_fits(app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen) and app.screen.view is EXPLORE_VIEW
        await pilot.press("escape")
        pressed = await walk(pilot, watch, EXPLORE_WALK)
        assert not isinstance(app.screen, ExploreScreen)
    assert pressed >= listed(EXPLORE_VIEW)
