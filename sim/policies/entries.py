"""A config's strategy entry with its policies: ``policies = [...]`` and ``{ preset = "NAME" }``.

The config layer hands each ``strategies`` entry (and a simulation's own ``policies`` list) to
:func:`parse_entry`, which returns the strategy's table (for the config's usual strategy checks),
the validated policies and every mistake found, each a ``ParamError`` whose key is relative to
the entry (``policies[2].capacity``, ``preset``). Nothing here knows the file or the simulation:
the caller prefixes its own location, so messages stay one line naming the whole key.

Time conversion: presets keep their defaults in seconds, and policies that count per second
(breakers, rate limiters, budgets) take ``unit_seconds``. Both come from the simulation's
``time_unit`` (:func:`seconds_per_unit`); a unit with no length in seconds ("tick") needs an
explicit ``unit_seconds`` in the entry or the policy, else it is one mistake naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from sim.vocabulary.errors import ParamError
from sim.vocabulary.units import UNIT_SECONDS, seconds_per_unit  # noqa: F401 (re-exported: their old home)
from sim.policies.chain import hedging_from_dict, policy_from_dict, policy_with_mistakes
from sim.models.hedging import Hedging, hedging_mistakes
from sim.policies.circuit_breaker import CircuitBreaker
from sim.policies.presets import PRESETS, expand_preset
from sim.policies.seam import POLICIES, Policy

ENTRY_KEYS = ("type", "preset", "name", "policies", "unit_seconds", "hedging")


@dataclass(frozen=True)
class Entry:
    """One strategy entry, expanded: the strategy's table, its policies, the preset it came from."""

    strategy: dict[str, Any]
    policies: tuple[Policy, ...]
    preset: str | None = None
    name: str | None = None
    hedging: Hedging | None = None


HEDGING_KEYS = ("max_attempts", "delay", "budget")


def parse_hedging(raw: Any) -> tuple[Hedging | None, list[ParamError]]:
    """An entry's ``hedging = { max_attempts, delay, budget }`` (times in the config's unit),
    with every mistake (keys named ``hedging.KEY``)."""
    if not isinstance(raw, Mapping):
        return None, [ParamError("hedging", f"must be an inline table like {{ max_attempts = 2, delay = 50.0 }}, "
                                            f"got {raw!r}")]
    problems = [ParamError(f"hedging.{key}", "is not a hedging key", f"hedging takes {', '.join(HEDGING_KEYS)}")
                for key in raw if key not in HEDGING_KEYS]
    args: dict[str, Any] = {}
    for key in HEDGING_KEYS:
        if key not in raw:
            if key != "budget":
                problems.append(ParamError(f"hedging.{key}", "is missing", "hedging = { max_attempts = 2, delay = 50.0 }"))
            continue
        value = raw[key]
        whole = key == "max_attempts"
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
            problems.append(ParamError(f"hedging.{key}", f"must be {'an integer' if whole else 'a number'}, got {value!r}"))
            continue
        args[key] = int(value) if whole else float(value)
    found = hedging_mistakes(args.get("max_attempts"), args.get("delay"), args.get("budget"))
    problems += [ParamError(f"hedging.{exc.key}", exc.message, exc.hint) for exc in found]
    if problems:
        return None, problems
    return Hedging(args["max_attempts"], args["delay"], args.get("budget")), []


def _needs_seconds(raw: Mapping[str, Any]) -> bool:
    """Policies whose defaults or rates are in seconds (a brooker breaker has none)."""
    cls = POLICIES.get(raw.get("type")) if isinstance(raw.get("type"), str) else None
    if cls is None or "unit_seconds" not in {f.name for f in fields(cls)}:
        return False
    return not (cls is CircuitBreaker and raw.get("kind") == "brooker")


def parse_policies(raw: Any, unit_seconds: float | None, key: str = "policies",
                   time_unit: str = "ms") -> tuple[list[Policy], list[ParamError]]:
    """``[{ type = "TokenBucket", ... }, ...]`` → policies and mistakes (keys like ``policies[1].cost``).

    A policy that takes ``unit_seconds`` gets the simulation's unless it gives its own.
    """
    if raw is None:
        return [], []
    if not isinstance(raw, list) or not all(isinstance(p, dict) for p in raw):
        return [], [ParamError(key, 'must be a list of inline tables like { type = "TokenBucket" }')]
    policies: list[Policy] = []
    problems: list[ParamError] = []
    for position, table in enumerate(raw):
        where = f"{key}[{position}]"
        table = dict(table)
        if "unit_seconds" not in table and _needs_seconds(table):
            if unit_seconds is None:
                problems.append(ParamError(f"{where}.unit_seconds", f"is needed: time_unit {time_unit!r} has no length in seconds",
                                           "give unit_seconds = seconds per time unit"))
                continue
            table["unit_seconds"] = unit_seconds
        policy, found = policy_with_mistakes(table)
        problems += [ParamError(f"{where}.{exc.key}", exc.message, exc.hint) for exc in found]
        if policy is not None:
            policies.append(policy)
    return policies, problems


def parse_entry(table: Mapping[str, Any], unit_seconds: float | None, time_unit: str = "ms",
                shared: Sequence[Policy] = ()) -> tuple[Entry | None, list[ParamError]]:
    """A ``strategies`` entry → its Entry (None if it has mistakes) and every mistake.

    ``{ type = ..., policies = [...] }`` keeps the strategy's table for the config's own checks;
    ``{ preset = NAME, setting = value, ..., policies = [...] }`` expands the preset (settings in
    the config's unit) and appends the entry's own policies to the preset's. ``shared`` (the
    simulation's ``policies``) come last, after every entry's own.
    """
    problems: list[ParamError] = []
    if "preset" in table and "type" in table:
        return None, [ParamError("preset", "and 'type' cannot both be given",
                                 "a preset names its strategy; override its settings instead")]
    own_unit = table.get("unit_seconds", unit_seconds)
    if "unit_seconds" in table and (isinstance(own_unit, bool) or not isinstance(own_unit, (int, float))
                                     or not own_unit > 0):
        problems.append(ParamError("unit_seconds", f"must be a number > 0, got {own_unit!r}"))
        own_unit = unit_seconds
    policies, found = parse_policies(table.get("policies"), own_unit, "policies", time_unit)
    problems += found
    hedging = None
    if "hedging" in table:
        hedging, found = parse_hedging(table["hedging"])
        problems += found
    name = table.get("name")
    preset = None
    if "preset" in table:
        settings = {k: v for k, v in table.items() if k not in ("policies", "unit_seconds", "name", "hedging")}
        if own_unit is None:
            problems.append(ParamError("unit_seconds", f"is needed: time_unit {time_unit!r} has no length in seconds",
                                       "give unit_seconds = seconds per time unit in the preset entry"))
            return None, problems
        data = None
        while data is None:
            try:
                data = expand_preset(settings, float(own_unit))
            except ParamError as exc:
                if any(p.key == exc.key for p in problems):
                    return None, problems  # its default refused as well (a required setting): said once
                hint = exc.hint
                if exc.key == "preset":
                    hint = f"choose one of {', '.join(PRESETS)}"
                problems.append(ParamError(exc.key, exc.message, hint))
                if exc.key == "preset" or exc.key not in settings:
                    return None, problems
                del settings[exc.key]  # its default taken, so the other settings are checked too
        if problems:
            return None, problems
        preset = data["preset"]
        try:
            preset_policies = [policy_from_dict(p) for p in data["policies"]]
        except ParamError as exc:  # an override the policy refuses (e.g. max_tokens > 1000)
            problems.append(ParamError(exc.key, exc.message, exc.hint))
            return None, problems
        policies = preset_policies + policies
        strategy = dict(data["strategy"])
        if data.get("hedging") is not None:
            if "hedging" in table:
                problems.append(ParamError("hedging", f"is set by preset {preset!r} already",
                                           "give the preset's own settings instead"))
                return None, problems
            try:
                hedging = hedging_from_dict(data["hedging"])
            except ParamError as exc:
                problems.append(ParamError(exc.key, exc.message, exc.hint))
                return None, problems
    else:
        strategy = {k: v for k, v in table.items() if k not in ("policies", "unit_seconds", "hedging")}
        if "unit_seconds" in table:
            problems.append(ParamError("unit_seconds", "applies to presets only",
                                       "give unit_seconds inside the policy that needs it"))
    if problems:
        return None, problems
    return Entry(strategy, (*policies, *shared), preset, name if isinstance(name, str) else None, hedging), []


def preset_label(entry: Entry, table: Mapping[str, Any]) -> str:
    """A preset entry's label without a name: the preset, with the settings given (``grpc(throttling=True)``)."""
    settings = {k: v for k, v in table.items() if k not in ENTRY_KEYS}
    if not settings:
        return str(entry.preset)
    inner = ", ".join(f"{k}={v}" for k, v in settings.items())
    return f"{entry.preset}({inner})"
