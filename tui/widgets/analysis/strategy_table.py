"""What both strategy tables share: a caption over a ``DataTable`` with one row per strategy,
the row cursor on the selected strategy, and columns that give way on narrow panes (and when
even the required ones overflow, strategy names that end in "…").

Subclasses say which rows a sweep gives, how wide each column is, and what a row and the caption
say; this class lays them out. The least telling columns are left out when the pane is narrow
(the caption says how many, and how to see them) rather than cut off at the right edge.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from sim import SweepResult

from ...theme import Palette, palette_for
from ...view.table_fit import CELL_PADDING, fit_columns

PLACEHOLDER = "running sweep…"
MIN_LABEL = 8  # a strategy name is never cut shorter than this


class StrategyTable(Vertical):
    """Row key = strategy index. Subclasses fill in the hooks below."""

    DEFAULT_CSS = """
    StrategyTable {
        height: auto;
        & > .caption {
            color: $text-muted;
            padding: 0 1;
        }
        & > DataTable {
            height: auto;
        }
    }
    """

    CAPTION_ID = "caption"
    REQUIRED: tuple[str, ...] = ()  # column keys always shown
    PRIORITY: tuple[str, ...] = ()  # the others, most wanted first

    class StrategySelected(Message):
        """The user chose a strategy's row (Enter or click)."""

        def __init__(self, strategy_index: int) -> None:
            super().__init__()
            self.strategy_index = strategy_index

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._result: SweepResult | None = None
        self._clients_index = 0
        self._highlighted = 0
        self._columns: list[str] = []
        # The layout the table was last filled with (see ``_layout``); None before the first fill.
        self._laid_out: tuple[tuple[str, ...], int | None] | None = None
        # How to see the columns a narrow pane hides (the screen knows which view is on).
        self.more_hint = "press a"

    # --- hooks ------------------------------------------------------------------------------

    def set_rows(self, result: SweepResult | None, clients_index: int) -> None:
        """Compute the rows for ``result`` at ``clients_index`` (empty for None)."""
        raise NotImplementedError

    def column_widths(self) -> dict[str, int]:
        """Cells each shown-able column needs, in display order."""
        raise NotImplementedError

    def header(self, key: str) -> str:
        return key

    def row_cells(self, index: int, columns: list[str], palette: Palette) -> list[Text]:
        """Row ``index``'s cells for ``columns``."""
        raise NotImplementedError

    def caption(self, result: SweepResult, hidden: int) -> str:
        """What the numbers are; ``hidden`` columns did not fit."""
        raise NotImplementedError

    @property
    def row_count(self) -> int:
        raise NotImplementedError

    # --- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(PLACEHOLDER, id=self.CAPTION_ID, classes="caption", markup=False)
        yield DataTable(cursor_type="row", zebra_stripes=True)

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    @property
    def columns(self) -> list[str]:
        """The column keys shown now."""
        return list(self._columns)

    def on_mount(self) -> None:
        self._fill()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._fill())

    def on_resize(self) -> None:
        """Lay out again whenever the new width changes the columns or how far names are cut.

        Comparing the column set alone is not enough: a sweep that lands while the pane is at
        an interim width (before the screen's layout settles, as happens on a loaded machine)
        keeps the same required columns at the final width, and strategy names would stay cut
        to that interim width (down to the "Strategy" header's) for good.
        """
        if self._layout() != self._laid_out:
            self._fill()

    def set_more_hint(self, hint: str) -> None:
        """Say how to see hidden columns (``press a``, or a wider terminal)."""
        if hint != self.more_hint:
            self.more_hint = hint
            if self.is_mounted:
                self._fill()

    def show(self, result: SweepResult | None, clients_index: int) -> None:
        """Show ``result`` at client-count index ``clients_index``; None shows the placeholder."""
        self._result = result
        self._clients_index = clients_index
        self.set_rows(result, clients_index)
        if self.is_mounted:
            self._fill()

    def highlight(self, strategy_index: int) -> None:
        """Put the row cursor on a strategy (kept across later ``show`` calls)."""
        self._highlighted = strategy_index
        if self.is_mounted and 0 <= strategy_index < self.table.row_count:
            self.table.move_cursor(row=strategy_index)
            self._show_chain()

    def _room(self) -> int:
        return self.size.width - 1  # a scrollbar's cell

    def _shown_columns(self) -> list[str]:
        """The columns that fit the widget's width (every one before the first layout)."""
        widths = self.column_widths()
        if self.size.width <= 0:
            return list(widths)
        required = [key for key in self.REQUIRED if key in widths]
        return fit_columns(widths, required, self.PRIORITY, self._room())

    def _label_room(self, columns: list[str]) -> int | None:
        """Cells the first column's text may take when even the required columns overflow
        (strategy names then end in "…"); None when everything fits."""
        widths = self.column_widths()
        overflow = sum(widths[key] for key in columns) - self._room()
        if self.size.width <= 0 or overflow <= 0 or not columns:
            return None
        return max(MIN_LABEL, widths[columns[0]] - CELL_PADDING - overflow)

    def _layout(self) -> tuple[tuple[str, ...], int | None]:
        """What the current width decides: the columns shown and the room for names."""
        columns = self._shown_columns()
        return tuple(columns), self._label_room(columns) if self._result is not None else None

    def _fill(self) -> None:
        """Lay the table out for the current width: columns, rows, caption, row cursor.

        Columns get explicit widths, measured here from the cells: a ``DataTable`` that sizes
        columns itself measures them on its next idle, and a frame drawn in between (as happens
        during a resize) stays cached at the old widths, squashing the table until it is filled
        again.
        """
        table = self.table
        table.clear(columns=True)
        self._laid_out = layout = self._layout()
        self._columns = columns = list(layout[0])
        result = self._result
        rows: list[list[Text]] = []
        if result is not None:
            palette = palette_for(self.app.theme)
            label_room = layout[1]
            for s in range(self.row_count):
                cells = self.row_cells(s, columns, palette)
                if label_room is not None:
                    cells[0].truncate(label_room, overflow="ellipsis")
                rows.append(cells)
        for i, key in enumerate(columns):
            header = self.header(key)
            width = max([cell_len(header), *(row[i].cell_len for row in rows)])
            table.add_column(header, key=key, width=width)
        caption = self.query_one(f"#{self.CAPTION_ID}", Static)
        if result is None:
            caption.update(PLACEHOLDER)
            return
        caption.update(self.caption(result, len(self.column_widths()) - len(columns)))
        for s, cells in enumerate(rows):
            table.add_row(*cells, key=str(s))
        if 0 <= self._highlighted < table.row_count:
            table.move_cursor(row=self._highlighted)
        self._show_chain()

    def chain_text(self, strategy_index: int) -> str | None:
        """A strategy's whole retry policy, as its tooltip says it: the strategy with its limits
        and every policy of its chain (``Constant(constant=0) + TokenBucket(capacity=5)``)."""
        result = self._result
        if result is None or not 0 <= strategy_index < len(result.spec.strategies):
            return None
        entry = result.spec.strategies[strategy_index]
        return f"{entry.label}: {entry.chain.describe()}"

    def _show_chain(self) -> None:
        """The highlighted strategy's chain as the table's tooltip (hover to read it)."""
        self.table.tooltip = self.chain_text(self._highlighted)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """A click on another row moves the table's cursor (a DataTable selects on a second
        click only): choose that strategy at once. Highlights that come from ``highlight`` or
        a refill match ``_highlighted``, or are stale (the cursor has moved on), and are not
        the user's."""
        event.stop()
        row = event.cursor_row
        if row != self.table.cursor_row or row == self._highlighted or row < 0:
            return
        self._highlighted = row
        self._show_chain()
        self.post_message(self.StrategySelected(row))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        index = int(event.row_key.value) if event.row_key.value is not None else event.cursor_row
        self._highlighted = index
        self._show_chain()
        self.post_message(self.StrategySelected(index))
