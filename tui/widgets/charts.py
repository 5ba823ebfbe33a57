"""Plotext charts: sweep metrics against client count, and one run's requests over time.

Both widgets keep only their inputs and build the plotext figure in ``render``, so any number of
``show``/``set_cursor`` calls between two frames costs one rebuild, and the figure always fits
the widget's current size. The plot uses plotext's ``clear`` theme: canvas, axes and text take
the widget's CSS ``background`` and ``color`` (``$surface``/``$foreground`` of the Textual theme
built from our palette), which also keeps them legible in 256 and 16 colours; data colours come
from the palette, and each strategy also gets its own marker, so colour never carries meaning
alone.
"""

from __future__ import annotations

import numpy as np
from textual.app import RenderResult
from textual_plotext import Plot, PlotextPlot

from sim.engine import History
from sim.palette import Palette
from sim.sweep import SweepResult

from ..request_points import RequestPoints  # also importable from here, as before
from ..theme import palette_for
from ..ticks import nice_ticks, time_scale

RGB = tuple[int, int, int]

METRICS: tuple[str, ...] = ("work", "duration", "cost")
METRIC_LABELS: dict[str, str] = {"work": "requests", "duration": "duration", "cost": "cost"}
# One marker per strategy, in order (wraps like the palette's series colours).
SERIES_MARKERS: tuple[str, ...] = ("●", "▲", "■", "◆", "▼", "○", "△", "□")

# Below these sizes the legend and axis labels would cover the data: leave them out.
_LEGEND_MIN = (30, 10)
_LABELS_MIN = (40, 14)
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
        if width >= _PLOT_MIN[0] and height >= _PLOT_MIN[1]:
            self.draw(plt, width, height, self.palette)
        elif width > 0 and height > 0:
            plt.title(self.short_title())
        return super().render()

    def draw(self, plt: Plot, width: int, height: int, palette: Palette) -> None:
        """Add this chart's data to the freshly cleared figure."""
        raise NotImplementedError

    def short_title(self) -> str:
        """What to show when the widget is too small for a plot."""
        raise NotImplementedError


class MetricsChart(PaletteChart):
    """Work, duration or cost against client count, one line (and marker) per strategy."""

    def __init__(self, metric: str = "cost", **kwargs) -> None:
        super().__init__(**kwargs)
        self._check_metric(metric)
        self._metric = metric
        self._result: SweepResult | None = None

    @staticmethod
    def _check_metric(metric: str) -> None:
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}: choose one of {', '.join(METRICS)}")

    @property
    def metric(self) -> str:
        return self._metric

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

    def draw(self, plt: Plot, width: int, height: int, palette: Palette) -> None:
        result = self._result
        if result is None:
            plt.title("running sweep…")
            return
        title = f"{self._metric} vs clients"
        plt.title(title if len(title) <= width - 5 else self._metric)  # plotext drops a long one
        xs = [float(n) for n in result.spec.clients]
        means = result.metric(self._metric).mean(axis=2)
        legend = width >= _LEGEND_MIN[0] and height >= _LEGEND_MIN[1]
        for s, label in enumerate(result.spec.labels):
            color = hex_to_rgb(palette.series_color(s))
            ys = [float(v) for v in means[s]]
            if len(xs) > 1:
                plt.plot(xs, ys, marker="braille", color=color)
            plt.scatter(xs, ys, marker=series_marker(s), color=color,
                        label=label if legend else None)
        ticks = thin_ticks(list(result.spec.clients), width - 6, len(str(max(result.spec.clients))))
        plt.xticks([float(t) for t in ticks], [str(t) for t in ticks])
        if width >= _LABELS_MIN[0] and height >= _LABELS_MIN[1]:
            plt.xlabel("clients")
            plt.ylabel(METRIC_LABELS[self._metric])


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

    def show(self, points: RequestPoints | History | None, palette: Palette | None = None,
             title: str | None = None) -> None:
        """Plot a run's requests (None: an empty "no run" placeholder); resets the cursor.

        Give the ``RequestPoints`` that ``RunData`` built in its worker: a ``History`` is
        converted here, on the UI thread (fine for small runs and tests only).
        """
        if isinstance(points, History):
            points = RequestPoints.from_history(points)
        self._points = points
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

    def draw(self, plt: Plot, width: int, height: int, palette: Palette) -> None:
        points = self._points
        if points is None:
            plt.title("no run")
            return
        plt.title(fit_title(self._title, width))
        plot_w, plot_h = max(1, width - 6), max(1, height - 3)
        key = (plot_w, plot_h)
        if key not in self._reduced:
            self._reduced[key] = points.reduce(plot_w, plot_h, self.MAX_POINTS)
        times, clients, marker = self._reduced[key]
        plt.xlim(0.0, max(points.end_time, 1e-9))
        plt.ylim(-0.5, max(points.n_clients - 0.5, 0.5))
        ticks = client_ticks(points.n_clients, plot_h)
        plt.yticks([float(t) for t in ticks], [str(t) for t in ticks])
        unit, scale = time_scale(points.end_time)
        times_at = nice_ticks(points.end_time / scale, 5 if plot_w >= 40 else 3)
        names = [f"{t:g}" for t in times_at]
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
