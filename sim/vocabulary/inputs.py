"""Reading the user's input files (configs, events CSVs) without hanging or filling memory.

A FIFO would block the read forever and ``/dev/zero`` would never end; a file larger than any
real input would fill memory before its first line is checked. Only regular files are read, never
more than a limit, and the reason for a refusal is one short phrase for the caller's message.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class InputFileError(Exception):
    """An input path that cannot be read as a file: ``reason`` and ``hint`` complete a message."""

    def __init__(self, reason: str, hint: str | None = None) -> None:
        self.reason = reason
        self.hint = hint
        super().__init__(reason)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _a(what: str) -> str:
    """``what`` with its article: a config file, an events CSV file."""
    return f"{'an' if what[:1].lower() in 'aeiou' else 'a'} {what}"


def read_limited(path: str | Path, limit: int, *, what: str) -> bytes:
    """The bytes of the regular file ``path``, refusing anything else or anything over ``limit``.

    Raises FileNotFoundError when it does not exist, InputFileError for every other problem.
    The file is opened without blocking (a FIFO swapped in after the check cannot hang the
    read) and read up to ``limit + 1`` bytes, so a file that grows meanwhile is still refused.
    """
    if os.fspath(path) == "":  # Path("") is the current directory: no file was named
        raise InputFileError("is an empty path", f"give the path of {_a(what)}")
    if "\0" in os.fspath(path):  # no file has one: os.stat would raise ValueError
        raise InputFileError("the path contains a NUL character", f"give the path of {_a(what)}")
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InputFileError(f"cannot read: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = _kind(mode)
        raise InputFileError(f"is {kind}, not {_a(what)}" if kind.startswith("a ") else f"is {kind}",
                             f"give the path of {_a(what)}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InputFileError(f"cannot read: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputFileError(f"is not a regular file, not {_a(what)}")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputFileError(f"cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise InputFileError(f"is larger than {limit // 2**20} MiB, too large for {_a(what)}",
                             f"give the path of {_a(what)}")
    return b"".join(chunks)


def read_text(path: str | Path, limit: int, *, what: str, error: type[Exception]) -> str:
    """A measured-data file's text (UTF-8, a leading byte order mark dropped), at most ``limit``
    bytes; ``error("<path>: <why>")`` for a file that is missing, unreadable, too big or not text:
    one line naming the file, as the config's keys that name files (service, trace, load curve)
    report it."""
    name = str(path) or "''"  # an empty path shown as one
    try:
        raw = read_limited(path, limit, what=what)
    except FileNotFoundError:
        raise error(f"{name}: no such file") from None
    except InputFileError as exc:
        raise error(f"{name}: {exc.reason}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise error(f"{name}: is not UTF-8 text") from None


def is_csv_header(cells: list[str]) -> bool:
    """A first row with a cell that is no number is a CSV header (measured-data files may have
    one: service times, traces, load curves)."""
    for cell in cells:
        try:
            float(cell)
        except ValueError:
            return True
    return False

