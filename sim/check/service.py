"""The service a check runs against: a small TOML (a server as in ``[[simulation]]``, with its
``[simulation.fleet]`` where it has one) or three flags (a worker pool: workers, mean service
time, open load as a fraction of its capacity)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from sim.vocabulary.errors import ConfigError, UserError

DEFAULT_WORKERS = 4
DEFAULT_SERVICE_TIME = 20.0  # ms: 4 workers serve 0.2 calls/ms (a check of ~200 runs in about a minute)
DEFAULT_LOAD = 0.7  # busy enough for an incident to matter, with room to recover
DEFAULT_CLIENTS = 20  # open sources: each holds its own policy state (a client library instance)
NETWORK = {"network_mu": 1.0, "network_sigma": 0.2}  # ms, as the examples' services
# Keys of a service besides its control's own.
SERVICE_KEYS = ("control", "load", "clients", "network_mu", "network_sigma", "fleet")
PATH_KEYS = ("service_file", "load_curve_file")


@dataclass(frozen=True)
class Service:
    """A server (``control`` and its keys), its fleet (None: one host), the open load it takes
    (a fraction of its capacity) from ``clients`` sources, and the network to it."""

    source: str
    server: dict[str, Any]
    load: float
    clients: int = DEFAULT_CLIENTS
    fleet: dict[str, Any] | None = None
    network: dict[str, float] = field(default_factory=lambda: dict(NETWORK))

    @property
    def block(self) -> dict[str, Any]:
        """The service's keys of a ``[[simulation]]`` block (no strategies, workload or horizon)."""
        out = {**self.network, **self.server}
        if self.fleet is not None:
            out["fleet"] = dict(self.fleet)
        return out


def from_flags(workers: int | None, service_time: float | None, load: float | None) -> Service:
    """A worker pool of ``workers`` with exponential service of mean ``service_time`` ms, taking
    open arrivals at ``load`` of its capacity (the defaults for what is not given)."""
    server = {"control": "PoolServer", "workers": DEFAULT_WORKERS if workers is None else workers,
              "service_time": DEFAULT_SERVICE_TIME if service_time is None else service_time,
              "service_distribution": "exponential"}
    service = Service("flags", server, DEFAULT_LOAD if load is None else load)
    check(service)
    return service


def from_file(path: Path) -> Service:
    """The service a TOML describes: its top-level keys, or its first ``[[simulation]]``'s
    server keys (an existing config's; its strategies, workload and incidents are the check's)."""
    from sim.models import CONTROLS
    from sim.settings.config import read_document

    name = str(path)
    data = read_document(path)
    blocks = data.get("simulation")
    if isinstance(blocks, dict) and set(blocks) == {"fleet"} and "fleet" not in data:
        data = {**{k: v for k, v in data.items() if k != "simulation"}, "fleet": blocks["fleet"]}  # [simulation.fleet]
    table = blocks[0] if isinstance(blocks, list) and blocks and isinstance(blocks[0], dict) else data
    control = table.get("control", "PoolServer")
    cls = CONTROLS.get(control) if isinstance(control, str) else None
    if cls is None or not cls.CAPS.replies:
        raise ConfigError(f"must be a server that replies, got {control!r}", file=name, key="control",
                          hint="e.g. control = \"PoolServer\" with workers and service_time")
    own = {f.name for f in fields(cls)}
    if table is data:  # a file of the service alone: every key must be one
        for key in data:
            if key not in own and key not in SERVICE_KEYS:
                raise ConfigError(f"is not a key of a service or of {control}", file=name, key=key,
                                  hint=f"a service takes {', '.join(SERVICE_KEYS)} and its control's keys")
    server = {"control": control, **{k: v for k, v in table.items() if k in own}}
    for key in PATH_KEYS:  # relative to the service's file, as a config's
        if isinstance(server.get(key), str) and not Path(server[key]).is_absolute():
            server[key] = str((path.parent / server[key]).resolve())
    fleet = table.get("fleet")
    if fleet is not None and not isinstance(fleet, dict):
        raise ConfigError("must be a table, [simulation.fleet] or [fleet]", file=name, key="fleet")
    network = {k: table.get(k, v) for k, v in NETWORK.items()}
    clients = table.get("clients", DEFAULT_CLIENTS)
    if table is not data and isinstance(clients, list) and clients:  # a sweep's counts: its first
        clients = clients[0]
    service = Service(name, server, table.get("load", DEFAULT_LOAD), clients, fleet, network)
    check(service)
    return service


def _bad(service: Service, message: str, key: str) -> UserError:
    if service.source == "flags":
        return UserError(f"--{key.replace('_', '-')}: {message}")
    return ConfigError(message, file=service.source, key=key)


def check(service: Service) -> None:
    """Refuse a service the runs cannot use, in one line naming its file (or flag) and key."""
    from sim.settings.config import parse_config

    load = service.load
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not 0 < load <= 10:
        raise _bad(service, f"must be a fraction of the capacity, above 0 (1.0 is full), got {load!r}", "load")
    clients = service.clients
    if isinstance(clients, bool) or not isinstance(clients, int) or not 1 <= clients <= 10_000:
        raise _bad(service, f"must be a whole number of open sources from 1 to 10000, got {clients!r}", "clients")
    try:
        parse_config({"simulation": [probe(service)]}, service.source)
    except ConfigError as exc:
        if service.source == "flags":
            raise UserError(f"the service of --workers, --service-time and --load: {exc.message}") from None
        raise ConfigError(exc.message, file=service.source, key=exc.key, hint=exc.hint) from None


def probe(service: Service) -> dict[str, Any]:
    """A one-run block of the service alone, for its checks and the pace of its clients."""
    return {"title": "service", "clients": [service.clients], "repeat": 1, "work_to_duration": 0.0,
            **service.block, "workload": "open", "load": service.load, "horizon": 1000.0,
            "strategies": [{"type": "NoBackoff", "max_attempts": 1}]}


def think_time(service: Service) -> float:
    """Each client's mean gap between calls: the config's own ``load`` key on the service alone
    (``sim.models.open_rate``), so the stack above it does not change what load means."""
    from sim.settings.config import parse_config

    spec = parse_config({"simulation": [probe(service)]}, service.source).simulations[0]
    return float(spec.workload.think_time)
