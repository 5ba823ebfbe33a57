"""The event log's one-line boxes (its filter, its search): Enter or Escape closes them."""

from __future__ import annotations

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input

FILTER_PLACEHOLDER = "filter: client ids (3 10-19) and/or event types (reject give_up)…"


class FilterInput(Input):
    """An ``Input`` that says when the user is done with it, and how."""

    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    class Closed(Message):
        """The user pressed Enter (``submitted``) or Escape: hide the box."""

        def __init__(self, box: FilterInput, submitted: bool) -> None:
            super().__init__()
            self.box = box
            self.submitted = submitted

        @property
        def control(self) -> FilterInput:
            return self.box

    def __init__(self, *, placeholder: str = FILTER_PLACEHOLDER, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(placeholder=placeholder, id=id, classes=classes, compact=True)

    def action_close(self) -> None:
        self.post_message(self.Closed(self, submitted=False))

    async def action_submit(self) -> None:
        await super().action_submit()
        self.post_message(self.Closed(self, submitted=True))
