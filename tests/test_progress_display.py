"""The commands' one progress display (``sim.commands.progress.Display``): the same calls give a
bar on a terminal, plain lines elsewhere and nothing with --quiet; notes never land inside it."""

from __future__ import annotations

import io

from rich.console import Console
from support import without_progress

from sim.commands.progress import SHARE_STEPS, Display, ProgressLines


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


def test_the_tests_helper_drops_every_progress_line_and_nothing_else() -> None:
    # Tests that expect an empty stderr (or one error line) drop the progress lines a slow
    # machine prints (support.without_progress): the helper must know each form the commands
    # write, with and without events and the time left, under each phase and unit they use.
    written: list[str] = []
    clock = [0.0]
    lines = ProgressLines(written.append, events=lambda: 1_234_567, interval=1.0, clock=lambda: clock[0],
                          fraction=lambda: None)
    for phase, unit in (("simulating", "runs"), ("writing Tiny", "runs"), ("checking the maps", "cells"),
                        ("tuning 'jitter' of Lock map", "runs"), ("Tiny outage", "cells"),
                        ("Tiny outage: settling the healthy state", "pilot runs")):
        for done in (0, 3, 10):
            clock[0] += 3_700.0  # past an hour: the minutes have more than two digits
            lines.reporter(phase, unit)(done, 10)
    plain = ProgressLines(written.append, interval=1.0, clock=lambda: clock[0])
    plain.reporter("exploring 6 cells", "runs")(2, 6)
    clock[0] += 5.0
    plain.tick()
    assert len(written) == 6 * 3 + 1 and any(" left" in line for line in written)
    assert any("pilot runs done" in line for line in written) and "events" not in written[-1]
    notes = ["interrupted", "error: cannot write to standard output: it is closed", "a note: 3 of 6 things"]
    assert without_progress("\n".join(written + notes)) == notes


def test_the_bars_time_left_moves_with_the_clock_between_reports_as_the_lines_say() -> None:
    # A sweep of long runs reports its share seldom (a compiled run's events come at its end):
    # the time left is the pace so far, so it moves as the seconds pass, and the bar and the
    # lines give the same figure (rich's column kept its last estimate, then blanked it).
    from sim.commands.progress import seconds_left

    clock = [100.0]
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    share = [0.0]
    display = Display(console, unit="runs", fraction=lambda: share[0], get_time=lambda: clock[0])
    column = display.bar.columns[-1]
    with display:
        display.reporter("simulating")(0, 30)
        assert column.render(display.bar.tasks[0]).plain == "-:--:--"  # no share known yet
        clock[0] += 10.0
        share[0] = 0.25
        display.tick()
        first = column.render(display.bar.tasks[0]).plain
        # 10 s did a quarter: three quarters at that pace is 30 s.
        assert first == "0:00:30" and seconds_left(10.0, 0.25) == 30
        clock[0] += 4.0  # no report meanwhile
        display.tick()
        later = column.render(display.bar.tasks[0]).plain
        assert later != first and later == f"0:00:{seconds_left(14.0, 0.25):02d}"
    written: list[str] = []
    lines = ProgressLines(written.append, interval=0.0, clock=lambda: clock[0], fraction=lambda: 0.25)
    lines.reporter("simulating", "runs")(0, 30)
    clock[0] += 14.0
    lines.tick()
    assert written[-1].endswith(f"about 0m{seconds_left(14.0, 0.25):02d}s left")
