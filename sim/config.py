"""Load and validate simulation configs: TOML → checked, frozen specs the engine consumes.

All validation happens here, in one place, with one specific message per mistake that names the
file, the simulation and the key. The engine never sees a raw dict. Files in the
``backoff-simulator`` reference format load unchanged.
"""

from __future__ import annotations

import difflib
import sys
import typing
from dataclasses import MISSING, dataclass, fields, replace
from pathlib import Path
from typing import Any

from . import servers as _servers  # noqa: F401  (registers QueueServer and LatencyServer)
from .controls import CONTROLS, Control
from .errors import ConfigError, ParamError
from .strategies import STRATEGIES, Strategy
from .workloads import WORKLOADS, Burst, Outage, Workload

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

SAMPLE_CONFIG = Path(__file__).with_name("sample.toml")
MAX_CLIENT_VALUES = 20

_SIMULATION_KEYS = {
    "title", "max_clients", "clients", "repeat", "network_mu", "network_sigma",
    "work_to_duration", "control", "strategies", "seed",
    "workload", "horizon", "timeout", "outages", "bucket", "backlog",
}
_WORKLOAD_KEYS = {f.name: name for name, cls in WORKLOADS.items() for f in fields(cls)}
DEFAULT_BUCKETS = 200
_TOP_LEVEL_KEYS = {"simulation", "seed"}
# Sub-tables of a [[simulation]] that another module parses from the same document
# (``[simulation.explore]`` and ``[simulation.tune]``: sim.explore); the spec ignores them.
EXTENSION_TABLES = frozenset({"explore", "tune"})


@dataclass(frozen=True)
class StrategySpec:
    """A strategy with the label it carries in tables, charts and files."""

    label: str
    strategy: Strategy


@dataclass(frozen=True)
class SimulationSpec:
    """One ``[[simulation]]`` block, validated."""

    title: str
    clients: tuple[int, ...]
    repeat: int
    network_mu: float
    network_sigma: float
    work_to_duration: float
    control: Control
    strategies: tuple[StrategySpec, ...]
    seed: int = 0
    workload: Workload = Burst()
    horizon: float | None = None
    timeout: float | None = None
    outages: tuple[Outage, ...] = ()
    bucket: float | None = None
    backlog: int | None = None  # requests held during an outage; None: no bound

    @property
    def bucket_width(self) -> float:
        """Width of the time-series buckets: ``bucket``, or the horizon over 200."""
        if self.bucket is not None:
            return self.bucket
        return (self.horizon or 1.0) / DEFAULT_BUCKETS

    @property
    def is_open(self) -> bool:
        """True for runs against a replying server (latencies, time series, recovery)."""
        return self.control.REPLIES

    @property
    def max_clients(self) -> int:
        return max(self.clients)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.strategies)

    def strategy(self, label: str) -> StrategySpec:
        for s in self.strategies:
            if s.label == label:
                return s
        raise KeyError(label)

    def representative_clients(self) -> int:
        """The reference's choice for example histories: the smallest client count above 2."""
        counts = sorted(self.clients)
        return next((n for n in counts if n > 2), 2 if 2 in counts else counts[0])


@dataclass(frozen=True)
class Config:
    """A whole config file."""

    path: str
    simulations: tuple[SimulationSpec, ...]

    def with_seed(self, seed: int) -> Config:
        """The same config with every simulation's seed replaced (the CLI's ``--seed``)."""
        return replace(self, simulations=tuple(replace(s, seed=seed) for s in self.simulations))

    def simulation(self, title: str) -> SimulationSpec:
        for s in self.simulations:
            if s.title == title:
                return s
        raise KeyError(title)


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
    """Raises ConfigError located at one simulation of one file."""

    def __init__(self, file: str, simulation: str | None) -> None:
        self.file = file
        self.simulation = simulation

    def fail(self, key: str | None, message: str, hint: str | None = None) -> typing.NoReturn:
        raise ConfigError(message, file=self.file, simulation=self.simulation, key=key, hint=hint)

    def number(self, table: dict[str, Any], key: str, *, minimum: float | None = None,
               positive: bool = False) -> float:
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
        return float(value)

    def integer(self, table: dict[str, Any], key: str, *, minimum: int | None = None) -> int:
        if key not in table:
            self.fail(key, "is missing", f"add e.g. {key} = 10")
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be an integer, got {_type_name(value)} {value!r}")
        if minimum is not None and value < minimum:
            self.fail(key, f"must be >= {minimum}, got {value!r}")
        return value

    def string(self, table: dict[str, Any], key: str) -> str:
        if key not in table:
            self.fail(key, "is missing")
        value = table[key]
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"must be a non-empty string, got {_type_name(value)} {value!r}")
        return value

    def params(self, cls: type, table: dict[str, Any], what: str, skip: set[str]) -> dict[str, Any]:
        """Check ``table`` against the dataclass fields of ``cls`` and return its keyword arguments."""
        hints = typing.get_type_hints(cls)
        known = {f.name: f for f in fields(cls)}
        out: dict[str, Any] = {}
        for key, value in table.items():
            if key in skip:
                continue
            if key not in known:
                self.fail(key, f"is not a parameter of {what}",
                          _suggest(key, known) or (f"{what} takes: {', '.join(known)}" if known else f"{what} takes no parameters"))
            hint = hints[key]
            args = set(typing.get_args(hint)) or {hint}
            if args == {str}:
                out[key] = self.string(table, key)
            elif int in args and float not in args:
                out[key] = self.integer(table, key)
            else:
                out[key] = self.number(table, key)
        for name, f in known.items():
            if name not in out and f.default is MISSING and f.default_factory is MISSING:
                self.fail(name, f"is missing (required by {what})")
        return out


def load_config(path: str | Path) -> Config:
    """Read and validate a config file; raise ConfigError (one line) for any mistake."""
    return parse_config(read_document(path), str(path))


def read_document(path: str | Path) -> dict[str, Any]:
    """A config file's TOML document, unvalidated; ConfigError (one line) if it cannot be read."""
    path = Path(path)
    name = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError("no such file", file=name, hint="give the path of a TOML config, e.g. sample.toml") from None
    except IsADirectoryError:
        raise ConfigError("is a directory, not a config file", file=name) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=name) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError("is not UTF-8 text", file=name) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", file=name) from None
    return data


def parse_config(data: dict[str, Any], file: str = "<config>") -> Config:
    """Validate an already-parsed TOML document."""
    top = _Checker(file, None)
    for key in data:
        if key not in _TOP_LEVEL_KEYS:
            top.fail(key, "is not a top-level key", _suggest(key, _TOP_LEVEL_KEYS) or "use [[simulation]] blocks")
    seed = top.integer(data, "seed", minimum=0) if "seed" in data else 0
    blocks = data.get("simulation")
    if not blocks:
        top.fail("simulation", "no [[simulation]] blocks found", "add at least one [[simulation]] table")
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        top.fail("simulation", "must be an array of tables, written [[simulation]]")
    sims: list[SimulationSpec] = []
    seen: set[str] = set()
    for index, block in enumerate(blocks, start=1):
        spec = _parse_simulation(block, file, index, seed)
        if spec.title in seen:
            _Checker(file, spec.title).fail("title", "is used by more than one simulation",
                                            "titles name output files, so each must be unique")
        seen.add(spec.title)
        sims.append(spec)
    return Config(path=file, simulations=tuple(sims))


def _parse_simulation(block: dict[str, Any], file: str, index: int, default_seed: int) -> SimulationSpec:
    check = _Checker(file, f"#{index}")
    title = check.string(block, "title")
    check = _Checker(file, title)

    control_name = check.string(block, "control")
    control_cls = CONTROLS.get(control_name)
    if control_cls is None:
        check.fail("control", f"unknown control {control_name!r}",
                   _suggest(control_name, CONTROLS) or f"choose one of {', '.join(CONTROLS)}")
    control_keys = {f.name for f in fields(control_cls)}
    workload = _parse_workload(check, block)
    workload_keys = {f.name for f in fields(workload)}
    for key in block:
        if key in EXTENSION_TABLES:
            continue
        if key in _WORKLOAD_KEYS and key not in workload_keys:
            check.fail(key, f"is a parameter of workload {_WORKLOAD_KEYS[key]!r}, not {workload.NAME!r}",
                       f'set workload = "{_WORKLOAD_KEYS[key]}" or remove it')
        if key not in _SIMULATION_KEYS and key not in control_keys and key not in workload_keys:
            check.fail(key, f"is not a simulation key or a parameter of {control_name}",
                       _suggest(key, _SIMULATION_KEYS | control_keys | set(_WORKLOAD_KEYS)))
    control_args = check.params(control_cls, {k: v for k, v in block.items() if k in control_keys},
                                control_name, skip=set())
    try:
        control = control_cls(**control_args)
    except ParamError as exc:
        check.fail(exc.key, exc.message, exc.hint)

    if "clients" in block and "max_clients" in block:
        check.fail("clients", "give either clients = [...] or max_clients, not both")
    if "clients" in block:
        counts = block["clients"]
        if not isinstance(counts, list) or not counts or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in counts):
            check.fail("clients", f"must be a non-empty list of integers, got {counts!r}")
        if any(n < 1 for n in counts):
            check.fail("clients", f"every client count must be >= 1, got {counts!r}")
        if len(set(counts)) != len(counts):
            check.fail("clients", f"has repeated values: {counts!r}")
        clients = tuple(sorted(counts))
    elif "max_clients" in block:
        clients = default_client_counts(check.integer(block, "max_clients", minimum=1))
    else:
        check.fail("max_clients", "is missing", "add max_clients = 100 or clients = [1, 10, 100]")

    repeat = check.integer(block, "repeat", minimum=1)
    network_mu = check.number(block, "network_mu", minimum=0)
    network_sigma = check.number(block, "network_sigma", minimum=0)
    work_to_duration = check.number(block, "work_to_duration", minimum=0)
    seed = check.integer(block, "seed", minimum=0) if "seed" in block else default_seed
    strategies = _parse_strategies(check, block.get("strategies"))
    horizon = check.number(block, "horizon", positive=True) if "horizon" in block else None
    timeout = check.number(block, "timeout", positive=True) if "timeout" in block else None
    bucket = check.number(block, "bucket", positive=True) if "bucket" in block else None
    outages = _parse_outages(check, block.get("outages"), horizon)
    backlog = check.integer(block, "backlog", minimum=0) if "backlog" in block else None
    if backlog is not None and not outages:
        check.fail("backlog", "bounds the requests held during an outage, but there are no outages",
                   "add outages = [{ start = ..., duration = ... }] or remove backlog")
    if control.REPLIES:
        if backlog is not None and timeout is None:
            check.fail("backlog", "needs timeout: a client whose request is refused only notices by "
                       "its timeout", "add e.g. timeout = 2000.0")
        if horizon is None:
            check.fail("horizon", f"is missing ({control_name} runs until a horizon)", "add e.g. horizon = 3000.0")
        if bucket is not None and bucket > horizon:
            check.fail("bucket", f"must not exceed horizon ({horizon:g}), got {bucket:g}")
    else:
        replying = ", ".join(name for name, cls in CONTROLS.items() if cls.REPLIES)
        for key in ("horizon", "timeout", "bucket", "backlog"):
            if key in block:
                check.fail(key, f"needs a server that replies ({replying}); {control_name} lets clients assume success")
        if workload.NAME != "burst":
            check.fail("workload", f"{workload.NAME!r} needs a server that replies ({replying})",
                       'use workload = "burst" with contention controls')
    return SimulationSpec(title=title, clients=clients, repeat=repeat, network_mu=network_mu,
                          network_sigma=network_sigma, work_to_duration=work_to_duration,
                          control=control, strategies=strategies, seed=seed, workload=workload,
                          horizon=horizon, timeout=timeout, outages=outages, bucket=bucket,
                          backlog=backlog)


def _parse_workload(check: _Checker, block: dict[str, Any]) -> Workload:
    name = block.get("workload", "burst")
    if not isinstance(name, str) or name not in WORKLOADS:
        check.fail("workload", f"unknown workload {name!r}",
                   _suggest(str(name), WORKLOADS) or f"choose one of {', '.join(WORKLOADS)}")
    cls = WORKLOADS[name]
    keys = {f.name for f in fields(cls)}
    args = check.params(cls, {k: v for k, v in block.items() if k in keys}, f"workload {name!r}", skip=set())
    try:
        return cls(**args)
    except ParamError as exc:
        check.fail(exc.key, exc.message, exc.hint)


def _parse_outages(check: _Checker, raw: Any, horizon: float | None) -> tuple[Outage, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(o, dict) for o in raw):
        check.fail("outages", "must be a list of tables like { start = 20000.0, duration = 10000.0 }")
    outages: list[Outage] = []
    for position, table in enumerate(raw, start=1):
        key = f"outages[{position}]"
        extra = set(table) - {"start", "duration"}
        if extra:
            check.fail(f"{key}.{sorted(extra)[0]}", "is not an outage key", "an outage has start and duration")
        sub = _Checker(check.file, check.simulation)
        try:
            start = sub.number(table, "start", minimum=0)
            duration = sub.number(table, "duration", positive=True)
        except ConfigError as exc:
            check.fail(f"{key}.{exc.key}", exc.message, exc.hint)
        if outages and start < outages[-1].end:
            check.fail(f"{key}.start", f"overlaps or precedes the previous outage (ends at {outages[-1].end:g})",
                       "list outages in time order, without overlap")
        if horizon is not None and start >= horizon:
            check.fail(f"{key}.start", f"is at or after the horizon ({horizon:g})")
        outages.append(Outage(start, duration))
    return tuple(outages)


def _parse_strategies(check: _Checker, raw: Any) -> tuple[StrategySpec, ...]:
    if raw is None:
        check.fail("strategies", "is missing", 'add strategies = [{ type = "FullJitteredExpo", base = 5.0, cap = 2000.0 }]')
    if not isinstance(raw, list) or not raw or not all(isinstance(s, dict) for s in raw):
        check.fail("strategies", "must be a non-empty list of inline tables like { type = \"Expo\", base = 2.0, cap = 100.0 }")
    built: list[tuple[str | None, Strategy]] = []
    for position, table in enumerate(raw, start=1):
        key = f"strategies[{position}]"
        if "type" not in table:
            check.fail(key, "has no 'type'", f"choose one of {', '.join(STRATEGIES)}")
        type_name = table["type"]
        cls = STRATEGIES.get(type_name) if isinstance(type_name, str) else None
        if cls is None:
            check.fail(f"{key}.type", f"unknown strategy {type_name!r}",
                       _suggest(str(type_name), STRATEGIES) or f"choose one of {', '.join(STRATEGIES)}")
        name = table.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            check.fail(f"{key}.name", f"must be a non-empty string, got {name!r}")
        sub = _Checker(check.file, check.simulation)
        try:
            args = sub.params(cls, table, type_name, skip={"type", "name"})
            strategy = cls(**args)
        except ConfigError as exc:
            check.fail(f"{key}.{exc.key}" if exc.key else key, exc.message, exc.hint)
        except ParamError as exc:
            check.fail(f"{key}.{exc.key}", exc.message, exc.hint)
        built.append((name, strategy))
    return _label(check, built)


def _label(check: _Checker, built: list[tuple[str | None, Strategy]]) -> tuple[StrategySpec, ...]:
    """Label each strategy by its name, else its type, else (when a type repeats) type and params."""
    type_counts: dict[str, int] = {}
    for name, s in built:
        if name is None:
            type_counts[s.type_name] = type_counts.get(s.type_name, 0) + 1
    labels: list[str] = []
    for name, s in built:
        if name is not None:
            labels.append(name)
        elif type_counts[s.type_name] > 1:
            labels.append(s.describe())
        else:
            labels.append(s.type_name)
    seen: set[str] = set()
    for position, label in enumerate(labels, start=1):
        if label in seen:
            check.fail(f"strategies[{position}]", f"duplicates the strategy labelled {label!r}",
                       'remove it or give it a distinct name = "..."')
        seen.add(label)
    return tuple(StrategySpec(label, s) for label, (_, s) in zip(labels, built))
