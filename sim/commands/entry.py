"""The console scripts' first code: ``backoff-sim`` (through ``tui.entry``), ``backoff-simulator``
and ``python -m sim``.

Importing the commands takes a quarter of a second (numpy, rich, matplotlib): a Ctrl-C in that
time used to end in a ``KeyboardInterrupt`` traceback and status -2. Here the imports happen
inside the guard, so it is one line, ``interrupted``, and status 130 as at any later moment.
This module imports nothing heavy itself. The guard also prepares the standard streams
(``sim.commands.stdout.prepare_streams``) and checks stdout's last flush (``sim.commands.stdout.finish_stdout``).
"""

from __future__ import annotations

import atexit
import importlib
import os
import signal
import sys
import threading

from sim.vocabulary.errors import EXIT_INTERRUPTED  # a module of constants and exceptions, no imports


def _status(code: object) -> int:
    """``SystemExit.code`` as an exit status, as the interpreter reads it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_entry(module: str, function: str = "main") -> int:
    """Import ``module`` and return the status of its ``function()`` (argparse's SystemExit
    included); a Ctrl-C at any moment, imports first, is one line and status 130 (SIGTERM and
    SIGHUP likewise, 143 and 129: the handlers are installed before anything else and kept
    until the process exits; signals ignored at start stay ignored)."""
    from sim.commands.interrupt import install_stop_handlers, say_stop, settle

    install_stop_handlers()
    try:
        from sim.commands.stdout import finish_stdout, prepare_streams

        prepare_streams()
        main = getattr(importlib.import_module(module), function)
        try:
            status = main()
        except SystemExit as exc:  # argparse: --help, --version, a mistake in the arguments
            status = _status(exc.code)
        settle()  # the command is over: a stop signal now would only lose its status
        return finish_stdout(status)
    except KeyboardInterrupt as exc:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C cannot cut the line short
        try:
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
        say_stop(exc, getattr(exc, "message", "interrupted"))
        return getattr(exc, "exit_status", EXIT_INTERRUPTED)


def exit_process(status: int) -> None:
    """End the process with ``status`` once the command is over (never returns).

    The interpreter's own finalization frees every object a sweep left (its recorded runs, numba's
    compiled code) one by one: 0.5-0.6 s after ``run sample.toml`` had written its last file, on
    an idle 2-core machine, a fifth of the command. With no other thread left, nothing needs it:
    the exit handlers run here (multiprocessing's, temporary folders', a caller's), the standard
    streams are flushed, and the process ends at once. Another thread still running (the app's,
    a library's) gets the interpreter's usual exit, which waits for it."""
    if threading.active_count() == 1:
        from sim.commands.interrupt import flush_streams

        atexit._run_exitfuncs()
        flush_streams()
        os._exit(status)
    sys.exit(status)


def backoff_simulator() -> None:
    """``backoff-simulator``."""
    exit_process(run_entry("sim.commands.compat"))


def backoff_sim_headless() -> None:
    """``python -m sim``."""
    exit_process(run_entry("sim.commands.cli"))
