"""The config a check runs: the layers stacked in front of the service, one ``[[simulation]]``
per (settings, incident).

The app layer (the first) is the clients' strategy and timeout. Every layer below it is a
tier (``sim.models.tiers``): a pass-through proxy (``PROXY``: no service time to speak of,
workers enough never to queue) whose calls to the tier below carry that layer's retries and
per-attempt timeout. The last layer's calls reach the service, which bears the incidents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sim.check.battery import BUCKET, Incident
from sim.check.service import Service, think_time
from sim.settings.imported.layer import Layer

# A sidecar or SDK as a server: 1 µs of work, workers for every call in flight at once.
PROXY = {"control": "PoolServer", "workers": 1000, "service_time": 0.001}


@dataclass(frozen=True)
class Settings:
    """One arrangement of the layers the check runs: ``name`` (the CSV's ``settings``), what
    differs from the settings as given (empty for them), the layers, and the service's fleet
    keys this arrangement changes."""

    name: str
    change: str
    layers: tuple[Layer, ...]
    fleet: dict[str, Any] | None = None


def service_fleet(service: Service, settings: Settings) -> dict[str, Any] | None:
    """The service's fleet with the keys the layers imply (outlier detection...) and the
    arrangement's own; None without a fleet (a single host has no other to retry on)."""
    if service.fleet is None:
        return None
    fleet = dict(service.fleet)
    for layer in settings.layers:
        fleet.update(layer.fleet)  # what the layers imply (a sidecar's outlier detection...)
    fleet.update(settings.fleet or {})
    return fleet


def layer_entry(layer: Layer) -> dict[str, Any]:
    """The layer's strategy entry as the config takes it: its whole call's deadline, where the
    source sets one, as a ``Deadline`` policy (no attempt starts after it)."""
    entry = {k: v for k, v in layer.entry.items() if k != "name"}
    if layer.total_timeout is not None:
        entry["policies"] = [*entry.get("policies", []), {"type": "Deadline", "total": float(layer.total_timeout)}]
    return entry


def strategy_entry(layer: Layer, label: str) -> dict[str, Any]:
    return {**layer_entry(layer), "name": label}


def simulation(title: str, settings: Settings, service: Service, incidents: Sequence[dict[str, Any]],
               horizon: float, repeat: int, seed: int) -> dict[str, Any]:
    """One ``[[simulation]]`` block: ``settings`` in front of ``service`` under ``incidents``
    (entries of its ``incidents``, outages as capacity 0)."""
    app, below = settings.layers[0], settings.layers[1:]
    block: dict[str, Any] = {
        "title": title, "seed": seed, "clients": [service.clients], "repeat": repeat,
        **service.network, "work_to_duration": 0.0,
        "workload": "open", "think_time": think_time(service), "horizon": horizon, "bucket": BUCKET,
    }
    if app.timeout is not None:
        block["timeout"] = float(app.timeout)
    block["strategies"] = [strategy_entry(app, settings.name)]
    fleet = service_fleet(service, settings)
    bottom = {**service.server, "incidents": list(incidents)}
    if fleet is not None:
        bottom["fleet"] = fleet
    if not below:
        block.update(bottom)
        return block
    block.update(PROXY)
    tiers = []
    for i, layer in enumerate(below):
        tier: dict[str, Any] = dict(bottom) if i == len(below) - 1 else dict(PROXY)
        tier["retry"] = layer_entry(layer)
        if layer.timeout is not None:
            tier["timeout"] = float(layer.timeout)
        tiers.append(tier)
    block["tiers"] = tiers
    return block


def battery_block(settings: Settings, service: Service, incident: Incident, repeat: int, seed: int,
                  title: str) -> dict[str, Any]:
    """One incident of the battery: at the service, or (a load spike) in the clients' arrivals."""
    block = simulation(title, settings, service, [] if incident.is_surge else [incident.entry()],
                       incident.horizon, repeat, seed)
    # think_time is ms per client: the whole workload's calls per second is clients / it × 1000.
    block.update(incident.workload_keys(service.clients / block["think_time"] * 1000.0))
    return block
