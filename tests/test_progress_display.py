"""The commands' one progress display (``sim.commands.progress.Display``): the same calls give a
bar on a terminal, plain lines elsewhere and nothing with --quiet; notes never land inside it."""

from __future__ import annotations

import io

from rich.console import Console

from sim.commands.progress import SHARE_STEPS, Display


class _NotATerminal:
    is_terminal = False


def test_without_a_terminal_it_is_lines_and_notes_are_lines() -> None:
    written: list[str] = []
    display = Display(_NotATerminal(), write=written.append, interval=0.0, unit="cells")
    assert display.bar is None and display.lines is not None
    with display:
        display.reporter("checking", "cells")(3, 6)
        display.note("a note")
    assert written[0].startswith("checking: 3 of 6 cells done")
    assert written[-1] == "a note"


def test_quiet_is_nothing_at_all() -> None:
    written: list[str] = []
    display = Display(_NotATerminal(), quiet=True, write=written.append, interval=0.0)
    with display:
        display.reporter("simulating")(1, 2)
        display.tick()
    assert display.bar is None and display.lines is None and written == []


def test_on_a_terminal_a_bar_measured_by_the_finer_share() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    share = [0.25]
    display = Display(console, unit="runs", fraction=lambda: share[0])
    assert display.bar is not None
    with display:
        report = display.reporter("simulating")
        report(0, 30)  # no run done yet: the events' share moves the bar
        (task,) = display.bar.tasks
        assert task.completed == SHARE_STEPS * 0.25 and task.fields["count"] == "0/30 runs"
        share[0] = 0.5
        display.tick()
        assert display.bar.tasks[0].completed == SHARE_STEPS * 0.5
        report(20, 30)  # the runs done, when they say more
        assert display.bar.tasks[0].completed == SHARE_STEPS * 20 / 30
        display.note("above the bar")
    assert "above the bar" in console.file.getvalue()
