"""The per-tier amplification table of a tiered simulation (issue 21), at the client count on
screen: per strategy × tier, attempts arriving at the tier per client call (mean ± 95% CI),
requests, successes, p50 and p99 of the calls made to it.

The cells are ``sim.report.tiers.tier_cells``' (the CLI's tier table, the ``_tiers.csv``
numbers); nothing is computed here. Hidden for simulations without tiers and in replay (an
events file holds no sweep).
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from textual.widgets import Static

from sim import SweepResult
from ...view.tier_cells import TierCells, any_denied, tier_cells


class TierTable(Static):
    """Each strategy's name on a row of its own (the one on screen in bold, after ▶), then a row
    per tier, tier 1 first: narrow enough for the analysis pane. The headers are short: Amplif.
    is attempts arriving at the tier per client call (mean ± 95% CI), Req. and Succ. its
    requests and successes (means over repetitions)."""

    DEFAULT_CSS = """
    TierTable {
        height: auto;
        display: none;
        border-top: solid $primary 40%;
        border-title-color: $primary;
    }
    TierTable.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.rows: list[TierCells] = []
        self._denied = False
        self._highlight: str | None = None

    def show(self, result: SweepResult | None, clients_index: int) -> None:
        """The rows of ``result`` at its ``clients_index``-th client count (none: hidden)."""
        tiered = result is not None and bool(result.spec.tiers)
        self.rows = tier_cells(result, clients_index) if tiered and result is not None else []
        self._denied = tiered and result is not None and any_denied(result)
        if tiered and result is not None:
            clients = result.spec.clients[clients_index]
            # p50 and p99 are in the latency table's unit (its caption names it)
            self.border_title = f"Tiers · {clients:,} clients · Amplif.: attempts per call"
        self.set_class(bool(self.rows), "-shown")
        self._fill()

    def highlight(self, strategy: str | None) -> None:
        self._highlight = strategy
        self._fill()

    def _fill(self) -> None:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True,
                      header_style="bold", expand=False)
        table.add_column("Strategy", no_wrap=True, overflow="ellipsis")
        for name in ("Amplif.", "Req.", "Succ.", "p50", "p99", *(("Denied",) if self._denied else ())):
            table.add_column(name, justify="right", no_wrap=True, overflow="ellipsis")
        for row in self.rows:
            style = "bold" if row.strategy == self._highlight else ""
            if row.tier == 1:
                marker = "▶ " if style else "  "  # the strategy on screen, without colour too
                table.add_row(f"{marker}{row.strategy}", style=style)
            table.add_row(f"  tier {row.tier}", row.amplification, row.requests, row.successes, row.p50,
                          row.p99, *((row.denied,) if self._denied else ()), style=style)
        self.update(table if self.rows else "")
