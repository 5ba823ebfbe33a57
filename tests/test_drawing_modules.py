"""Matplotlib's layout warnings are silenced by module (``sim.export.atomic.DRAWING_MODULES``):
the pattern must name every library module that draws (imports matplotlib, or saves a figure:
explore's painter did, in its child, and its warnings reached stderr), or a new one warns on
stderr."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from sim.export.atomic import DRAWING_MODULES

SIM = Path(__file__).resolve().parent.parent / "sim"


def _draws(path: Path) -> bool:
    """Whether the module imports matplotlib or calls ``savefig`` (a warning of the layout is
    attributed to the first caller outside matplotlib: the one that saves)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "matplotlib" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "matplotlib":
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "savefig":
            return True
    return False


def _module(path: Path) -> str:
    return ".".join(path.relative_to(SIM.parent).with_suffix("").parts)


def test_the_drawing_modules_are_exactly_those_that_draw():
    modules = [_module(p) for p in sorted(SIM.rglob("*.py"))]
    drawing = {m for m, p in zip(modules, sorted(SIM.rglob("*.py"))) if _draws(p)}
    assert len(drawing) >= 5  # plots, overload and tier plots, the map's and the phase's figures
    assert {m for m in modules if re.match(DRAWING_MODULES, m)} == drawing
    assert not re.match(DRAWING_MODULES, "sim.explore.figure")  # the package's old name
