"""The per-tier amplification table of a tiered simulation (the CLI prints it after the latency
table): for each client count and strategy, what each tier of the call chain saw."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich import box
from rich.table import Table

from sim.runs.sweep import SweepResult


def number_cell(value: float, digits: int = 1) -> str:
    """A figure as a table cell: whole from 100 on, ``digits`` decimals below, a dash for NaN."""
    if math.isnan(value):
        return "—"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.{digits}f}"


@dataclass(frozen=True)
class TierCells:
    """One strategy × tier row of the table as text (the app's tier table shows the same)."""

    strategy: str
    tier: int
    server: str
    amplification: str
    requests: str
    successes: str
    p50: str
    p99: str
    denied: str = "0.0"


def tier_cells(result: SweepResult, k: int) -> list[TierCells]:
    """Every strategy's tiers at the ``k``-th client count, tier 1 first ([] without tiers)."""
    spec = result.spec
    controls = [spec.control, *(t.control for t in spec.tiers)]
    rows = []
    for s, label in enumerate(spec.labels):
        for summary in result.tier_summaries(s, k):
            amp = summary.amplification
            amp_text = (number_cell(amp.mean, 2) if math.isnan(amp.ci95)
                        else f"{number_cell(amp.mean, 2)} ± {number_cell(amp.ci95, 2)}")
            rows.append(TierCells(label, summary.tier, controls[summary.tier - 1].type_name, amp_text,
                                  number_cell(summary.requests), number_cell(summary.successes),
                                  number_cell(summary.p50), number_cell(summary.p99),
                                  number_cell(summary.retries_denied)))
    return rows


def any_denied(result: SweepResult) -> bool:
    """Whether a policy denied some retry at some tier (the tables then show ``denied``)."""
    # The runs' own counts (a mean over repetitions is > 0 exactly when one run's count is):
    # no tier summary, with its pooled latency percentiles, is computed for the question.
    return any(tier.retries_denied for m in result.open_runs.values() for tier in m.tiers)


def tier_table(result: SweepResult) -> Table | None:
    """Clients × strategy × tier: amplification (mean ± 95% CI), requests, successes, p50, p99;
    None for a simulation without tiers."""
    spec = result.spec
    if not spec.tiers:
        return None
    table = Table(title=f"{spec.title} · tiers · {spec.repeat} repeats", title_justify="left",
                  header_style="bold", box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False,
                  show_edge=False, caption_justify="left")
    for name, justify in (("clients", "right"), ("strategy", "left"), ("tier", "right"),
                          ("server", "left"), ("amplification", "right"), ("requests", "right"),
                          ("successes", "right"), (f"p50 ({spec.time_unit})", "right"),
                          (f"p99 ({spec.time_unit})", "right")):
        table.add_column(name, justify=justify, no_wrap=True)
    denied = any_denied(result)
    if denied:
        table.add_column("denied", justify="right", no_wrap=True)
    for k, n in enumerate(spec.clients):
        if k:
            table.add_section()
        first_strategy = spec.labels[0] if spec.labels else None
        for row in tier_cells(result, k):
            first = row.tier == 1
            table.add_row(str(n) if first and row.strategy == first_strategy else "",
                          row.strategy if first else "", str(row.tier), row.server, row.amplification,
                          row.requests, row.successes, row.p50, row.p99, *([row.denied] if denied else []))
    table.caption = ("amplification: attempts arriving at the tier per client call (mean ± 95% CI); "
                     "tier 1 is the server the clients call; p50/p99: latency of the calls made to "
                     "the tier, retries included (at tier 1 the clients')"
                     + ("; denied: retries of calls to the tier that a policy refused (mean per run)."
                        if denied else "."))
    return table
