"""The first Ctrl-C stops a command; a second one cannot interrupt its clean-up."""

from __future__ import annotations

import signal

import pytest

from sim.interrupt import first_interrupt_only


def test_first_sigint_raises_and_later_ones_are_ignored() -> None:
    previous = signal.getsignal(signal.SIGINT)
    cleaned_up = False
    try:
        with pytest.raises(KeyboardInterrupt):
            with first_interrupt_only():
                try:
                    signal.raise_signal(signal.SIGINT)
                finally:
                    signal.raise_signal(signal.SIGINT)  # the second one, during clean-up
                    cleaned_up = True
        assert cleaned_up
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_handler_is_restored_when_no_signal_arrives() -> None:
    previous = signal.getsignal(signal.SIGINT)
    with first_interrupt_only():
        assert signal.getsignal(signal.SIGINT) is not previous
    assert signal.getsignal(signal.SIGINT) is previous
