"""Standard output that fails in one line: a closed pipe is the reader's choice, a full disk is not.

``backoff-sim run ... | head -1`` closes the pipe after one line: the command stops printing and
exits 0 quietly. ``> /dev/full`` cannot take the output: one line on stderr and exit status 1.
Either way the interpreter's final flush of ``sys.stdout`` must not fail again with a traceback,
so stdout is pointed at ``/dev/null`` first.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from sim.errors import EXIT_STDOUT_FAILED


class StdoutClosed(Exception):
    """The reader of stdout went away (EPIPE): stop printing, not an error."""


class StdoutFailed(Exception):
    """stdout cannot be written (ENOSPC, EIO, ...): ``reason`` says why."""

    def __init__(self, exc: OSError) -> None:
        self.reason = exc.strerror or type(exc).__name__
        super().__init__(self.reason)


class GuardedStdout:
    """A text stream wrapper whose write and flush errors become StdoutClosed / StdoutFailed
    (so they can be told apart from errors writing the output files)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdout

    def _call(self, name: str, *args: Any) -> Any:
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise StdoutClosed() from None
        except OSError as exc:
            raise StdoutFailed(exc) from None

    def write(self, text: str) -> int:
        return self._call("write", text)

    def flush(self) -> None:
        self._call("flush")

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ... as the stream has them
        return getattr(self._stream, name)


def silence_stdout() -> None:
    """Point stdout at /dev/null, dropping what is buffered, so exiting cannot fail on it."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # pragma: no cover - stdout already gone
        pass


def stderr_line(text: str) -> None:
    """Print one line on stderr; if even stderr is gone (a hung-up terminal), say nothing."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
