"""The import graph of sim/ and tui/ has no cycle: every import counts, at module level, inside
functions and under ``if TYPE_CHECKING`` alike, so the layers (core, models, policies, analysis,
report, export, then the commands and the app) stay a strict order."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sim", "tui", "themes")


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for top in PACKAGES:
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts.pop()
            found[".".join(parts)] = (path, is_pkg)
    return found


def _targets(name: str, modules: dict, importer: str) -> set[str]:
    """``name`` and the packages whose ``__init__`` importing it runs (not the importer's own)."""
    out = set()
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if prefix in modules and not (importer == prefix or importer.startswith(prefix + ".")):
            out.add(prefix)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for mod, (path, is_pkg) in modules.items():
        package = mod.split(".") if is_pkg else mod.split(".")[:-1]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    edges |= _targets(alias.name, modules, mod)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                edges |= _targets(source, modules, mod)
                for alias in node.names:  # ``from pkg import module``
                    if f"{source}.{alias.name}" in modules:
                        edges |= _targets(f"{source}.{alias.name}", modules, mod)
        edges.discard(mod)
        graph[mod] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_sees_the_packages_and_their_imports():
    graph = import_graph()
    assert "sim.core.engine" in graph and "tui.app" in graph
    assert "sim.core.events" in graph["sim.core.engine"]


def test_a_cycle_is_found_when_there_is_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
