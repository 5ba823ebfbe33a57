"""The app's sweep lifecycle (``tui.state.sweeps.SweepBook``), without Textual: when a sweep starts,
what a cancel or a failure leaves on screen, and when a sweep runs again."""

from __future__ import annotations

import subprocess
import sys

from tui.state.sweeps import CANCELLED_NOTE, SweepBook

KEY = ("Tiny_Locking", None)
OTHER = ("Tiny_OCC", 3)
RESULT = object()  # the book stores results without looking at them


def test_a_new_key_starts_once_and_keeps_its_result() -> None:
    book = SweepBook()
    assert book.needs_start(KEY) and not book.busy
    book.started("w1", KEY)
    assert book.busy and book.is_running(KEY) and not book.needs_start(KEY)
    assert book.succeeded("w1", RESULT) == KEY
    assert book.result(KEY) is RESULT and not book.busy and not book.needs_start(KEY)
    assert book.note(KEY) == ""


def test_a_cancel_by_the_user_is_noted_and_waits_to_be_asked_again() -> None:
    book = SweepBook()
    book.started("w1", KEY)
    book.started("w2", OTHER)
    assert set(book.cancel_all()) == {"w1", "w2"}
    assert book.cancelled("w1") == KEY
    assert book.note(KEY) == CANCELLED_NOTE and not book.needs_start(KEY)
    book.started("w3", KEY)  # w: run it again
    assert book.note(KEY) == ""


def test_a_superseded_sweep_has_no_note_and_starts_again_when_shown() -> None:
    book = SweepBook()
    book.started("w1", KEY)
    assert book.cancelled("w1") == KEY  # stopped by another simulation's sweep, not the user
    assert book.note(KEY) == "" and book.needs_start(KEY)


def test_a_user_cancel_does_not_stick_to_the_next_run() -> None:
    book = SweepBook()
    book.started("w1", KEY)
    book.cancel_all()
    book.started("w2", KEY)  # restarted before w1 reported its end
    book.cancelled("w1")
    book.started("w3", KEY)
    assert book.cancelled("w3") == KEY and book.note(KEY) == ""


def test_a_failure_is_noted_with_its_error() -> None:
    book = SweepBook()
    book.started("w1", KEY)
    assert book.failed("w1", ValueError("boom")) == KEY
    assert "boom" in book.note(KEY) and not book.needs_start(KEY) and book.result(KEY) is None


def test_run_again_forgets_the_result_and_unknown_handles_change_nothing() -> None:
    book = SweepBook()
    book.started("w1", KEY)
    book.succeeded("w1", RESULT)
    book.forget(KEY)
    assert book.result(KEY) is None and book.needs_start(KEY)
    assert book.succeeded("stale", RESULT) is None and book.result(KEY) is None
    assert book.cancelled("stale") is None and book.failed("stale", None) is None


def test_the_book_needs_no_textual() -> None:
    code = "import sys, tui.state.sweeps; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
