"""What a sweep's retry policies did, per strategy: the cells shared by the CLI's policy table and
the app's strategy tables.

Only a simulation with policies gets these columns (``has_policies``): amplification (attempts
per unique call, mean ± 95% CI), retries a policy denied, calls an open breaker refused at their
first attempt (the call failed fast: not a retry), and the mean time a breaker spent away from
closed. The count columns that are zero in every run are left out and named, as elsewhere.
"""

from __future__ import annotations

import math

from rich import box
from rich.table import Table

from sim.runs.sweep import SweepResult
from sim.settings.spec import SimulationSpec

# (column key, header, SweepResult metric)
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("amplification", "amplification", "amplification"),
    ("retries denied", "retries denied", "retries_denied"),
    ("calls refused", "calls refused", "calls_refused"),
    ("breaker open", "breaker open", "breaker_open_time"),
)
OPTIONAL = ("retries denied", "calls refused", "breaker open")  # left out when zero in every run


def has_policies(spec: SimulationSpec) -> bool:
    """Does any strategy of the simulation carry a retry policy (not only its own limits)?"""
    return any(entry.policies for entry in spec.strategies)


def _mean(result: SweepResult, metric: str, s: int, k: int) -> float:
    return result.summary(metric, s, k).mean


def policy_cells(result: SweepResult, s: int, k: int) -> dict[str, str]:
    """Strategy ``s`` at client-count index ``k``: each column's text."""
    amp = result.summary("amplification", s, k)
    cells = {"amplification": "—" if math.isnan(amp.mean) else (
        f"{amp.mean:.3f}" if math.isnan(amp.ci95) else f"{amp.mean:.3f} ± {amp.ci95:.3f}")}
    for key, _, metric in COLUMNS[1:3]:
        value = _mean(result, metric, s, k)
        cells[key] = f"{value:,.0f}" if value == round(value) or value >= 100 else f"{value:,.1f}"
    opened = _mean(result, "breaker_open_time", s, k)
    cells["breaker open"] = f"{opened:,.0f}" if opened >= 1000 or opened == round(opened) else f"{opened:,.1f}"
    return cells


def silent_columns(result: SweepResult) -> list[str]:
    """The optional columns that are zero in every run of the sweep."""
    return [key for key, _, metric in COLUMNS if key in OPTIONAL
            and not result.metric(metric).any()]


def policy_table(result: SweepResult) -> Table | None:
    """Strategy × client count: what the policies did; None for a simulation without policies."""
    spec = result.spec
    if not has_policies(spec):
        return None
    silent = silent_columns(result)
    columns = [(key, header) for key, header, _ in COLUMNS if key not in silent]
    table = Table(title=f"{spec.title} · retry policies · {spec.repeat} repeats",
                  title_justify="left", header_style="bold", box=box.SIMPLE_HEAD,
                  collapse_padding=True, pad_edge=False, show_edge=False, caption_justify="left")
    table.add_column("clients", justify="right", no_wrap=True)
    table.add_column("strategy")
    for key, header in columns:
        table.add_column(f"{header} ({spec.time_unit})" if key == "breaker open" else header,
                         justify="right", no_wrap=True)
    for k, n in enumerate(spec.clients):
        if k:
            table.add_section()
        for s, label in enumerate(spec.labels):
            cells = policy_cells(result, s, k)
            table.add_row(str(n) if s == 0 else "", label, *(cells[key] for key, _ in columns))
    copies = "attempts and hedges" if getattr(spec, "hedges", False) else "attempts"
    notes = [f"amplification: {copies} per unique call (mean ± 95% CI); retries denied: retries a "
             "policy refused; calls refused: first attempts an open breaker refused (the call "
             "failed fast); breaker open: mean time a breaker was open or half-open."]
    if silent:
        notes.append(f"zero in every run, not shown: {', '.join(silent)}.")
    table.caption = "\n".join(notes)
    return table


def policy_rows(result: SweepResult | None, k: int) -> tuple[list[str], list[dict[str, str]]]:
    """The app's policy columns at client-count index ``k``: the keys shown (none without
    policies; silent ones left out) and each strategy's cells."""
    if result is None or not has_policies(result.spec):
        return [], []
    silent = silent_columns(result)
    keys = [key for key, _, _ in COLUMNS if key not in silent]
    return keys, [policy_cells(result, s, k) for s in range(len(result.spec.labels))]
