"""The host panel of a fleet (issue 35), at the client count on screen: per strategy × host,
attempts the balancer sent it, its share of the fleet's, its errors (failure replies and
timeouts), ejections, time ejected and the p99 of its attempts.

The cells are ``sim.report.hosts.host_cells``' (the ``_hosts.csv`` numbers); nothing is
computed here. Hidden for simulations without a fleet and in replay (an events file holds no
sweep).
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from textual.widgets import Static

from sim import SweepResult
from ...view.host_cells import HostCells, host_cells


class HostTable(Static):
    """Each strategy's name on a row of its own (the one on screen in bold, after ▶), then a row
    per host. Req. is attempts sent to the host, Share its part of the fleet's, Err. its failure
    replies and timeouts, Ej. its ejections and Out the time it spent ejected (means over
    repetitions)."""

    DEFAULT_CSS = """
    HostTable {
        height: auto;
        display: none;
        border-top: solid $primary 40%;
        border-title-color: $primary;
    }
    HostTable.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.rows: list[HostCells] = []
        self._highlight: str | None = None

    def show(self, result: SweepResult | None, clients_index: int) -> None:
        """The rows of ``result`` at its ``clients_index``-th client count (none: hidden)."""
        fleet = result is not None and result.spec.fleet is not None
        self.rows = host_cells(result, clients_index) if fleet and result is not None else []
        if fleet and result is not None:
            spec = result.spec
            self.border_title = (f"Hosts · {spec.fleet.hosts} behind {spec.fleet.balancer} · "
                                 f"{spec.clients[clients_index]:,} clients")
        self.set_class(bool(self.rows), "-shown")
        self._fill()

    def highlight(self, strategy: str | None) -> None:
        self._highlight = strategy
        self._fill()

    def _fill(self) -> None:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True,
                      header_style="bold", expand=False)
        table.add_column("Strategy", no_wrap=True, overflow="ellipsis")
        for name in ("Req.", "Share", "Err.", "Ej.", "Out", "p99"):
            table.add_column(name, justify="right", no_wrap=True, overflow="ellipsis")
        for row in self.rows:
            style = "bold" if row.strategy == self._highlight else ""
            if row.host == 0:
                marker = "▶ " if style else "  "
                table.add_row(f"{marker}{row.strategy}", style=style)
            table.add_row(f"  host {row.host}", row.requests, row.share, row.errors, row.ejections,
                          row.ejected_time, row.p99, style=style)
        self.update(table if self.rows else "")
