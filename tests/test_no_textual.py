"""The headless library must never pull in Textual (harlequin's guard, run in a fresh process).

Every module under ``sim`` is imported, so a new module is covered the day it is added.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

REQUIRED = ["sim", "sim.settings.config", "sim.runs.engine", "sim.runs.sweep", "sim.analysis.stats", "sim.models.strategies",
            "sim.models.controls", "sim.export.palette", "sim.core.events", "sim.core.streams", "sim.vocabulary.errors"]
# Written alongside the core; checked when present.
OPTIONAL = ["sim.commands.cli", "sim.export", "sim.report.tables", "sim.commands.compat"]

PROBE = """
import importlib, importlib.util, json, pkgutil, sys
required, optional = json.loads(sys.argv[1]), json.loads(sys.argv[2])
names = list(required)
names += [n for n in optional if importlib.util.find_spec(n.rpartition(".")[0] or n) is not None
          and importlib.util.find_spec(n) is not None]
import sim
names += [m.name for m in pkgutil.walk_packages(sim.__path__, "sim.") if not m.name.endswith("__main__")]
imported = []
for name in dict.fromkeys(names):
    importlib.import_module(name)
    imported.append(name)
print(json.dumps({"imported": imported,
                  "textual": sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))}))
"""


@pytest.fixture(scope="module")
def probe() -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(REQUIRED), json.dumps(OPTIONAL)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_every_sim_module_imports(probe: dict) -> None:
    assert set(REQUIRED) <= set(probe["imported"])
    assert len(probe["imported"]) >= len(REQUIRED)


def test_no_textual_in_sys_modules(probe: dict) -> None:
    assert probe["textual"] == []
