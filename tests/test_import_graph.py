"""The import graph of sim/ and tui/ has no cycle: every import counts, at module level, inside
functions and under ``if TYPE_CHECKING`` alike, so the layers (core, models, policies, analysis,
runs, report, export, then the commands and the app) stay a strict order. Folders too: no
folder of sim/ imports one that imports it back (files apart, the layers would still tangle)."""

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
    assert "sim.runs.engine" in graph and "tui.app" in graph
    assert "sim.core.events" in graph["sim.runs.engine"]


def test_a_cycle_is_found_when_there_is_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def layer_of(module: str) -> str:
    """The layer a module belongs to: its folder of sim/ (``sim.models``), a module directly in
    sim/ (``sim.spec``), or the whole app (``tui``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "sim" else parts[0]


def layer_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    layers: dict[str, set[str]] = {}
    for mod, edges in graph.items():
        own = layer_of(mod)
        layers.setdefault(own, set()).update(layer_of(e) for e in edges if layer_of(e) != own)
    return layers


def test_folders_import_each_other_one_way():
    # e.g. sim.runs.engine imports sim.models.clients, which imports sim.core.events: fine;
    # sim.core importing sim.models would make core and models one tangle, however the files lie.
    cycle = find_cycle(layer_graph(import_graph()))
    assert cycle is None, "folders importing each other: " + " -> ".join(cycle)


def test_layer_cycles_are_found():
    graph = {"sim.core.engine": {"sim.models.clients"}, "sim.models.clients": {"sim.core.events"},
             "sim.core.events": set()}
    assert find_cycle(layer_graph(graph)) == ["sim.core", "sim.models", "sim.core"]


def test_every_package_is_installed():
    # A folder missing from what pyproject tells setuptools to find works in the editable install
    # (and so in the tests) but is absent from a wheel: find them as setuptools will.
    import re

    from setuptools import find_packages

    include = re.findall(r'"([a-z_.*]+)"', re.search(r"^include = \[(.*)\]$",
                                                     (ROOT / "pyproject.toml").read_text(),
                                                     re.M).group(1))
    listed = set(find_packages(str(ROOT), include=include))
    found = {mod for mod, (_, is_pkg) in _modules().items() if is_pkg}
    assert found == listed


def test_analysis_never_imports_runs_export_or_the_app():
    # What runs mean is computed from what they produce (metrics, event columns): the app views
    # it, the engine and the exports use it, so none of them may sit below it.
    graph = import_graph()
    forbidden = ("sim.runs", "sim.export", "tui")
    found = sorted(f"{mod} imports {target}" for mod, edges in graph.items() if layer_of(mod) == "sim.analysis"
                   for target in edges if layer_of(target) in forbidden)
    assert found == [], "; ".join(found)
    assert "sim.analysis.replay" in graph and "sim.analysis.run_series" in graph
