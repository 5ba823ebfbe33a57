"""Dotted paths to scalar keys of a validated ``SimulationSpec``, and setting them.

A path is written as in the TOML it comes from: a simulation key (``horizon``, ``repeat``), a
parameter of the control or the workload by its bare name (``concurrency_limit``,
``think_time``; ``control.NAME`` and ``workload.NAME`` also work), or an element of a list
(``outages[0].duration``, ``incidents[0].duration``, ``strategies[1].base``; indices count from 0);
a tier's server parameter by its bare name (``tiers[1].failure_rate``), or a tier's own key
(``tiers[0].timeout``, ``tiers[0].incidents[0].duration``). A policy is an element
of a strategy's chain as the strategy runs it (the preset's policies, the entry's own, then the
simulation's: ``strategies[1].policies[0].percent``), or of the simulation's own list, which
sets it in every strategy (``policies[0].capacity``). A strategy entry's hedging is
``strategies[0].hedging.delay`` (or ``max_attempts``, ``budget``). ``clients`` is the single client count of
a cell. Setting a key rebuilds the frozen dataclasses on the way with
``dataclasses.replace``, so every model re-validates itself; spec-wide rules are in ``checks``.
"""

from __future__ import annotations

import math
import re
import typing
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from sim.vocabulary.errors import ParamError
from sim.models.strategies import Strategy
from sim.policies.chain import ChainSpec
from sim.policies.seam import Policy
from sim.settings.spec import SimulationSpec, StrategySpec, TierSpec

Step = typing.Union[str, int]

_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")
_INDEX = re.compile(r"\[(\d+)\]")


class PathError(ValueError):
    """A path that does not name a numeric key of the spec (``message`` and ``hint``)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message if hint is None else f"{message} ({hint})")


@dataclass(frozen=True)
class KeyPath:
    """A resolved path: its text, the attribute/index steps from the spec, and the value's type."""

    text: str
    steps: tuple[Step, ...]
    integer: bool

    def get(self, spec: SimulationSpec) -> float | int | None:
        """The key's value in ``spec`` (``clients``: the only client count, or the largest)."""
        if self.steps == ("clients",):
            return spec.max_clients
        if self.steps[0] == "policies":  # the simulation's own: the same in every strategy
            return getattr(shared_chain(spec)[self.steps[1]], str(self.steps[2]))
        value: Any = spec
        for step in self.steps:
            value = value[step] if isinstance(step, int) else getattr(value, step)
        return value

    def coerce(self, value: Any) -> float | int:
        """``value`` as the key's type; ParamError for a non-number or a fraction for an integer."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParamError(self.text, f"must be a number, got {value!r}")
        if self.integer:
            # An int as it is (a float round trip would turn 2**64 - 1 into 2**64); a float only
            # when whole.
            if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
                raise ParamError(self.text, f"must be a whole number, got {value!r}")
            return int(value)
        return float(value)

    def set(self, spec: SimulationSpec, value: Any) -> SimulationSpec:
        """A copy of ``spec`` with this key set to ``value``; models re-validate (ParamError)."""
        value = self.coerce(value)
        if self.steps == ("clients",):
            return replace(spec, clients=(value,))
        try:
            if self.steps[0] == "policies":
                return _set_shared(spec, self.steps, value)
            return _rebuild(spec, self.steps, value)
        except ParamError as exc:
            raise ParamError(self.text, exc.message, exc.hint) from None
        except TypeError as exc:  # a model that rejects a value its constructor cannot take
            raise ParamError(self.text, str(exc)) from None


def _rebuild(obj: Any, steps: tuple[Step, ...], value: Any) -> Any:
    if not steps:
        return value
    head, rest = steps[0], steps[1:]
    if isinstance(head, int):
        items = list(obj)
        items[head] = _rebuild(items[head], rest, value)
        return tuple(items)
    return replace(obj, **{head: _rebuild(getattr(obj, head), rest, value)})


def _set_shared(spec: SimulationSpec, steps: tuple[Step, ...], value: Any) -> SimulationSpec:
    """``policies[i].NAME``: the simulation's i-th own policy, set in every strategy's chain."""
    _, index, name = steps
    position = len(spec.strategies[0].policies) - spec.shared_policies + int(index)
    policy = replace(spec.strategies[0].policies[position], **{str(name): value})
    strategies = []
    for s in spec.strategies:
        chain = list(s.policies)
        chain[len(chain) - spec.shared_policies + int(index)] = policy
        strategies.append(replace(s, policies=tuple(chain)))
    return replace(spec, strategies=tuple(strategies))


def _numeric_hint(owner: type, name: str) -> bool | None:
    """True for an int field, False for a float field, None for anything else."""
    hint = typing.get_type_hints(owner)[name]
    args = set(typing.get_args(hint)) or {hint}
    if float in args:
        return False
    if int in args and bool not in args:
        return True
    return None


def _split(text: str) -> list[Step]:
    steps: list[Step] = []
    for part in text.split("."):
        match = _SEGMENT.match(part.strip())
        if not match:
            raise PathError(f"cannot read the path {text!r}",
                            "write keys like think_time, outages[0].duration or strategies[1].base")
        steps.append(match.group(1))
        steps.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return steps


def _field_names(obj: Any) -> list[str]:
    """A model's keys: its fields, or those it says apply (``own_keys``: PoolServer's
    ``concurrency_limit`` takes only its algorithm's parameters)."""
    if not is_dataclass(obj):
        return []
    own = getattr(obj, "own_keys", None)
    return list(own()) if callable(own) else [f.name for f in fields(obj)]


def _numeric_fields(owner: type) -> list[str]:
    """The fields of ``owner`` an axis or a tune can vary (numbers, not flags or names)."""
    return [f.name for f in fields(owner) if _numeric_hint(owner, f.name) is not None]


def _entries(where: str, items: tuple[Any, ...]) -> str:
    """``policies[0] MaxAttempts, policies[1] RetryBudget``: the valid indices of a list."""
    name = where.rpartition(".")[2]
    def one(i: int, item: Any) -> str:
        if isinstance(item, Policy):
            return f"{name}[{i}] {item.type_name}"
        if isinstance(item, StrategySpec):
            return f"{name}[{i}] {item.label!r}"
        return f"{name}[{i}]"
    return ", ".join(one(i, item) for i, item in enumerate(items))


def shared_chain(spec: SimulationSpec) -> tuple[Policy, ...]:
    """The simulation's own ``policies``: the last ``shared_policies`` of every strategy's chain."""
    n = spec.shared_policies
    return spec.strategies[0].policies[len(spec.strategies[0].policies) - n:] if n else ()


def resolve(text: str, spec: SimulationSpec) -> KeyPath:
    """Resolve ``text`` against ``spec``; PathError says what is wrong and what is valid."""
    if not isinstance(text, str) or not text.strip():
        raise PathError(f"must be a key path, got {text!r}", "e.g. think_time or outages[0].duration")
    raw = _split(text.strip())
    if raw == ["clients"]:
        return KeyPath("clients", ("clients",), True)
    head = raw[0]
    spec_fields = {f.name for f in fields(SimulationSpec)}
    if head not in spec_fields and head != "policies":
        if head in _field_names(spec.control):
            raw = ["control", *raw]
        elif head in _field_names(spec.workload):
            raw = ["workload", *raw]
        else:
            known = sorted(spec_fields - {"title", "control", "workload", "strategies", "outages", "incidents", "clients",
                                          "shared_policies", "policies", "source", "clients_key",
                                          "soft_limits", "time_unit", "tiers"}
                           | set(_field_names(spec.control)) | set(_field_names(spec.workload)))
            raise PathError(f"{head!r} is not a key of this simulation",
                            f"simulation keys: {', '.join(known)}; or outages[i].start|duration, "
                            "incidents[i].start|duration|capacity|slowdown|error_rate, "
                            "strategies[i].PARAM, strategies[i].policies[j].PARAM, policies[j].PARAM, "
                            "tiers[i].PARAM (its server's), tiers[i].timeout, tiers[i].incidents[j].start|duration|..., clients")
    steps: list[Step] = []
    obj: Any = spec
    owner: type = SimulationSpec
    obj_owner: Any = spec
    last: str | None = None
    where = ""  # the path so far, for messages
    for step in raw:
        if isinstance(step, int):
            if not isinstance(obj, tuple):
                raise PathError(f"{where!r} is not a list", f"drop [{step}]")
            if step >= len(obj):
                if not obj:
                    raise PathError(f"{where}[{step}] does not exist: {where} is empty", _empty_hint(where))
                count = f"{len(obj)} {'entry' if len(obj) == 1 else 'entries'}"
                raise PathError(f"{where}[{step}] does not exist: {where} has {count}",
                                f"choose {_entries(where, obj)}; indices count from 0")
            obj = obj[step]
            steps.append(step)
            where += f"[{step}]"
            continue
        if obj is spec and step == "policies":
            obj = shared_chain(spec)  # the simulation's own policies, in every strategy's chain
            steps.append(step)
            last, where = step, step
            continue
        if isinstance(obj, StrategySpec) and step not in ("label", "policies", "hedging"):
            obj = obj.strategy  # strategies[i].base means the strategy's parameter
            steps.append("strategy")
        if isinstance(obj, ChainSpec) and step not in _field_names(obj):
            obj = obj.strategy  # tiers[i].retry.max_attempts means the retry strategy's
            steps.append("strategy")
        if isinstance(obj, TierSpec) and step not in _field_names(obj):
            obj = obj.control  # tiers[i].workers means the tier's server's parameter
            steps.append("control")
        if isinstance(obj, tuple):
            raise PathError(f"{where!r} is a list", f"pick an element, e.g. {where}[0].{step}")
        names = _field_names(obj)
        if step not in names:
            what = type(obj).__name__
            numeric = _numeric_fields(type(obj)) if is_dataclass(obj) else []
            hint = None
            if isinstance(obj, (Policy, Strategy)) and numeric:
                hint = f"its numeric keys: {', '.join(numeric)}"
            elif names:
                hint = f"{what} has: {', '.join(names)}"
            if obj is None and where:
                hint = f"{where} is not set in this simulation; give it in the config first"
            raise PathError(f"{step!r} is not a key of {where} ({what})" if where
                            else f"{step!r} is not a key of {what}", hint)
        owner, last, obj_owner = type(obj), step, obj
        obj = getattr(obj, step)
        steps.append(step)
        where = f"{where}.{step}" if where else step
    if isinstance(obj, tuple) or is_dataclass(obj):
        raise PathError(f"{text!r} names a table or a list, not a number", "name one of its numeric keys")
    kind = _numeric_hint(owner, last) if last is not None else None
    if kind is None:
        numeric = [name for name in _numeric_fields(owner) if name in _field_names(obj_owner)]
        raise PathError(f"{text!r} is not a numeric key",
                        f"numeric keys of {where.rpartition('.')[0] or 'the simulation'} ({owner.__name__}): "
                        f"{', '.join(numeric)}" if numeric else "explore and tune vary numbers only")
    return KeyPath(text.strip(), tuple(steps), kind)


def _empty_hint(where: str) -> str:
    if where == "policies":
        return ("the simulation has no policies = [...] of its own; "
                "a strategy's are strategies[i].policies[j].PARAM")
    if where.endswith(".policies"):
        return f"{where.rpartition('.')[0]} has no policies; add policies = [...] to its entry"
    return "indices count from 0"
