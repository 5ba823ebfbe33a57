"""A small modal dialog that asks for one number: the time to go to, or a new seed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.validation import Number
from textual.widgets import Input, Label


class NumberPrompt(ModalScreen[int | float | None]):
    """Returns the number typed (Enter): an ``int`` when ``integer``, else a float; None on
    Escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    DEFAULT_CSS = """
    NumberPrompt {
        align: center middle;
        & > Vertical {
            width: 50;
            max-width: 100%;
            height: auto;
            padding: 0 1;
            border: round $primary;
            background: $surface;
        }
        & Label { width: 100%; color: $foreground 70%; }
        & Input.-invalid { border: tall $error; }
    }
    """

    def __init__(self, title: str, hint: str, *, value: str = "", integer: bool = False,
                 minimum: float | None = None, maximum: float | None = None) -> None:
        super().__init__()
        self._title = title
        self._hint = hint
        self._value = value
        self._integer = integer
        self._validator = Number(minimum=minimum, maximum=maximum)

    def compose(self) -> ComposeResult:
        box = Vertical()
        box.border_title = self._title
        box.border_subtitle = "Enter accepts · Esc cancels"
        with box:
            yield Input(self._value, type="integer" if self._integer else "number",
                        validators=[self._validator], id="prompt-input")
            yield Label(self._hint, id="prompt-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        result = event.validation_result
        if result is not None and not result.is_valid:
            self.query_one("#prompt-hint", Label).update("; ".join(result.failure_descriptions))
            return
        try:
            # A whole number is parsed as one, never through a float: a seed past 2**53 must
            # come back with every digit, or the run on screen could not be reproduced.
            value: int | float = int(event.value) if self._integer else float(event.value)
        except ValueError:
            self.query_one("#prompt-hint", Label).update(
                "type a whole number" if self._integer else "type a number")
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)
