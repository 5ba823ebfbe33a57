"""The strategy table's column picker: a list of the table's columns, each ticked when shown.

Space (or Enter, or a click) shows or hides the highlighted column at once, behind the dialog,
so what the table will look like is in sight while picking; r goes back to the columns that fit
the width; Esc closes. The choice lives in the table for this session only.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, SelectionList

from ..widgets.analysis.strategy_table import StrategyTable


class ColumnPicker(ModalScreen[None]):
    """Ticks the columns ``table`` shows; each toggle re-lays the table out."""

    BINDINGS = [Binding("escape,T", "close", "Close"), Binding("r", "automatic", "Fit the width")]

    DEFAULT_CSS = """
    ColumnPicker {
        align: center middle;
        & > Vertical {
            width: 44;
            max-width: 100%;
            height: auto;
            max-height: 100%;
            padding: 0 1;
            border: round $primary;
            background: $surface;
        }
        & SelectionList { height: auto; max-height: 16; }
        & Label { width: 100%; color: $foreground 70%; }
    }
    """

    def __init__(self, table: StrategyTable) -> None:
        super().__init__()
        self._table = table

    def compose(self) -> ComposeResult:
        box = Vertical()
        box.border_title = "Columns of the strategy table"
        box.border_subtitle = "space: show/hide · r: fit · Esc: close"
        with box:
            yield SelectionList[str](*((header, key, shown)
                                       for key, header, shown in self._table.column_choices()),
                                     id="column-list")
            yield Label(self._note(), id="column-note")

    def on_mount(self) -> None:
        self.query_one(SelectionList).focus()

    def _note(self) -> str:
        if self._table.chosen is None:
            return "Now: the columns that fit the width. The strategy's name is always shown."
        return "Now: your columns, whatever the width (r: those that fit)."

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged) -> None:
        event.stop()
        shown = frozenset(self.query_one(SelectionList).selected)
        if shown != {key for key, _, on in self._table.column_choices() if on} \
                or self._table.chosen is not None:
            self._table.choose_columns(shown)
        self.query_one("#column-note", Label).update(self._note())

    def action_automatic(self) -> None:
        """Back to the columns that fit the width (ticks follow)."""
        self._table.choose_columns(None)
        listing = self.query_one(SelectionList)
        with listing.prevent(SelectionList.SelectedChanged):
            listing.deselect_all()
            for key, _, on in self._table.column_choices():
                if on:
                    listing.select(key)
        self.query_one("#column-note", Label).update(self._note())

    def action_close(self) -> None:
        self.dismiss(None)
