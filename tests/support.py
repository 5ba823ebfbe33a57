"""Small builders shared by the tests: a validated spec from a few keyword arguments."""

from __future__ import annotations

from typing import Any

from sim.config import SimulationSpec, parse_config

CONTROL_PARAMS: dict[str, dict[str, Any]] = {
    "LockingServer": {"write_mu": 2.0, "write_sigma": 1.0},
    "WriteOnlyOCCServer": {"write_mu": 2.0, "write_sigma": 1.0},
    "ReadWriteOCCServer": {"write_mu": 1.0, "write_sigma": 0.5},
    "ThrottlingServer": {"window": 20.0, "limit": 3},
}


def sim_table(control: str = "LockingServer", strategies: list[dict[str, Any]] | None = None,
              **overrides: Any) -> dict[str, Any]:
    """One ``[[simulation]]`` table as a dict, with small, fast defaults."""
    table: dict[str, Any] = {
        "title": "t", "clients": [1, 5], "repeat": 2, "network_mu": 10.0, "network_sigma": 2.0,
        "work_to_duration": 1.0, "control": control, **CONTROL_PARAMS.get(control, {}),
        "strategies": strategies or [{"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}],
    }
    table.update(overrides)
    return table


def make_spec(control: str = "LockingServer", strategies: list[dict[str, Any]] | None = None,
              **overrides: Any) -> SimulationSpec:
    """A validated ``SimulationSpec`` built through the real config parser."""
    return parse_config({"simulation": [sim_table(control, strategies, **overrides)]}).simulations[0]
