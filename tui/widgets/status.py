"""The header line: which run is on screen and where the cursor is in it.

It shows data it is given and nothing else: the screen builds a ``Status`` from the app's state
on every change, and the line lays it out on one row when it fits, else on two.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from ..playback import format_speed
from ..plural import count


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
    outage: bool = False  # the server is paused at the current time


SEPARATOR = " · "


def selection_parts(s: Status) -> list[Text]:
    """Which run: simulation, control, strategy, clients, repetition, seed."""
    # Repetitions are numbered from 1 on screen (``repetition`` is the 0-based index).
    return [Text(s.title or "—", style="bold"), Text(s.control), Text(s.strategy),
            Text(count(s.clients, "client")),
            Text(f"rep {s.repetition + 1} of {max(s.repetitions, s.repetition + 1)}"),
            Text("seed —" if s.seed is None else f"seed {s.seed}")]


def clock_parts(s: Status) -> list[Text]:
    """Where in the run: play state and time, event index, speed."""
    if s.loading:
        return [Text("loading run…", style="italic")]
    state = Text("▶ " if s.playing else "❚❚ ", style="bold")
    parts = [state + Text(f"t = {s.time:.1f} / {s.total:.1f} ms"),
             Text(f"event {s.index + 1 if s.count else 0} / {s.count}"),
             Text(format_speed(s.speed) if s.animated else "no animation")]
    if s.outage:
        parts.insert(1, Text("░ outage: server paused", style="bold"))
    return parts


def pack(parts: list[Text], width: int) -> list[Text]:
    """Join parts with separators into as few lines of ``width`` cells as they fit in."""
    lines: list[Text] = []
    for part in parts:
        if lines and lines[-1].cell_len + len(SEPARATOR) + part.cell_len <= width:
            lines[-1].append(SEPARATOR, style="dim")
            lines[-1].append_text(part)
        else:
            lines.append(part.copy())
    for line in lines:
        line.truncate(width, overflow="ellipsis")
    return lines


def layout(status: Status, width: int) -> list[Text]:
    """One line (selection left, clock right) when it fits; else the two wrapped in turn."""
    left, right = pack(selection_parts(status), 10**6)[0], pack(clock_parts(status), 10**6)[0]
    if left.cell_len + right.cell_len + 3 <= width:
        return [Text.assemble(left, " " * (width - left.cell_len - right.cell_len), right)]
    return pack(selection_parts(status), width) + pack(clock_parts(status), width)


class StatusLine(Widget, can_focus=False):
    """Selection on the left, clock on the right; wraps onto more rows on narrow terminals."""

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
            width = self.content_size.width
            old_lines = len(layout(self._status, width))
            self._status = status
            self.refresh(layout=len(layout(status, width)) != old_lines)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(layout(self._status, width))

    def render(self) -> Text:
        return Text("\n").join(layout(self._status, self.content_size.width))
