"""The header line: which run is on screen and where the cursor is in it.

It shows data it is given and nothing else: the screen builds a ``Status`` from the app's state
on every change, and the line lays it out on one row when it fits, else on two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from ..state.playback import format_speed
from ..view.plural import count


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
    incidents: tuple[str, ...] = ()  # the kinds of the incidents under way at the current time
    time_unit: str = "ms"  # what ``time`` and ``total`` are in


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
    parts = [state + Text(f"t = {s.time:.1f} / {s.total:.1f} {s.time_unit}"),
             Text(f"event {s.index + 1 if s.count else 0} / {s.count}"),
             Text(format_speed(s.speed, s.time_unit) if s.animated else "no animation")]
    if s.outage:
        parts.insert(1, Text("░ outage: server paused", style="bold"))
    elif s.incidents:
        parts.insert(1, Text(f"┈ incident: {', '.join(s.incidents)}", style="bold"))
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


# Abbreviations for a line too long for the terminal, applied to the full parts' words (so the
# short line always says what the long one does): (pattern, replacement).
SHORTER: tuple[tuple[str, str], ...] = (
    (r"^([\d,]+) clients?$", r"\1 cl"),
    (r"^rep #?(\d+) of (\d+)$", r"rep \1/\2"),
    (r"^t = (\S+) / ", r"\1/"),
    (r"^event (\S+) / (\S+)$", r"#\1/\2"),
    (r"^░ outage: server paused$", "░ outage"),
    (r"^┈ incident: .*$", "┈ incident"),
)
MIN_NAME = 8  # a title or strategy is cut to this before the other one is cut
SHORTEST_NAME = 4  # and never shorter than this


def _abbreviate(part: Text) -> Text:
    plain = part.plain
    state = next((p for p in ("▶ ", "❚❚ ") if plain.startswith(p)), "")
    plain = plain[len(state):]
    for pattern, replacement in SHORTER:
        plain = re.sub(pattern, replacement, plain)
    return Text.assemble((state, "bold"), (plain, part.style))


def _cut(part: Text, cells: int) -> Text:
    part = part.copy()
    part.truncate(cells, overflow="ellipsis")
    return part


def compact_line(status: Status, width: int) -> Text | None:
    """The status on one line in ``width`` cells, abbreviated: without the control (the help
    and the tables name it) and in shorter words, then without the seed, then without the
    event number (the time says where), then with the title and the strategy cut with "…"
    (the title first); None when even that does not fit."""
    selection = [_abbreviate(p) for i, p in enumerate(selection_parts(status)) if i != 1]
    clock = [_abbreviate(p) for p in clock_parts(status)]
    without_event = [p for p in clock if not p.plain.startswith("#")]
    tries = ((selection, clock), (selection[:-1], clock), (selection[:-1], without_event))
    for parts, right_parts in tries:
        left, right = pack(parts, 10**6)[0], pack(right_parts, 10**6)[0]
        excess = left.cell_len + right.cell_len + 2 - width
        if excess <= 0:
            break
    names = parts[:2]  # title, strategy
    for i, shortest in ((0, MIN_NAME), (1, MIN_NAME), (0, SHORTEST_NAME), (1, SHORTEST_NAME)):
        if excess > 0:  # the title gives way first
            cut = min(excess, max(0, names[i].cell_len - shortest))
            names[i] = _cut(names[i], names[i].cell_len - cut)
            excess -= cut
    if excess > 0:
        return None
    left = pack([*names, *parts[2:]], 10**6)[0]
    return Text.assemble(left, " " * (width - left.cell_len - right.cell_len), right)


def layout(status: Status, width: int) -> list[Text]:
    """One line (selection left, clock right) when it fits, abbreviated if need be; on a
    terminal too narrow even for that, the two wrapped in turn."""
    left, right = pack(selection_parts(status), 10**6)[0], pack(clock_parts(status), 10**6)[0]
    if left.cell_len + right.cell_len + 3 <= width:
        return [Text.assemble(left, " " * (width - left.cell_len - right.cell_len), right)]
    compact = compact_line(status, width)
    if compact is not None:
        return [compact]
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
