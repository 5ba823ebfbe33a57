"""PNG charts of runs against replying servers: time series per strategy, and per-client latency.

Both show the first repetition at the largest client count, one row per strategy on shared axes
so strategies compare at a glance. Built with the ``Figure`` object API (no pyplot), in the
theme's colours, like ``plots``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim.analysis.open_metrics import OpenRunMetrics
from sim.analysis.recovery import RecoverySummary
from sim.analysis.run_series import FAILURE_LINES, with_refusals
from sim.runs.engine import Run
from sim.runs.sweep import SweepResult
from sim.export.atomic import atomic_save_figure
from sim.export.figure_style import DPI, style_axes, style_figure, style_legend, time_axis
from sim.export.palette import SERIES_COLOURS, Palette, load_palette
from sim.models.fleet import HostIncident
from sim.models.incidents import incident_label
from sim.vocabulary.repetitions import repetition_text
from sim.vocabulary.units import format_duration

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# (series name, legend label, index into the theme's series colours: ``SERIES_COLOURS``).
# The failures are the app's failures chart's lines, named as it names them (FAILURE_LINES).
FLOW_LINES = tuple((name, label, SERIES_COLOURS[name]) for name, label in (
    ("offered", "offered"), ("retries", "retries"), ("hedges", "hedges"), ("accepted", "accepted"),
    ("goodput", "goodput (successes)"), *FAILURE_LINES))
LEVEL_LINES = tuple((name, label, SERIES_COLOURS[name])
                    for name, label in (("in_service", "in service"), ("queued", "queued")))


REQUEST_DOT = 12  # marker area (pt²) of the latency PNG's "requests sent" dots


def shown_runs(result: SweepResult) -> tuple[int, dict[str, OpenRunMetrics]]:
    """The largest client count and, per strategy, its first repetition's overload metrics."""
    spec = result.spec
    k = spec.clients.index(spec.max_clients)
    runs = {label: result.open_run(s, k, 0) for s, label in enumerate(spec.labels)}
    return spec.max_clients, {label: m for label, m in runs.items() if m is not None}


def shown_series(result: SweepResult, label: str, clients: int, m: OpenRunMetrics,
                 runs: Mapping[str, Run] | None = None) -> dict[str, np.ndarray]:
    """The run's series, with the refusals by a limit counted from its events: those of the run
    the sweep recorded (``run_sweeps(record=True)``: the run the PNG shows is one it records),
    else of ``runs[label]`` (the export's own recording of that run, ``sim.export.runs``), so
    that the PNG is the same either way; only the clients' own events, a tiered run's lower
    tiers' are theirs."""
    run = result.recorded.get((label, clients))
    if run is None and runs is not None:
        candidate = runs.get(label)
        if candidate is not None and candidate.clients == clients and candidate.repetition == 0:
            run = candidate
    if run is None:
        return m.series
    history = run.history
    clients_of = np.asarray(history.clients)
    keep = clients_of < clients
    return with_refusals(m.series, np.asarray(history.times, dtype=np.float64)[keep],
                         history.codes()[keep], history.details()[keep], m.bucket)


def _short(value: float, unit: str = "") -> str:
    """A latency or time for a title: whole units from 1000 up, one decimal below, then the unit."""
    if math.isnan(value):
        return "—"
    text = f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.1f}"
    return f"{text} {unit}" if unit else text


def _failures(series: dict[str, np.ndarray]) -> str:
    """The run's failures by kind, as the legend names them: ``1,428 dropped by the server``
    (the kinds it had; ``no failures`` when none)."""
    parts = [f"{int(np.sum(series[name])):,} {label}" for name, label in FAILURE_LINES
             if name in series and np.any(series[name])]
    return ", ".join(parts) or "no failures"


def _recovery_notes(result: SweepResult, label: str, m: OpenRunMetrics) -> tuple[str, str]:
    """The shown run's verdict, as the tables give a strategy's (a run is a summary of one:
    `` · this run: 1/1 recovered, median 1,600 ms``, `` · this run: never (0/1)``), and all
    repetitions' (`` · all runs: 3/3 recovered, median ...``); empty when nothing was judged."""
    one = RecoverySummary.of([m.recovery_time])
    if one is None:
        return "", ""
    spec = result.spec
    unit = spec.time_unit
    shown = f" · this run: {one.text(_short, unit)}"
    summary = result.recovery(spec.labels.index(label), spec.clients.index(spec.max_clients))
    return shown, (f" · all runs: {summary.text(_short, unit)}" if summary and summary.runs > 1
                   else "")


def fit_title(text: str, chars: int) -> str:
    """``text`` in lines of at most ``chars`` characters, broken only after a `` · `` or a
    ``, `` (never inside a figure: "1,478 dropped by the server" stays whole), so that a long
    title wraps inside its panel instead of running into the next one or off the figure. The
    lines joined by a space give ``text`` back."""
    lines = [""]
    for part in re.split(r"(?<=, )|(?<= · )", text):
        if lines[-1] and len(lines[-1]) + len(part.rstrip()) > chars:
            lines.append(part)
        else:
            lines[-1] += part
    return "\n".join(line.rstrip(" ") for line in lines)


def title_chars(width: float, columns: int, fontsize: float) -> int:
    """How many characters of a title at ``fontsize`` points fit over one of ``columns`` panels
    of a figure ``width`` inches wide: its share less the y axis's labels (about 0.9 in), at
    0.55 of the font size a character (DejaVu Sans's titles here measure about 0.51)."""
    return int((width / columns - 0.9) * 72 / (0.55 * fontsize))


def _shade_outages(ax: Axes, result: SweepResult, palette: Palette, label_them: bool) -> None:
    """Shade each outage window (and incident of capacity 0), and each other incident more
    lightly; name them inside the panel when ``label_them``."""
    from matplotlib.transforms import blended_transform_factory

    colour = palette.events["failure"]
    spec = result.spec
    windows = [(o.start, o.end, "outage", 0.18) for o in spec.stops]
    windows += [(i.start, i.end, incident_label(i), 0.09) for i in spec.degradations]
    # A lower tier's troubles, lightly as incidents (the clients' server keeps serving), named
    # with their tier: ``tier 3: capacity 50%``, ``tier 2: outage``.
    for number, tier in enumerate(spec.tiers, start=2):
        windows += [(o.start, o.end, f"tier {number}: outage", 0.09) for o in tier.stops]
        windows += [(i.start, i.end, f"tier {number}: {incident_label(i)}", 0.09)
                    for i in tier.degradations]
    # A fleet's: each host's own and the whole fleet's the config gave every host, lightly (the
    # other hosts, or the fleet at its level, keep serving), named with their hosts.
    if spec.fleet is not None:
        windows += [(i.start, i.end, fleet_window_label(i, spec.fleet.hosts), 0.09) for i in spec.fleet.incidents]
    shown: set[str] = set()
    ends: list[float] = []  # of the windows labelled so far, by label row
    for start, end, name, alpha in sorted(windows):
        legend = "outage" if alpha > 0.1 else "incident"
        ax.axvspan(start, end, color=colour, alpha=alpha, linewidth=0,
                   label=legend if legend not in shown else None)
        shown.add(legend)
        if label_them:  # a window that starts inside another is labelled a row lower
            row = next((r for r, e in enumerate(ends) if start >= e), len(ends))
            ends[row:row + 1] = [end]
            ax.text(start, 0.97 - 0.07 * row, f" {name}", color=colour, fontsize=8, va="top", ha="left",
                    transform=blended_transform_factory(ax.transData, ax.transAxes))


def fleet_window_label(incident: HostIncident, fleet_hosts: int) -> str:
    """A fleet incident's label on a chart: ``host 0: crash``, ``hosts 1, 2: errors 30%``, or the
    kind alone for every host (a whole-fleet incident)."""
    what = incident.kind if incident.kind in ("crash", "outage") else incident_label(incident.incident())
    if len(incident.hosts) == fleet_hosts:
        return what
    return f"host{'s' if len(incident.hosts) > 1 else ''} {', '.join(map(str, incident.hosts))}: {what}"


def _per_strategy_figure(result: SweepResult, palette: Palette, width: float, row_height: float,
                         columns: int, sharey: bool | str):
    """A styled figure with one row of ``columns`` panels per strategy shown (the runs at the
    largest client count): ``(figure, axes[row, column], labels, clients, runs)``."""
    from matplotlib.figure import Figure

    clients, runs = shown_runs(result)
    labels = list(runs) or list(result.spec.labels[:1])
    fig = Figure(figsize=(width, 1.2 + row_height * len(labels)), dpi=DPI, layout="constrained")
    style_figure(fig, palette)
    axes = fig.subplots(len(labels), columns, squeeze=False, sharex=True, sharey=sharey)
    return fig, axes, labels, clients, runs


def timeseries_figure(result: SweepResult, palette: Palette | None = None,
                      runs: Mapping[str, Run] | None = None) -> Figure:
    """Per strategy: requests per bucket (left) and the server's state at each bucket's end
    (right), against time, with outage windows shaded; ``runs``: the shown runs recorded,
    where the sweep did not record them (``shown_series``)."""
    palette = palette or load_palette()
    spec = result.spec
    clients, shown = shown_runs(result)
    series = {label: shown_series(result, label, clients, m, runs) for label, m in shown.items()}
    # A series that is zero in every shown run would only hide the x axis: leave it out, say so
    # (a kind of failure the server or the policies cannot have, not at all); a server that
    # keeps no queue (FlakyServer) gets no server-state panel at all.
    silent = [label for name, label, _ in FLOW_LINES + LEVEL_LINES
              if any(name in one for one in series.values())
              and all(not np.any(one.get(name, 0)) for one in series.values())]
    absent = {label for name, label, _ in FLOW_LINES + LEVEL_LINES
              if not any(name in one for one in series.values())}
    with_levels = not all(line_label in silent or line_label in absent for _, line_label, _ in LEVEL_LINES)
    width, columns = (14, 2) if with_levels else (10, 1)
    fig, axes, labels, clients, runs = _per_strategy_figure(result, palette, width, 2.8, columns, "col")
    chars = title_chars(width, columns, 9)
    for row, label in enumerate(labels):
        flows, levels = (axes[row][0], axes[row][1]) if with_levels else (axes[row][0], None)
        m = runs.get(label)
        for ax in (flows, levels) if levels is not None else (flows,):
            style_axes(ax, palette)
            _shade_outages(ax, result, palette, label_them=row == 0)
        if m is None:
            flows.set_title(f"{label}: no run", fontsize=9, color=palette.foreground)
            continue
        starts = np.arange(len(m.series["offered"])) * m.bucket
        for ax, lines in ((flows, FLOW_LINES), (levels, LEVEL_LINES)):
            if ax is None:
                continue
            for name, line_label, colour in lines:
                if line_label in silent or line_label in absent:
                    continue
                ax.plot(starts, series[label][name], drawstyle="steps-post", linewidth=1.2,
                        color=palette.series_color(colour), label=line_label)
        shown, every_run = _recovery_notes(result, label, m)
        flow_title = f"{label}: {m.requests:,} requests, {m.successes:,} successes, {_failures(series[label])}{shown}"
        if levels is not None:
            levels.set_title(fit_title(f"{label}: server state{every_run}", chars), fontsize=9,
                             loc="left", color=palette.foreground)
            levels.set_ylabel("requests")
        else:
            flow_title += every_run
        flows.set_title(fit_title(flow_title, chars), fontsize=9, loc="left", color=palette.foreground)
        flows.set_ylabel(f"per bucket of {format_duration(m.bucket, spec.time_unit)}")
        if row == 0:
            for ax in (flows, levels) if levels is not None else (flows,):
                if ax.get_legend_handles_labels()[0]:  # every line of a panel may be silent
                    style_legend(ax, palette)
    for ax in axes[-1]:
        time_axis(ax, spec.time_unit, float(spec.horizon))
    # The series left out on a line of their own: on the title's line they ran off the figure.
    note = f"\n(always 0, not drawn: {', '.join(silent)})" if silent else ""
    fig.suptitle(f"{spec.control.type_name} · {spec.title}: requests per bucket and server state, "
                 f"{clients:,} clients, {repetition_text(0, spec.repeat)}{note}", color=palette.foreground)
    return fig


def per_client_latency(m: OpenRunMetrics) -> np.ndarray:
    """Each client's mean latency over its successful requests (NaN if none succeeded)."""
    n = m.attempts_per_client.size
    sums = np.bincount(m.latency_clients, weights=m.latencies, minlength=n)
    counts = np.bincount(m.latency_clients, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def latency_figure(result: SweepResult, palette: Palette | None = None) -> Figure:
    """Per strategy, as study 004 plots it: each client's latency, clients sorted by it (line),
    and the requests each of those clients sent (dots, right axis)."""
    palette = palette or load_palette()
    spec = result.spec
    # Each strategy on its own latency scale: one that never recovered has latencies 1,000 times
    # another's, which a shared axis would flatten to nothing.
    fig, axes, labels, clients, runs = _per_strategy_figure(result, palette, 10, 2.6, 1, False)
    axes = axes[:, 0]
    repeats = spec.workload.REPEATS
    dots = palette.foreground
    for ax, label in zip(axes, labels):
        style_axes(ax, palette)
        m = runs.get(label)
        if m is None:
            ax.set_title(f"{label}: no run", fontsize=9, color=palette.foreground)
            continue
        s = spec.labels.index(label)
        latency = per_client_latency(m)
        order = np.argsort(latency, kind="stable")  # clients that never succeeded (NaN) go last
        rank = np.arange(latency.size)
        twin = ax.twinx()
        twin.tick_params(colors=palette.foreground)
        for spine in twin.spines.values():
            spine.set_color(palette.foreground)
        twin.yaxis.label.set_color(palette.foreground)
        # Dots large and opaque enough to see against the panel (at 4 pt², 45% they vanished).
        requests = twin.scatter(rank, m.attempts_per_client[order], s=REQUEST_DOT, color=dots,
                                alpha=0.8, linewidths=0, label="requests sent (right axis)")
        (line,) = ax.plot(rank, latency[order], color=palette.series_color(s), linewidth=1.8,
                          label="latency" + (" (mean of the client's requests)" if repeats else ""))
        ax.set_zorder(twin.get_zorder() + 1)  # the latency line over the dots
        ax.patch.set_visible(False)
        twin.patch.set_facecolor(palette.base["surface"])
        pct = m.latency_percentiles()
        failed = int(np.isnan(latency).sum())
        handles = [line, requests]
        if failed:  # no latency to draw for them: mark where they are
            handles.append(ax.axvspan(latency.size - failed - 0.5, latency.size - 0.5, linewidth=0,
                                      color=palette.events["give_up"], alpha=0.12,
                                      label="clients that never succeeded"))
        tail = f", {failed:,} clients never succeeded" if failed else ""
        unit = spec.time_unit
        ax.set_title(fit_title(f"{label}: p50 {_short(pct['p50'], unit)}, p99 {_short(pct['p99'], unit)}, "
                               f"max {_short(pct['max'], unit)} · {m.requests:,} requests{tail}",
                               title_chars(10, 1, 9)), fontsize=9, loc="left", color=palette.foreground)
        ax.set_ylabel(f"latency ({unit})")
        twin.set_ylabel("requests")
        if ax is axes[0] or failed:
            legend = ax.legend(handles=handles, facecolor=palette.base["panel"],
                               edgecolor=palette.foreground, labelcolor=palette.foreground,
                               fontsize=8, loc="upper left")
            legend.get_frame().set_alpha(0.9)
    axes[-1].set_xlabel("clients, sorted by latency")
    fig.suptitle(f"{spec.control.type_name} · {spec.title}: latency and requests per client, "
                 f"{clients:,} clients, {repetition_text(0, spec.repeat)}", color=palette.foreground)
    return fig


def write_timeseries_png(result: SweepResult, path: str | Path, palette: Palette | None = None,
                         runs: Mapping[str, Run] | None = None) -> Path:
    return atomic_save_figure(timeseries_figure(result, palette, runs), path)


def write_latency_png(result: SweepResult, path: str | Path, palette: Palette | None = None) -> Path:
    return atomic_save_figure(latency_figure(result, palette), path)
