"""``<title>_phase_provenance.json``: the sidecar of a portrait, saying how to draw it again."""

from __future__ import annotations

import json
import shlex

from sim.export.provenance import command_line, provenance
from sim.settings.spec import SimulationSpec


def phase_provenance_text(spec: SimulationSpec, files: list[str]) -> str:
    """``sim.export.provenance``'s sidecar, its command to reproduce the portrait's own."""
    data = provenance(spec, files)
    data["reproduce"] = command_line()
    if data.get("config"):
        data["reproduce_config"] = shlex.quote(data["config"])
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
