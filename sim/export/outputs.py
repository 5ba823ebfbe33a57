"""The files ``backoff-sim run`` and the app's export write for a simulation, declared once.

Each ``Output`` says its name (``<stem><suffix>``), which simulations it applies to and how it is
written; ``write_simulation``, ``output_paths``, the ``run --help`` text and README's output table
(a test) all read ``OUTPUTS``. Adding a file is one entry here plus its writer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim.analysis.sweep import SweepResult
    from sim.core.engine import Run
    from sim.palette import Palette
    from sim.spec import SimulationSpec


@dataclass(frozen=True)
class Job:
    """What a writer may need: the sweep, the recorded example runs and the palette."""

    result: SweepResult
    representative: Mapping[str, Run]
    scatter: Mapping[str, Run]
    palette: Palette


Writer = Callable[[Job, Path], Path]


@dataclass(frozen=True)
class Output:
    """One output file: ``<stem><suffix>``, written by ``write`` where ``applies`` holds."""

    suffix: str
    help: str  # one line or more for ``run --help`` (lines joined by newlines)
    write: Writer
    # Which simulations get the file; ``series_only``: servers that keep per-bucket series
    # (``Capabilities.keeps_series``), the overload files.
    series_only: bool = False

    @property
    def kind(self) -> str:
        """The key of ``output_paths``: ``metrics_png``..."""
        return self.suffix[1:].replace(".", "_")

    def applies(self, spec: SimulationSpec) -> bool:
        return spec.runs_to_horizon or not self.series_only


def _metrics_png(job: Job, path: Path) -> Path:
    from sim.export.plots import write_metrics_png
    return write_metrics_png(job.result, path, job.palette)


def _scatter_png(job: Job, path: Path) -> Path:
    from sim.export.plots import write_scatter_png
    return write_scatter_png(job.result, job.scatter, path, job.palette)


def _metrics_csv(job: Job, path: Path) -> Path:
    from sim.export.csv_files import write_metrics_csv
    return write_metrics_csv(job.result, path)


def _runs_csv(job: Job, path: Path) -> Path:
    from sim.export.csv_files import write_runs_csv
    return write_runs_csv(job.result, path)


def _events_csv(job: Job, path: Path) -> Path:
    from sim.export.csv_files import write_events_csv
    return write_events_csv(job.representative, path)


def _timeseries_png(job: Job, path: Path) -> Path:
    from sim.export.overload_plots import write_timeseries_png
    return write_timeseries_png(job.result, path, job.palette)


def _latency_png(job: Job, path: Path) -> Path:
    from sim.export.overload_plots import write_latency_png
    return write_latency_png(job.result, path, job.palette)


def _timeseries_csv(job: Job, path: Path) -> Path:
    from sim.export.overload_csv import write_timeseries_csv
    return write_timeseries_csv(job.result, path)


def _latency_csv(job: Job, path: Path) -> Path:
    from sim.export.overload_csv import write_latency_csv
    return write_latency_csv(job.result, path)


# In the order they are written (and listed in the help).
OUTPUTS: tuple[Output, ...] = (
    Output("_metrics.png", "work, duration and cost against clients, with 95% CI bands", _metrics_png),
    Output("_scatter.png", "client write requests over time, largest client count", _scatter_png),
    Output("_metrics.csv", "the table above, one row per strategy and client count", _metrics_csv),
    Output("_runs.csv", "every run of the sweep", _runs_csv),
    Output("_events.csv", "the example histories (open with `backoff-sim replay FILE`)", _events_csv),
    Output("_timeseries.png", "offered, retries, accepted, goodput, rejected, timed out, in service\n"
           "and queued over time, per strategy, outages shaded", _timeseries_png, series_only=True),
    Output("_latency.png", "latency and requests per client, sorted by latency, per strategy",
           _latency_png, series_only=True),
    Output("_timeseries.csv", "every bucket of every run", _timeseries_csv, series_only=True),
    Output("_latency.csv", "latency percentiles, counts, unfinished, goodput and recovery\n"
           "(repetitions recovered, median time) per strategy and clients", _latency_csv,
           series_only=True),
)


def outputs_for(spec: SimulationSpec) -> tuple[Output, ...]:
    """The outputs that apply to a simulation, in writing order."""
    return tuple(o for o in OUTPUTS if o.applies(spec))


def help_lines(series_only: bool) -> str:
    """The ``run --help`` listing of the files for every simulation (or the overload ones)."""
    chosen = [o for o in OUTPUTS if o.series_only == series_only]
    width = max(len(f"<title>{o.suffix}") for o in chosen) + 2
    lines = []
    for o in chosen:
        first, *rest = o.help.split("\n")
        lines.append(f"  {f'<title>{o.suffix}':<{width}}{first}")
        lines += [" " * (2 + width) + more for more in rest]
    return "\n".join(lines)
