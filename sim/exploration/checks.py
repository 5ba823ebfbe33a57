"""Spec-wide rules re-checked after an explore or tune changes a key, and the resource limits
every cell of a map must respect.

Models validate their own parameters when ``dataclasses.replace`` rebuilds them; the rules that
``sim.settings.config`` applies to the simulation table itself (minimums of simulation keys, the bounds of
``sim.vocabulary.bounds`` on every number, outages and incidents in order and before the horizon, keys only replying
servers take) are repeated here for a spec. A test keeps the two in step by feeding the same
values through both. ``check_cells`` then puts every cell through ``sim.runs.resources``, as
``backoff-sim run`` puts a config's simulations, and bounds the whole map's events
(``sim.exploration.tune_checks`` does the same for a tune).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass

from sim.vocabulary.bounds import MAX_INTEGER, MAX_SEED, MAX_TIME, MIN_SPAN
from sim.vocabulary.errors import ConfigError, ParamError
from sim.policies.entries import seconds_per_unit
from sim.models.incidents import control_problems, schedule_problems
from sim.settings.spec import SimulationSpec

# Simulation keys: (lowest allowed value, whether the value itself may equal it).
_MINIMUMS: dict[str, tuple[float, bool]] = {
    "repeat": (1, True), "network_mu": (0, True), "network_sigma": (0, True),
    "work_to_duration": (0, True), "seed": (0, True),
    "horizon": (0, False), "timeout": (0, False), "bucket": (0, False),
}
_REPLYING_ONLY = ("horizon", "timeout", "bucket")


_SPANS = ("horizon", "timeout", "bucket")  # at least MIN_SPAN, as the loader requires
_BOUND_HINT = "larger times overflow or lose the clock's resolution"


def _check_number(key: str, value: float | int, low: float, inclusive: bool) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ParamError(key, f"must be a finite number, got {value!r}")
    if inclusive and not value >= low:
        raise ParamError(key, f"must be >= {low:g}, got {value!r}")
    if not inclusive and not value > low:
        raise ParamError(key, f"must be > {low:g}, got {value!r}")


def _check_bound(key: str, value: object) -> None:
    """The loader's ceiling on a number: |float| <= MAX_TIME, int <= MAX_INTEGER (seed: MAX_SEED)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        top = MAX_SEED if key == "seed" else MAX_INTEGER
        if value > top:
            raise ParamError(key, f"must be at most {top}, got {value!r}")
    elif isinstance(value, float) and abs(value) > MAX_TIME:
        raise ParamError(key, f"must be at most {MAX_TIME:g} in size, got {value:g}", _BOUND_HINT)


def _check_model_bounds(obj: object, prefix: str = "") -> None:
    """Every numeric parameter of a control, workload or strategy within the loader's bounds
    (and of a table among them: PoolServer's ``concurrency_limit.NAME``)."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        if is_dataclass(value):
            _check_model_bounds(value, f"{prefix}{f.name}.")
        else:
            _check_bound(prefix + f.name, value)


def check_spec(spec: SimulationSpec) -> None:
    """Raise ParamError (key named as in the config) if ``spec`` breaks a simulation-level rule."""
    for key, (low, inclusive) in _MINIMUMS.items():
        value = getattr(spec, key)
        if value is not None:
            _check_number(key, value, low, inclusive)
            _check_bound(key, value)
    for key in _SPANS:
        value = getattr(spec, key)
        if value is not None and value < MIN_SPAN:
            raise ParamError(key, f"must be >= {MIN_SPAN:g}, got {value!r}")
    for n in spec.clients:
        _check_number("clients", n, 1, True)
        _check_bound("clients", n)
    _check_bound("backlog", spec.backlog)
    if spec.backlog is not None and spec.backlog_overflow == "syn-retry" and seconds_per_unit(spec.time_unit) is None:
        raise ParamError("backlog", f"SYN retransmits beyond it are timed in seconds, but time_unit "
                                    f"{spec.time_unit!r} has none", 'set backlog_overflow = "drop"')
    _check_model_bounds(spec.control)
    _check_model_bounds(spec.workload)
    for i, s in enumerate(spec.strategies):
        _check_model_bounds(s.strategy, f"strategies[{i}].")
    if not spec.control.CAPS.replies:
        for key in _REPLYING_ONLY:
            if getattr(spec, key) is not None:
                raise ParamError(key, f"needs a server that replies; {spec.control.type_name} "
                                      "lets clients assume success")
    elif spec.bucket is not None and spec.horizon is not None and spec.bucket > spec.horizon:
        raise ParamError("bucket", f"must not exceed horizon ({spec.horizon:g}), got {spec.bucket:g}")
    previous_end = None
    for i, outage in enumerate(spec.outages):
        _check_number(f"outages[{i}].start", outage.start, 0, True)
        _check_number(f"outages[{i}].duration", outage.duration, 0, False)
        if previous_end is not None and outage.start < previous_end:
            raise ParamError(f"outages[{i}].start", f"overlaps or precedes the previous outage "
                                                     f"(ends at {previous_end:g})")
        if spec.horizon is not None and outage.start >= spec.horizon:
            raise ParamError(f"outages[{i}].start", f"is at or after the horizon ({spec.horizon:g})")
        if outage.start + outage.duration > MAX_TIME:
            raise ParamError(f"outages[{i}].duration", f"ends after {MAX_TIME:g}, got start + duration = "
                                                        f"{outage.start + outage.duration:g}", _BOUND_HINT)
        previous_end = outage.end
    for suffix, message, hint in [*schedule_problems(spec.incidents, spec.outages, spec.horizon),
                                  *control_problems(spec.control, spec.incidents)]:
        raise ParamError(f"incidents{suffix}", message, hint)
    for i, tier in enumerate(spec.tiers):
        where = f"tiers[{i}]."
        _check_model_bounds(tier.control, where)
        _check_model_bounds(tier.retry.strategy, f"{where}retry.")
        if tier.timeout is not None and tier.timeout < MIN_SPAN:
            raise ParamError(f"{where}timeout", f"must be >= {MIN_SPAN:g}, got {tier.timeout!r}")
        for suffix, message, hint in [*schedule_problems(tier.incidents, tier.outages, spec.horizon),
                                      *control_problems(tier.control, tier.incidents)]:
            raise ParamError(f"{where}incidents{suffix}", message, hint)


def check_cells(plans: Sequence, *, workers: int, force: bool = False,
                memory: tuple[int | None, int | None] | None = None,
                progress: Callable[[int, int], None] | None = None) -> None:
    """Refuse (ConfigError, one line per problem) maps whose cells the machine cannot hold or
    finish: each cell's spec goes through ``sim.runs.resources.check_resources`` as a simulation of
    ``backoff-sim run`` would (the first failing cell of each map is named, with how many more
    fail), and, unless ``force``, the map's cells together must stay under the events limit.
    ``progress(done, total)`` follows the cells checked (a 10⁶-cell map takes most of a minute)."""
    from sim.runs.resources import EVENTS_LIMIT, check_resources, estimate

    errors: list[ConfigError] = []
    total = sum(len(plan.cells) for plan in plans)
    checked = 0
    for plan in plans:
        failed: list[tuple[int, ConfigError]] = []
        events = 0
        for position, cell in enumerate(plan.cells):
            try:
                check_resources([cell.spec], workers=workers, force=force, memory=memory)
            except ConfigError as exc:
                failed.append((position, exc))
            else:
                events += estimate(cell.spec, workers).events  # in the same pass, also followed
            checked += 1
            if progress is not None:
                progress(checked, total)
        if failed:
            position, exc = failed[0]
            more = f" (and {len(failed) - 1} more cells)" if len(failed) > 1 else ""
            errors.append(ConfigError(f"the cell {plan.cell_label(position)}{more}: {exc.message}",
                                      file=plan.file, simulation=plan.title, key=exc.key, hint=exc.hint))
            continue
        if not force and events > EVENTS_LIMIT:
            errors.append(ConfigError(
                f"the map's {len(plan.cells)} cells would simulate at least {events:.2g} events, more than "
                f"the limit of {EVENTS_LIMIT:.0e} (about an hour on 2 cores)", file=plan.file,
                simulation=plan.title, key="explore.axes",
                hint="fewer axis values, repetitions or clients, or pass --force to run it anyway"))
    if errors:
        raise ConfigError.combine(errors)

