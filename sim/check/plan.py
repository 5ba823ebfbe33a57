"""Every run a check makes, as one config swept at once: the total-failure run, the battery
under the settings and each alternative, and the battery at each value of the main knob.

Blocks that would run the same simulation (a knob value equal to the settings as given, an
alternative equal to a knob value) run once: each block is keyed by its content, not its title
nor its strategy's label. Titles key the runs' random streams (``sim.core.streams``), so the
first title of a content is the one that runs, wherever the block appears.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sim.check.amplification import total_failure_block
from sim.check.battery import BATTERY, Incident
from sim.check.build import Settings, battery_block
from sim.check.service import Service
from sim.check.variants import AS_GIVEN, alternatives
from sim.settings.imported.layer import Knob, Layer

DEFAULT_REPETITIONS = 3  # runs per incident and arrangement: a verdict as "2/3 recovered"
# Runs per incident at each value of the knob: the sweep is the coarse map (5 values x 8 incidents),
# the battery the verdict; one run each keeps a default check near a minute on two cores.
DEFAULT_RANGE_REPETITIONS = 1


@dataclass(frozen=True)
class Swept:
    """The main knob a check sweeps: the layer it belongs to (its index) and the knob."""

    index: int
    layer: Layer
    knob: Knob

    def at(self, settings: Settings, value: Any) -> Settings:
        layers = list(settings.layers)
        layers[self.index] = replace(self.layer, entry=set_path(self.layer.entry, self.knob.path, value))
        return Settings(f"{self.knob.label}={value}", f"{self.layer.name}: {self.knob.label} = {value}",
                        tuple(layers))


def set_path(entry: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``entry`` with the dotted ``path`` set to ``value`` (tables on the way copied)."""
    head, _, rest = path.partition(".")
    out = dict(entry)
    out[head] = set_path(dict(entry.get(head) or {}), rest, value) if rest else value
    return out


def main_knob(layers: Sequence[Layer]) -> Swept | None:
    """The knob of the layer nearest the service that has one (a mesh's num_retries or budget,
    else the app's attempts); None when no layer names one."""
    for i in range(len(layers) - 1, -1, -1):
        if layers[i].knob is not None and layers[i].knob.values:
            return Swept(i, layers[i], layers[i].knob)
    return None


@dataclass
class Plan:
    """The check's simulations: blocks by title, and which title answers each question."""

    blocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    _by_content: dict[str, str] = field(default_factory=dict)
    settings: list[Settings] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    cells: dict[tuple[str, str], str] = field(default_factory=dict)  # (settings, incident) -> title
    swept: Swept | None = None
    range_cells: dict[tuple[int, str], str] = field(default_factory=dict)  # (value index, incident)
    failure: str = ""

    def add(self, title: str, block: dict[str, Any]) -> str:
        """The title that runs ``block``: ``title``, or an earlier block's of the same content."""
        key = json.dumps({k: v for k, v in block.items() if k != "title"}
                         | {"strategies": [{k: v for k, v in e.items() if k != "name"} for e in block["strategies"]]},
                         sort_keys=True)
        if key in self._by_content:
            return self._by_content[key]
        block = {**block, "title": title}
        self.blocks[title] = block
        self._by_content[key] = title
        return title

    @property
    def config_data(self) -> dict[str, Any]:
        return {"simulation": list(self.blocks.values())}


def make_plan(layers: Sequence[Layer], service: Service, *, repetitions: int = DEFAULT_REPETITIONS,
              seed: int = 0, battery: Sequence[Incident] = BATTERY, knob: bool = True,
              range_repetitions: int = DEFAULT_RANGE_REPETITIONS) -> Plan:
    """Every block of the check, deduplicated (see the module)."""
    plan = Plan()
    base = Settings(AS_GIVEN, "", tuple(layers))
    plan.failure = plan.add("total_failure", total_failure_block(base, service, seed))
    others, plan.skipped = alternatives(base, service)
    plan.settings = [base, *others]

    def battery_of(settings: Settings, label: str, runs: int = repetitions) -> dict[str, str]:
        return {incident.name: plan.add(f"{label}__{incident.name}",
                                        battery_block(settings, service, incident, runs, seed, ""))
                for incident in battery}

    for settings in plan.settings:
        for name, title in battery_of(settings, settings.name).items():
            plan.cells[(settings.name, name)] = title
    plan.swept = main_knob(layers) if knob else None
    if plan.swept is not None:
        for v, value in enumerate(plan.swept.knob.values):
            for name, title in battery_of(plan.swept.at(base, value), f"knob{v}", range_repetitions).items():
                plan.range_cells[(v, name)] = title
    return plan


def comparison_data(plan: Plan) -> dict[str, Any]:
    """The config the app opens (``check --app``): the battery under every arrangement, one
    simulation per (settings, incident), titled ``settings__incident``."""
    titles = dict.fromkeys(plan.cells.values())
    return {"simulation": [plan.blocks[t] for t in titles]}
