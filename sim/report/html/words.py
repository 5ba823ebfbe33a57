"""The report's prose: what a simulation is, in words from its config, and its verdict.

Every number here is read from what the terminal tables and the CSVs print (``sim.analysis``
through ``SweepResult``: recovery summaries, latency percentiles, means, the cost comparison,
and ``sim.analysis.best``'s choice of the ★ rows); nothing is computed a second way.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING

from sim.models.incidents import incident_label
from sim.report.html.fleet_words import fleet_brief, fleet_words, hedging_words, host_incident_words
from sim.vocabulary.params import describe_params
from sim.vocabulary.units import format_duration

if TYPE_CHECKING:  # pragma: no cover
    from sim.runs.sweep import SweepResult
    from sim.settings.spec import SimulationSpec


def _set_params(obj: object) -> dict[str, object]:
    """A model's parameters that are set (not None), for ``Type(a=1, b=2)``."""
    if not is_dataclass(obj):
        return {}
    return {f.name: getattr(obj, f.name) for f in fields(obj)
            if getattr(obj, f.name) is not None and not f.name.endswith("_sha256")}


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def described(spec: SimulationSpec) -> list[str]:
    """What was simulated, one line per part: the server, the clients, a fleet's hosts and
    balancer, the incidents (a fleet's per-host ones too), the strategies (each with its policies)."""
    unit = spec.time_unit
    control = spec.control
    lines = [f"Server: {describe_params(type(control).__name__, _set_params(control))}."]
    counts = ", ".join(f"{n:,}" for n in spec.clients)
    workload = _set_params(spec.workload)
    shape = f", {describe_params('', workload)[1:-1]}" if workload else ""  # "a=1, b=2"
    clients = (f"Clients: {counts} ({type(spec.workload).__name__.lower()} workload{shape}), "
               f"{_plural(spec.repeat, 'repetition')} each")
    if spec.horizon is not None:
        clients += f", {format_duration(spec.horizon, unit)} simulated"
    if spec.timeout is not None:
        clients += f", a {format_duration(spec.timeout, unit)} timeout per attempt"
    lines.append(clients + f"; seed {spec.seed}.")
    fleet = spec.fleet
    if fleet is not None:
        lines.append(f"Fleet: {fleet_words(fleet, unit)}.")
    whole = "the fleet" if fleet is not None else "the server"
    windows = [(o.start, o.end, f"outage ({whole} stops)") for o in spec.stops]
    windows += [(i.start, i.end, incident_label(i)) for i in spec.degradations]
    if fleet is not None:  # the hosts' own, and the whole-fleet ones the config gave every host
        windows += [(i.start, i.end, host_incident_words(i, fleet.hosts)) for i in fleet.incidents]
    for n, tier in enumerate(spec.tiers, start=2):
        windows += [(o.start, o.end, f"outage of tier {n}") for o in tier.outages]
        windows += [(i.start, i.end, f"{incident_label(i)} on tier {n}") for i in tier.incidents]
    if windows:
        lines.append("Incidents: " + "; ".join(
            f"{what} from {format_duration(start, unit)} to {format_duration(end, unit)}"
            for start, end, what in sorted(windows)) + ".")
    else:
        lines.append("Incidents: none.")
    if spec.tiers:
        lines.append("Tiers below: " + "; ".join(
            f"tier {i}: {describe_params(type(t.control).__name__, _set_params(t.control))}"
            f"{fleet_brief(t.fleet)}, retried by {t.retry.describe() or 'nothing'}"
            for i, t in enumerate(spec.tiers, start=2)) + ".")
    for entry in spec.strategies:
        policies = "".join(f" + {p.describe()}" for p in entry.policies)
        hedging = "" if entry.hedging is None else f"; {hedging_words(entry.hedging, unit)}"
        lines.append(f"Strategy {entry.label!r}: {entry.strategy.describe()}{policies}{hedging}.")
    return lines


def run_verdict(result: SweepResult) -> str:
    """One paragraph for a simulation: at its largest client count, which strategies recovered
    (the latency table's recovery cells) and at what cost (requests, p99, goodput; the ★ rows),
    or, for a contended server, which strategy cost least and by how much."""
    spec = result.spec
    k = spec.clients.index(spec.max_clients)
    where = f"{spec.title}, {spec.max_clients:,} clients"
    if not spec.caps.keeps_series:
        return f"{where}: {_cost_verdict(result, k)}"
    from sim.analysis.best import best_rows
    from sim.report.latency import format_value, recovery_number, strategy_values
    from sim.vocabulary.units import goodput_unit

    unit = spec.time_unit
    rows = strategy_values(result, k)
    factor, rate_unit = goodput_unit(unit, [row["goodput"] for row in rows])  # as the table reads
    labels = spec.labels
    recovered = [label for label, row in zip(labels, rows)
                 if row["recovery"] is not None and row["recovery"].all_recovered]
    judged = any(row["recovery"] is not None for row in rows)
    parts = []
    for label, row in zip(labels, rows):
        summary = row["recovery"]
        verdict = summary.text(recovery_number, unit) if summary is not None else "recovery not judged"
        hedges = f", {format_value('hedges', row['hedges'])} hedges" if "hedges" in row else ""
        parts.append(f"{label!r} {verdict} ({format_value('requests', row['requests'])} requests{hedges}, "
                     f"p99 {format_value('p99', row['p99'])} {unit}, "
                     f"goodput {format_value('goodput', row['goodput'] * factor)} per {rate_unit})")
    if not judged and not spec.disruptions:
        head = "no outage or incident to recover from"
    elif not judged:  # the latency table's notes say why (its recovery_note cells)
        notes = list(dict.fromkeys(filter(None, (result.recovery_note(s, k) for s in range(len(labels))))))
        head = f"recovery not judged ({'; '.join(notes) or 'no repetition could be judged'})"
    elif recovered:
        head = f"{_listed(recovered)} recovered in every repetition"
    else:
        head = "no strategy recovered in every repetition"
    best = best_rows(rows)
    stars = []
    if best["requests"] is not None:
        copies = " (every copy sent, hedges too)" if spec.hedges else ""
        stars.append(f"fewest requests{copies}: {labels[best['requests']]!r}")
    if best["p50"] is not None:
        stars.append(f"lowest median latency: {labels[best['p50']]!r}")
    starred = f" ★ {'; '.join(stars)}." if stars else ""
    return f"{where}: {head}. " + "; ".join(parts) + "." + starred


def _cost_verdict(result: SweepResult, k: int) -> str:
    """The metrics table's verdict: the lowest mean cost, and each other strategy against it."""
    from sim.analysis.versus import cost_versus_best
    from sim.report.tables import mean_ci

    spec = result.spec
    best = result.best_by_cost(k)
    cost = result.summary("cost", best, k)
    others = [f"{label!r} {cost_versus_best(result, s, k).text}"
              for s, label in enumerate(spec.labels) if s != best]
    text = f"{spec.labels[best]!r} had the lowest cost ({mean_ci(cost.mean, cost.ci95)})"
    return text + (f"; against it: {'; '.join(others)}." if others else ".")


def _listed(labels: list[str]) -> str:
    quoted = [repr(label) for label in labels]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
