"""Standard output that fails in one line: a closed pipe is the reader's choice, a full disk is not.

``backoff-sim run ... | head -1`` closes the pipe after one line: the command stops printing and
exits 0 quietly. ``> /dev/full`` cannot take the output: one line on stderr and exit status 1.
Either way the interpreter's final flush of ``sys.stdout`` must not fail again with a traceback,
so stdout is pointed at ``/dev/null`` first.

Every command goes through the same steps: ``prepare_streams`` (at the entry point, before the
heavy imports) makes a closed stdout fail like a full one and an ASCII-only one print ASCII
glyphs; ``command_status`` turns a command's outcome (a mistake, a stop signal, a stdout that
failed) into its one line and exit status; ``stdout_console`` is the tables' console, at a sane
width; ``finish_stdout`` checks what is still buffered (``--help > /dev/full``) before exiting.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from sim.vocabulary.errors import EXIT_OK, EXIT_STDOUT_FAILED, EXIT_USER_ERROR, UserError

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console


class StdoutClosed(Exception):
    """The reader of stdout went away (EPIPE): stop printing, not an error."""


class StdoutFailed(Exception):
    """stdout cannot be written (ENOSPC, EIO, ...): ``reason`` says why."""

    def __init__(self, exc: OSError) -> None:
        self.reason = exc.strerror or type(exc).__name__
        super().__init__(self.reason)


class _StreamWrapper:
    """A text stream whose write and flush errors go through ``_failed`` first (which may raise
    another exception instead); everything else is the stream's."""

    def __init__(self, stream: TextIO | Any) -> None:
        self._stream = stream

    def _failed(self, exc: OSError) -> None:
        pass

    def _call(self, name: str, *args: Any) -> Any:
        try:
            return getattr(self._stream, name)(*args)
        except OSError as exc:
            self._failed(exc)
            raise

    def write(self, text: str) -> int:
        return self._call("write", text)

    def flush(self) -> None:
        self._call("flush")

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ... as the stream has them
        return getattr(self._stream, name)


class GuardedStdout(_StreamWrapper):
    """A text stream wrapper whose write and flush errors become StdoutClosed / StdoutFailed
    (so they can be told apart from errors writing the output files)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream if stream is not None else sys.stdout)

    def _failed(self, exc: OSError) -> None:
        if isinstance(exc, BrokenPipeError):
            raise StdoutClosed() from None
        raise StdoutFailed(exc) from None


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


# --- the streams a command starts with ---------------------------------------------------------

# One ASCII stand-in per glyph the tables, maps and progress print, one character wide where the
# glyph sits in a table cell so that columns stay aligned; anything else becomes "?".
ASCII_GLYPHS = {
    "✓": "v", "✗": "x", "◐": "~", "★": "*", "≈": "~", "·": "-", "—": "-", "–": "-", "−": "-",
    "…": "...", "→": "->", "←": "<-", "≥": ">=", "≤": "<=", "×": "x", "µ": "u", "•": "*",
    "±": "+-",
}
ASCII_ERRORS = "backoff-sim-ascii"


def _ascii_fallback(exc: UnicodeError) -> tuple[str, int]:
    """A codec error handler: the glyph's ASCII stand-in; ``a ± b`` becomes ``a +-b`` (the
    space after ``±`` is taken, so the text keeps its width)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    char = exc.object[exc.start]
    resume = exc.start + 1
    if char == "±" and exc.object[resume:resume + 1] == " ":
        return "+-", resume + 1
    return ASCII_GLYPHS.get(char, "?"), resume


codecs.register_error(ASCII_ERRORS, _ascii_fallback)


class ClosedStdout(io.TextIOBase):
    """``sys.stdout`` of a command started with stdout closed (``>&-``): every write fails as a
    write to a closed descriptor does, so the command reports it as it reports a full disk."""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it is closed")


class WatchedStdout(_StreamWrapper):
    """``sys.stdout`` as the entry points set it: the first write error (not a closed pipe) is
    kept in ``failure``, as argparse's ``--help`` and ``--version`` swallow it and exit 0."""

    def __init__(self, stream: TextIO | Any) -> None:
        super().__init__(stream)
        self.failure: str | None = None

    def _failed(self, exc: OSError) -> None:
        if self.failure is None and not isinstance(exc, BrokenPipeError):
            self.failure = StdoutFailed(exc).reason


def _fd_closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def prepare_streams() -> None:
    """Before a command runs: closed standard descriptors (``>&-``, ``<&-``, ``2>&-``) are
    pointed at /dev/null, so no file the command opens takes their numbers (and no worker's
    stray output lands in it); a closed stdout becomes ``ClosedStdout``; on streams that cannot
    encode the glyphs (``PYTHONIOENCODING=ascii``), each glyph prints as its ASCII stand-in."""
    for fd in (0, 1, 2):
        if _fd_closed(fd):
            devnull = os.open(os.devnull, os.O_RDWR)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
    if not isinstance(sys.stdout, WatchedStdout):
        sys.stdout = WatchedStdout(sys.stdout if sys.stdout is not None else ClosedStdout())
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # nowhere to say anything
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "utf-8"
        try:
            "".join(ASCII_GLYPHS).encode(encoding)
        except (UnicodeError, LookupError):
            reconfigure = getattr(stream, "reconfigure", None)  # a TextIOWrapper's (watched or not)
            if reconfigure is not None:
                reconfigure(errors=ASCII_ERRORS)


def finish_stdout(status: int) -> int:
    """The exit status once what is still buffered on stdout is written: output that could not
    be written (``--help > /dev/full``, a closed stdout) turns a success into status 1 with one
    line; a closed pipe stays quiet."""
    failure: str | None = None
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
        return status
    except OSError as exc:
        failure = StdoutFailed(exc).reason
    failure = getattr(sys.stdout, "failure", None) or failure
    if failure is None:
        return status
    silence_stdout()
    if status != EXIT_OK:
        return status  # the command already said what went wrong
    stderr_line(f"error: cannot write to standard output: {failure}")
    return EXIT_STDOUT_FAILED


# --- a command's outcome -----------------------------------------------------------------------

def command_status(body: Callable[[], int], *, interrupted_note: str = "") -> int:
    """Run a command's ``body`` with stop signals turned into ``Interrupted``; return its exit
    status, each way it can end being one line on stderr at most: a mistake (2), a stop signal
    (130, 143, 129; ``interrupted_note`` is added to the line), a full or closed stdout (1), a
    closed pipe (0, quiet)."""
    from sim.commands.interrupt import end_after_stop, first_interrupt_only, say_stop, stop_message

    try:
        with first_interrupt_only(exit_deadline=True):
            return body()
    except UserError as exc:
        for line in exc.lines():  # a config with several mistakes: one line each
            stderr_line(f"error: {line}")
        return EXIT_USER_ERROR
    except KeyboardInterrupt as exc:
        say_stop(exc, stop_message(exc) + interrupted_note, stderr_line)
        return end_after_stop(exc)
    except StdoutClosed:
        # stdout was closed early (e.g. piped into `head`): the reader has what it wanted.
        silence_stdout()
        return EXIT_OK
    except StdoutFailed as exc:
        silence_stdout()
        stderr_line(f"error: cannot write to standard output: {exc.reason}")
        return EXIT_STDOUT_FAILED


# --- the tables' console -----------------------------------------------------------------------

MIN_WIDTH = 40  # narrower than this (COLUMNS=0, COLUMNS=20), every table cell came out blank
FALLBACK_WIDTH = 80  # for a COLUMNS that is too small or not a number
PIPED_WIDTH = 120  # piped output without COLUMNS: a generous width instead of 80 columns


def console_width(stream: TextIO | Any) -> int | None:
    """The width for a console on ``stream``: COLUMNS when it is a number of at least
    MIN_WIDTH, FALLBACK_WIDTH when it is set to anything else, else the terminal's own (None)
    or PIPED_WIDTH when the stream is not a terminal."""
    columns = os.environ.get("COLUMNS")
    if columns is not None:
        text = columns.strip()
        return int(text) if text.isdigit() and len(text) < 6 and int(text) >= MIN_WIDTH else FALLBACK_WIDTH
    return None if _is_tty(stream) else PIPED_WIDTH


def _is_tty(stream: TextIO | Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# A table printed to a file or pipe (no COLUMNS) gets the width it needs: nothing wrapped or
# left out for a screen that is not there (the prose around it still wraps at PIPED_WIDTH).
UNBOUNDED_WIDTH = 10_000


def stdout_console() -> Console:
    """A rich console on the guarded stdout (write errors become StdoutClosed / StdoutFailed),
    never narrower than MIN_WIDTH."""
    from rich.console import Console

    console = Console(file=GuardedStdout(sys.stdout), width=console_width(sys.stdout), highlight=False)
    console.tables_unbounded = "COLUMNS" not in os.environ and not _is_tty(sys.stdout)
    return console


def print_table(out: Console, table: Any) -> None:
    """A table on ``out``: fitted to the terminal (or COLUMNS), whole to a file or pipe."""
    if out.is_terminal:
        out.print(table)
        return
    width = out.width  # print(width=) cannot exceed the console's own: widen it for the table
    if getattr(out, "tables_unbounded", False):
        out.width = UNBOUNDED_WIDTH
    try:
        with out.capture() as captured:
            out.print(table)
    finally:
        out.width = width
    # Rich pads every line (the centred title, the caption, the last column) to the table's
    # width: a file or pipe gets the lines without the trailing spaces.
    text = "\n".join(line.rstrip(" ") for line in captured.get().split("\n"))
    out.file.write(text)


def print_tables(out: Console, group: Any) -> None:
    """A rich ``Group`` of tables and prose (explore's maps): each table as ``print_table``
    prints it (whole to a file or pipe: a 12-column map's cells wrapped, "fluid" over "✓", and
    its last header cut to "120,0…" at 120 columns), the prose as ever, without the trailing
    spaces rich leaves where it wraps a line (to a file or pipe)."""
    from rich.table import Table

    for renderable in group.renderables:
        if isinstance(renderable, Table) or out.is_terminal:
            print_table(out, renderable)
            continue
        with out.capture() as captured:
            out.print(renderable)
        out.file.write("\n".join(line.rstrip(" ") for line in captured.get().split("\n")))


def stderr_console() -> Console:
    """The progress bar's console on stderr, at a sane width as ``stdout_console``."""
    from rich.console import Console

    return Console(stderr=True, width=console_width(sys.stderr), highlight=False)


def print_plain(out: Console, line: str) -> None:
    """One line on a console's file as it is, whatever the console's width (the file lists of
    ``--quiet``, which scripts read)."""
    out.file.write(line + "\n")
