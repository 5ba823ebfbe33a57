"""Plotext charts: sweep metrics against client count, and one run's requests over time.

Both widgets keep only their inputs and build the plotext figure in ``render``, so any number of
``show``/``set_cursor`` calls between two frames costs one rebuild, and the figure always fits
the widget's current size. The plot uses plotext's ``clear`` theme: canvas, axes and text take
the widget's CSS ``background`` and ``color`` (``$surface``/``$foreground`` of the Textual theme
built from our palette), which also keeps them legible in 256 and 16 colours; data colours come
from the palette, and each strategy also gets its own marker, so colour never carries meaning
alone. Legends are drawn below the plot, never over the data, and ticks fall on round values
with thousands separators.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from rich.text import Text
from textual.app import RenderResult
from textual_plotext import Plot, PlotextPlot

from sim import SweepResult

from ...view.request_points import RequestPoints, reduce_points
from ...theme import Palette, palette_for
from ...view.ticks import (
    DEFAULT_TIME_UNIT,
    format_tick,
    log_ticks,
    nice_ticks,
    round_step,
    time_scale,
    value_ticks,
)

RGB = tuple[int, int, int]

METRICS: tuple[str, ...] = ("work", "duration", "cost")
DEFAULT_METRIC = "cost"
METRIC_LABELS: dict[str, str] = {"work": "requests", "duration": "duration", "cost": "cost"}
# One marker per strategy, in order (wraps like the palette's series colours).
SERIES_MARKERS: tuple[str, ...] = ("●", "▲", "■", "◆", "▼", "○", "△", "□")

# Below these sizes a legend or axis labels would leave the data too few rows: leave them out.
_LEGEND_MIN = (30, 10)
_LABELS_MIN = (40, 14)
LEGEND_ROWS = 2  # at most, below the plot
# Below this, plotext has no room for axes and data: show the title alone.
_PLOT_MIN = (16, 5)


def hex_to_rgb(color: str) -> RGB:
    """``#RRGGBB`` → an RGB tuple, the colour form plotext takes."""
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def series_marker(index: int) -> str:
    return SERIES_MARKERS[index % len(SERIES_MARKERS)]


def fit_title(title: str, width: int) -> str:
    """``title`` cut with "…" to what plotext shows in a plot ``width`` wide (it drops longer ones)."""
    room = max(1, width - 5)
    return title if len(title) <= room else title[: room - 1] + "…"


def thin_ticks(values: list[int], room: int, label_width: int) -> list[int]:
    """At most as many of ``values`` as fit in ``room`` cells, evenly spread, ends included."""
    most = max(1, room // (label_width + 1))
    if len(values) <= most:
        return list(values)
    if most == 1:
        return [values[0]]
    step = (len(values) - 1) / (most - 1)
    return sorted({values[round(i * step)] for i in range(most)})


def client_ticks(n_clients: int, rows: int) -> list[int]:
    """Whole client ids for the y axis, about one per three rows, on a 1-2-5 step."""
    most = max(1, rows // 3)
    steps = (m * 10**e for e in range(12) for m in (1, 2, 5))
    step = next(st for st in steps if n_clients <= most * st)
    return list(range(0, max(n_clients, 1), step))


class PaletteChart(PlotextPlot):
    """A plotext plot that redraws from stored inputs at render time, in a palette's colours.

    With no palette given, the palette follows the app's current theme.
    """

    DEFAULT_CSS = """
    PaletteChart {
        background: $surface;
        color: $foreground;
        min-width: 10;
        min-height: 4;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None, disabled: bool = False) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self.theme = "clear"
        self._palette: Palette | None = None

    def on_mount(self) -> None:
        # The base class only re-themes "auto" plots; ours re-read the palette on a theme change.
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.refresh())

    @property
    def palette(self) -> Palette:
        return self._palette if self._palette is not None else palette_for(self.app.theme)

    def render(self) -> RenderResult:
        plt = self.plt
        plt.clear_figure()
        width, height = self.size
        palette = self.palette
        legend = []
        if width >= _LEGEND_MIN[0] and height >= _LEGEND_MIN[1]:
            legend = legend_lines(self.legend(palette), width, LEGEND_ROWS)
        plot_height = height - len(legend)
        if width >= _PLOT_MIN[0] and plot_height >= _PLOT_MIN[1]:
            self.draw(plt, width, plot_height, palette)
        elif width > 0 and height > 0:
            plt.title(self.short_title())
            legend, plot_height = [], height
        # As ``PlotextPlot.render``, at the height left by the legend.
        plt.plotsize(width, plot_height)
        plt._set_size(width, plot_height)
        plt.theme(self._get_plotext_theme_name(self.app.theme))
        text = Text.from_ansi(plt.build())
        text.rstrip()
        for line in legend:
            text.append("\n")
            text.append_text(line)
        return text

    def draw(self, plt: Plot, width: int, height: int, palette: Palette) -> None:
        """Add this chart's data to the freshly cleared figure."""
        raise NotImplementedError

    def legend(self, palette: Palette) -> list[LegendItem]:
        """What the plot's markers and colours mean (none by default)."""
        return []

    def short_title(self) -> str:
        """What to show when the widget is too small for a plot."""
        raise NotImplementedError


@dataclass(frozen=True)
class LegendItem:
    """A marker in a colour, and what it stands for."""

    marker: str
    color: str  # #RRGGBB
    label: str


def legend_lines(items: list[LegendItem], width: int, rows: int) -> list[Text]:
    """The items packed into at most ``rows`` lines of ``width`` cells (labels cut with "…"
    when they do not fit whole), each marker in its colour."""
    if not items:
        return []
    for room in (None, 24, 16, 10, 6):
        labels = [item.label if room is None or len(item.label) <= room
                  else item.label[:room - 1] + "…" for item in items]
        lines: list[list[int]] = [[]]
        used = 0
        for i, label in enumerate(labels):
            cells = len(items[i].marker) + 1 + len(label)
            if lines[-1] and used + 2 + cells > width:
                lines.append([])
                used = 0
            used += cells + (2 if lines[-1] else 0)
            lines[-1].append(i)
        if len(lines) <= rows:
            break
    texts = []
    for line in lines[:rows]:
        text = Text(no_wrap=True, overflow="ellipsis")
        for n, i in enumerate(line):
            if n:
                text.append("  ")
            text.append(items[i].marker, style=items[i].color)
            text.append(f" {labels[i]}")
        text.truncate(width, overflow="ellipsis")
        texts.append(text)
    return texts


def axis_ticks(low: float, high: float, rows: int, log: bool) -> tuple[list[float], list[str]]:
    """(positions, labels) for a value axis ``rows`` tall from ``low`` to ``high``: round
    values with thousands separators; on a log axis the positions are log10 of the values."""
    count = max(2, min(6, rows // 2 + 1))
    if log:
        values = log_ticks(max(low, 1e-12), max(high, low, 1e-12), count)
        return [math.log10(v) for v in values], [format_tick(v) for v in values]
    values = value_ticks(low, high, count)
    step = values[1] - values[0] if len(values) > 1 else round_step(high - low, count)
    return values, [format_tick(v, step) for v in values]


class MetricsChart(PaletteChart):
    """Work, duration or cost against client count, one line (and marker) per strategy; a bar
    per strategy when the simulation has a single client count. ``log`` puts the value axis on
    a log scale, for metrics that span orders of magnitude."""

    def __init__(self, metric: str = DEFAULT_METRIC, **kwargs) -> None:
        super().__init__(**kwargs)
        self._check_metric(metric)
        self._metric = metric
        self._result: SweepResult | None = None
        self._log = False

    @staticmethod
    def _check_metric(metric: str) -> None:
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}: choose one of {', '.join(METRICS)}")

    @property
    def metric(self) -> str:
        return self._metric

    @property
    def log(self) -> bool:
        return self._log

    @log.setter
    def log(self, value: bool) -> None:
        self._log = value
        self.refresh()

    @property
    def bars(self) -> bool:
        """True when the chart is a bar per strategy (one client count, nothing to draw a
        line along)."""
        return self._result is not None and len(self._result.spec.clients) == 1

    def show(self, result: SweepResult | None, metric: str | None = None,
             palette: Palette | None = None) -> None:
        """Plot ``metric`` of ``result`` (None: a "running sweep…" placeholder)."""
        if metric is not None:
            self._check_metric(metric)
            self._metric = metric
        self._result = result
        self._palette = palette
        self.refresh()

    def cycle_metric(self) -> str:
        """Switch to the next metric (work → duration → cost → work) and return its name."""
        self._metric = METRICS[(METRICS.index(self._metric) + 1) % len(METRICS)]
        self.refresh()
        return self._metric

    def short_title(self) -> str:
        return self._metric if self._result is not None else "running sweep…"

    def title(self) -> str:
        result = self._result
        if result is None:
            return "running sweep…"
        title = (f"mean {self._metric} at {result.spec.clients[0]:,} clients" if self.bars
                 else f"{self._metric} vs clients")
        return title + (" (log scale)" if self._log else "")

    def legend(self, palette: Palette) -> list[LegendItem]:
        if self._result is None:
            return []
        return [LegendItem(series_marker(s), palette.series_color(s), label)
                for s, label in enumerate(self._result.spec.labels)]

    def draw(self, plt: Plot, width: int, height: int, palette: Palette) -> None:
        result = self._result
        if result is None:
            plt.title("running sweep…")
            return
        title = self.title()
        plt.title(title if len(title) <= width - 5 else self._metric)  # plotext drops a long one
        means = result.metric(self._metric).mean(axis=2)
        log = self._log and bool((means > 0).any())
        shown = means[means > 0] if log else means
        low = float(shown.min()) if shown.size else 0.0
        high = float(shown.max()) if shown.size else 1.0
        if not log and self.bars:
            low = min(low, 0.0)  # a bar's length is its value: bars start at zero

        def y(values: np.ndarray) -> list[float]:
            return [math.log10(v) if log else float(v) for v in values]

        plot_rows = max(1, height - 4)
        positions, names = axis_ticks(low, high, plot_rows, log)
        if self.bars:
            for s in range(len(result.spec.labels)):
                value = float(means[s, 0])
                if log and value <= 0:
                    continue
                plt.bar([s + 1], y(np.array([value])), color=hex_to_rgb(palette.series_color(s)),
                        width=0.6, marker="sd")
            n = len(result.spec.labels)
            plt.xlim(0.4, n + 0.6)
            plt.xticks([float(s + 1) for s in range(n)], [series_marker(s) for s in range(n)])
        else:
            xs = [float(n) for n in result.spec.clients]
            points = []
            for s in range(len(result.spec.labels)):
                keep = means[s] > 0 if log else np.ones(len(xs), dtype=bool)
                points.append(([x for x, k in zip(xs, keep) if k], y(means[s][keep])))
            # Every line first, then every marker: a later strategy's line drawn over an
            # earlier one's markers would erase them where the lines run close (as on a log
            # axis, where large values bunch up).
            for s, (px, py) in enumerate(points):
                if len(px) > 1:
                    plt.plot(px, py, marker="braille", color=hex_to_rgb(palette.series_color(s)))
            for s, (px, py) in enumerate(points):
                plt.scatter(px, py, marker=series_marker(s), color=hex_to_rgb(palette.series_color(s)))
            ticks = thin_ticks(list(result.spec.clients), width - 6,
                               len(f"{max(result.spec.clients):,}"))
            plt.xticks([float(t) for t in ticks], [f"{t:,}" for t in ticks])
        bottom = positions[0] if not log else min(positions[0], math.log10(low))
        plt.ylim(bottom, max(positions[-1], y(np.array([high]))[0]))
        plt.yticks(positions, names)
        if width >= _LABELS_MIN[0] and height >= _LABELS_MIN[1]:
            plt.xlabel("strategy" if self.bars else "clients")
            label = METRIC_LABELS[self._metric]
            plt.ylabel(f"{label} ({result.spec.time_unit})" if self._metric == "duration" else label)


class RequestsChart(PaletteChart):
    """When each client asked to write, over one run (the reference's scatter), with a cursor.

    Requests up to the cursor are drawn in the request colour, later ones in the muted backoff
    colour, and a vertical line marks the cursor.
    """

    MAX_POINTS = 4000

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._points: RequestPoints | None = None
        self._reduced: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, str]] = {}
        self._cursor: float | None = None
        self._title = "client requests"
        self._time_unit = DEFAULT_TIME_UNIT

    def show(self, points: RequestPoints | None, palette: Palette | None = None,
             title: str | None = None, time_unit: str = DEFAULT_TIME_UNIT) -> None:
        """Plot a run's requests (None: an empty "no run" placeholder), times in ``time_unit``;
        resets the cursor. The points are the ones ``RunData`` built in its worker, so the UI
        thread never scans a history."""
        self._points = points
        self._time_unit = time_unit
        self._reduced = {}
        self._cursor = None
        self._palette = palette
        if title is not None:
            self._title = title
        self.refresh()

    def set_cursor(self, time: float | None) -> None:
        """Move the cursor line to simulated ``time`` (None hides it); cheap, just a redraw."""
        if time != self._cursor:
            self._cursor = time
            self.refresh()

    @property
    def cursor(self) -> float | None:
        return self._cursor

    def short_title(self) -> str:
        return "requests" if self._points is not None else "no run"

    def legend(self, palette: Palette) -> list[LegendItem]:
        if self._points is None or self._cursor is None:
            return []
        return [LegendItem("•", palette.events["request"], "requested"),
                LegendItem("•", palette.events["backoff"], "still to come"),
                LegendItem("│", palette.base["accent"], "cursor")]

    def draw(self, plt: Plot, width: int, height: int, palette: Palette) -> None:
        points = self._points
        if points is None:
            plt.title("no run")
            return
        plt.title(fit_title(self._title, width))
        plot_w, plot_h = max(1, width - 6), max(1, height - 3)
        key = (plot_w, plot_h)
        if key not in self._reduced:
            self._reduced[key] = reduce_points(points, plot_w, plot_h, self.MAX_POINTS)
        times, clients, marker = self._reduced[key]
        plt.xlim(0.0, max(points.end_time, 1e-9))
        plt.ylim(-0.5, max(points.n_clients - 0.5, 0.5))
        ticks = client_ticks(points.n_clients, plot_h)
        plt.yticks([float(t) for t in ticks], [f"{t:,}" for t in ticks])
        unit, scale = time_scale(points.end_time, self._time_unit)
        times_at = nice_ticks(points.end_time / scale, 5 if plot_w >= 40 else 3)
        names = [f"{t:,g}" for t in times_at]
        labels = width >= _LABELS_MIN[0] and height >= _LABELS_MIN[1]
        if labels:
            plt.xlabel(f"time ({unit})")
            plt.ylabel("client id")
        else:
            names[-1] += f" {unit}"
        plt.xticks([t * scale for t in times_at], names)
        cursor = self._cursor
        past_color = hex_to_rgb(palette.events["request"])
        if cursor is None:
            if times.size:
                plt.scatter(times.tolist(), clients.tolist(), marker=marker, color=past_color)
            return
        past = times <= cursor
        future_color = hex_to_rgb(palette.events["backoff"])
        if (~past).any():
            plt.scatter(times[~past].tolist(), clients[~past].tolist(), marker=marker,
                        color=future_color)
        if past.any():
            plt.scatter(times[past].tolist(), clients[past].tolist(), marker=marker,
                        color=past_color)
        plt.vline(cursor, hex_to_rgb(palette.base["accent"]))
