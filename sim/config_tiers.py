"""``[[simulation.tiers]]``: the servers below the one the clients call, validated into ``TierSpec``.

Each tier is a replying server (its control and that control's keys, as a simulation's), the
caller's ``retry`` entry (a strategy ``type`` or a ``preset``, with its own ``policies``), the
tier's own ``policies`` (after the entry's), its ``timeout`` per attempt, ``propagate_deadline``
and its ``incidents`` and ``outages``. Keys are named ``tiers[i].KEY`` with ``i`` counting from 0
(tier ``i + 2``), as explore's key paths name them.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

from sim.bounds import MIN_SPAN
from sim.models import CONTROLS, STRATEGIES
from sim.models.controls import Control
from sim.policies.chain import ChainSpec
from sim.policies.entries import parse_entry, parse_policies, seconds_per_unit
from sim.spec import TierSpec

if TYPE_CHECKING:
    from sim.config import _Checker

TIER_KEYS = frozenset({"control", "timeout", "retry", "policies", "propagate_deadline", "incidents", "outages"})
# A tier without ``retry`` makes one attempt per call: retrying only at the top.
NO_RETRY = {"type": "NoBackoff", "max_attempts": 1}
RETRY_EXAMPLE = '{ type = "Constant", constant = 0.0, max_attempts = 4 }'


def replying_controls() -> str:
    return ", ".join(name for name, cls in CONTROLS.items() if cls.CAPS.replies)


def parse_tiers(check: _Checker, raw: Any, top: Control | None, horizon: float | None,
                time_unit: str) -> tuple[TierSpec, ...]:
    """The ``tiers`` array of a simulation (``()`` when absent or wrong; mistakes recorded)."""
    from sim.config import _parse_incidents, _parse_outages

    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw or not all(isinstance(t, dict) for t in raw):
        check.report("tiers", "must be an array of tables, written [[simulation.tiers]]")
        return ()
    before = len(check.errors)
    if top is not None:
        problem = top.tier_problem(calls_below=True)
        if problem is not None:
            check.report("control", f"{problem}; it cannot call [[simulation.tiers]]",
                         f"a tier chain starts at a replying server: {replying_controls()}")
    tiers: list[TierSpec] = []
    for i, table in enumerate(raw):
        tier = check.under(f"tiers[{i}].")
        control = _tier_control(tier, table, i, calls_below=i < len(raw) - 1)
        timeout = (tier.attempt(tier.number, table, "timeout", positive=True, minimum=MIN_SPAN)
                   if "timeout" in table else None)
        chain = _retry(tier, table, time_unit)
        propagate = table.get("propagate_deadline", False)
        if not isinstance(propagate, bool):
            tier.report("propagate_deadline", f"must be true or false, got {propagate!r}")
        outages = _parse_outages(tier, table.get("outages"), horizon)
        incidents = _parse_incidents(tier, table.get("incidents"), horizon, outages, control)
        if control is not None and chain is not None:
            tiers.append(TierSpec(control=control, retry=chain, timeout=timeout,
                                  propagate_deadline=propagate is True, incidents=incidents,
                                  outages=outages))
    return tuple(tiers) if len(check.errors) == before else ()


def _tier_control(tier: _Checker, table: dict[str, Any], i: int, calls_below: bool) -> Control | None:
    from sim.config import _resolve_paths, _suggest

    name = tier.attempt(tier.string, table, "control")
    cls = CONTROLS.get(name) if name is not None else None
    if name is not None and cls is None:
        tier.report("control", f"unknown control {name!r}",
                    _suggest(name, CONTROLS) or f"choose one of {replying_controls()}")
    control_keys = {f.name for f in fields(cls)} if cls is not None else set()
    for key in table:
        if key not in TIER_KEYS and key not in control_keys and cls is not None:
            tier.report(key, f"is not a tier key or a parameter of {name}",
                        _suggest(key, TIER_KEYS | control_keys)
                        or f"a tier takes {', '.join(sorted(TIER_KEYS))} and its control's keys")
    if cls is None:
        return None
    if not cls.CAPS.replies:
        tier.report("control", f"{name} is a contention control: it lets clients assume success, so it "
                    f"cannot be tier {i + 2}", f"a tier is a replying server: {replying_controls()}")
        return None
    args = tier.params(cls, {k: v for k, v in table.items() if k in control_keys}, name, skip=set())
    if args is None:
        return None
    _resolve_paths(tier.file, args, getattr(cls, "PATH_KEYS", ()))
    control = tier.build(cls, args)
    if control is not None:
        problem = control.tier_problem(calls_below)
        if problem is not None:
            tier.report("control", f"{problem}, so it cannot be tier {i + 2} of {i + 3} or more",
                        "the last tier may be any replying server")
            return None
    return control


def _retry(tier: _Checker, table: dict[str, Any], time_unit: str) -> ChainSpec | None:
    """The caller's chain: the ``retry`` entry, then the tier's own ``policies``."""
    before = len(tier.errors)
    unit = seconds_per_unit(time_unit)
    shared, problems = parse_policies(table.get("policies"), unit, "policies", time_unit)
    for p in problems:
        tier.report(p.key, p.message, p.hint)
    raw = table.get("retry", NO_RETRY)
    if not isinstance(raw, dict):
        tier.report("retry", f"must be an inline table like {RETRY_EXAMPLE}")
        return None
    if "type" not in raw and "preset" not in raw:
        tier.report("retry", "has no 'type' (or 'preset')", f"e.g. retry = {RETRY_EXAMPLE}")
        return None
    entry, problems = parse_entry(raw, unit, time_unit, tuple(shared))
    for p in problems:
        tier.report(f"retry.{p.key}", p.message, p.hint)
    if entry is None:
        return None
    type_name = entry.strategy["type"]
    cls = STRATEGIES.get(type_name) if isinstance(type_name, str) else None
    if cls is None:
        tier.report("retry.type", f"unknown strategy {type_name!r}", f"choose one of {', '.join(STRATEGIES)}")
        return None
    if cls.FROM_THINK_TIME:
        tier.report("retry.type", f"{type_name} starts its backoff from a client's think time, "
                    "and a tier has none", "choose another strategy")
        return None
    args = tier.params(cls, entry.strategy, type_name, skip={"type", "name"}, prefix="retry.")
    strategy = tier.build(cls, args, prefix="retry.") if args is not None else None
    if strategy is None or len(tier.errors) > before:
        return None
    return ChainSpec(strategy, entry.policies)
