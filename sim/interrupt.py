"""Ctrl-C for the command lines: the first one stops the work, later ones are ignored.

Without this, a second SIGINT arriving while the first is being handled (a user pressing Ctrl-C
twice, or ``timeout`` signalling both the process and its group) interrupts the clean-up and
prints a traceback.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def first_interrupt_only() -> Iterator[None]:
    """Within the block, SIGINT raises KeyboardInterrupt once and is then ignored for good
    (the process is about to exit). Restores the previous handler if no signal arrived."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    interrupted = False

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        if not interrupted:
            signal.signal(signal.SIGINT, previous)
