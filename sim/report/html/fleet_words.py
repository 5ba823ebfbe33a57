"""The report's words for a fleet (``[simulation.fleet]``, ``sim.models.fleet``): its hosts and
balancer, where retries go, outlier detection, health checks, hedging, and the incidents that hit
some hosts. Every figure is the config's own (the validated ``FleetSpec``); nothing is measured.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.models.fleet import FleetSpec, HostIncident
from sim.models.hedging import Hedging
from sim.models.incidents import incident_label
from sim.vocabulary.units import format_duration

# How each balancer picks a host, in a reader's words (``sim.models.fleet``'s docstring).
BALANCER_WORDS = {
    "round_robin": "each host in turn",
    "random": "a host at random",
    "least_request": "the host with the fewest outstanding attempts",
    "p2c": "the less loaded of two hosts drawn at random",
    "ring_hash": "a consistent hash of the client, so a client sticks to its host",
}


def _number(value: float) -> str:
    return f"{value:g}"


def hosts_named(hosts: Sequence[int], fleet_hosts: int) -> str:
    """``host 0``, ``hosts 0, 3`` or ``every host``."""
    if len(hosts) == fleet_hosts and fleet_hosts > 1:
        return "every host"
    return f"host{'s' if len(hosts) > 1 else ''} {', '.join(map(str, hosts))}"


def host_incident_words(incident: HostIncident, fleet_hosts: int) -> str:
    """What an incident does and to which hosts: ``crash (refuses every connection) on host 0``."""
    if incident.kind == "crash":
        what = "crash (refuses every connection at once)"
    elif incident.kind == "outage":
        what = "outage (the host stops)"
    else:
        what = incident_label(incident.incident())
    return f"{what} on {hosts_named(incident.hosts, fleet_hosts)}"


def fleet_brief(fleet: FleetSpec | None) -> str:
    """`` on 3 hosts behind a p2c balancer`` for a tier that is a fleet ("" for one server)."""
    if fleet is None:
        return ""
    return f" on {fleet.hosts:,} host{'s' if fleet.hosts != 1 else ''} behind a {fleet.balancer} balancer"


def fleet_words(fleet: FleetSpec, unit: str) -> str:
    """One sentence for the fleet, without its incidents (those join the simulation's)."""
    weights = ""
    if fleet.weights is not None:
        weights = f", weighted {':'.join(map(_number, fleet.weights))}"
    parts = [f"{fleet.hosts:,} host{'s' if fleet.hosts != 1 else ''}, each a copy of the server, "
             f"behind a client-side {fleet.balancer} balancer ({BALANCER_WORDS[fleet.balancer]}{weights})"]
    if fleet.retry_other_host:
        parts.append(f"a retry goes to a host the call has not tried (up to "
                     f"{fleet.host_selection_attempts:,} more pick{'s' if fleet.host_selection_attempts != 1 else ''})")
    else:
        parts.append("a retry may land on any host, tried or not")
    od = fleet.outlier_detection
    if od is not None:
        longest = od.longest()  # as the engine reads it (build_fleet's unit_ms: the default)
        parts.append(f"outlier detection ejects a host after {od.consecutive_errors:,} consecutive errors for "
                     f"{format_duration(od.base_ejection_time, unit)}, longer each time it is ejected again (at most "
                     f"{format_duration(longest, unit)}), at most {_number(od.max_ejection_percent)}% "
                     f"of the hosts out, checked every {format_duration(od.interval, unit)}; below "
                     f"{_number(fleet.panic_threshold)}% of the hosts in, the balancer uses them all")
    else:
        parts.append("no outlier detection")
    check = fleet.health_check
    if check is not None:
        parts.append(f"health checks every {format_duration(check.interval, unit)} take a host out after "
                     f"{check.unhealthy_threshold:,} failed and back after {check.healthy_threshold:,} passed")
    return "; ".join(parts)


def hedging_words(hedge: Hedging, unit: str) -> str:
    """A strategy entry's hedging (``sim.models.hedging``), in a reader's words."""
    budget = f", at most {_number(hedge.budget)}% of attempts as hedges" if hedge.budget is not None else ""
    return (f"hedging: up to {hedge.max_attempts:,} copies of an attempt, one more every "
            f"{format_duration(hedge.delay, unit)} while none has answered{budget}")
