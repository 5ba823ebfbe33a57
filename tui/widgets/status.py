"""The header line: which run is on screen and where the cursor is in it.

It shows data it is given and nothing else: the screen builds a ``Status`` from the app's state
on every change, and the line lays it out on one row, in shorter words the narrower the
terminal (the longest form that fits, as the pool line under the timeline does).
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
    # Thousands separated, as the event count and the comparison view's clock are.
    parts = [state + Text(f"t = {s.time:,.1f} / {s.total:,.1f} {s.time_unit}"),
             Text(f"event {s.index + 1 if s.count else 0:,} / {s.count:,}"),  # as the log's title
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


def _whole_total(s: Status) -> Text:
    """``45,123.4/300,000 ms``: the time, and the run's length rounded (it needs no tenths)."""
    return Text.assemble(("▶ " if s.playing else "❚❚ ", "bold"),
                         f"{s.time:,.1f}/{s.total:,.0f} {s.time_unit}")


Floors = tuple[int, int] | None  # how short the title, then the strategy, may be cut


def _forms(status: Status) -> list[tuple[list[Text], list[Text], Floors]]:
    """The abbreviated line's forms, longest first: (selection parts, clock parts, how short
    the title and the strategy may be cut; None: not at all). Each form gives up the least
    telling word left: the control (the help and the tables name it), the seed, the event
    number (the time says where), the run length's tenths, the title's and the strategy's
    tails, more of the title, the speed (``+``/``-`` show it), the words after the outage's or
    incident's glyph, then more of the strategy."""
    selection = [_abbreviate(p) for i, p in enumerate(selection_parts(status)) if i != 1]
    clock = [_abbreviate(p) for p in clock_parts(status)]
    time, rest = clock[0], clock[1:]
    event = [p for p in rest if p.plain.startswith("#")]
    episode = [p for p in rest if p.plain[:1] in "░┈"]
    speed = [p for p in rest if p not in event and p not in episode]
    glyph = [Text(p.plain[:1], style=p.style) for p in episode]
    short = [time if status.loading else _whole_total(status)]
    named = selection[:-1]  # without the seed
    return [(selection, clock, None),
            (named, clock, None),
            (named, [time, *episode, *speed], None),
            (named, [*short, *episode, *speed], None),
            (named, [*short, *episode, *speed], (MIN_NAME, MIN_NAME)),
            (named, [*short, *episode, *speed], (SHORTEST_NAME, MIN_NAME)),
            (named, [*short, *episode], (SHORTEST_NAME, MIN_NAME)),
            (named, [*short, *glyph], (SHORTEST_NAME, MIN_NAME)),
            (named, [*short, *glyph], (SHORTEST_NAME, SHORTEST_NAME))]


def _fit(parts: list[Text], right_parts: list[Text], floors: Floors, width: int,
         force: bool = False) -> Text | None:
    """The form on one line of ``width`` cells, the title then the strategy cut down to their
    ``floors`` if need be; None when it does not fit, unless ``force``: then the line cut
    with "…"."""
    left, right = pack(parts, 10**6)[0], pack(right_parts, 10**6)[0]
    excess = left.cell_len + right.cell_len + 2 - width
    names = parts[:2]  # title, strategy
    for i, floor in enumerate(floors or ()):
        if excess > 0:
            cut = min(excess, max(0, names[i].cell_len - floor))
            names[i] = _cut(names[i], names[i].cell_len - cut)
            excess -= cut
    if excess > 0 and not force:
        return None
    left = pack([*names, *parts[2:]], 10**6)[0]
    line = Text.assemble(left, " " * max(2, width - left.cell_len - right.cell_len), right)
    line.truncate(max(width, 0), overflow="ellipsis")
    return line


def compact_line(status: Status, width: int) -> Text | None:
    """The status on one line in ``width`` cells, in the longest of its abbreviated forms that
    fits (``_forms``); None when even the shortest does not."""
    for parts, right_parts, floors in _forms(status):
        line = _fit(parts, right_parts, floors, width)
        if line is not None:
            return line
    return None


def layout(status: Status, width: int) -> list[Text]:
    """One line, always (selection left, clock right): every word when it fits, else the
    longest abbreviated form that does, else the shortest cut with "…" (a terminal narrower
    than any form)."""
    left, right = pack(selection_parts(status), 10**6)[0], pack(clock_parts(status), 10**6)[0]
    if left.cell_len + right.cell_len + 3 <= width:
        return [Text.assemble(left, " " * (width - left.cell_len - right.cell_len), right)]
    compact = compact_line(status, width)
    if compact is not None:
        return [compact]
    parts, right_parts, floors = _forms(status)[-1]
    line = _fit(parts, right_parts, floors, width, force=True)
    assert line is not None  # forced
    return [line]


class StatusLine(Widget, can_focus=False):
    """Selection on the left, clock on the right, on one row at any width (``layout``)."""

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

    @property
    def shows_speed(self) -> bool:
        """Whether the line, at its width, says the playback speed (a narrow one drops it)."""
        speed = format_speed(self._status.speed, self._status.time_unit)
        return speed in self.render().plain

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
