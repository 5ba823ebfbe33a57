"""The contention simulation's charts stacked: the sweep metric chart and the run's requests,
both when the pane is tall enough for both to be read, one at a time when it is not (``m``
brings the next into view), and a compact table of the metric when not even one would be.

A plot shorter than ``MIN_CHART_ROWS`` is little more than its axes: at 80×24 the two charts
got three data rows each.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from sim import SweepResult

from ...theme import palette_for
from ...view.ticks import format_tick
from .charts import DEFAULT_METRIC, METRICS, MetricsChart, RequestsChart, series_marker, thin_ticks

MIN_CHART_ROWS = 12  # title, a legend row, axes and labels, and about six rows of data
REQUESTS = "requests"


def compact_table(result: SweepResult | None, metric: str, width: int,
                  palette_name: str) -> Table | Text:
    """The metric's mean per strategy (rows) at as many client counts (columns) as fit."""
    if result is None:
        return Text("running sweep…")
    spec = result.spec
    means = result.metric(metric).mean(axis=2)
    palette = palette_for(palette_name)
    cell = max(len(format_tick(float(v), 0.1)) for v in means.ravel()) + 2
    label = min(max(len(label) for label in spec.labels) + 2, 24)
    counts = thin_ticks(list(spec.clients), max(cell, width - label - 1), cell)
    what = f"{metric} ({spec.time_unit})" if metric == "duration" else metric
    table = Table(box=None, padding=(0, 1), title=f"mean {what} by clients", title_justify="left",
                  expand=False, show_edge=False)
    table.add_column("clients", no_wrap=True, max_width=label, overflow="ellipsis")
    for n in counts:
        table.add_column(f"{n:,}", justify="right", no_wrap=True)
    for s, name in enumerate(spec.labels):
        row = [Text.assemble((series_marker(s) + " ", palette.series_color(s)), name)]
        k = [spec.clients.index(n) for n in counts]
        row += [format_tick(round(float(means[s, i]), 1), 0.1) for i in k]
        table.add_row(*row)
    return table


class ChartStack(Vertical):
    """The metric chart above the requests chart, as many as fit legibly."""

    DEFAULT_CSS = """
    ChartStack {
        height: 1fr;
        & > MetricsChart, & > RequestsChart { height: 1fr; }
        & > .-folded { display: none; }
        & > #compact-metric { height: 1fr; display: none; padding: 0 1; }
        &.-compact > #compact-metric { display: block; }
        &.-compact > MetricsChart, &.-compact > RequestsChart { display: none; }
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._showing = "metrics"  # the chart shown when only one fits
        self.only_requests = False  # no sweep metrics to chart (a replay, a cancelled sweep)
        self._result: SweepResult | None = None

    def compose(self) -> ComposeResult:
        yield MetricsChart(id="metrics-chart")
        yield RequestsChart(id="requests-chart")
        yield Static("", id="compact-metric")

    @property
    def metrics(self) -> MetricsChart:
        return self.query_one(MetricsChart)

    @property
    def requests(self) -> RequestsChart:
        return self.query_one(RequestsChart)

    @property
    def shown(self) -> list[str]:
        """What is on screen now: ``metrics``, ``requests`` and/or ``table``."""
        if self.has_class("-compact"):
            return ["table"]
        return [name for name, chart in (("metrics", self.metrics), (REQUESTS, self.requests))
                if not chart.has_class("-folded")]

    def on_mount(self) -> None:
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def show_result(self, result: SweepResult | None) -> None:
        self._result = result
        self.metrics.show(result)
        self._update_table()

    def set_only_requests(self, only: bool) -> None:
        if only != self.only_requests:
            self.only_requests = only
            self._fit()

    def _fit(self) -> None:
        """Both charts, one of them, or the compact table, by the height there is."""
        height = self.size.height
        wanted = [REQUESTS] if self.only_requests else ["metrics", REQUESTS]
        if not height:
            fit = len(wanted)
        else:
            fit = min(len(wanted), height // MIN_CHART_ROWS)
        compact = fit == 0 and not self.only_requests
        self.set_class(compact, "-compact")
        shown = wanted if fit >= len(wanted) else [self._showing if self._showing in wanted
                                                   else wanted[0]]
        self.metrics.set_class("metrics" not in shown, "-folded")
        self.requests.set_class(REQUESTS not in shown, "-folded")
        if compact:
            self._update_table()

    def _update_table(self) -> None:
        if self.has_class("-compact") and self.is_mounted:
            self.query_one("#compact-metric", Static).update(
                compact_table(self._result, self.metrics.metric, self.size.width - 2,
                              self.app.theme))

    def cycle(self) -> str:
        """``m``: the next metric; when only one chart fits, the requests chart comes after the
        last metric. Returns what is shown now."""
        metrics = self.metrics
        if self.has_class("-compact"):
            metrics.cycle_metric()
            self._update_table()
            return metrics.metric
        crowded = len(self.shown) == 1 and not self.only_requests
        if crowded and self._showing == REQUESTS:
            self._showing = "metrics"
            metrics.cycle_metric()
        elif crowded and metrics.metric == METRICS[METRICS.index(DEFAULT_METRIC) - 1]:
            self._showing = REQUESTS  # every metric seen: the requests chart, then round again
        else:
            metrics.cycle_metric()
        self._fit()
        self._update_table()
        return "client requests" if self._showing == REQUESTS and crowded else metrics.metric
