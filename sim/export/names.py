"""File names derived from simulation titles."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from sim.vocabulary.errors import ConfigError, UserError

if TYPE_CHECKING:  # pragma: no cover
    from sim.settings.spec import SimulationSpec

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")



def safe_title(title: str) -> str:
    """A filename-safe stem: keep ``[A-Za-z0-9._-]``, replace anything else with ``_``.

    Reference titles such as ``Locking_Example`` come out unchanged; a leading ``.`` becomes
    ``_``, so no title writes hidden files.
    """
    stem = _UNSAFE.sub("_", title)
    return "_" + stem[1:] if stem.startswith(".") else stem


def check_unique_stems(titles: Iterable[str]) -> None:
    """Raise UserError when two titles would write the same files (e.g. ``a b`` and ``a_b``)."""
    seen: dict[str, str] = {}
    for title in titles:
        stem = safe_title(title)
        if stem in seen:
            raise UserError(f"simulations {seen[stem]!r} and {title!r} would write the same files "
                            f"({stem}_*); give them titles that differ in letters or digits")
        seen[stem] = title


# An atomic write's temporary name adds this much to a file's name: ``.<name>.<pid>.<8 hex>.tmp``
# with a pid of up to 7 digits (Linux's pid_max is at most 4194304).
TEMP_NAME_OVERHEAD = len("." + "." + "1234567" + "." + "0123abcd" + ".tmp")
DEFAULT_NAME_MAX = 255
DEFAULT_PATH_MAX = 4096  # Linux's PATH_MAX, with the final NUL
# An output set stages its files in ``DIR/.backoff-sim-staging-<pid>-<8 chars>/`` (and keeps the
# files it replaces in ``.previous/`` there): what a path in DIR gets longer by, name apart.
STAGING_OVERHEAD = len("/.backoff-sim-staging-1234567-abcdefgh/.previous/")
# The app's export key adds a screenshot to the set.
SCREENSHOT_SUFFIX = "_screenshot.svg"


def _existing(directory: str | Path) -> Path:
    """``directory`` or its nearest existing parent (one that is still to be created, or whose
    name is too long to be looked up, counts as missing)."""
    path = Path(directory).absolute()
    while path.parent != path:
        try:
            if path.exists():
                break
        except OSError:  # ENAMETOOLONG: Path.exists raises it rather than answer False
            pass
        path = path.parent
    return path


def _pathconf(directory: str | Path, name: str, default: int) -> int:
    try:
        return int(os.pathconf(_existing(directory), name))
    except (OSError, ValueError, AttributeError):
        return default


def name_max(directory: str | Path) -> int:
    """The longest file name (in bytes) the file system of ``directory`` (or of its nearest
    existing parent, when it is still to be created) accepts."""
    return _pathconf(directory, "PC_NAME_MAX", DEFAULT_NAME_MAX)


def out_dir_problem(directory: str | Path) -> str | None:
    """Why ``directory`` cannot hold a command's files, found before any work, or None: a part
    of it longer than a file name may be, or a path so long that the files in it (staged, then
    moved in) would pass the system's limit on a path."""
    raw = os.fsencode(os.fspath(directory))
    limit = name_max(directory)
    for part in raw.split(b"/"):
        if len(part) > limit:
            shown = os.fsdecode(part[:20])
            return (f"has a part ({shown}...) of {len(part)} bytes, more than the {limit} a name "
                    "can have on this file system")
    path_max = _pathconf(directory, "PC_PATH_MAX", DEFAULT_PATH_MAX)
    room = path_max - 1 - STAGING_OVERHEAD - limit  # so that any file name fits under it
    if len(raw) > room:
        return (f"is {len(raw)} bytes long: the paths of the files in it would pass the "
                f"system's limit of {path_max} bytes (use a directory path of at most {room} bytes)")
    return None


def check_name_lengths(specs: Iterable[SimulationSpec], out_dir: str | Path, *,
                       stem: Callable[[str], str] = safe_title,
                       suffixes: Iterable[str] | None = None) -> None:
    """Refuse, before any simulation runs, titles whose file names (with their temporary names)
    exceed the file system's limit: one ConfigError per simulation, naming it and its title."""
    from sim.export.outputs import outputs_for

    limit = name_max(out_dir)
    errors: list[ConfigError] = []
    for spec in specs:
        kinds = tuple(suffixes) if suffixes is not None else (
            tuple(o.suffix for o in outputs_for(spec)) + (SCREENSHOT_SUFFIX,))
        longest_suffix = max(len(k.encode("utf-8")) for k in kinds)
        length = len(stem(spec.title).encode("utf-8")) + longest_suffix + TEMP_NAME_OVERHEAD
        if length > limit:
            room = limit - longest_suffix - TEMP_NAME_OVERHEAD
            errors.append(ConfigError(
                f"makes file names of {length} bytes with their temporary names, more than the "
                f"{limit} the file system of {out_dir} allows", file=spec.source or None,
                simulation=spec.title, key="title",
                hint=f"shorten the title to at most {room} bytes"))
    if errors:
        raise ConfigError.combine(errors)
