"""Atomic output files: write a temp file beside the target, then ``os.replace`` it into place.

A reader (or a user who pressed Ctrl-C) therefore sees either the old file or the complete new
one, never half of it. Problems with the output directory become one-line ``UserError``s.
"""

from __future__ import annotations

import io
import logging
import os
import secrets
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.vocabulary.errors import UserError

# Titles and strategy names may hold characters the bundled fonts lack (CJK, emoji): matplotlib
# draws a box for each and warns once per glyph on stderr. A successful run prints no warnings;
# the box in the PNG is the only sign, and the tables and CSVs keep the exact text.
warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
warnings.filterwarnings("ignore", message=r"Matplotlib currently does not support", category=UserWarning)
logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
# Matplotlib's other UserWarnings are about the picture too ("constrained_layout not applied" for
# long titles or many strategies): the PNG is still written, so they are silenced where we draw,
# and only there. Matplotlib attributes each to the first caller outside itself (warn_external):
# these modules, which build the figures and save them (explore's painter, in its child). A
# filter by module, not catch_warnings, which is not thread-safe (the app exports from a thread).
# tests/test_drawing_modules.py holds the pattern to every module that imports matplotlib or
# saves a figure.
DRAWING_MODULES = (r"sim\.(export\.(atomic|figure_style|plots|overload_plots|tier_plots)"
                   r"|exploration\.(figure|pareto|painter)|phase\.figure|report\.html\.svg)\Z")
warnings.filterwarnings("ignore", category=UserWarning, module=DRAWING_MODULES)

# zlib's compression level for PNG charts (``atomic_save_figure``): 1, the fastest.
PNG_COMPRESS_LEVEL = 1

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


GITIGNORE_TEXT = "# made by backoff-sim: generated files, not sources\n*\n"


def ensure_output_dir(directory: str | Path, *, git_ignored: bool = False,
                      what: str = "output directory") -> Path:
    """Create ``directory`` (with parents) if needed and check that files can be created in it.

    Called before long work starts, so an unusable ``--out`` fails at once rather than after the
    sweep. ``git_ignored``: a folder the tool names itself (the app's default export folder, a
    cache) gets a ``.gitignore`` of ``*`` when this creates it, so a run inside a repository
    leaves ``git status`` clean; a folder the user named is theirs to track. ``what`` names
    it in a message (``cache directory``).
    """
    directory = Path(directory)
    created = git_ignored and not directory.exists()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UserError(f"{what} {directory}: exists and is not a directory "
                        f"(choose another {what})") from None
    except OSError as exc:
        raise UserError(f"{what} {directory}: cannot create it: {_why(exc)} "
                        f"(choose another {what})") from None
    probe = directory / f".backoff-sim-probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise UserError(f"{what} {directory}: cannot write there: {_why(exc)} "
                        f"(choose another {what})") from None
    os.close(fd)
    os.unlink(probe)
    if created:
        atomic_write_text(directory / ".gitignore", GITIGNORE_TEXT)
    return directory


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; the temp file is removed if anything goes wrong."""
    return _atomic_write(path, (data,))


def atomic_write_parts(path: str | Path, parts: Iterable[str]) -> Path:
    """Write the UTF-8 text of ``parts`` to ``path`` atomically, each part as it comes (a file
    larger than memory, ``--events all``'s); nothing of it appears if any part fails."""
    return _atomic_write(path, (part.encode("utf-8") for part in parts))


def _atomic_write(path: str | Path, chunks: Iterable[bytes]) -> Path:
    path = Path(path)
    if not path.parent.is_dir():
        ensure_output_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        # 0o666 and O_EXCL: the umask applies as for any new file, and no existing file is reused.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {_why(exc)} (choose another output directory)") from None
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise UserError(f"cannot write {path}: {_why(exc)}") from None
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (newlines are written as given)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_save_figure(figure: Figure, path: str | Path, **savefig_kwargs: Any) -> Path:
    """Render a matplotlib figure to memory, then write it atomically (PNG unless told otherwise)."""
    path = Path(path)
    buffer = io.BytesIO()
    savefig_kwargs.setdefault("format", path.suffix.lstrip(".") or "png")
    if savefig_kwargs["format"] == "png":
        # The same pixels, compressed faster: zlib's level 1, not Pillow's default 6, is ~20 ms
        # less per chart (a quarter of its encoding) for files ~15-35% larger.
        savefig_kwargs.setdefault("pil_kwargs", {"compress_level": PNG_COMPRESS_LEVEL})
    figure.savefig(buffer, **savefig_kwargs)
    return atomic_write_bytes(path, buffer.getvalue())
