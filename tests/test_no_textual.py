"""The headless library must never pull in Textual (harlequin's guard, run in a fresh process)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

MODULES = ["sim", "sim.config", "sim.engine", "sim.sweep", "sim.stats", "sim.strategies",
           "sim.controls", "sim.palette", "sim.events", "sim.streams", "sim.errors", "sim.export",
           "sim.cli", "sim.report", "sim.compat"]

PROBE = """
import importlib, importlib.util, json, sys
imported = []
for name in json.loads(sys.argv[1]):
    parent = name.rpartition(".")[0]
    if parent and importlib.util.find_spec(parent) is None:
        continue
    if importlib.util.find_spec(name) is None:
        continue
    importlib.import_module(name)
    imported.append(name)
print(json.dumps({"imported": imported,
                  "textual": sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))}))
"""


@pytest.fixture(scope="module")
def probe() -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(MODULES)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_core_modules_import(probe: dict) -> None:
    for name in ["sim", "sim.config", "sim.engine", "sim.sweep", "sim.stats", "sim.strategies",
                 "sim.controls", "sim.palette"]:
        assert name in probe["imported"]


def test_no_textual_in_sys_modules(probe: dict) -> None:
    assert probe["textual"] == []
