"""What both strategy tables share: a caption over a ``DataTable`` with one row per strategy,
the row cursor on the selected strategy, and columns that give way on narrow panes (and when
even the required ones overflow, strategy names that end in "…").

Subclasses say which rows a sweep gives, how wide each column is, and what a row and the caption
say; this class lays them out. The least telling columns are left out when the pane is narrow
(the caption says how many, and how to see them) rather than cut off at the right edge, unless
the user picked the columns (``choose_columns``: those then, whatever the width). The rows may
be sorted by any column shown (``sort_by_next``, ``reverse_sort``; the header says ▲ or ▼).
Nothing is kept on disk: a new app starts in config order with the columns that fit.
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
from ...view.table_sort import Sort, SortValue, next_sort, sort_order

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
        self._chosen: frozenset[str] | None = None  # the user's columns (None: those that fit)
        self._sort: Sort | None = None  # None: config order
        self._order: list[int] = []  # strategy indices, top row first

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

    def sort_value(self, index: int, key: str) -> SortValue:
        """Row ``index``'s value in column ``key``, as the sort compares it (None: missing)."""
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

    @property
    def sort(self) -> Sort | None:
        return self._sort

    @property
    def chosen(self) -> frozenset[str] | None:
        """The columns the user picked (None: those that fit the width)."""
        return self._chosen

    def column_choices(self) -> list[tuple[str, str, bool]]:
        """(key, header, shown now) of every column but the strategy's, for the picker."""
        return [(key, self.header(key), key in self._columns)
                for key in self.column_widths() if key != self.REQUIRED[0]]

    def choose_columns(self, keys: frozenset[str] | None) -> None:
        """Show these columns (and the strategy's) whatever the width; None: those that fit.
        A sort by a column no longer shown is dropped."""
        self._chosen = keys
        if self._sort is not None and keys is not None and self._sort.column not in keys:
            self._sort = None
        self._refill()

    def sort_by_next(self) -> Sort | None:
        """Sort by the next column shown (after the last: config order again)."""
        self._sort = next_sort(self._columns, self._sort)
        self._refill()
        return self._sort

    def reverse_sort(self) -> Sort | None:
        """Flip the sort's direction (with no sort yet: by the first column, largest first)."""
        current = self._sort or next_sort(self._columns, None)
        self._sort = Sort(current.column, not current.descending) if current else None
        self._refill()
        return self._sort

    def _refill(self) -> None:
        self._laid_out = None
        if self.is_mounted:
            self._fill()

    def _row_order(self) -> list[int]:
        """Strategy indices in display order (config order without a sort)."""
        sort, n = self._sort, self.row_count
        if sort is None or sort.column not in self._columns:
            return list(range(n))
        return sort_order([self.sort_value(i, sort.column) for i in range(n)], sort.descending)

    def _row_of(self, strategy_index: int) -> int:
        return self._order.index(strategy_index) if strategy_index in self._order else -1

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
        row = self._row_of(strategy_index)
        if self.is_mounted and 0 <= row < self.table.row_count:
            self.table.move_cursor(row=row)
            self._show_chain()

    def _room(self) -> int:
        return self.size.width - 1  # a scrollbar's cell

    def _shown_columns(self) -> list[str]:
        """The columns that fit the widget's width (every one before the first layout)."""
        widths = self.column_widths()
        if self.size.width <= 0:
            return list(widths)
        if self._chosen is not None:
            return [key for key in widths if key in self._chosen or key == self.REQUIRED[0]]
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
        self._order = self._row_order() if result is not None else []
        if result is not None:
            palette = palette_for(self.app.theme)
            label_room = layout[1]
            for s in self._order:
                cells = self.row_cells(s, columns, palette)
                if label_room is not None:
                    cells[0].truncate(label_room, overflow="ellipsis")
                rows.append(cells)
        sort = self._sort
        for i, key in enumerate(columns):
            header = self.header(key)
            if sort is not None and sort.column == key:
                header = f"{header} {sort.glyph}"
            width = max([cell_len(header), *(row[i].cell_len for row in rows)])
            table.add_column(header, key=key, width=width)
        caption = self.query_one(f"#{self.CAPTION_ID}", Static)
        if result is None:
            caption.update(PLACEHOLDER)
            return
        caption.update(self.caption(result, len(self.column_widths()) - len(columns)))
        for s, cells in zip(self._order, rows):
            table.add_row(*cells, key=str(s))
        row = self._row_of(self._highlighted)
        if 0 <= row < table.row_count:
            table.move_cursor(row=row)
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
        if row != self.table.cursor_row or row < 0 or row >= len(self._order):
            return
        index = self._order[row]
        if index == self._highlighted:
            return
        self._highlighted = index
        self._show_chain()
        self.post_message(self.StrategySelected(index))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        index = int(event.row_key.value) if event.row_key.value is not None else event.cursor_row
        self._highlighted = index
        self._show_chain()
        self.post_message(self.StrategySelected(index))
