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
from rich.text import Text
from textual.widgets import Static

from sim import SweepResult
from ...view.tier_cells import TierCells, any_denied, tier_cells


DROPPED_FIRST = ("p50", "Succ.", "Req.", "Denied")  # the columns a narrow pane leaves out, in order


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
        self._title = ""
        self.table: Table | None = None

    def show(self, result: SweepResult | None, clients_index: int) -> None:
        """The rows of ``result`` at its ``clients_index``-th client count (none: hidden)."""
        tiered = result is not None and bool(result.spec.tiers)
        self.rows = tier_cells(result, clients_index) if tiered and result is not None else []
        self._denied = tiered and result is not None and any_denied(result)
        if tiered and result is not None:
            clients = result.spec.clients[clients_index]
            # p50 and p99 are in the latency table's unit (its caption names it)
            self._title = f"Tiers · {clients:,} clients · Amplif.: attempts per call"
        self.set_class(bool(self.rows), "-shown")
        self._fill()

    def highlight(self, strategy: str | None) -> None:
        self._highlight = strategy
        self._fill()

    def on_resize(self) -> None:
        self._fill()

    def _columns(self) -> list[str]:
        return ["Amplif.", "Req.", "Succ.", "p50", "p99", *(("Denied",) if self._denied else ())]

    def _table(self, columns: list[str], names: bool = True, name_width: int | None = None) -> Table:
        """The rows with ``columns``; without the strategies' name rows unless ``names``, each
        name cut to ``name_width`` cells (so that rich need not narrow a column of numbers)."""
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True,
                      header_style="bold", expand=False)
        table.add_column("Strategy", no_wrap=True, overflow="ellipsis")
        for name in columns:
            table.add_column(name, justify="right", no_wrap=True, overflow="ellipsis")
        for row in self.rows:
            style = "bold" if row.strategy == self._highlight else ""
            if row.tier == 1 and names:
                marker = "▶ " if style else "  "  # the strategy on screen, without colour too
                name = Text(f"{marker}{row.strategy}")
                if name_width is not None:
                    name.truncate(max(name_width, 4), overflow="ellipsis")
                table.add_row(name, style=style)
            cells = dict(zip(self._columns(), (row.amplification, row.requests, row.successes, row.p50,
                                               row.p99, row.denied)))
            table.add_row(f"  tier {row.tier}", *(cells[name] for name in columns), style=style)
        return table

    def shown_columns(self) -> list[str]:
        """The columns that fit the pane whole: a number cut to "175,…" says nothing, so in a
        narrow pane the least telling columns go (p50, then Succ., then Req.: Amplif. and p99
        stay); the border title names the ones left out (``a`` gives the pane the screen)."""
        columns = self._columns()
        width = self.content_region.width
        if not width or not self.rows or not self.is_mounted:
            return columns
        console = self.app.console
        for name in DROPPED_FIRST:
            if self._fits(console, columns, width):
                break
            if name in columns:
                columns.remove(name)
        return columns

    def _tier_rows_width(self, columns: list[str]) -> int:
        """The width of the table's tier rows alone (a strategy's name on its row may be cut, a
        number not)."""
        console = self.app.console
        table = self._table(columns, names=False)
        return console.measure(table, options=console.options.update_width(10**4)).maximum

    def _fits(self, console, columns: list[str], width: int) -> bool:
        return self._tier_rows_width(columns) <= width

    def _fill(self) -> None:
        if not self.rows:
            self.table = None
            self.update("")
            return
        columns = self.shown_columns()
        hidden = [name for name in self._columns() if name not in columns]
        # The columns left out named first: the title's tail is what a narrow border cuts.
        self.border_title = (f"Tiers · hidden: {', '.join(hidden)} (a: wider) · " + self._title.removeprefix("Tiers · ")
                             if hidden else self._title)
        width = self.content_region.width
        # The names get what the numbers leave: their column is "  tier N" wide without them.
        name_width = (width - self._tier_rows_width(columns) + len("  tier 9")
                      if width and self.is_mounted else None)
        self.table = self._table(columns, name_width=name_width)  # what is on screen
        self.update(self.table)
