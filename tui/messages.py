"""The screens' own messages: what their thread workers post back to the UI thread (progress,
a map cell done, a compared run loaded), in one place as in posting and toolong.

A widget's messages stay nested in its class (``Timeline.Seek``, ``EventLog.Chosen``...), as
Textual does; the handler names follow the class names (``on_sweep_progress``...). High-rate
progress messages define ``can_replace`` so the queue keeps only the newest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # pragma: no cover
    from .view.compare_columns import RunSummary
    from .view.rundata import RunData
    from .state.explore_map import CellResult
    from .state.source import Selection
    from .state.sweeps import SweepKey


class SweepProgress(Message):
    """Runs done so far in a sweep; a newer one replaces an unprocessed older one."""

    def __init__(self, key: SweepKey, done: int, total: int) -> None:
        super().__init__()
        self.key = key
        self.done = done
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SweepProgress) and message.key == self.key


class TuneProgress(Message):
    """Runs done so far in a tune; a newer one replaces an unprocessed older one."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TuneProgress)


class ExportProgress(Message):
    """Files written so far by the export; a newer one replaces an unprocessed older one."""

    def __init__(self, done: int, total: int, name: str) -> None:
        super().__init__()
        self.done = done
        self.total = total
        self.name = name

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ExportProgress)


class MapProgress(Message):
    """Runs done so far in an explore map; a newer one replaces an unprocessed older one."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MapProgress)


class MapCellDone(Message):
    """A cell of the map is known (read back or computed)."""

    def __init__(self, position: int, result: CellResult) -> None:
        super().__init__()
        self.position = position
        self.result = result


class CompareRunLoaded(Message):
    """A run of the comparison was recorded (or read back), with its totals."""

    def __init__(self, selection: Selection, data: RunData, summary: RunSummary) -> None:
        super().__init__()
        self.selection = selection
        self.data = data
        self.summary = summary
