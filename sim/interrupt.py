"""Stop signals for the command lines: Ctrl-C, SIGTERM and SIGHUP all stop the work the same way.

The first SIGINT, SIGTERM or SIGHUP raises ``Interrupted`` in the main thread, so ``with`` blocks
unwind: the sweep's pool terminates its workers, temporary files and folders are removed, and the
command prints one line and exits with 128 + the signal's number (130, 143, 129). Later signals
are ignored: a second Ctrl-C, or ``timeout`` signalling both the process and its group, cannot
interrupt the clean-up and print a traceback. Without a handler, SIGTERM and SIGHUP would kill the
process at once, leaving its workers running and its temporary files behind.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived; ``exit_status`` is the shell's 128 + signal number."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + int(self.signum)

    @property
    def message(self) -> str:
        """One line for stderr: ``interrupted``, or ``interrupted (SIGTERM)`` for the others."""
        if self.signum == signal.SIGINT:
            return "interrupted"
        return f"interrupted ({signal.Signals(self.signum).name})"


def exit_status(exc: KeyboardInterrupt) -> int:
    """130 for a plain KeyboardInterrupt, 128 + signal for ``Interrupted``."""
    return exc.exit_status if isinstance(exc, Interrupted) else 128 + int(signal.SIGINT)


def stop_message(exc: KeyboardInterrupt) -> str:
    return exc.message if isinstance(exc, Interrupted) else "interrupted"


@contextmanager
def first_interrupt_only() -> Iterator[None]:
    """Within the block, the first SIGINT, SIGTERM or SIGHUP raises ``Interrupted`` once; then
    all three are ignored for good (the process is about to exit). Restores the previous handlers
    if no signal arrived."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    interrupted = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal interrupted
        if interrupted:
            return
        interrupted = True
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        if not interrupted:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
