"""A check's answers as the lines ``backoff-sim check`` prints: the layers with both counts, the
worst case computed and simulated, a table per settings arrangement, the knob's range, the
verdict. Numbers are the result's (``sim.check.outcome``); this module only words them."""

from __future__ import annotations

import math

from sim.check.outcome import CheckResult, counts_text, recovery_text, verdict
from sim.check.service import Service


def _pct(value: float, sign: bool = False) -> str:
    if math.isnan(value):
        return "—"
    return f"{value * 100:+.0f}%" if sign else f"{value * 100:.0f}%"


def _ms(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:,.0f} ms"


def _grid(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def layer_lines(result: CheckResult) -> list[str]:
    rows = [["layer", "from", "attempts", "worst case so far"]]
    rows += [[r.layer, r.source, counts_text(r), f"x{r.amplification}"] for r in result.layers]
    last = result.layers[-1]
    product = " × ".join(str(r.attempts) for r in result.layers)
    sim = last.amplification_simulated
    agree = "as computed" if sim == last.amplification else "less: a policy or deadline cut retries"
    notes = [f"  {r.layer}: {note}" for r, layer in zip(result.layers, result.sources) for note in layer.notes]
    return ["Layers, in the order the calls pass through them:", *_grid(rows), *notes, "",
            f"Worst-case amplification at the service: {last.amplification} attempts per call "
            f"({product}); simulated under total failure: {sim:g} ({agree})."]


def service_line(service: Service, repetitions: int, runs: int) -> str:
    s = service.server
    what = (f"{s['control']} of {s.get('workers', '?')} workers, service {s.get('service_time', '?')} ms"
            if s.get("control") == "PoolServer" else s["control"])
    fleet = f", a fleet of {service.fleet.get('hosts', '?')} hosts" if service.fleet else ""
    return (f"Service: {what}{fleet}, open load {service.load:g} of its capacity from {service.clients} "
            f"clients; {repetitions} runs per incident, {runs} runs in all.")


def incident_lines(result: CheckResult, settings: str) -> list[str]:
    change = result.changes[settings]
    title = "As given:" if not change else f"Alternative {settings} ({change}):"
    rows = [["incident", "recovered", "extra load", "p99", "goodput lost"]]
    for r in result.rows_of(settings):
        f = r.figures
        rows.append([r.incident.words, recovery_text(r.recovery), _pct(f.extra_load, True), _ms(f.p99),
                     _pct(f.goodput_lost)])
    return [title, *_grid(rows)]


def range_lines(result: CheckResult) -> list[str]:
    if result.knob is None:
        return ["No layer names a knob to sweep."]
    layer, label = result.knob
    marks = ", ".join(f"{r.value} {'✓' if r.every else '✗'} ({r.recovered}/{r.incidents})" for r in result.range)
    good = result.recovering_values
    words = (f"recovers from every incident at {', '.join(map(str, good))}" if good
             else "recovers from every incident at none of these values")
    runs = result.range_repetitions
    return [f"Range of {label} ({layer}, {runs} run{'s' if runs != 1 else ''} per value and incident): {marks}",
            f"  {words}."]


def report_lines(result: CheckResult, service: Service) -> list[str]:
    lines = [*layer_lines(result), "", service_line(service, result.repetitions, result.runs), ""]
    for settings in result.changes:
        lines += [*incident_lines(result, settings), ""]
    for name, why in result.skipped:
        lines.append(f"Skipped alternative {name}: {why}.")
    if result.skipped:
        lines.append("")
    lines += [*range_lines(result), "", verdict(result)]
    return lines
