"""``[simulation.fleet]`` and per-host incidents: read from a simulation's block (``sim.settings.config``
calls ``split_incidents`` and ``parse_fleet``), each mistake one line naming its key."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from sim.vocabulary.errors import ParamError
from sim.models.controls import Control
from sim.models.fleet import (BALANCERS, ENVOY_BASE_EJECTION_S, ENVOY_INTERVAL_S, ENVOY_MAX_EJECTION_S, HOST_KINDS,
                              FleetSpec, HealthCheck, HostIncident, OutlierDetection)
from sim.models.incidents import KINDS, Incident

FLEET_KEYS = ("hosts", "balancer", "weights", "retry_other_host", "host_selection_attempts",
              "outlier_detection", "panic_threshold", "health_check", "hedging")
HEALTH_KEYS = ("interval", "unhealthy_threshold", "healthy_threshold")
OUTLIER_KEYS = ("consecutive_errors", "interval", "base_ejection_time", "max_ejection_percent",
                "max_ejection_time")
_TIMES = {"interval": ENVOY_INTERVAL_S, "base_ejection_time": ENVOY_BASE_EJECTION_S}


def is_host_incident(table: Any) -> bool:
    """An ``incidents`` entry for some hosts of a fleet (``hosts``) or a crash (``kind``)."""
    return isinstance(table, dict) and ("hosts" in table or "kind" in table)


def split_incidents(raw: Any) -> tuple[Any, list[tuple[int, dict]]]:
    """``incidents`` as the whole-server ones (what ``sim.settings.config`` reads as before) and the
    per-host ones with their positions in the list."""
    if not isinstance(raw, list):
        return raw, []
    host = [(i, t) for i, t in enumerate(raw) if is_host_incident(t)]
    if not host:
        return raw, []
    return [t for t in raw if not is_host_incident(t)], host


def whole_positions(raw: Any) -> list[int] | None:
    """Where the whole-server entries of ``raw`` stand in the file's list (``split_incidents``
    leaves the per-host ones out), for messages naming them; None when none was split off."""
    if not isinstance(raw, list) or not any(is_host_incident(t) for t in raw):
        return None
    return [i for i, t in enumerate(raw) if not is_host_incident(t)]


def _hosts_of(check: Any, key: str, value: Any, hosts: int) -> tuple[int, ...] | None:
    """``hosts = [0, 3]`` (ids) or ``hosts = 2`` (a count: the first ones)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= hosts:
            check.report(key, f"as a count must be from 1 to the fleet's {hosts} hosts, got {value}",
                         "or list host ids, e.g. hosts = [0, 3]")
            return None
        return tuple(range(value))
    if (isinstance(value, list) and value and all(isinstance(h, int) and not isinstance(h, bool) for h in value)):
        bad = [h for h in value if not 0 <= h < hosts]
        if bad:
            check.report(key, f"names host {bad[0]}, but the fleet's hosts are 0 to {hosts - 1}")
            return None
        if len(set(value)) != len(value):
            check.report(key, "names a host twice")
            return None
        return tuple(sorted(value))
    check.report(key, f"must be a list of host ids like [0, 3] or a count like 2, got {value!r}")
    return None


def parse_host_incidents(check: Any, entries: list[tuple[int, dict]], hosts: int | None,
                         horizon: float | None, what: str = "incidents") -> tuple[HostIncident, ...]:
    """The per-host incidents (``hosts`` and, for a crash, ``kind = "crash"``), keys named
    ``what[i]`` (``outages`` for the per-host outages, read as incidents of capacity 0)."""
    out: list[HostIncident] = []
    for position, table in entries:
        key = f"{what}[{position}]"
        faulty = False  # a mistake recorded: every other key is still checked
        if hosts is None:
            check.report(f"{key}.{'hosts' if 'hosts' in table else 'kind'}",
                         "needs a fleet: per-host incidents and crashes hit hosts of [simulation.fleet]",
                         "add [simulation.fleet] with hosts = N, or remove the key")
            faulty = True
        names = {"start", "duration", "hosts", "kind", *KINDS}
        for extra in sorted(set(table) - names):
            check.report(f"{key}.{extra}", "is not an incident key",
                         f"an incident has start, duration, hosts and one of {', '.join(KINDS)} or kind = \"crash\"")
            faulty = True
        kind_value = table.get("kind")
        given = [k for k in KINDS if k in table]
        kind, level = None, None
        if "kind" in table and kind_value != "crash":
            check.report(f"{key}.kind", f"must be \"crash\", got {kind_value!r}",
                         f"other kinds are written as their key: {', '.join(k + ' = ...' for k in KINDS)}")
            faulty = True
        elif kind_value == "crash":
            if given:
                check.report(f"{key}.{given[0]}", "a crash takes no level", "write the crash and the other kind as two incidents")
                faulty = True
            kind = "crash"
        elif len(given) != 1:
            if given or not set(table) - names:  # none given beside a misspelt key: that one mistake
                check.report(f"{key}.{given[1] if given else 'kind'}",
                             f"an incident sets exactly one of {', '.join(HOST_KINDS[:-1])} or kind = \"crash\"")
            faulty = True
        else:
            kind = given[0]
            level = check._located(f"{key}.", check.number, table, kind, minimum=0)
            faulty = faulty or level is None
        start = check._located(f"{key}.", check.number, table, "start", minimum=0)
        duration = check._located(f"{key}.", check.number, table, "duration", positive=True)
        ids = (None if hosts is None else _hosts_of(check, f"{key}.hosts", table["hosts"], hosts)
               if "hosts" in table else tuple(range(hosts)))
        if horizon is not None and start is not None and start >= horizon:
            check.report(f"{key}.start", f"is at or after the horizon ({horizon:g})")
            faulty = True
        if kind in KINDS and level is not None and not (kind == "capacity" and level == 0):
            # the level's range, as the whole server's incidents (start and duration stand-ins
            # where theirs were refused above)
            said = [name for name, value in (("start", start), ("duration", duration)) if value is None]
            window = {"start": 0.0 if start is None else start, "duration": 1.0 if duration is None else duration}
            faulty = check.build(Incident, {**window, kind: level}, prefix=f"{key}.", said=said) is None or faulty
        if faulty or kind is None or start is None or duration is None or ids is None:
            continue
        if kind == "capacity" and level == 0:
            kind, level = "outage", None  # capacity 0 is an outage, on these hosts
        incident = HostIncident(start, duration, kind, level, ids)
        clash = next((o for o in out if _same_window_kind(o.kind, kind) and set(o.hosts) & set(ids)
                      and o.start < incident.end and incident.start < o.end), None)
        if clash is not None:
            check.report(f"{key}.start", f"overlaps an earlier {kind} incident on the same hosts "
                         f"({clash.start:g} to {clash.end:g})", "incidents of one kind on one host may not overlap")
            continue
        out.append(incident)
    return tuple(out)


def _sub_table(check: Any, raw: Any, name: str, keys: tuple[str, ...], example: str) -> dict | None:
    """A ``[simulation.fleet]`` sub-table ``name``: its keys among ``keys`` (None if it is no
    table). Each other key is reported, and the known ones returned to be checked too."""
    prefix = f"fleet.{name}"
    if not isinstance(raw, dict):
        check.report(prefix, f"must be a table like {example}, got {raw!r}")
        return None
    article = "an" if name[0] in "aeiou" else "a"
    for extra in sorted(set(raw) - set(keys)):
        check.report(f"{prefix}.{extra}", f"is not {article} {name} key", f"it takes {', '.join(keys)}")
    return {k: v for k, v in raw.items() if k in keys}


def _same_window_kind(a: str, b: str) -> bool:
    """Two windows that may not overlap on one host: of one kind, or an outage and a capacity."""
    stops = {"outage", "capacity"}
    return a == b or (a in stops and b in stops)


def parse_host_outages(check: Any, entries: list[tuple[int, dict]], hosts: int | None,
                       horizon: float | None) -> list[tuple[int, dict]]:
    """``outages`` entries with ``hosts``, as per-host incident tables of kind outage (checked
    with the incidents; their keys named ``outages[i]``): ``[(position, table)]``."""
    out = []
    for position, table in entries:
        key = f"outages[{position}]"
        extra = sorted(set(table) - {"start", "duration", "hosts"})
        for name in extra:
            check.report(f"{key}.{name}", "is not an outage key", "an outage has start, duration and hosts")
        if hosts is None:
            check.report(f"{key}.hosts", "needs a fleet: per-host outages stop hosts of [simulation.fleet]",
                         "add [simulation.fleet] with hosts = N, or remove the key")
            check._located(f"{key}.", check.number, table, "start", minimum=0)  # its window's own mistakes
            check._located(f"{key}.", check.number, table, "duration", positive=True)
            continue
        # its other keys checked with the incidents (the config refused all the same)
        out.append((position, {**{k: v for k, v in table.items() if k not in extra}, "capacity": 0.0}))
    return out


def _outlier(check: Any, raw: Any, unit_seconds: float | None) -> OutlierDetection | None:
    prefix = "fleet.outlier_detection"
    raw = _sub_table(check, {} if raw is True else raw, "outlier_detection", OUTLIER_KEYS,
                     "{ consecutive_errors = 5, interval = 10000.0 }")
    if raw is None:
        return None
    args: dict[str, Any] = {}
    said: list[str] = []  # refused here: left to their defaults, so the others are checked too
    for key in OUTLIER_KEYS:
        if key in raw:
            if key == "consecutive_errors":
                value = check._located(f"{prefix}.", check.integer, raw, key, minimum=1)
            else:
                value = check._located(f"{prefix}.", check.number, raw, key, minimum=0)
            if value is None:
                said.append(key)
            else:
                args[key] = value
        elif key in _TIMES or key == "max_ejection_time":
            # Envoy's defaults are times in seconds: in the simulation's unit.
            if unit_seconds is None:
                check.report(f"{prefix}.{key}", "is missing: Envoy's default is in seconds and this "
                             "simulation's time unit has no length in seconds", f"add {key} = ...")
                return None
            if key == "max_ejection_time":
                args[key] = max(ENVOY_MAX_EJECTION_S / unit_seconds,
                                args.get("base_ejection_time", ENVOY_BASE_EJECTION_S / unit_seconds))
            else:
                args[key] = _TIMES[key] / unit_seconds
    return check.build(OutlierDetection, args, prefix=f"{prefix}.", said=said)


def _health_check(check: Any, raw: Any) -> HealthCheck | None:
    prefix = "fleet.health_check"
    raw = _sub_table(check, raw, "health_check", HEALTH_KEYS,
                     "{ interval = 5000.0, unhealthy_threshold = 3, healthy_threshold = 2 }")
    if raw is None:
        return None
    interval = check._located(f"{prefix}.", check.number, raw, "interval", positive=True)
    low = check._located(f"{prefix}.", check.integer, raw, "unhealthy_threshold", minimum=1)
    high = check._located(f"{prefix}.", check.integer, raw, "healthy_threshold", minimum=1)
    if interval is None or low is None or high is None:
        return None
    return HealthCheck(interval, low, high)


def parse_fleet(check: Any, raw: Any, control: Control | None, unit_seconds: float | None) -> FleetSpec | None:
    """``[simulation.fleet]`` (None when absent; mistakes recorded, None then too). The
    per-host incidents are added later (``with_incidents``), once the hosts are known."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        check.report("fleet", "must be a table, written [simulation.fleet]", "add hosts = 4 under it")
        return None
    before = len(check.errors)
    for key in sorted(set(raw) - set(FLEET_KEYS)):
        check.report(f"fleet.{key}", "is not a [simulation.fleet] key", f"it takes {', '.join(FLEET_KEYS)}")
    if control is not None and not control.CAPS.replies:
        check.report("fleet", f"needs a server that replies; {control.type_name} lets clients assume success",
                     "a fleet's hosts are copies of a replying server (QueueServer, PoolServer, ...)")
    hosts = check._located("fleet.", check.integer, raw, "hosts", minimum=1, maximum=100_000)
    args: dict[str, Any] = {}
    if "balancer" in raw:
        args["balancer"] = check._located("fleet.", check.choice, raw, "balancer", BALANCERS)
    if "weights" in raw:
        weights = raw["weights"]
        if (not isinstance(weights, list) or not weights
                or not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights)):
            check.report("fleet.weights", f"must be a list of numbers, one per host, got {weights!r}")
        elif not all(math.isfinite(w) and w > 0 for w in weights):
            check.report("fleet.weights", f"must all be finite and > 0, got {weights}")
        elif hosts is not None and len(weights) != hosts:
            check.report("fleet.weights", f"must give one weight per host ({hosts}), got {len(weights)}")
        else:
            args["weights"] = tuple(float(w) for w in weights)
    if "retry_other_host" in raw:
        if not isinstance(raw["retry_other_host"], bool):
            check.report("fleet.retry_other_host", f"must be true or false, got {raw['retry_other_host']!r}")
        else:
            args["retry_other_host"] = raw["retry_other_host"]
    if "host_selection_attempts" in raw:
        args["host_selection_attempts"] = check._located("fleet.", check.integer, raw, "host_selection_attempts",
                                                         minimum=0, maximum=1000)
    if "panic_threshold" in raw:
        value = check._located("fleet.", check.number, raw, "panic_threshold", minimum=0)
        if value is not None and value > 100:
            check.report("fleet.panic_threshold", f"is a percent of hosts: at most 100, got {value:g}")
        args["panic_threshold"] = value
    if "outlier_detection" in raw:
        args["outlier_detection"] = _outlier(check, raw["outlier_detection"], unit_seconds)
    if "health_check" in raw:
        args["health_check"] = _health_check(check, raw["health_check"])
    if "hedging" in raw:  # hedging moved to the strategy entries (issue 35)
        check.report("fleet.hedging", "is set on a strategy entry now, not on the fleet",
                     "move it: strategies = [{ ..., hedging = { max_attempts = 2, delay = 50.0 } }]")
    if len(check.errors) > before or hosts is None:
        return None
    try:
        return FleetSpec(hosts=hosts, **args)
    except ParamError as exc:
        check.report(f"fleet.{exc.key}", exc.message, exc.hint)
        return None


def absorb_incidents(check: Any, fleet: FleetSpec, incidents: tuple[Incident, ...]
                     ) -> tuple[FleetSpec, tuple[Incident, ...]]:
    """A fleet takes the whole-server incidents that do not stop it as incidents of every host,
    so its balancer sees their errors host by host (outlier detection counts them, the hosts
    file shows them); the outages among them stay the whole fleet's (the engine's gate)."""
    every = tuple(range(fleet.hosts))
    for position, incident in enumerate(incidents):
        if incident.ramp and not incident.is_outage:
            check.report(f"incidents[{position}].ramp", "a fleet's hosts take the incident without its ramp",
                         "remove ramp, or run the server without [simulation.fleet]")
    moved = tuple(HostIncident(i.start, i.duration, i.kind, i.level, every) for i in incidents if not i.is_outage)
    if not moved:
        return fleet, incidents
    for own in fleet.incidents:
        clash = next((m for m in moved if m.kind == own.kind and m.start < own.end and own.start < m.end), None)
        if clash is not None:
            check.report("incidents", f"a {own.kind} incident on hosts {list(own.hosts)} overlaps one on the "
                         f"whole fleet ({clash.start:g} to {clash.end:g})",
                         "incidents of one kind on one host may not overlap")
    return replace(fleet, incidents=moved + fleet.incidents), tuple(i for i in incidents if i.is_outage)
