"""File names derived from simulation titles."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from sim.errors import ConfigError, UserError

if TYPE_CHECKING:  # pragma: no cover
    from sim.spec import SimulationSpec

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")



def safe_title(title: str) -> str:
    """A filename-safe stem: keep ``[A-Za-z0-9._-]``, replace anything else with ``_``.

    Reference titles such as ``Locking_Example`` come out unchanged.
    """
    return _UNSAFE.sub("_", title)


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
# The app's export key adds a screenshot to the set.
SCREENSHOT_SUFFIX = "_screenshot.svg"


def name_max(directory: str | Path) -> int:
    """The longest file name (in bytes) the file system of ``directory`` (or of its nearest
    existing parent, when it is still to be created) accepts."""
    path = Path(directory).absolute()
    while not path.exists() and path.parent != path:
        path = path.parent
    try:
        return int(os.pathconf(path, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return DEFAULT_NAME_MAX


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
