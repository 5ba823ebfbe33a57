"""The timeline's client picker: a dialog where the user types client ids and ranges."""

from __future__ import annotations

import numpy as np
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Label

from ..view.client_picks import parse_clients
from .prompt import NumberPrompt

ALL_CLIENTS = np.zeros(0, dtype=np.int64)  # what the dialog returns for "every client"


class ClientsPrompt(NumberPrompt):
    """Returns the client ids typed (``ALL_CLIENTS`` for an empty line); None on Escape. A
    mistake is said under the input, which stays open."""

    def __init__(self, n_clients: int, value: str = "") -> None:
        super().__init__("Clients on the timeline",
                         f"ids and ranges, e.g. 3, 10-19 (0-{n_clients - 1}); empty: every client",
                         value=value)
        self._n_clients = n_clients

    def compose(self) -> ComposeResult:
        box = Vertical()
        box.border_title = self._title
        box.border_subtitle = "Enter accepts · Esc cancels"
        with box:
            yield Input(self._value, id="prompt-input")
            yield Label(self._hint, id="prompt-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.prevent_default()  # NumberPrompt's handler would ask for a number
        try:
            ids = parse_clients(event.value, self._n_clients)
        except ValueError as error:
            self.query_one("#prompt-hint", Label).update(str(error))
            return
        self.dismiss(ALL_CLIENTS if ids is None else ids)
