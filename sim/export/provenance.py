"""``<title>_provenance.json``: what made a set of files, so that they can be made again.

Every exported set (``backoff-sim run``, the app's ``e``, ``sim.run(...).export``) carries one per
simulation: the version, the seed, the config file and its SHA-256, a fingerprint of the
simulation as parsed (the same config written differently has the same one), the command line
that wrote the set and a command that writes it again. No clock time: the same command gives
the same file, so a re-run shows no difference that is not in the results.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import sys
from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.settings.spec import SimulationSpec

FORMAT = 1


def package_version() -> str | None:
    """The installed backoff-sim version, or None when run from an uninstalled source tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("backoff-sim")
    except PackageNotFoundError:  # pragma: no cover - only outside an install
        return None


def spec_fingerprint(spec: SimulationSpec) -> str:
    """SHA-256 of the simulation as parsed, without where it was read from: a moved or
    reformatted config keeps it, however its path was typed (the files it reads, ``*_file``,
    count by their bytes, not by the path they were found at)."""
    bare = replace(spec, source="", clients_key="clients", soft_limits=True)
    return hashlib.sha256(_canonical(bare).encode("utf-8")).hexdigest()


def _canonical(value: object) -> str:
    """``repr`` of a spec, with each ``*_file`` field as the SHA-256 of the file's bytes."""
    if is_dataclass(value) and not isinstance(value, type):
        parts = []
        for f in fields(value):
            item = getattr(value, f.name)
            if f.name.endswith("_file") and isinstance(item, (str, os.PathLike)) and Path(item).is_file():
                parts.append(f"{f.name}=sha256:{hashlib.sha256(Path(item).read_bytes()).hexdigest()}")
            else:
                parts.append(f"{f.name}={_canonical(item)}")
        return f"{type(value).__name__}({', '.join(parts)})"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_canonical(v) for v in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    return repr(value)


def config_file(spec: SimulationSpec) -> Path | None:
    """The config file a simulation was read from, if it was read from one that is still there."""
    if not spec.source or spec.source.startswith("<"):
        return None
    path = Path(spec.source)
    return path if path.is_file() else None


# The command this process runs, as its entry point parsed it (``set_command``); sys.argv
# otherwise (``sim.run`` from a script or notebook).
_command: list[str] | None = None


def set_command(argv: list[str]) -> None:
    """Record the command line an entry point was given (``["backoff-sim", "run", ...]``)."""
    global _command
    _command = list(argv)


def command_line(argv: list[str] | None = None) -> str:
    """The command that is running, as a shell would take it (``backoff-sim run x.toml``)."""
    argv = list(argv if argv is not None else _command if _command is not None else sys.argv)
    if argv:
        name = Path(argv[0]).name
        argv[0] = "python -m sim" if name == "__main__.py" else name
    return " ".join([argv[0], *map(shlex.quote, argv[1:])]) if argv else ""


def provenance(spec: SimulationSpec, files: list[str], argv: list[str] | None = None) -> dict[str, Any]:
    """The sidecar's content for one simulation whose set holds ``files``."""
    import numpy

    config = config_file(spec)
    config_hash = hashlib.sha256(config.read_bytes()).hexdigest() if config is not None else None
    where = shlex.quote(str(config.resolve())) if config is not None else "CONFIG"
    return {
        "format": FORMAT,
        "simulation": spec.title,
        "backoff_sim_version": package_version(),
        "seed": spec.seed,
        "config": str(config.resolve()) if config is not None else None,
        "config_sha256": config_hash,
        "simulation_sha256": spec_fingerprint(spec),
        "command_line": command_line(argv),
        "reproduce": f"backoff-sim run {where} --seed {spec.seed}",
        "files": files,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
    }


def provenance_text(spec: SimulationSpec, files: list[str]) -> str:
    """``provenance`` as the JSON file holds it."""
    return json.dumps(provenance(spec, files), indent=2, ensure_ascii=False) + "\n"
