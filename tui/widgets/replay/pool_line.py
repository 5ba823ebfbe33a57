"""One row under the timeline: a worker pool's state at the cursor (workers busy of how many,
the queue, the requests dropped so far by reason), for runs against a ``PoolServer``.

The state is read from ``RunData.pool`` (``sim.analysis.pool_state``: a binary search per
cursor move) and worded by ``view.pool_text`` to the row's width; the row is hidden for runs of
other servers.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ...view.pool_text import pool_line
from ...view.rundata import RunData


class PoolLine(Widget, can_focus=False):
    """The pool's state at the cursor; ``display`` is off when the run has no pool."""

    DEFAULT_CSS = """
    PoolLine {
        height: 1;
        padding: 0 1;
        color: $foreground 85%;
        display: none;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._data: RunData | None = None
        self._cursor = 0

    def show(self, data: RunData | None, cursor: int) -> None:
        self._data = data
        self.display = data is not None and data.pool is not None
        self.set_cursor(cursor)

    def set_cursor(self, cursor: int) -> None:
        self._cursor = cursor
        if self.display:
            self.refresh()

    @property
    def text(self) -> str:
        """The line as shown at the row's width."""
        data = self._data
        if data is None or data.pool is None:
            return ""
        return pool_line(data.pool_at(self._cursor), self.content_size.width)

    def render(self) -> Text:
        return Text(self.text, no_wrap=True, overflow="ellipsis")
