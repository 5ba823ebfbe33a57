"""The overload run's charts stacked: as many of the three panels as the height shows legibly.

On a tall pane traffic, server and failures sit one above the other, sharing the time axis and
the cursor; on a short one fewer show, and ``m`` brings the next panel into view.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from ...view.rundata import RunSeries
from ...view.ticks import DEFAULT_TIME_UNIT
from .series_chart import PANEL_NAMES, SeriesChart

MIN_PANEL_ROWS = 9  # below this a panel is little more than its axes


class SeriesPanels(Vertical):
    """Stacked ``SeriesChart`` panels for the current run."""

    DEFAULT_CSS = """
    SeriesPanels {
        height: 1fr;
        & > SeriesChart { height: 1fr; }
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._first = 0  # index of the first panel shown when not all fit

    def compose(self) -> ComposeResult:
        for panel in PANEL_NAMES:
            yield SeriesChart(panel, id=f"series-{panel}")

    @property
    def charts(self) -> list[SeriesChart]:
        return list(self.query(SeriesChart))

    @property
    def shown(self) -> list[str]:
        """The panels on screen now, top to bottom."""
        return [chart.panel for chart in self.charts if chart.display]

    def on_mount(self) -> None:
        self._arrange()

    def on_resize(self) -> None:
        self._arrange()

    def _arrange(self) -> None:
        n = len(PANEL_NAMES)
        fit = min(n, max(1, self.size.height // MIN_PANEL_ROWS)) if self.size.height else n
        visible = {(self._first + i) % n for i in range(fit)}
        for i, chart in enumerate(self.charts):
            chart.display = i in visible

    def show(self, series: RunSeries | None, time_unit: str = DEFAULT_TIME_UNIT) -> None:
        for chart in self.charts:
            chart.show(series, time_unit=time_unit)

    def set_cursor(self, time: float | None) -> None:
        for chart in self.charts:  # a hidden chart is only drawn once it shows again
            chart.set_cursor(time)

    def cycle(self) -> str:
        """Bring the next panel into view first; returns the panels now shown, joined."""
        self._first = (self._first + 1) % len(PANEL_NAMES)
        self._arrange()
        return ", ".join(self.shown)
