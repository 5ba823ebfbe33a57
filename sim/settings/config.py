"""Load and validate simulation configs: TOML → checked, frozen specs the engine consumes.

All validation happens here, in one place, with one specific message per mistake that names the
file, the simulation and the key. The engine never sees a raw dict. Files in the
``backoff-simulator`` reference format load unchanged.
"""

from __future__ import annotations

import difflib
import re
import sys
import typing
from collections.abc import Callable, Sequence
from dataclasses import MISSING, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from sim.vocabulary.bounds import MAX_INTEGER, MAX_SEED, MAX_TIERS, MAX_TIME, MIN_SPAN
from sim.vocabulary.errors import ConfigError, ParamError, build_every_mistake
from sim.settings.extends import resolve_extends
from sim.settings.fleet import (absorb_incidents, parse_fleet, parse_host_incidents, parse_host_outages, split_incidents,
                                whole_positions)
from sim.vocabulary.inputs import InputFileError, read_limited
from sim.models import CONTROLS, STRATEGIES, WORKLOADS
from sim.models.clients import BACKOFF_FROM, workload_problem
from sim.models.controls import Control
from sim.models.outage import ABANDONED_RULES, BACKLOG_OVERFLOWS, DEFAULT_BACKLOG, UNBOUNDED
from sim.models.incidents import KINDS as INCIDENT_KINDS, Incident, control_problems, schedule_problems
from sim.models.strategies import Strategy
from sim.models.workloads import Outage, Workload
from sim.models.open_rate import RATE_KEYS, capacity_per_unit, think_time
from sim.models.rate_profile import RatePoint, order_problem
from sim.policies.chain import ChainSpec
from sim.models.hedging import Hedging
from sim.policies.entries import parse_entry, parse_policies, preset_label, seconds_per_unit
from sim.policies.presets import PRESETS
from sim.policies.seam import Policy
from sim.settings.spec import Config, SimulationSpec, StrategySpec, TierSpec
from sim.vocabulary.units import DEFAULT_TIME_UNIT, time_unit_problem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

SAMPLE_CONFIG = Path(__file__).resolve().parent.parent / "sample.toml"  # sim/sample.toml, the bundled one
MAX_CLIENT_VALUES = 20

_SIMULATION_KEYS = {
    "title", "max_clients", "clients", "repeat", "network_mu", "network_sigma", "incidents",
    "work_to_duration", "control", "strategies", "seed",
    "workload", "horizon", "timeout", "outages", "bucket", "backlog", "time_unit", "policies",
    "backlog_overflow", "abandoned", "tiers", "extends", "fleet", "warmup", "rate", "load",
    "backoff_from",
}
_WORKLOAD_KEYS: dict[str, str] = {}  # key -> the first workload that takes it
for _name, _cls in WORKLOADS.items():
    for _f in fields(_cls):
        _WORKLOAD_KEYS.setdefault(_f.name, _name)
DEFAULT_WORK_TO_DURATION = 1.0
# A config is a few kilobytes; anything near this is not one (and is not read whole into memory).
MAX_CONFIG_BYTES = 16 * 2**20
T = TypeVar("T")
_TOP_LEVEL_KEYS = {"simulation", "seed", "time_unit"}
# Sub-tables of a [[simulation]] that another module parses from the same document
# (``[simulation.explore]`` and ``[simulation.tune]``: sim.exploration); the spec ignores them.
EXTENSION_TABLES = frozenset({"explore", "tune"})


def default_client_counts(max_clients: int) -> tuple[int, ...]:
    """Up to 20 values from 1 to ``max_clients``, always both ends (the reference's spacing)."""
    if max_clients <= MAX_CLIENT_VALUES:
        return tuple(range(1, max_clients + 1))
    step = (max_clients - 1) / (MAX_CLIENT_VALUES - 1)
    return tuple(round(1 + i * step) for i in range(MAX_CLIENT_VALUES))


def _suggest(word: str, choices: typing.Iterable[str]) -> str | None:
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {match[0]!r}?" if match else None


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


class _Checker:
    """Checks the keys of one simulation of one file; every mistake found is a ConfigError.

    ``fail`` raises; ``attempt`` runs one check and, when it fails, records the error in the
    shared ``errors`` list and returns None, so the loader goes on and reports every mistake of
    a config at once instead of one per try.
    """

    def __init__(self, file: str, simulation: str | None, errors: list[ConfigError] | None = None) -> None:
        self.file = file
        self.simulation = simulation
        self.errors: list[ConfigError] = [] if errors is None else errors

    def at(self, simulation: str | None) -> _Checker:
        """The same checker, locating its messages at another simulation."""
        return _Checker(self.file, simulation, self.errors)

    def under(self, prefix: str) -> _Checker:
        """A checker whose recorded mistakes name their keys under ``prefix`` (``tiers[0].``)."""
        return _PrefixedChecker(self, prefix)

    def error(self, key: str | None, message: str, hint: str | None = None) -> ConfigError:
        return ConfigError(message, file=self.file, simulation=self.simulation, key=key, hint=hint)

    def fail(self, key: str | None, message: str, hint: str | None = None) -> typing.NoReturn:
        raise self.error(key, message, hint)

    def report(self, key: str | None, message: str, hint: str | None = None) -> None:
        """Record a mistake and go on."""
        self.errors.append(self.error(key, message, hint))

    def attempt(self, check: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        """Run one check; on a ConfigError record it and return None."""
        try:
            return check(*args, **kwargs)
        except ConfigError as exc:
            self.errors.append(exc)
            return None

    def number(self, table: dict[str, Any], key: str, *, minimum: float | None = None,
               positive: bool = False, maximum: float = MAX_TIME) -> float:
        if key not in table:
            self.fail(key, "is missing", f"add e.g. {key} = 1.0")
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(key, f"must be a number, got {_type_name(value)} {value!r}")
        if value != value or value in (float("inf"), float("-inf")):
            self.fail(key, f"must be a finite number, got {value!r}")
        if positive and not value > 0:
            self.fail(key, f"must be > 0, got {value!r}")
        if minimum is not None and value < minimum:
            self.fail(key, f"must be >= {minimum:g}, got {value!r}")
        if abs(value) > maximum:
            shown = f"{value:g}" if isinstance(value, float) else f"an integer of {len(str(abs(value)))} digits"
            self.fail(key, f"must be at most {maximum:g} in size, got {shown}",
                      "larger times overflow or lose the clock's resolution")
        return float(value)

    def integer(self, table: dict[str, Any], key: str, *, minimum: int | None = None,
                maximum: int = MAX_INTEGER) -> int:
        if key not in table:
            self.fail(key, "is missing", f"add e.g. {key} = 10")
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be an integer, got {_type_name(value)} {value!r}")
        if minimum is not None and value < minimum:
            self.fail(key, f"must be >= {minimum}, got {value!r}")
        if value > maximum:
            self.fail(key, f"must be at most {maximum}, got {value!r}")
        return value

    def seed(self, table: dict[str, Any]) -> int:
        value = table["seed"]
        if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_SEED:
            self.fail("seed", f"must be a whole number from 0 to {MAX_SEED}, got {value!r}")
        return self.integer(table, "seed", minimum=0, maximum=MAX_SEED)

    def time_unit(self, table: dict[str, Any]) -> str:
        problem = time_unit_problem(table["time_unit"])
        if problem:
            self.fail("time_unit", problem)
        return table["time_unit"]

    def choice(self, table: dict[str, Any], key: str, choices: tuple[str, ...]) -> str:
        """One of ``choices`` (a string key with a fixed set of values)."""
        value = table[key]
        if value not in choices:
            self.fail(key, f"must be one of {', '.join(map(repr, choices))}, got {_type_name(value)} {value!r}",
                      _suggest(str(value), choices))
        return value

    def string(self, table: dict[str, Any], key: str) -> str:
        if key not in table:
            self.fail(key, "is missing")
        value = table[key]
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"must be a non-empty string, got {_type_name(value)} {value!r}")
        return value

    def model(self, cls: type[T], table: dict[str, Any], what: str, skip: set[str], prefix: str = "",
              paths: tuple[str, ...] = ()) -> T | None:
        """``cls`` built from ``table`` (``arguments``, then ``build``): every mistake recorded, the
        loader's (each key's type, unknown and missing keys) and the model's own, a faulty key's
        default or a stand-in taken so that one mistake hides none of the others. None when a
        value was refused (an unknown key or a faulty sub-table alone leave the model built, for
        the checks that need it; the caller refuses the config by its errors). ``paths``: the
        file keys, relative to the config file."""
        args, said = self.arguments(cls, table, what, skip, prefix)
        if args is None:
            return None
        _resolve_paths(self.file, args, paths)
        return self.build(cls, args, prefix, said=said)

    def arguments(self, cls: type, table: dict[str, Any], what: str, skip: set[str],
                  prefix: str = "") -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """Check ``table`` against the dataclass fields of ``cls`` (mistakes recorded, keys named
        ``prefix + key``): its keyword arguments and the keys whose mistakes were recorded
        (``said``, each with its stand-in: 1 for a number, else None). In their place the
        arguments hold their defaults (left out) or, for a required number, the stand-in, so the
        model can still check its other keys. None for the arguments when a required key has
        no stand-in."""
        hints = typing.get_type_hints(cls)
        known = {f.name: f for f in fields(cls)}
        out: dict[str, Any] = {}
        said: dict[str, Any] = {}
        for key, value in table.items():
            if key in skip:
                continue
            if key not in known:
                self.report(prefix + key, f"is not a parameter of {what}",
                            _suggest(key, known) or (f"{what} takes: {', '.join(known)}" if known else f"{what} takes no parameters"))
                continue
            hint = hints[key]
            args = (set(typing.get_args(hint)) - {type(None)}) or {hint}
            table_cls = next((a for a in args if is_dataclass(a)), None)
            if table_cls is not None:
                # A parameter that is a table of its own (PoolServer's concurrency_limit): its
                # keys checked alike, named ``key.sub``; a value not a table is left to the
                # model to refuse in its own words.
                value = table[key]
                # A faulty table is left out, unsaid: the model built without it goes on to the
                # checks that need the model (as a control's incidents), the config refused all
                # the same.
                checked = (self.model(table_cls, value, f"{what}'s {key}", skip=set(), prefix=f"{prefix}{key}.")
                           if isinstance(value, dict) else value)
                if checked is not None:
                    out[key] = checked
                continue
            if args == {str}:
                checked = self._located(prefix, self.string, table, key)
            elif int in args and float not in args:
                checked = self._located(prefix, self.integer, table, key)
            else:
                checked = self._located(prefix, self.number, table, key)
            if checked is not None:
                out[key] = checked
            else:
                said[key] = None
        for name, f in known.items():
            if name not in table and f.default is MISSING and f.default_factory is MISSING:
                self.report(prefix + name, f"is missing (required by {what})")
                said[name] = None
        for name in (n for n in known if n in said):
            kinds = set(typing.get_args(hints[name])) or {hints[name]}
            # a stand-in: most checks pass 1, and its key's mistake is said
            said[name] = 1.0 if float in kinds else 1 if int in kinds else None
            f = known[name]
            if f.default is MISSING and f.default_factory is MISSING:
                if said[name] is None:
                    return None, said
                out[name] = said[name]
        return out, said

    def _located(self, prefix: str, check: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        """``attempt``, with the key of a recorded error prefixed (``strategies[2].base``)."""
        try:
            return check(*args, **kwargs)
        except ConfigError as exc:
            self.report(prefix + (exc.key or ""), exc.message, exc.hint)
            return None

    def build(self, cls: type[T], args: dict[str, Any], prefix: str = "",
              said: typing.Iterable[str] | typing.Mapping[str, Any] = ()) -> T | None:
        """Construct a model from checked arguments; every ``ParamError`` it would raise is
        recorded, each key named ``prefix + key`` (``build_every_mistake``: the faulty keys set
        aside one by one). ``said``: keys already reported, whose values are stand-ins (a
        mapping: with the stand-in to take should the model need the key)."""
        built, problems = build_every_mistake(cls, args, said)
        for exc in problems:
            self.report(prefix + exc.key, exc.message, exc.hint)
        return built


class _PrefixedChecker(_Checker):
    """``_Checker.under``: every mistake recorded (or caught by ``attempt``) is located at
    ``prefix + key``; ``fail`` stays unprefixed, as its callers record what it raises."""

    def __init__(self, parent: _Checker, prefix: str) -> None:
        super().__init__(parent.file, parent.simulation, parent.errors)
        self.prefix = prefix

    def report(self, key: str | None, message: str, hint: str | None = None) -> None:
        self.errors.append(self.error(self.prefix + (key or ""), message, hint))

    def attempt(self, check: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        try:
            return check(*args, **kwargs)
        except ConfigError as exc:
            self.report(exc.key, exc.message, exc.hint)
            return None


def load_config(path: str | Path) -> Config:
    """Read and validate a config file; raise ConfigError listing every mistake, one line each."""
    return parse_config(read_document(path), str(path))


def read_document(path: str | Path) -> dict[str, Any]:
    """A config file's TOML document, unvalidated; ConfigError (one line) if it cannot be read."""
    name = str(path) or "''"  # an empty path shown as one
    try:
        raw = read_limited(path, MAX_CONFIG_BYTES, what="config file")
    except FileNotFoundError:
        raise ConfigError("no such file", file=name, hint="give the path of a TOML config, e.g. sample.toml") from None
    except InputFileError as exc:
        raise ConfigError(exc.reason, file=name, hint=exc.hint) from None
    try:
        # utf-8-sig: a byte order mark some Windows editors put first is no TOML, and no mistake.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError("is not UTF-8 text", file=name) from None
    return parse_toml(text, name)


def parse_toml(text: str, name: str = "<config>") -> dict[str, Any]:
    """A config's TOML text as a document, unvalidated; ConfigError (one line) if it is no TOML."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"is larger than {MAX_CONFIG_BYTES // 2**20} MB: not a config", file=name)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", file=name) from None
    except RecursionError:  # tomllib parses nested arrays and inline tables recursively
        raise ConfigError("is too deeply nested to read: arrays or inline tables inside each other "
                          "deeper than Python's recursion limit", file=name,
                          hint="a config nests a few levels; is this the right file?") from None
    return data


def parse_config(data: dict[str, Any], file: str = "<config>") -> Config:
    """Validate an already-parsed TOML document; every mistake is reported, one line each."""
    top = _Checker(file, None)
    for key in data:
        if key not in _TOP_LEVEL_KEYS:
            top.report(key, "is not a top-level key", _suggest(key, _TOP_LEVEL_KEYS) or "use [[simulation]] blocks")
    seed = top.attempt(top.seed, data) if "seed" in data else 0
    time_unit = top.attempt(top.time_unit, data) if "time_unit" in data else DEFAULT_TIME_UNIT
    blocks = data.get("simulation")
    if not blocks:
        top.report("simulation", "no [[simulation]] blocks found", "add at least one [[simulation]] table")
    elif not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        top.report("simulation", "must be an array of tables, written [[simulation]]")
    else:
        sims: list[SimulationSpec] = []
        seen: set[str] = set()
        merged, extends_errors = resolve_extends(blocks)
        for mistake in extends_errors:
            top.at(mistake.where).report("extends", mistake.message, mistake.hint)
        for index, (block, full) in enumerate(zip(blocks, merged), start=1):
            spec = None if full is None else _parse_simulation(
                top, full, index, 0 if seed is None else seed, time_unit or DEFAULT_TIME_UNIT)
            title = block.get("title")
            if isinstance(title, str) and title.strip():
                if title in seen:
                    top.at(title).report("title", "is used by more than one simulation",
                                         "titles name output files, so each must be unique")
                seen.add(title)
            if spec is not None:
                sims.append(spec)
    if top.errors:
        raise ConfigError.combine(top.errors)
    return Config(path=file, simulations=tuple(sims))


def _parse_simulation(top: _Checker, block: dict[str, Any], index: int,
                      default_seed: int, default_time_unit: str = DEFAULT_TIME_UNIT
                      ) -> SimulationSpec | None:
    """One ``[[simulation]]`` block: the spec, or None after recording its mistakes."""
    before = len(top.errors)
    check = top.at(f"#{index}")
    title = check.attempt(check.string, block, "title")
    if title is not None:
        check = top.at(title)

    control_cls: type[Control] | None = None
    control_name = check.attempt(check.string, block, "control")
    if control_name is not None:
        control_cls = CONTROLS.get(control_name)
        if control_cls is None:
            check.report("control", f"unknown control {control_name!r}",
                         _suggest(control_name, CONTROLS) or f"choose one of {', '.join(CONTROLS)}")
    by_rate = [key for key in RATE_KEYS if key in block]
    if by_rate:
        block = _rate_block(check, block, by_rate)
    workload = _parse_workload(check, {k: v for k, v in block.items() if k != "rate_profile"})
    _check_keys(check, block, control_cls, control_name, workload)

    control = None
    if control_cls is not None:
        control_keys = {f.name for f in fields(control_cls)}
        control = check.model(control_cls, {k: v for k, v in block.items() if k in control_keys},
                              control_name, skip=set(), paths=getattr(control_cls, "PATH_KEYS", ()))

    clients = _parse_clients(check, block)
    if by_rate and workload is not None and clients is not None and control is not None:
        workload = _rated_workload(check, block, by_rate[0], workload, control, clients,
                                   block.get("time_unit", default_time_unit))
    if "rate_profile" in block and workload is not None and hasattr(workload, "rate_profile"):
        workload = _profiled_workload(check, block["rate_profile"], workload,
                                      block.get("time_unit", default_time_unit))
    repeat = check.attempt(check.integer, block, "repeat", minimum=1)
    network_mu = check.attempt(check.number, block, "network_mu", minimum=0)
    network_sigma = check.attempt(check.number, block, "network_sigma", minimum=0)
    work_to_duration = (check.attempt(check.number, block, "work_to_duration", minimum=0)
                        if "work_to_duration" in block else DEFAULT_WORK_TO_DURATION)
    seed = check.attempt(check.seed, block) if "seed" in block else default_seed
    time_unit = (check.attempt(check.time_unit, block) if "time_unit" in block
                 else default_time_unit)
    parsed = _parse_strategies(check, block.get("strategies"), block.get("policies"),
                               time_unit or default_time_unit)
    strategies, shared_policies = parsed if parsed is not None else (None, 0)
    if strategies is not None and workload is not None and not workload.REPEATS:
        for position, entry in enumerate(strategies):
            if entry.strategy.FROM_THINK_TIME:
                check.report(f"strategies[{position}].type",
                             f"{entry.strategy.type_name} starts its backoff from the client's last "
                             f"think time, and workload {workload.NAME!r} has none",
                             'use workload = "poisson" or another strategy')
    if strategies is not None and control is not None and not control.CAPS.replies:
        for position, entry in enumerate(strategies):
            if entry.hedging is not None:
                check.report(f"strategies[{position}].hedging",
                             f"needs a server that replies; {control.type_name} lets clients assume success",
                             "hedge against a replying server (QueueServer, PoolServer, ...)")
    spans = {key: check.attempt(check.number, block, key, positive=True, minimum=MIN_SPAN)
             for key in ("horizon", "timeout", "bucket") if key in block}
    horizon, timeout, bucket = (spans.get(key) for key in ("horizon", "timeout", "bucket"))
    warmup = check.attempt(check.number, block, "warmup", minimum=0) if "warmup" in block else 0.0
    if warmup and horizon is not None and warmup >= horizon:
        check.report("warmup", f"must end before the horizon ({horizon:g}), got {warmup:g}",
                     "shorten warmup: the successes after it are the latency statistics")
    whole_outages, host_outages = split_incidents(block.get("outages"))
    outages = _parse_outages(check, whole_outages, horizon, whole_positions(block.get("outages")))
    whole_incidents, host_incidents = split_incidents(block.get("incidents"))
    incidents = _parse_incidents(check, whole_incidents, horizon, outages, control,
                                 whole_positions(block.get("incidents")))
    fleet = _parse_fleet(check, block, control, horizon, host_incidents, time_unit or default_time_unit,
                         host_outages, bool(outages) or any(i.is_outage for i in incidents))
    if fleet is not None:
        fleet, incidents = absorb_incidents(check, fleet, incidents)
    # Stopped: the whole server or some hosts of a fleet (each host's gate takes the same keys).
    stopped = bool(block.get("outages")) or any(i.is_outage for i in incidents)
    backlog = _parse_backlog(check, block, stopped, control_cls, time_unit or default_time_unit)
    if "backlog" in block and not stopped:
        check.report("backlog", "bounds the requests held during an outage, but there are no outages",
                     "add outages = [{ start = ..., duration = ... }] or remove backlog")
    overflow, abandoned = _parse_accept_queue(check, block, time_unit or default_time_unit, backlog)
    backoff_from = (check.attempt(check.choice, block, "backoff_from", BACKOFF_FROM)
                    if "backoff_from" in block else None) or BACKOFF_FROM[0]
    if control_cls is not None:
        _check_replying(check, block, control_cls, control_name, workload, horizon, bucket)
    calls_before = getattr(workload, "calls_before", None)  # a trace
    if calls_before is not None and horizon is not None and not calls_before(horizon):
        check.report("trace_file", f"has no call before the horizon ({horizon:g}); its first starts at "
                     f"{workload.data.times[0]:g}", "times count from the run's t = 0: shift them, "
                     "or lengthen the horizon")
    tiers = _parse_tiers(check, block.get("tiers"), control, horizon, time_unit or default_time_unit)
    if tiers and strategies is not None:
        for position, entry in enumerate(strategies):
            if entry.hedging is not None:
                check.report(f"strategies[{position}].hedging", "cannot hedge a server that calls [[simulation.tiers]] "
                             "(the copies of an attempt would share its call below)",
                             "hedge in a simulation without tiers (its server may be a fleet)")
    if len(top.errors) > before:
        return None
    return SimulationSpec(title=title, clients=clients, repeat=repeat, network_mu=network_mu,
                          network_sigma=network_sigma, work_to_duration=work_to_duration,
                          control=control, strategies=strategies, seed=seed, workload=workload,
                          horizon=horizon, timeout=timeout, outages=outages, bucket=bucket,
                          warmup=warmup or 0.0, backlog=backlog, backlog_overflow=overflow, abandoned=abandoned,
                          backoff_from=backoff_from, time_unit=time_unit, shared_policies=shared_policies,
                          incidents=incidents, tiers=tiers, fleet=fleet, source=top.file,
                          clients_key="max_clients" if "max_clients" in block else "clients")


def _parse_fleet(check: _Checker, block: dict[str, Any], control: Control | None, horizon: float | None,
                 host_incidents: list[tuple[int, dict]], time_unit: str,
                 host_outages: list[tuple[int, dict]], whole_stops: bool):
    """``[simulation.fleet]`` with the per-host incidents and outages (sim.settings.fleet); None
    without one."""
    fleet = parse_fleet(check, block.get("fleet"), control, seconds_per_unit(time_unit))
    if not host_incidents and not host_outages:
        return fleet
    if fleet is None and "fleet" in block:
        return None  # its own mistakes are reported
    hosts = None if fleet is None else fleet.hosts
    outage_tables = parse_host_outages(check, host_outages, hosts, horizon)
    per_host = parse_host_incidents(check, host_incidents, hosts, horizon)
    stopped = parse_host_incidents(check, outage_tables, hosts, horizon, "outages")
    if whole_stops and (stopped or any(i.kind == "outage" for i in per_host)):
        check.report("outages", "stops the whole fleet, and some hosts have outages of their own",
                     "give every outage hosts = [...] (or none of them)")
    per_host = per_host + tuple(stopped)
    if control is not None:
        for (position, _), incident in zip(host_incidents, per_host):
            problem = None if incident.kind in ("crash", "outage") else control.incident_problem(incident.kind)
            if problem is not None:
                check.report(f"incidents[{position}].{incident.kind}", problem[0], problem[1])
    return None if fleet is None else replace(fleet, incidents=per_host)


def _rate_block(check: _Checker, block: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """``rate`` or ``load`` (sim.models.open_rate): checked against the other keys; the block with a
    stand-in ``think_time`` for the workload's parser (``_rated_workload`` sets the real one)."""
    if len(keys) > 1:
        check.report(keys[1], "and rate both set the open workload's pace", "keep one")
    elif "think_time" in block:
        check.report(keys[0], "and think_time both set the open workload's pace", "keep one")
    elif block.get("workload") != "open":
        check.report(keys[0], f"sets an open workload's pace, but workload is {block.get('workload', 'burst')!r}",
                     'use workload = "open"')
    elif not isinstance(block.get("clients"), list) or len(block["clients"]) != 1:
        check.report(keys[0], "sets the pace of one client count, but clients is not a list of one",
                     "give clients = [N] (the rate is shared by N open sources)")
    else:
        return {**block, "think_time": 1.0}
    return block


def _rated_workload(check: _Checker, block: dict[str, Any], key: str, workload: Workload,
                    control: Control, clients: tuple[int, ...], time_unit: str) -> Workload:
    """The open workload whose ``think_time`` gives ``rate`` calls per second, or ``load`` of the
    server's capacity (sim.models.open_rate)."""
    from dataclasses import replace

    value = check.attempt(check.number, block, key, positive=True)
    if value is None:
        return workload
    if key == "rate":
        unit = seconds_per_unit(time_unit)
        if unit is None:
            check.report("rate", f"is in calls per second, but time_unit {time_unit!r} has no length in seconds",
                         "use load (a fraction of the server's capacity), or a time_unit such as \"ms\"")
            return workload
        per_unit = value * unit
    else:
        capacity = capacity_per_unit(control)
        if capacity is None:
            check.report("load", f"is a fraction of the capacity of a PoolServer or QueueServer, not "
                         f"{type(control).__name__}", "use rate (calls per second)")
            return workload
        per_unit = value * capacity
    return replace(workload, think_time=think_time(clients[0], per_unit))


def _profiled_workload(check: _Checker, raw: Any, workload: Workload, time_unit: str) -> Workload:
    """The open workload with its ``rate_profile`` (sim.models.rate_profile): each point's ``at``
    in the simulation's time unit, its ``rate`` in calls per second of the whole workload, as
    ``rate``; ``ramp = true`` reaches it linearly from the previous point."""
    from dataclasses import replace

    example = "[{ at = 60.0, rate = 500.0 }, { at = 120.0, rate = 100.0, ramp = true }]"
    if not isinstance(raw, list) or not raw or not all(isinstance(p, dict) for p in raw):
        check.report("rate_profile", f"must be a non-empty list of tables like {example}")
        return workload
    unit = seconds_per_unit(time_unit)
    if unit is None:
        check.report("rate_profile", f"rates are calls per second, but time_unit {time_unit!r} has no length "
                     "in seconds", "use a time_unit such as \"s\" or \"ms\", or a trace_file")
        return workload
    before = len(check.errors)
    points: list[RatePoint] = []
    names = ("at", "rate", "ramp")
    for position, table in enumerate(raw):
        key = f"rate_profile[{position}]"
        for extra in sorted(set(table) - set(names)):
            check.report(f"{key}.{extra}", "is not a rate_profile key",
                         _suggest(extra, names) or "a point has at, rate and optionally ramp = true")
        for name in ("at", "rate"):
            if name not in table:
                check.report(f"{key}.{name}", "is missing", f"write e.g. {example}")
        if len(check.errors) > before:
            continue
        try:  # checked in the user's numbers, then the rate in calls per time unit
            point = RatePoint(table["at"], table["rate"], table.get("ramp", False))
            points.append(replace(point, rate=point.rate * unit))
        except ParamError as error:
            check.report(f"{key}.{error.key}", error.message, error.hint)
    if len(check.errors) > before:
        return workload
    problem = order_problem(tuple(points))
    if problem is not None:
        check.report(f"rate_profile[{problem[0]}].at", problem[1], "list the points in time order")
        return workload
    return replace(workload, rate_profile=tuple(points))


def _resolve_paths(config_file: str, args: dict[str, Any], keys: tuple[str, ...]) -> None:
    """File names among ``args`` (``keys``) are relative to the config file that gives them,
    made absolute (so a spec reads the same file whatever the working directory is later)."""
    base = Path(config_file).parent.absolute()
    for key in keys:
        if isinstance(args.get(key), str) and not Path(args[key]).is_absolute():
            args[key] = str(base / args[key])


def _check_keys(check: _Checker, block: dict[str, Any], control_cls: type[Control] | None,
                control_name: str | None, workload: Workload | None) -> None:
    """Every key must belong to the simulation, its control or its workload. When the control
    or the workload is itself unknown, only keys that belong to none at all are reported."""
    control_keys = ({f.name for f in fields(control_cls)} if control_cls is not None
                    else {f.name for cls in CONTROLS.values() for f in fields(cls)})
    workload_keys = {f.name for f in fields(workload)} if workload is not None else set(_WORKLOAD_KEYS)
    for key in block:
        if key in EXTENSION_TABLES:
            continue
        if workload is not None and key in _WORKLOAD_KEYS and key not in workload_keys:
            check.report(key, f"is a parameter of workload {_WORKLOAD_KEYS[key]!r}, not {workload.NAME!r}",
                         f'set workload = "{_WORKLOAD_KEYS[key]}" or remove it')
        elif key not in _SIMULATION_KEYS and key not in control_keys and key not in workload_keys:
            what = f"a parameter of {control_name}" if control_cls is not None else "a control parameter"
            check.report(key, f"is not a simulation key or {what}",
                         _suggest(key, _SIMULATION_KEYS | control_keys | set(_WORKLOAD_KEYS)))


def _parse_clients(check: _Checker, block: dict[str, Any]) -> tuple[int, ...] | None:
    if "clients" in block and "max_clients" in block:
        check.report("clients", "give either clients = [...] or max_clients, not both")
        return None
    if "clients" in block:
        counts = block["clients"]
        if not isinstance(counts, list) or not counts or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in counts):
            check.report("clients", f"must be a non-empty list of integers, got {counts!r}")
        elif any(n < 1 for n in counts):
            check.report("clients", f"every client count must be >= 1, got {counts!r}")
        elif any(n > MAX_INTEGER for n in counts):
            check.report("clients", f"every client count must be at most {MAX_INTEGER}")
        elif len(set(counts)) != len(counts):
            check.report("clients", f"has repeated values: {counts!r}")
        else:
            return tuple(sorted(counts))
        return None
    if "max_clients" in block:
        top = check.attempt(check.integer, block, "max_clients", minimum=1)
        return None if top is None else default_client_counts(top)
    check.report("max_clients", "is missing", "add max_clients = 100 or clients = [1, 10, 100]")
    return None


def _check_replying(check: _Checker, block: dict[str, Any], control_cls: type[Control], control_name: str,
                    workload: Workload | None, horizon: float | None, bucket: float | None) -> None:
    """Horizons, timeouts, buckets, backlogs and workloads that repeat need a server that replies;
    replying servers need a horizon, and a backlog needs a timeout."""
    if control_cls.CAPS.replies:
        if "backlog" in block and block["backlog"] != UNBOUNDED and "timeout" not in block:
            check.report("backlog", "needs timeout: a client whose request is refused only notices by "
                         "its timeout", "add e.g. timeout = 2000.0")
        if "horizon" not in block:
            check.report("horizon", f"is missing ({control_name} runs until a horizon)", "add e.g. horizon = 3000.0")
        elif horizon is not None and bucket is not None and bucket > horizon:
            check.report("bucket", f"must not exceed horizon ({horizon:g}), got {bucket:g}")
        return
    replying = ", ".join(name for name, cls in CONTROLS.items() if cls.CAPS.replies)
    for key in ("horizon", "timeout", "bucket", "warmup", "backlog", "backlog_overflow", "abandoned"):
        if key in block:
            check.report(key, f"needs a server that replies ({replying}); {control_name} lets clients assume success")
    problem = None if workload is None else workload_problem(control_cls.CAPS, workload)
    if problem is not None:
        check.report("workload", f"{problem} ({replying}); {control_name} lets clients assume success",
                     'use workload = "burst" or "spike" with a contention control')


def _parse_workload(check: _Checker, block: dict[str, Any]) -> Workload | None:
    name = block.get("workload", "burst")
    if not isinstance(name, str) or name not in WORKLOADS:
        check.report("workload", f"unknown workload {name!r}",
                     _suggest(str(name), WORKLOADS) or f"choose one of {', '.join(WORKLOADS)}")
        return None
    cls = WORKLOADS[name]
    keys = {f.name for f in fields(cls)}
    return check.model(cls, {k: v for k, v in block.items() if k in keys}, f"workload {name!r}", skip=set(),
                       paths=getattr(cls, "PATH_KEYS", ()))


def _parse_backlog(check: _Checker, block: dict[str, Any], stopped: bool,
                   control_cls: type[Control] | None, time_unit: str) -> int | None:
    """``backlog``: a count, ``"unbounded"`` (None), or when absent ``DEFAULT_BACKLOG`` where it
    applies (a replying server with outages and a timeout, in a time unit with seconds, as SYN
    retransmits need); None (no bound) elsewhere."""
    if "backlog" in block:
        if block["backlog"] == UNBOUNDED:
            return None
        if isinstance(block["backlog"], str):
            check.report("backlog", f"must be a count of connections or {UNBOUNDED!r}, got {block['backlog']!r}",
                         f"use e.g. backlog = {DEFAULT_BACKLOG} (Linux before 5.4) or 4096 (since)")
            return None
        return check.attempt(check.integer, block, "backlog", minimum=0)
    replies = control_cls is not None and control_cls.CAPS.replies
    if stopped and replies and "timeout" in block and seconds_per_unit(time_unit) is not None:
        return DEFAULT_BACKLOG
    return None


def _parse_accept_queue(check: _Checker, block: dict[str, Any], time_unit: str,
                        backlog: int | None) -> tuple[str, str]:
    """``backlog_overflow`` and ``abandoned`` (sim.models.outage), their defaults when absent;
    ``backlog`` is the bound in force (given, or the default), None for none."""
    overflow, abandoned = BACKLOG_OVERFLOWS[0], ABANDONED_RULES[0]
    if "backlog_overflow" in block:
        overflow = check.attempt(check.choice, block, "backlog_overflow", BACKLOG_OVERFLOWS) or overflow
        if backlog is None and block.get("backlog") != UNBOUNDED:
            check.report("backlog_overflow", "says what happens beyond backlog, but backlog is not set",
                         "add e.g. backlog = 128 or remove backlog_overflow")
        elif backlog is None:
            check.report("backlog_overflow", 'says what happens beyond backlog, but backlog = "unbounded"',
                         "remove backlog_overflow, or give backlog a count")
    if "abandoned" in block:
        abandoned = check.attempt(check.choice, block, "abandoned", ABANDONED_RULES) or abandoned
        if not block.get("outages"):
            check.report("abandoned", "says what a resumed server does with requests held through an "
                         "outage, but there are no outages",
                         "add outages = [{ start = ..., duration = ... }] or remove abandoned")
    if backlog is not None and overflow == "syn-retry" and seconds_per_unit(time_unit) is None:
        key = "backlog_overflow" if "backlog_overflow" in block else "backlog"
        check.report(key, f'beyond backlog a client\'s SYN is sent again after 1, 3, 7 ... s (backlog_overflow = '
                     f'"syn-retry", the default), but time_unit {time_unit!r} has no length in seconds',
                     'set backlog_overflow = "drop", or a time_unit such as "ms"')
    return overflow, abandoned


def _at(positions: Sequence[int] | None, i: int) -> int:
    """Entry ``i`` of a list the config split (``sim.settings.fleet.split_incidents``) at its
    position in the file's list, so a message names the entry the user wrote."""
    return i if positions is None else positions[i]


def _renumbered(suffix: str, positions: Sequence[int] | None) -> str:
    """A problem's ``[i]...`` suffix with ``i`` at its position in the file's list."""
    found = re.match(r"\[(\d+)\]", suffix)
    if positions is None or found is None:
        return suffix
    return f"[{positions[int(found.group(1))]}]{suffix[found.end():]}"


def _parse_outages(check: _Checker, raw: Any, horizon: float | None,
                   positions: Sequence[int] | None = None) -> tuple[Outage, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(o, dict) for o in raw):
        check.report("outages", "must be a list of tables like { start = 20000.0, duration = 10000.0 }")
        return ()
    outages: list[Outage] = []
    for position, table in enumerate(raw):
        key = f"outages[{_at(positions, position)}]"
        extra = sorted(set(table) - {"start", "duration"})
        for name in extra:
            check.report(f"{key}.{name}", "is not an outage key", "an outage has start and duration")
        start = check._located(f"{key}.", check.number, table, "start", minimum=0)
        duration = check._located(f"{key}.", check.number, table, "duration", positive=True)
        if start is None or duration is None or extra:
            continue
        ahead = len(check.errors)
        if outages and start < outages[-1].end:
            check.report(f"{key}.start", f"overlaps or precedes the previous outage (ends at {outages[-1].end:g})",
                         "list outages in time order, without overlap")
        elif horizon is not None and start >= horizon:
            check.report(f"{key}.start", f"is at or after the horizon ({horizon:g})")
        if start + duration > MAX_TIME:  # the end's own mistake, beside the start's
            check.report(f"{key}.duration", f"ends after {MAX_TIME:g}, got start + duration = {start + duration:g}",
                         "larger times overflow or lose the clock's resolution")
        if len(check.errors) == ahead:
            outages.append(Outage(start, duration))
    return tuple(outages)


def _parse_incidents(check: _Checker, raw: Any, horizon: float | None, outages: tuple[Outage, ...],
                     control: Control | None, positions: Sequence[int] | None = None) -> tuple[Incident, ...]:
    """``incidents``: each table checked, then the list's windows (time order, no overlap of
    one kind, before the horizon) and what the server kind can run (sim.models.incidents)."""
    if raw is None:
        return ()
    example = "{ start = 20000.0, duration = 10000.0, capacity = 0.5 }"
    if not isinstance(raw, list) or not all(isinstance(i, dict) for i in raw):
        check.report("incidents", f"must be a list of tables like {example}")
        return ()
    before = len(check.errors)
    incidents: list[Incident] = []
    names = ("start", "duration", "ramp", *INCIDENT_KINDS)
    for position, table in enumerate(raw):
        key = f"incidents[{_at(positions, position)}]"
        for extra in sorted(set(table) - set(names)):
            check.report(f"{key}.{extra}", "is not an incident key",
                         _suggest(extra, names) or f"an incident has start, duration and one of {', '.join(INCIDENT_KINDS)}")
        incident = _incident(check, key, {k: v for k, v in table.items() if k in names},
                             misspelt=bool(set(table) - set(names)))
        if incident is not None and not set(table) - set(names):
            incidents.append(incident)
    if len(check.errors) > before:
        return ()
    for suffix, message, hint in schedule_problems(incidents, outages, horizon):
        check.report(f"incidents{_renumbered(suffix, positions)}", message, hint)
    if control is not None:
        for suffix, message, hint in control_problems(control, incidents):
            check.report(f"incidents{_renumbered(suffix, positions)}", message, hint)
    return tuple(incidents) if len(check.errors) == before else ()


# A value every incident check passes, standing in for a faulty one so the others are checked.
_INCIDENT_STAND_INS = {"start": 0.0, "duration": 1.0, "ramp": 0.0, "capacity": 1.0, "slowdown": 1.0,
                       "error_rate": 0.0}


def _incident(check: _Checker, key: str, table: dict[str, Any], misspelt: bool = False) -> Incident | None:
    """One incident table (its known keys; ``misspelt``: it had others, reported): every mistake
    recorded, named ``key.name``, the numbers' by the loader, the levels' ranges and the kinds
    by ``Incident`` itself. A misspelt key stands for the kind when none is given (``eror_rate``
    is one mistake, not a second "sets exactly one of ... got none")."""
    values: dict[str, Any] = {}
    said: list[str] = []
    if misspelt and not any(kind in table for kind in INCIDENT_KINDS):
        values["capacity"], said = _INCIDENT_STAND_INS["capacity"], ["capacity"]
    for name in ("start", "duration", "ramp", *INCIDENT_KINDS):
        if name in table or name in ("start", "duration"):
            value = check._located(f"{key}.", check.number, table, name,
                                   **({"positive": True} if name == "duration" else {"minimum": 0}))
            if value is None:
                said.append(name)
            values[name] = _INCIDENT_STAND_INS[name] if value is None else value
    return check.build(Incident, values, prefix=f"{key}.", said=said)


def _parse_strategies(check: _Checker, raw: Any, shared_raw: Any = None,
                      time_unit: str = DEFAULT_TIME_UNIT) -> tuple[tuple[StrategySpec, ...], int] | None:
    """The ``strategies`` entries (a type or a preset, each with its own ``policies``) and the
    simulation's ``policies`` (after each entry's own), with how many of those there are; times
    in presets and per-second policies converted from ``time_unit`` (sim.policies.entries)."""
    before = len(check.errors)
    unit = seconds_per_unit(time_unit)
    shared, problems = parse_policies(shared_raw, unit, "policies", time_unit)
    for p in problems:
        check.report(p.key, p.message, p.hint)
    if raw is None:
        check.report("strategies", "is missing", 'add strategies = [{ type = "FullJitteredExpo", base = 5.0, cap = 2000.0 }]')
        return None
    if not isinstance(raw, list) or not raw or not all(isinstance(s, dict) for s in raw):
        check.report("strategies", "must be a non-empty list of inline tables like { type = \"Expo\", base = 2.0, cap = 100.0 }")
        return None
    built: list[_Built] = []
    for position, table in enumerate(raw):
        key = f"strategies[{position}]"
        if "type" not in table and "preset" not in table:
            check.report(key, "has no 'type' (or 'preset')",
                         f"choose a type ({', '.join(STRATEGIES)}) or a preset ({', '.join(PRESETS)})")
            continue
        entry, problems = parse_entry(table, unit, time_unit, tuple(shared))
        for p in problems:
            check.report(f"{key}.{p.key}", p.message, p.hint)
        if entry is None:
            continue
        type_name = entry.strategy["type"]
        cls = STRATEGIES.get(type_name) if isinstance(type_name, str) else None
        if cls is None:
            check.report(f"{key}.type", f"unknown strategy {type_name!r}",
                         _suggest(str(type_name), STRATEGIES) or f"choose one of {', '.join(STRATEGIES)}")
            continue
        name = table.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            check.report(f"{key}.name", f"must be a non-empty string, got {name!r}")
            name = None
        strategy = check.model(cls, entry.strategy, type_name, skip={"type", "name"}, prefix=f"{key}.")
        if strategy is not None:
            preset = preset_label(entry, table) if entry.preset is not None else None
            built.append((name, strategy, entry.policies, preset, entry.hedging))
    if len(built) != len(raw) or len(check.errors) > before:
        return None
    labelled = _label(check, built)
    return None if labelled is None else (labelled, len(shared))


# --- [[simulation.tiers]]: the servers below the one the clients call ----------------------

_TIER_KEYS = frozenset({"control", "timeout", "retry", "policies", "propagate_deadline", "incidents", "outages",
                        "fleet"})
# A tier without ``retry`` makes one attempt per call: retrying only at the top.
_NO_RETRY = {"type": "NoBackoff", "max_attempts": 1}
_RETRY_EXAMPLE = '{ type = "Constant", constant = 0.0, max_attempts = 4 }'


def _replying_controls() -> str:
    return ", ".join(name for name, cls in CONTROLS.items() if cls.CAPS.replies)


def _parse_tiers(check: _Checker, raw: Any, top: Control | None, horizon: float | None,
                time_unit: str) -> tuple[TierSpec, ...]:
    """The ``tiers`` array of a simulation (``()`` when absent or wrong; mistakes recorded)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not raw or not all(isinstance(t, dict) for t in raw):
        check.report("tiers", "must be an array of tables, written [[simulation.tiers]]")
        return ()
    if len(raw) > MAX_TIERS:
        check.report("tiers", f"has {len(raw):,} tiers, at most {MAX_TIERS:,}",
                     "model the chain with fewer, slower tiers")
        return ()
    before = len(check.errors)
    if top is not None:
        problem = top.tier_problem(calls_below=True)
        if problem is not None:
            check.report("control", f"{problem}; it cannot call [[simulation.tiers]]",
                         f"a tier chain starts at a replying server: {_replying_controls()}")
    tiers: list[TierSpec] = []
    for i, table in enumerate(raw):
        tier = check.under(f"tiers[{i}].")
        control = _tier_control(tier, table, i, calls_below=i < len(raw) - 1)
        timeout = (tier.attempt(tier.number, table, "timeout", positive=True, minimum=MIN_SPAN)
                   if "timeout" in table else None)
        chain = _parse_retry(tier, table, time_unit)
        propagate = table.get("propagate_deadline", False)
        if not isinstance(propagate, bool):
            tier.report("propagate_deadline", f"must be true or false, got {propagate!r}")
        outages = _parse_outages(tier, table.get("outages"), horizon)
        incidents = _parse_incidents(tier, table.get("incidents"), horizon, outages, control)
        fleet = parse_fleet(tier, table.get("fleet"), control, seconds_per_unit(time_unit))
        if control is not None and chain is not None:
            tiers.append(TierSpec(control=control, retry=chain, timeout=timeout, fleet=fleet,
                                  propagate_deadline=propagate is True, incidents=incidents,
                                  outages=outages))
    return tuple(tiers) if len(check.errors) == before else ()


def _tier_control(tier: _Checker, table: dict[str, Any], i: int, calls_below: bool) -> Control | None:
    name = tier.attempt(tier.string, table, "control")
    cls = CONTROLS.get(name) if name is not None else None
    if name is not None and cls is None:
        tier.report("control", f"unknown control {name!r}",
                    _suggest(name, CONTROLS) or f"choose one of {_replying_controls()}")
    control_keys = {f.name for f in fields(cls)} if cls is not None else set()
    for key in table:
        if key not in _TIER_KEYS and key not in control_keys and cls is not None:
            tier.report(key, f"is not a tier key or a parameter of {name}",
                        _suggest(key, _TIER_KEYS | control_keys)
                        or f"a tier takes {', '.join(sorted(_TIER_KEYS))} and its control's keys")
    if cls is None:
        return None
    if not cls.CAPS.replies:
        tier.report("control", f"{name} is a contention control: it lets clients assume success, so it "
                    f"cannot be tier {i + 2}", f"a tier is a replying server: {_replying_controls()}")
        return None
    control = tier.model(cls, {k: v for k, v in table.items() if k in control_keys}, name, skip=set(),
                         paths=getattr(cls, "PATH_KEYS", ()))
    if control is not None:
        problem = control.tier_problem(calls_below)
        if problem is not None:
            tier.report("control", f"{problem}, so it cannot be tier {i + 2} of {i + 3} or more",
                        "the last tier may be any replying server")
            return None
    return control


def _parse_retry(tier: _Checker, table: dict[str, Any], time_unit: str) -> ChainSpec | None:
    """The caller's chain: the ``retry`` entry, then the tier's own ``policies``."""
    before = len(tier.errors)
    unit = seconds_per_unit(time_unit)
    shared, problems = parse_policies(table.get("policies"), unit, "policies", time_unit)
    for p in problems:
        tier.report(p.key, p.message, p.hint)
    raw = table.get("retry", _NO_RETRY)
    if not isinstance(raw, dict):
        tier.report("retry", f"must be an inline table like {_RETRY_EXAMPLE}")
        return None
    if "type" not in raw and "preset" not in raw:
        tier.report("retry", "has no 'type' (or 'preset')", f"e.g. retry = {_RETRY_EXAMPLE}")
        return None
    entry, problems = parse_entry(raw, unit, time_unit, tuple(shared))
    for p in problems:
        tier.report(f"retry.{p.key}", p.message, p.hint)
    if entry is None:
        return None
    if entry.hedging is not None:
        tier.report("retry.hedging", "a tier's calls do not hedge: hedging is for the clients' strategy entries",
                    "remove it (or its preset's hedging)")
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
    strategy = tier.model(cls, entry.strategy, type_name, skip={"type", "name"}, prefix="retry.")
    if strategy is None or len(tier.errors) > before:
        return None
    return ChainSpec(strategy, entry.policies, entry.hedging)


# A strategy entry as built: its name, strategy, policies, (for a preset) the preset's label and
# its hedging.
_Built = tuple[str | None, Strategy, tuple[Policy, ...], str | None, Hedging | None]


def _label(check: _Checker, built: list[_Built]) -> tuple[StrategySpec, ...] | None:
    """Label each entry by its name, else its preset, else its type, else (when a type repeats)
    its parameters and policies."""
    type_counts: dict[str, int] = {}
    for name, s, _, preset, _ in built:
        if name is None and preset is None:
            type_counts[s.type_name] = type_counts.get(s.type_name, 0) + 1
    labels: list[str] = []
    for name, s, policies, preset, hedging in built:
        if name is not None:
            labels.append(name)
        elif preset is not None:
            labels.append(preset)
        elif type_counts[s.type_name] > 1:
            labels.append(" + ".join([s.describe(), *(p.describe() for p in policies),
                                      *(() if hedging is None else (hedging.describe(),))]))
        else:
            labels.append(s.type_name)
    seen: set[str] = set()
    duplicated = False
    for position, label in enumerate(labels):
        if label in seen:
            check.report(f"strategies[{position}]", f"duplicates the strategy labelled {label!r}",
                         'remove it or give it a distinct name = "..."')
            duplicated = True
        seen.add(label)
    if duplicated:
        return None
    return tuple(StrategySpec(label, s, policies, hedging) for label, (_, s, policies, _, hedging) in zip(labels, built))
