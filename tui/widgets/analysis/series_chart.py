"""One panel of an overload run's time series against time, with outage and incident windows and the cursor.

Three panels tell the story of a run: the traffic (new requests, retries, successes per bucket),
the server (requests in service and queued), and the failures (every way a request fails:
``sim.analysis.run_series.FAILURE_LINES``, named as in the time-series PNG). Outage
windows are shaded ``░`` and named in the legend, the cursor is a vertical line, and each line
carries a marker of its own every few buckets, so no line is told apart by colour alone. Line
colours are the PNG export's (``sim.export.palette.SERIES_COLOURS``, through ``tui.theme``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from textual_plotext import Plot

from ...view.latency_rows import format_run_recovery
from ...view.rundata import FAILURE_LINES, RunSeries
from ...theme import SERIES_COLOURS, Palette
from ...view.ticks import DEFAULT_TIME_UNIT, count_ticks, format_duration, nice_ticks, time_scale
from .charts import LegendItem, PaletteChart, fit_title, hex_to_rgb

OUTAGE_GLYPH = "░"
INCIDENT_GLYPH = "┈"  # as the timeline's (tui.view.legend): lighter than an outage
LINE_MARKERS: tuple[str, ...] = ("●", "▲", "■", "◆")
LINE_MARKER = "braille"  # 2×4 dots a cell: the finest line plotext draws
_LABEL_MIN = (40, 12)


@dataclass(frozen=True)
class Panel:
    """Which series one chart shows, and how it names them."""

    name: str
    title: str
    lines: tuple[tuple[str, str], ...]  # (series name, legend label)
    per_bucket: bool  # counts per bucket (flows) rather than a level sampled at bucket ends
    empty: str  # what the title says when every line is zero


PANELS: tuple[Panel, ...] = (
    Panel("traffic", "requests", (("offered", "new"), ("retries", "retries"), ("hedges", "hedges"),
                                  ("goodput", "successes")), True, "no requests"),
    Panel("server", "at the server", (("in_service", "in service"), ("queued", "queued")), False,
          "the server held no requests"),
    Panel("failures", "failures", FAILURE_LINES, True, "no request failed"),
)
PANEL_NAMES = tuple(p.name for p in PANELS)


def recovery_note(series: RunSeries, time_unit: str = DEFAULT_TIME_UNIT) -> str:
    """`` · recovery: 1/1 recovered, median 12,300 ms``, `` · recovery: ✗ never (0/1)`` (the
    tables' text, a run being a summary of one), `` · recovery —: baseline too noisy to tell
    80% from 90%``, or nothing without an outage."""
    verdict = format_run_recovery(series.recovery_time, time_unit)
    if verdict is not None:
        return f" · recovery: {verdict}"
    return f" · recovery —: {series.recovery_note}" if series.recovery_note else ""


class SeriesChart(PaletteChart):
    """One ``Panel`` of the current run's ``RunSeries``."""

    def __init__(self, panel: str = "traffic", **kwargs) -> None:
        super().__init__(**kwargs)
        self._panel = self._find(panel)
        self._series: RunSeries | None = None
        self._cursor: float | None = None
        self._time_unit = DEFAULT_TIME_UNIT

    @staticmethod
    def _find(name: str) -> Panel:
        for panel in PANELS:
            if panel.name == name:
                return panel
        raise ValueError(f"unknown panel {name!r}: choose one of {', '.join(PANEL_NAMES)}")

    @property
    def panel(self) -> str:
        return self._panel.name

    @panel.setter
    def panel(self, name: str) -> None:
        self._panel = self._find(name)
        self.refresh()

    @property
    def cursor(self) -> float | None:
        return self._cursor

    def show(self, series: RunSeries | None, palette: Palette | None = None,
             time_unit: str = DEFAULT_TIME_UNIT) -> None:
        """Plot a run's series (None: a "no time series" placeholder), times in ``time_unit``;
        resets the cursor."""
        self._series = series
        self._time_unit = time_unit
        self._cursor = None
        self._palette = palette
        self.refresh()

    def set_cursor(self, time: float | None) -> None:
        """Move the cursor line to simulated ``time`` (None hides it); cheap, just a redraw."""
        if time != self._cursor:
            self._cursor = time
            self.refresh()

    def title(self) -> str:
        """The panel's title: what it counts, per how long, and how the run ended."""
        series, panel = self._series, self._panel
        if series is None:
            return "no time series"
        title = panel.title
        if panel.per_bucket:
            title += f" per {format_duration(series.bucket, self._time_unit)}"
        if panel.name == "server" and series.derived:
            title += " (not yet completed)"
        if not self._lines():
            title += f": {panel.empty}"
        if panel.name == "traffic":
            title += recovery_note(series, self._time_unit)
        return title

    def short_title(self) -> str:
        return self._panel.title if self._series is not None else "no time series"

    def legend(self, palette: Palette) -> list[LegendItem]:
        """Each line's marker, and the outage shading, below the plot."""
        series = self._series
        if series is None:
            return []
        items = [LegendItem(LINE_MARKERS[i], palette.series_color(SERIES_COLOURS[name]), label)
                 for i, (name, label) in enumerate(self._lines())]
        if series.outages:
            items.append(LegendItem(OUTAGE_GLYPH, palette.events["backoff"], "outage"))
        if series.incidents:
            items.append(LegendItem(INCIDENT_GLYPH, palette.events["backoff"], "incident"))
        return items

    def _lines(self) -> list[tuple[str, str]]:
        """The panel's lines that are not zero throughout (a replay has no separate queue)."""
        series = self._series
        if series is None:
            return []
        lines = [(name, label) for name, label in self._panel.lines
                 if name in series.series and np.any(series.series[name])]
        if series.derived and self._panel.name == "server":
            lines = [(name, "in progress") for name, _ in lines if name == "in_service"]
        return lines

    def draw(self, plt: Plot, width: int, height: int, palette: Palette) -> None:
        series = self._series
        if series is None:
            plt.title("no time series")
            return
        plt.title(fit_title(self.title(), width))
        lines = self._lines()
        xs = series.starts + series.bucket / 2  # each count at its bucket's middle
        end = series.end
        top = max([1.0, *(float(series.series[name].max()) for name, _ in lines)]) * 1.08
        plt.xlim(0.0, end)
        plt.ylim(0.0, top)
        muted = hex_to_rgb(palette.events["backoff"])
        for start, stop in series.incidents:
            plt.rectangle([start, stop], [0.0, top], marker=INCIDENT_GLYPH, color=muted, fill=True)
        for start, stop in series.outages:
            plt.rectangle([start, stop], [0.0, top], marker=OUTAGE_GLYPH, color=muted, fill=True)
        plot_w = max(1, width - 8)
        plot_h = max(1, height - (5 if labels_fit(width, height) else 4))
        every = max(1, len(xs) * 8 // plot_w)  # a marker about every 8 cells
        for i, (name, label) in enumerate(lines):
            colour = hex_to_rgb(palette.series_color(SERIES_COLOURS[name]))
            ys = series.series[name].astype(np.float64)
            plt.plot(xs.tolist(), ys.tolist(), marker=LINE_MARKER, color=colour)
            picks = np.arange(i * every // max(len(lines), 1), len(xs), every)
            plt.scatter(xs[picks].tolist(), ys[picks].tolist(), marker=LINE_MARKERS[i],
                        color=colour)
        ticks = count_ticks(top, plot_h)
        plt.yticks([float(t) for t in ticks], [f"{t:,}" for t in ticks])
        self._time_axis(plt, end, plot_w, labels_fit(width, height), self._time_unit)
        if self._cursor is not None:
            # A column of markers drawn last, so the cursor shows over the data (plotext draws
            # a vline beneath everything else).
            x = min(max(self._cursor, 0.0), end)
            ys = np.linspace(0.0, top, max(2, plot_h * 2)).tolist()
            plt.scatter([x] * len(ys), ys, marker="│", color=hex_to_rgb(palette.base["accent"]))

    @staticmethod
    def _time_axis(plt: Plot, end: float, plot_w: int, labels: bool,
                   time_unit: str = DEFAULT_TIME_UNIT) -> None:
        unit, scale = time_scale(end, time_unit)
        count = 5 if plot_w >= 40 else 3 if plot_w >= 20 else 2
        ticks = [t * scale for t in nice_ticks(end / scale, count)]
        names = [f"{t / scale:,g}" for t in ticks]
        if labels:
            plt.xlabel(f"time ({unit})")
        else:  # no room for an axis label: the last tick says the unit
            names[-1] += f" {unit}"
        plt.xticks(ticks, names)


def labels_fit(width: int, height: int) -> bool:
    return width >= _LABEL_MIN[0] and height >= _LABEL_MIN[1]
