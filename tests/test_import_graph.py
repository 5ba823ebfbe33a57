"""The import graph of sim/, tui/ and themes/: no cycle, and a layer table says which package
may import which. Every import counts, at module level, inside functions and under
``if TYPE_CHECKING`` alike.

- No cycle between modules, nor between sim/'s folders (no folder of sim/ imports one that
  imports it back: files apart, the layers would still tangle).
- ``LAYERS``: every module belongs to a layer, and imports only its own layer and what its
  layer's entry allows; ``RULES`` restate the lines the table must never cross (the library never
  imports the app or Textual, the core imports nothing of sim, analysis never runs, writes or
  explores, widgets and screens reach sim only through its public API and the event codes).
- No module imports another module's ``_private`` names.

A failure names the offending import: importer, line, imported module and the rule it breaks.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
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


@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once for all the checks here (they only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for mod, (path, is_pkg) in modules.items():
        package = mod.split(".") if is_pkg else mod.split(".")[:-1]
        edges: set[str] = set()
        for node in ast.walk(_tree(path)):
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
    sim/ (``sim.settings.spec``), or the whole app (``tui``)."""
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


# --- the layer table -------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """Modules of one layer, and what they may import besides their own layer's modules.

    A member is a package (with everything under it) or a module; a module belongs to the layer
    of its most specific member. The packages ``sim`` and ``tui`` as members stand for their
    ``__init__`` alone (their contents belong to the layers that name them). An entry of
    ``may_import`` is a layer's name, or one module: ``"sim"`` is sim/__init__.py, the public API
    (``sim.__all__``); ``"textual"`` stands for Textual and textual-plotext.
    """

    members: tuple[str, ...]
    may_import: tuple[str, ...] = ()


TEXTUAL = "textual"
THIRD_PARTY = {"textual": TEXTUAL, "textual_plotext": TEXTUAL}  # the imports outside ours that count
TOPS = ("sim", "tui")  # as members: the package's __init__ alone

LAYERS: dict[str, Layer] = {
    # --- sim/, bottom up -------------------------------------------------------------------
    # The event kernel: codes, histories, seeded streams, wiring. It imports nothing of sim,
    # not even the vocabulary beside it, so it reads (and tests) alone.
    "sim.core": Layer(("sim.core",)),
    # Words every layer shares: one-line errors, time units, bounds, outcomes, parameter checks,
    # CSV inputs, install hints.
    "sim vocabulary": Layer(("sim.vocabulary",)),
    "themes": Layer(("themes",)),
    "sim.models": Layer(("sim.models",), ("sim.core", "sim vocabulary")),
    "sim.policies": Layer(("sim.policies",), ("sim.core", "sim.models", "sim vocabulary")),
    # The config's settings as validated specs; the layers that read specs import ``spec`` alone.
    "sim specs": Layer(("sim.settings",), ("sim.models", "sim.policies", "sim vocabulary")),
    # Metrics and statistics of finished runs, from arrays and specs: never runs, writes, explores.
    "sim.analysis": Layer(("sim.analysis",), ("sim.core", "sim.models", "sim.settings.spec", "sim vocabulary")),
    # The fluid (mean-field) estimate of a spec's runs: specs in, numbers out, no engine.
    # Its step loop compiled is a kernel's (sim.kernels.fluid), taken where numba is (jit).
    "sim.fluid": Layer(("sim.fluid",), ("sim.analysis", "sim.kernels", "sim.models", "sim.policies",
                                        "sim specs", "sim vocabulary")),
    # Compiled fast paths: models transcribed over arrays (numba when installed), draws and codes
    # from sim.core; the reference models stay in sim.models.
    "sim.kernels": Layer(("sim.kernels",), ("sim.core", "sim vocabulary")),
    "sim.runs": Layer(("sim.runs",), ("sim.analysis", "sim.core", "sim.kernels", "sim.models",
                                      "sim.policies", "sim.settings.spec", "sim vocabulary")),
    "sim.recording": Layer(("sim.recording",), ("sim.analysis", "sim.core", "sim.runs",
                                                "sim vocabulary")),
    # Files (CSV, PNG, output sets) and the theme palettes the PNGs, tables and app share.
    "sim.export": Layer(("sim.export",), ("sim.analysis", "sim.core", "sim.models", "sim.runs",
                                          "sim.settings.spec", "sim vocabulary", "themes")),
    "sim.report": Layer(("sim.report",), ("sim.analysis", "sim.core", "sim.export.palette",
                                          "sim.runs", "sim.settings.spec", "sim vocabulary")),
    # The HTML report (``--report``): the CSVs' texts and the PNGs' figures (sim.export) with the
    # terminal tables' verdicts (sim.report) in one page; the maps and portraits add theirs.
    "sim.report.html": Layer(("sim.report.html",), ("sim.analysis", "sim.export", "sim.models",
                                                    "sim.report", "sim.runs", "sim.settings.spec",
                                                    "sim vocabulary")),
    "sim.exploration": Layer(("sim.exploration",), ("sim.analysis", "sim specs", "sim.export",
                                                    "sim.fluid", "sim.models", "sim.policies",
                                                    "sim.report.html", "sim.runs", "sim vocabulary")),
    # Phase portraits: runs started from a state, their drift and return estimates, the files.
    "sim.phase": Layer(("sim.phase",), ("sim.analysis", "sim.core", "sim specs", "sim.export",
                                        "sim.models", "sim.report.html", "sim.runs", "sim vocabulary")),
    # ``backoff-sim check``: settings read into layers, stacked in front of a service, run
    # through the incident battery and the front door's sweep (issue 36).
    "sim.check": Layer(("sim.check",), ("sim.analysis", "sim specs", "sim.export", "sim front door",
                                        "sim.models", "sim.policies", "sim.report.html", "sim.runs",
                                        "sim vocabulary")),
    # The public API (sim/__init__.py re-exports sim.api's functions and the types they return)
    # and the one pipeline the commands, the API and the app share.
    "sim front door": Layer(("sim", "sim.api", "sim.arguments", "sim.pipeline", "sim.results"),
                            ("sim.exploration", "sim.export", "sim.recording", "sim.runs",
                             "sim specs", "sim vocabulary")),
    # The shell: the commands, their stdout, stop signals, teardown, progress display and GC
    # policy. The library below takes all of these from its caller (``sim.runs.caller``). Their
    # help quotes the ★ rule in words (``sim.analysis.best``, math alone: no numpy at startup).
    "sim commands": Layer(("sim.commands", "sim.__main__"),
                          ("sim front door", "sim.analysis.best", "sim.check", "sim.exploration", "sim.export",
                           "sim.phase", "sim.report", "sim.report.html", "sim.runs", "sim specs",
                           "sim vocabulary")),
    # --- tui/ ------------------------------------------------------------------------------
    # View maths: what to draw, from sim's results and runs (no Textual): a recorded run as the
    # views index it (RunData), plot dots, policy labels, table rows, ticks, zoom.
    "tui.view": Layer(("tui.view",), ("sim", "sim.analysis", "sim.core", "sim.exploration",
                                      "sim.export.palette", "sim.models", "sim.phase", "sim.report",
                                      "sim.runs",
                                      "sim.settings.spec", "sim vocabulary")),
    # App state and navigation: sources of runs, sweeps, tunes, maps, playback, exports (no
    # Textual; the blocking calls the screens' workers make). The app's gateway to sim.
    "tui.state": Layer(("tui.state",), ("sim", "sim.analysis", "sim.core", "sim.exploration",
                                        "sim.export", "sim.models", "sim.phase", "sim.report.html",
                                        "sim.runs", "sim specs",
                                        "sim vocabulary", "tui.view")),
    # The key table and the themes every widget and screen uses.
    "tui keys and themes": Layer(("tui.keys", "tui.theme"), (TEXTUAL, "sim.export.palette",
                                                             "sim vocabulary", "themes")),
    "tui.messages": Layer(("tui.messages",), (TEXTUAL, "tui.state", "tui.view")),
    "tui.widgets": Layer(("tui.widgets",), (TEXTUAL, "sim", "sim.core.events", "tui keys and themes",
                                            "tui.state", "tui.view")),
    "tui.screens": Layer(("tui.screens",), (TEXTUAL, "sim", "sim.core.events", "tui keys and themes",
                                            "tui.messages", "tui.state", "tui.view", "tui.widgets")),
    # The app shell: the App, the launcher and console script, signals, the command palette.
    "tui shell": Layer(("tui", "tui.app", "tui.commands", "tui.entry", "tui.hangup", "tui.main",
                        "tui.serve", "tui.web"),
                       (TEXTUAL, "sim commands", "sim front door", "sim.exploration", "sim.export",
                        "sim.runs", "sim vocabulary", "tui keys and themes",
                        "tui.messages", "tui.screens", "tui.state", "tui.view", "tui.widgets")),
}


@dataclass(frozen=True)
class Rule:
    """A line no import may cross: from modules under ``importers`` to modules under ``forbids``
    (both prefixes), except the modules ``allowed`` and the importer's own layer."""

    importers: tuple[str, ...]
    forbids: tuple[str, ...]
    why: str
    allowed: tuple[str, ...] = ()


RULES: tuple[Rule, ...] = (
    Rule(("sim", "themes"), ("tui", TEXTUAL), "the library never imports the app or Textual"),
    Rule(("sim.core",), ("sim",), "sim.core imports nothing of sim"),
    Rule(("sim.analysis",), ("sim.runs", "sim.export", "sim.exploration", "tui"),
         "analysis works on finished runs: it never imports sim.runs, sim.export, "
         "sim.exploration or tui"),
    Rule(("tui.widgets", "tui.screens", "tui.messages"), ("sim",),
         "widgets and screens reach sim only through its public API (import sim / from sim "
         "import a name of sim.__all__) and sim.core.events; the rest through tui.state and "
         "tui.view", allowed=("sim", "sim.core.events")),
    Rule(("tui.state", "tui.view"), (TEXTUAL,), "app state and view maths are free of Textual"),
    Rule(("sim",), ("sim.commands",),
         "the library never imports the command layer: it takes cancellation, stop-signal "
         "handling, teardown, stdout and GC policy from its caller (sim.runs.caller)"),
)


def under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer_table_of(module: str) -> str | None:
    """The layer ``module`` belongs to (None: in no layer), or ``textual``."""
    if module in THIRD_PARTY.values():
        return module
    best, depth = None, -1
    for name, layer in LAYERS.items():
        for member in layer.members:
            hit = module == member if member in TOPS else under(module, member)
            if hit and member.count(".") > depth:
                best, depth = name, member.count(".")
    return best


@dataclass(frozen=True)
class Import:
    importer: str
    line: int
    target: str  # the module the statement names (or "textual")
    names: tuple[str, ...]  # the names taken from it (``from target import names``)


def _imports_of(mod: str, path: Path, is_pkg: bool, modules: dict) -> list[Import]:
    package = mod.split(".") if is_pkg else mod.split(".")[:-1]
    found = []

    def named(dotted: str) -> str | None:
        """The deepest module of ours ``dotted`` names, "textual", or None (another's)."""
        top = dotted.split(".")[0]
        if top in THIRD_PARTY:
            return THIRD_PARTY[top]
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in modules:
                return ".".join(parts[:i])
        return None

    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = named(alias.name)
                if target is not None:
                    found.append(Import(mod, node.lineno, target, ()))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            target = named(source)
            if target is None:
                continue
            names = []
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:  # ``from pkg import module``
                    found.append(Import(mod, node.lineno, f"{source}.{alias.name}", ()))
                else:
                    names.append(alias.name)
            if names:
                found.append(Import(mod, node.lineno, target, tuple(names)))
    return found


def all_imports() -> list[Import]:
    modules = _modules()
    return [imp for mod, (path, is_pkg) in sorted(modules.items())
            for imp in _imports_of(mod, path, is_pkg, modules)]


def _where(imp: Import) -> str:
    return f"{imp.importer} (line {imp.line}) imports {imp.target}"


def layer_breaches(imports: list[Import]) -> list[str]:
    """Each import its layer's entry does not allow, saying which layers."""
    out = []
    for imp in imports:
        own, theirs = layer_table_of(imp.importer), layer_table_of(imp.target)
        if own is None or theirs is None or own == theirs:
            continue  # modules in no layer fail test_every_module_is_in_a_layer
        allowed = LAYERS[own].may_import
        if theirs not in allowed and imp.target not in allowed:
            out.append(f"{_where(imp)}: layer {own!r} may not import layer {theirs!r} "
                       f"(LAYERS[{own!r}] allows {', '.join(allowed) or 'nothing else'})")
    return out


def rule_breaches(imports: list[Import]) -> list[str]:
    out = []
    for imp in imports:
        for rule in RULES:
            if (any(under(imp.importer, p) for p in rule.importers)
                    and any(under(imp.target, p) for p in rule.forbids)
                    and imp.target not in rule.allowed
                    and layer_table_of(imp.target) != layer_table_of(imp.importer)):
                out.append(f"{_where(imp)}: {rule.why}")
    return out


def public_api_breaches(imports: list[Import], public: list[str]) -> list[str]:
    """``from sim import name`` outside sim/ with a name that is not in ``sim.__all__``."""
    return [f"{_where(imp)}: {name!r} is not in sim.__all__" for imp in imports
            if imp.target == "sim" and not under(imp.importer, "sim")
            for name in imp.names if name not in public]


def private_imports(imports: list[Import]) -> list[str]:
    """``from module import _name`` across modules (dunders such as ``__doc__`` are public)."""
    return [f"{_where(imp)}: takes its private {name!r}" for imp in imports
            if imp.target != imp.importer and imp.target != TEXTUAL
            for name in imp.names if name.startswith("_") and not name.startswith("__")]


def private_attributes(mod: str, tree: ast.Module, is_pkg: bool, modules: dict) -> list[str]:
    """``module._name`` in ``mod``'s ``source``, where ``module`` is a name an import bound to
    another module of ours (``import sim.x as m``, ``from sim import x``, ``import sim.x``)."""
    package = mod.split(".") if is_pkg else mod.split(".")[:-1]
    bound: dict[str, str] = {}  # local name -> module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in modules:
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            source_module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{source_module}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{source_module}.{alias.name}"
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            dotted, value = [], node.value
            while isinstance(value, ast.Attribute):
                dotted.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                target = ".".join([bound[value.id], *dotted])
                if target in modules and target != mod:
                    out.append(f"{mod} (line {node.lineno}) uses {target}.{node.attr}: "
                               "another module's private name")
    return out


def test_every_module_is_in_a_layer():
    homeless = [mod for mod in _modules() if layer_table_of(mod) is None]
    assert not homeless, "modules in no layer of LAYERS: " + ", ".join(sorted(homeless))


def test_the_layer_table_names_only_what_exists():
    modules = _modules()
    stale = [f"{name}: member {m}" for name, layer in LAYERS.items() for m in layer.members
             if m not in modules]
    stale += [f"{name}: may import {entry}" for name, layer in LAYERS.items()
              for entry in layer.may_import
              if entry not in LAYERS and entry not in modules and entry != TEXTUAL]
    stale += [f"a rule's {p}" for rule in RULES for p in (*rule.importers, *rule.forbids, *rule.allowed)
              if p not in modules and p != TEXTUAL]
    # Every layer holds a module (no member shadowed by more specific ones everywhere).
    stale += [f"{name}: no module is in it" for name in LAYERS
              if not any(layer_table_of(mod) == name for mod in modules)]
    assert not stale, "stale entries of the layer table: " + "; ".join(stale)


def test_the_layer_table_keeps_the_rules():
    """What the table allows never crosses a rule's line (so loosening the table to let an
    import through still fails, naming the rule)."""
    crossing = []
    for name, layer in LAYERS.items():
        for entry in layer.may_import:
            targets = LAYERS[entry].members if entry in LAYERS else (entry,)
            for member in layer.members:
                for target in targets:
                    for rule in RULES:
                        if (any(under(member, p) for p in rule.importers)
                                and any(under(target, p) for p in rule.forbids)
                                and target not in rule.allowed):
                            crossing.append(f"{name} may import {entry} ({target}): {rule.why}")
    assert not crossing, "\n".join(crossing)


def test_imports_keep_to_the_layer_table():
    breaches = layer_breaches(all_imports())
    assert not breaches, "imports the layer table does not allow:\n" + "\n".join(breaches)


def test_imports_keep_the_rules():
    import sim

    breaches = rule_breaches(all_imports()) + public_api_breaches(all_imports(), sim.__all__)
    assert not breaches, "imports that break a rule:\n" + "\n".join(breaches)


def test_no_module_imports_another_modules_private_names():
    modules = _modules()
    found = private_imports(all_imports())
    for mod, (path, is_pkg) in sorted(modules.items()):
        found += private_attributes(mod, _tree(path), is_pkg, modules)
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_the_checks_name_the_offending_import():
    # A widget reaching into the engine, the core importing a model, a private name taken.
    widget = Import("tui.widgets.status", 3, "sim.runs.sweep", ("SweepResult",))
    core = Import("sim.core.history", 9, "sim.models.clients", ("Client",))
    (breach,) = layer_breaches([widget])
    assert breach.startswith("tui.widgets.status (line 3) imports sim.runs.sweep: layer "
                             "'tui.widgets' may not import layer 'sim.runs'")
    assert [b.split(": ", 1)[1] for b in rule_breaches([widget, core])] == [
        RULES[3].why, "sim.core imports nothing of sim"]
    assert rule_breaches([Import("tui.widgets.status", 1, "sim", ("SweepResult",)),
                          Import("tui.widgets.status", 2, "sim.core.events", ())]) == []
    assert public_api_breaches([Import("tui.widgets.status", 1, "sim", ("run", "History"))],
                               ["run"]) == [
        "tui.widgets.status (line 1) imports sim: 'History' is not in sim.__all__"]
    assert private_imports([Import("sim.commands.cli", 5, "sim.export.plots", ("DPI", "_legend"))]) == [
        "sim.commands.cli (line 5) imports sim.export.plots: takes its private '_legend'"]
    modules = _modules()
    source = ("import sim.export.plots as plots\nfrom sim.core import history\nimport sim.vocabulary.units\n"
              "plots._legend(); history._unpack; sim.vocabulary.units._SCALES; history.__doc__; self._x\n")
    assert sorted(f.split(" uses ")[1].split(":")[0]
                  for f in private_attributes("sim.commands.cli", ast.parse(source), False, modules)) == [
        "sim.core.history._unpack", "sim.export.plots._legend", "sim.vocabulary.units._SCALES"]
    assert layer_table_of("sim") == "sim front door" and layer_table_of("sim.nope") is None
    # The library reaching for the shell's machinery (33.5): named, whichever layer allows it.
    (shell,) = rule_breaches([Import("sim.export.outset", 24, "sim.commands.interrupt", ("stop_signals_held",))])
    assert shell.endswith(RULES[-1].why) and "the command layer" in shell


def test_the_imports_are_all_seen():
    imports = all_imports()
    # Textual, under TYPE_CHECKING and inside functions too.
    assert Import("tui.app", 15, TEXTUAL, ("App",)) in imports
    assert any(i.importer == "tui.messages" and i.target == "tui.view.compare_columns" for i in imports)
    assert any(i.importer == "tui.main" and i.target == "sim.pipeline" for i in imports)
    # The run analysis the rules keep apart (sim.analysis never imports runs, export or tui).
    assert any(i.importer == "sim.analysis.replay" for i in imports)
    assert any(i.importer == "sim.analysis.run_series" for i in imports)


# The root of sim/ is its front door (the API, its arguments and results, the one pipeline):
# every other module lives in the folder of its layer (issue 33: at most 8 modules there).
FRONT_DOOR_MODULES = 8


def test_the_root_of_sim_holds_the_front_door_only():
    root = sorted(p.stem for p in (ROOT / "sim").glob("*.py"))
    assert len(root) <= FRONT_DOOR_MODULES, root
    assert all(layer_table_of(f"sim.{name}" if name != "__init__" else "sim") in
               ("sim front door", "sim commands", "sim.recording") for name in root), root
