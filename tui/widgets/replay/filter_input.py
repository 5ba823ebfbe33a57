"""The event log's filter box: typed filters apply as you type; Enter or Escape closes it."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class FilterInput(Input):
    """An ``Input`` that says when the user is done with it."""

    BINDINGS = [Binding("escape", "close", "Close filter", show=False)]

    class Closed(Message):
        """The user pressed Enter or Escape: hide the box, keep the filter."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(placeholder="filter: client ids (3 10-19) and/or event types (reject give_up)…",
                         id=id, classes=classes, compact=True)

    def action_close(self) -> None:
        self.post_message(self.Closed())

    async def action_submit(self) -> None:
        await super().action_submit()
        self.post_message(self.Closed())
