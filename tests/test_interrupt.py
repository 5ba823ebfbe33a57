"""The first Ctrl-C stops a command; a second one cannot interrupt its clean-up."""

from __future__ import annotations

import signal
import sys

import pytest

from sim.commands.interrupt import Interrupted, first_interrupt_only, raise_if_stopped


@pytest.fixture
def stop_handlers():
    """The stop signals' handlers as they were (a stop leaves them ignored for good)."""
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    yield
    for s, handler in previous.items():
        signal.signal(s, handler)


def test_first_sigint_raises_and_later_ones_are_ignored(stop_handlers) -> None:
    cleaned_up = False
    with pytest.raises(KeyboardInterrupt):
        with first_interrupt_only():
            try:
                signal.raise_signal(signal.SIGINT)
            finally:
                signal.raise_signal(signal.SIGINT)  # the second one, during clean-up
                cleaned_up = True
    assert cleaned_up
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_handler_is_restored_when_no_signal_arrives() -> None:
    previous = signal.getsignal(signal.SIGINT)
    with first_interrupt_only():
        assert signal.getsignal(signal.SIGINT) is not previous
    assert signal.getsignal(signal.SIGINT) is previous


class _SignalsWhenCollected:
    def __del__(self) -> None:
        signal.raise_signal(signal.SIGTERM)  # the handler's exception lands in __del__: dropped


def test_a_stop_whose_exception_was_dropped_still_ends_the_block(stop_handlers) -> None:
    """Seen in the slow teardown matrix: a group SIGINT landed in a pipe's ``__del__``, Python
    printed "Exception ignored" and the run went on. The block now ends with the stop, and the
    drop prints nothing (the unraisable hook passes over the stop)."""
    dropped: list[object] = []
    previous_hook, sys.unraisablehook = sys.unraisablehook, dropped.append
    went_on = False
    with pytest.raises(Interrupted) as info:
        with first_interrupt_only():
            _SignalsWhenCollected()
            went_on = True
            raise_if_stopped()  # where a waiting loop polls: the stop again, at once
    sys.unraisablehook = previous_hook
    assert went_on and info.value.signum == signal.SIGTERM
    assert dropped == []  # not printed


def test_an_error_that_follows_a_stop_is_the_stop(stop_handlers) -> None:
    """A worker the group's signal killed fails the sweep; the command reports the stop."""
    with pytest.raises(Interrupted) as info:
        with first_interrupt_only():
            _SignalsWhenCollected()
            raise RuntimeError("a worker process ended unexpectedly (killed by SIGTERM)")
    assert isinstance(info.value.__cause__, RuntimeError)


def test_no_stop_is_pending_outside_the_block() -> None:
    raise_if_stopped()  # nothing raised: the blocks' stops end with them
