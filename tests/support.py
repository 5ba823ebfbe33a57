"""Small builders shared by the tests: a validated spec from a few keyword arguments."""

from __future__ import annotations

import json
from typing import Any

from sim.config import parse_config
from sim.core import events as ev
from sim.core.engine import Run
from sim.spec import SimulationSpec

# A recorded event as the invariant tests read it: (time, client, event name, integer detail).
Event = tuple[float, int, str, int]


def decode(run: Run) -> list[Event]:
    """A recorded run's events with their names."""
    out = []
    for i in range(len(run.history)):
        t, c, code, detail = run.history.event(i)
        out.append((t, c, ev.EVENT_NAMES[code], detail))
    return out


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


def toml_value(value: Any) -> str:
    """A Python value written as TOML (enough for configs: numbers, strings, lists, inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # TOML has no surrogate-pair escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def toml_text(*tables: dict[str, Any], top: dict[str, Any] | None = None) -> str:
    """A config file's text: top-level keys, then one [[simulation]] block per table."""
    lines = [f"{k} = {toml_value(v)}" for k, v in (top or {}).items()]
    for table in tables:
        lines += ["", "[[simulation]]"] + [f"{k} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"
