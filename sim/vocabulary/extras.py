"""How to install an optional extra, as a command that works where this copy came from: from a
clone, ``pip install -e '<checkout>[tune]'`` (``backoff-sim[tune]`` names a package that no
index has); from an installed package, ``pip install 'backoff-sim[tune]'``."""

from __future__ import annotations

import shlex
from pathlib import Path

PROJECT = "backoff-sim"


def checkout_root() -> Path | None:
    """The source checkout this copy of ``sim`` runs from (editable install or clone), if any."""
    root = Path(__file__).resolve().parents[2]  # sim/vocabulary/extras.py -> the checkout
    pyproject = root / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return root if f'name = "{PROJECT}"' in text else None


def install_command(extra: str) -> str:
    """The pip command that installs ``extra`` for this copy of backoff-sim."""
    root = checkout_root()
    if root is None:
        return f"pip install '{PROJECT}[{extra}]'"
    return f"pip install -e {shlex.quote(f'{root}[{extra}]')}"


def install_hint(extra: str) -> str:
    """``install the extra: pip install -e '/src/backoff-sim[tune]'``."""
    return f"install the extra: {install_command(extra)}"
