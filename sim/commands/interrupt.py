"""Stop signals for the command lines: Ctrl-C, SIGTERM and SIGHUP all stop the work the same way.

The first SIGINT, SIGTERM or SIGHUP raises ``Interrupted`` in the main thread, so ``with`` blocks
unwind: the sweep's pool kills its workers, temporary files and folders are removed, and the
command prints one line and exits with 128 + the signal's number (130, 143, 129). Later signals
are ignored: a second Ctrl-C, or ``timeout`` signalling both the process and its group, cannot
interrupt the clean-up and print a traceback. Without a handler, SIGTERM and SIGHUP would kill the
process at once, leaving its workers running and its temporary files behind.

The handlers are installed first thing (``install_stop_handlers``, by the console scripts'
guard, before any heavy import) and kept until the process exits: a stop during the imports or
the argument parsing is the same one line and status (printed, then the process ends at once:
there is nothing to unwind yet), and a stop once the command has succeeded
(its files committed: ``settle``) is dropped, so the process ends with its status rather than by
the signal's default action. A signal that was ignored when the process started (``nohup``'s
SIGHUP, SIGINT for ``&`` in a non-interactive shell) stays ignored, here and in the workers.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
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


_settled = False  # the command succeeded: a stop signal now changes nothing
# Ignored when the process started (this module is imported first thing, by the console
# scripts' guard): ``nohup``'s SIGHUP, SIGINT for ``&`` in a non-interactive shell. They stay so.
IGNORED_AT_START: frozenset[int] = frozenset(
    sig for sig in STOP_SIGNALS if signal.getsignal(sig) is signal.SIG_IGN)


def handled_signals() -> tuple[signal.Signals, ...]:
    """The stop signals this process acts on: those not ignored when it started."""
    return tuple(sig for sig in STOP_SIGNALS if sig not in IGNORED_AT_START)


def settle() -> None:
    """The command has succeeded (its output set is in place): from now on a stop signal is
    dropped, and the process ends with the command's status. Main thread only for the handlers;
    the flag holds everywhere."""
    global _settled
    _settled = True
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                signal.signal(sig, signal.SIG_IGN)


def unsettle() -> None:
    """A new command starts in this process (tests run several): stops count again."""
    global _settled
    _settled = False


def flush_streams() -> None:
    """Flush stdout and stderr as far as they can be, before the process ends without the
    interpreter's own last flush (``os._exit``): a stream that is gone, closed or replaced by
    something without ``flush`` is passed over."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


def _early(signum: int, frame: object) -> None:
    """The handler from the process's start to its exit, outside a command's block. Before the
    command (imports, parsing) a stop prints its line and ends the process at once, having
    killed what it started and run the clean-ups (``teardown.emergency_exit``): nothing needs
    unwinding yet, and an exception raised here could land inside an extension's import (numpy
    turned it into an ImportError traceback). Once the command has returned or settled, a stop
    is dropped."""
    if _settled:
        return
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    flush_streams()
    try:
        sys.stderr.write(Interrupted(signum).message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    from sim.commands.teardown import emergency_exit

    emergency_exit(128 + signum)


def install_stop_handlers() -> tuple[signal.Signals, ...]:
    """Install the process's stop handlers (main thread, first thing): every stop signal that
    was not ignored when the process started; returns those that were (they stay ignored)."""
    if threading.current_thread() is threading.main_thread():
        for sig in handled_signals():
            signal.signal(sig, _early)
    return tuple(sorted(IGNORED_AT_START))


def shield_thread() -> None:
    """Block the stop signals in the calling thread (a helper thread: they stay the main
    thread's to handle; threads and processes it starts inherit the mask)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def exit_status(exc: KeyboardInterrupt) -> int:
    """130 for a plain KeyboardInterrupt, 128 + signal for ``Interrupted``."""
    return exc.exit_status if isinstance(exc, Interrupted) else 128 + int(signal.SIGINT)


def end_after_stop(exc: KeyboardInterrupt) -> int:
    """A command's last step after a stop: its exit status (``exit_status``). When a stop signal
    was handled (not a KeyboardInterrupt raised by a caller in this process), the process ends
    here, at once, once its line is printed: every process it started is killed (a Dask cluster
    interrupted while it started may still be starting some), the clean-ups run, and no library's
    exit hook gets to wait or to write again (``sim.commands.teardown.emergency_exit``)."""
    status = exit_status(exc)
    from sim.commands.teardown import emergency_exit, is_armed

    if is_armed():
        flush_streams()
        emergency_exit(status)
    return status


def stop_message(exc: KeyboardInterrupt) -> str:
    return exc.message if isinstance(exc, Interrupted) else "interrupted"


# A stop's one line is said once: by the command when its clean-up ends in time, or by the exit
# deadline's last step when it does not (a slow machine), never both and never neither.
_say_lock = threading.Lock()


def say_stop(stop: BaseException, message: str, write: Callable[[str], None] | None = None) -> None:
    """Write ``stop``'s line to standard error (with ``write``, else straight to its file
    descriptor), unless it was written for this stop already."""
    with _say_lock:
        if getattr(stop, "stop_said", False):
            return
        stop.stop_said = True  # type: ignore[attr-defined]
    try:
        if write is not None:
            write(message)
        else:
            os.write(2, (message + "\n").encode("utf-8", "replace"))
    except (OSError, ValueError):
        pass


@contextmanager
def first_interrupt_only(exit_deadline: bool = False) -> Iterator[None]:
    """Within the block, the first SIGINT, SIGTERM or SIGHUP raises ``Interrupted`` once; then
    all three are ignored for good (the process is about to exit). Restores the previous handlers
    if no signal arrived (the process's own, ``install_stop_handlers``, for the commands). A
    signal ignored when the process started (``nohup``) stays ignored. ``exit_deadline`` (the commands): the signal also arms
    ``sim.commands.teardown``'s deadline, so the process is gone within its bound even if the clean-up
    the exception starts were to block."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stops: list[Interrupted] = []

    def on_signal(signum: int, frame: object) -> None:
        if stops:
            return
        if _holding:  # a step a stop must not split: handled as the step ends (``stop_signals_held``)
            _held.append(signum)
            return
        if _settled:  # the output set is in place: the command has succeeded
            return
        stops.append(Interrupted(signum))
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        if exit_deadline:
            from sim.commands.teardown import arm_exit_deadline, on_exit

            stop = stops[0]
            on_exit(lambda: say_stop(stop, stop.message))
            arm_exit_deadline(128 + signum)
        raise stops[0]

    def unraisable(args: object) -> None:
        # Where Python drops the handler's exception it also prints it ("Exception ignored in
        # ... __del__", a traceback); the stop is not lost (below), so that print is not ours.
        if not isinstance(getattr(args, "exc_value", None), Interrupted):
            previous_hook(args)

    unsettle()
    previous = {sig: signal.signal(sig, on_signal) for sig in handled_signals()}
    previous_hook, sys.unraisablehook = sys.unraisablehook, unraisable
    _pending.append(stops)
    try:
        yield
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        if stops:  # a consequence of the stop (a worker the group's signal killed): it is the stop
            raise stops[0] from exc
        raise
    else:
        # The handler's exception can land where Python drops it (a ``__del__``, a fork hook):
        # the stop still ends the block, here at the latest.
        if stops:
            raise stops[0]
    finally:
        _pending.remove(stops)
        sys.unraisablehook = previous_hook
        if not stops:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


_pending: list[list[Interrupted]] = []  # the stops of the blocks now open


def raise_if_stopped() -> None:
    """Raise, again, a stop whose exception was lost (for loops that poll while they wait, so
    that the work ends at once rather than when its block does); a no-op without one."""
    for stops in _pending:
        if stops:
            raise stops[0]


_holding = 0  # how many ``stop_signals_held`` blocks are open (main thread)
_held: list[int] = []  # the stop signals that arrived inside them, to handle as the last ends


@contextmanager
def stop_signals_held() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP until the block ends (main thread only), then handle a
    held one as usual: for steps a stop must not split (the lock and staging folder of an
    output set, moving it into place), and for starting a process, where the exception a
    handler raises would land in the fork's hooks, which drop it (the stop was lost and the
    command went on).

    Held by the handler itself, not only by the main thread's signal mask: a signal sent to the
    process goes to any thread that does not block it (numpy's BLAS threads, from its import),
    and Python then runs the handler in the main thread all the same, inside the block (a stop
    the moment ``run``'s staging folder appeared left the folder behind). The mask is kept so
    that no system call of the block is interrupted on the main thread."""
    global _holding
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    masked = hasattr(signal, "pthread_sigmask")
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if masked else None
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if not _holding and _held:  # handled now, as it would have been then (a success may have come first)
            signum = _held[0]
            _held.clear()
            signal.raise_signal(signum)
