"""The header line: which run is on screen and where the cursor is in it.

It shows data it is given and nothing else: the screen builds a ``Status`` from the app's state
on every change, and the line lays it out on one row when it fits, else on two.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from ..playback import format_speed


@dataclass(frozen=True)
class Status:
    """Everything the header line says."""

    title: str = ""
    control: str = ""
    strategy: str = ""
    clients: int = 0
    repetition: int = 0
    repetitions: int = 0
    seed: int | None = None
    time: float = 0.0
    total: float = 0.0
    index: int = 0
    count: int = 0
    playing: bool = False
    speed: float = 1.0
    animated: bool = True
    loading: bool = False


def selection_text(s: Status) -> Text:
    text = Text()
    text.append(s.title or "—", style="bold")
    for part in (s.control, s.strategy, f"{s.clients} client{'s' if s.clients != 1 else ''}",
                 f"rep #{s.repetition} of {s.repetitions}",
                 "seed —" if s.seed is None else f"seed {s.seed}"):
        text.append(" · ", style="dim")
        text.append(part)
    return text


def clock_text(s: Status) -> Text:
    text = Text()
    if s.loading:
        text.append("loading run…", style="italic")
        return text
    text.append("▶ " if s.playing else "❚❚ ", style="bold")
    text.append(f"t = {s.time:.1f} / {s.total:.1f} ms")
    text.append(" · ", style="dim")
    text.append(f"event {s.index + 1 if s.count else 0} / {s.count}")
    text.append(" · ", style="dim")
    text.append(format_speed(s.speed) if s.animated else "no animation")
    return text


class StatusLine(Widget, can_focus=False):
    """Selection on the left, clock on the right; wraps to two rows on narrow terminals."""

    DEFAULT_CSS = """
    StatusLine {
        height: auto;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._status = Status()

    @property
    def status(self) -> Status:
        return self._status

    def show(self, status: Status) -> None:
        if status != self._status:
            old_lines = self._lines(self.size.width)
            self._status = status
            self.refresh(layout=self._lines(self.size.width) != old_lines)

    def _lines(self, width: int) -> int:
        left, right = selection_text(self._status), clock_text(self._status)
        return 1 if left.cell_len + right.cell_len + 3 <= width else 2

    def get_content_height(self, container, viewport, width: int) -> int:
        return self._lines(width)

    def render(self) -> Text:
        width = self.content_region.width or self.size.width
        left, right = selection_text(self._status), clock_text(self._status)
        if self._lines(width) == 1:
            gap = width - left.cell_len - right.cell_len
            return Text.assemble(left, " " * gap, right)
        left.truncate(width, overflow="ellipsis")
        right.truncate(width, overflow="ellipsis")
        return Text("\n").join([left, right])
