"""The files ``backoff-sim run`` and the app's export write for a simulation, declared once.

Each ``Output`` says its name (``<stem><suffix>``), which simulations it applies to (a feature of
their server kind, ``Capabilities``) and how it is written; ``write_simulation``, ``output_paths``,
the ``run --help`` text and README's output table (``markdown_table``, written there by
``docs/readme_tables.py``) all read ``OUTPUTS``. Adding a file is one entry here plus its writer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim.runs.sweep import SweepResult
    from sim.runs.engine import Run
    from sim.models.controls import Capabilities
    from sim.export.palette import Palette
    from sim.settings.spec import SimulationSpec


@dataclass(frozen=True)
class Job:
    """What a writer may need: the sweep, the recorded example runs and the palette."""

    result: SweepResult
    representative: Mapping[str, Run]
    scatter: Mapping[str, Run]
    palette: Palette
    events: str = "sample"  # what the events file holds (``EVENTS_MODES``)


# ``--events`` of ``run`` and the app: no events file, the example runs' (one per strategy, the
# runs the app replays and ``run`` prints the head of), or every run's every event.
EVENTS_MODES = ("none", "sample", "all")
DEFAULT_EVENTS = "sample"


Writer = Callable[[Job, Path], Path]


@dataclass(frozen=True)
class Output:
    """One output file: ``<stem><suffix>``, written by ``write`` where ``applies`` holds."""

    suffix: str
    help: str  # one line or more for ``run --help`` (lines joined by newlines)
    write: Writer
    # The feature of the server kind (``Capabilities.has``) the file needs; None: every simulation.
    needs: str | None = None
    # A CSV's columns (its writer's header, imported only when asked for: README's table).
    columns: Callable[[], tuple[str, ...]] | None = None
    # A CSV's text, as ``write`` writes it (``sim.run(...).rows(kind)`` reads it without a file).
    text: Callable[[Job], str] | None = None
    # Only for simulations with ``[[simulation.tiers]]`` (a property of the config, not the kind).
    tiered: bool = False
    # Only for simulations with ``[simulation.fleet]``.
    fleet: bool = False

    @property
    def kind(self) -> str:
        """The key of ``output_paths``: ``metrics_png``..."""
        return self.suffix[1:].replace(".", "_")

    def applies(self, caps: Capabilities) -> bool:
        """Whether a simulation whose server kind offers ``caps`` gets the file."""
        return self.needs is None or caps.has(self.needs)


def _metrics_png(job: Job, path: Path) -> Path:
    from sim.export.plots import write_metrics_png
    return write_metrics_png(job.result, path, job.palette)


def _scatter_png(job: Job, path: Path) -> Path:
    from sim.export.plots import write_scatter_png
    return write_scatter_png(job.result, job.scatter, path, job.palette)


def _metrics_csv(job: Job) -> str:
    from sim.export.csv_files import metrics_csv_text
    return metrics_csv_text(job.result)


def _runs_csv(job: Job) -> str:
    from sim.export.csv_files import runs_csv_text
    return runs_csv_text(job.result)


def _events_csv(job: Job) -> str:
    from sim.export.csv_files import events_csv_text
    return events_csv_text(job.representative)


def _events_file(job: Job, path: Path) -> Path:
    """The example runs' events (``_events_csv``), or with ``--events all`` every run's,
    written as they are simulated again (``every_run_parts``)."""
    from sim.export.atomic import atomic_write_text
    from sim.export.csv_files import write_every_run_csv

    if job.events == "all":
        return write_every_run_csv(job.result, path)
    return atomic_write_text(path, _events_csv(job))


def _timeseries_png(job: Job, path: Path) -> Path:
    from sim.export.overload_plots import write_timeseries_png
    return write_timeseries_png(job.result, path, job.palette, job.scatter)


def _latency_png(job: Job, path: Path) -> Path:
    from sim.export.overload_plots import write_latency_png
    return write_latency_png(job.result, path, job.palette)


def _timeseries_csv(job: Job) -> str:
    from sim.export.overload_csv import timeseries_csv_text
    return timeseries_csv_text(job.result)


def _latency_csv(job: Job) -> str:
    from sim.export.overload_csv import latency_csv_text
    return latency_csv_text(job.result)


def _tiers_png(job: Job, path: Path) -> Path:
    from sim.export.tier_plots import write_tiers_png
    return write_tiers_png(job.result, path, job.palette)


def _tiers_csv(job: Job) -> str:
    from sim.export.tiers_csv import tiers_csv_text
    return tiers_csv_text(job.result)


def _hosts_csv(job: Job) -> str:
    from sim.export.hosts_csv import hosts_csv_text
    return hosts_csv_text(job.result)


def _written(text: Callable[[Job], str]) -> Writer:
    """A CSV's writer: its text (``Output.text``), written atomically."""
    def write(job: Job, path: Path) -> Path:
        from sim.export.atomic import atomic_write_text
        return atomic_write_text(path, text(job))
    return write


def _csv(suffix: str, help: str, text: Callable[[Job], str], module: str, header: str,
         needs: str | None = None) -> Output:
    return Output(suffix, help, _written(text), needs=needs, columns=_header(module, header), text=text)


def _header(module: str, name: str) -> Callable[[], tuple[str, ...]]:
    """The header constant ``name`` of the writer module ``module``, read when called."""
    return lambda: getattr(import_module(module), name)


_CSV, _OVERLOAD_CSV = "sim.export.csv_files", "sim.export.overload_csv"
PROVENANCE_SUFFIX = "_provenance.json"
EVENTS_SUFFIX = "_events.csv"


def _provenance_json(job: Job, path: Path) -> Path:
    from sim.export.atomic import atomic_write_text
    from sim.export.provenance import provenance_text

    stem = path.name[:-len(PROVENANCE_SUFFIX)]
    files = [stem + o.suffix for o in outputs_for(job.result.spec, job.events) if o.suffix != PROVENANCE_SUFFIX]
    return atomic_write_text(path, provenance_text(job.result.spec, files))


# In the order they are written (and listed in the help).
OUTPUTS: tuple[Output, ...] = (
    Output("_metrics.png", "work, duration and cost against clients, one line per strategy, 95% CI bands\n"
           "(one client count: a bar per strategy with its CI); goodput, p99 and amplification\n"
           "for runs to a horizon (open or Poisson clients of a server that replies)", _metrics_png),
    Output("_scatter.png", "client write requests over time, one run at the largest client count,\n"
           "one panel per strategy", _scatter_png),
    _csv("_metrics.csv", "the metrics table, one row per strategy and client count", _metrics_csv,
         _CSV, "METRICS_HEADER"),
    _csv("_runs.csv", "every run of the sweep", _runs_csv, _CSV, "RUNS_HEADER"),
    Output("_events.csv", "the example histories (replay them: `backoff-sim replay FILE`), each client\n"
           "event with its call's id (call, -1: none); with [[simulation.tiers]] a last column, tier", _events_file,
           columns=_header(_CSV, "EVENTS_HEADER"), text=_events_csv),
    Output(PROVENANCE_SUFFIX, "what made the set: version, seed, config file and its SHA-256, the\n"
           "command line, and a command that writes it again", _provenance_json),
    Output("_timeseries.png", "offered, retries, accepted, goodput, every failure (timed out, rejected\n"
           "or error reply, dropped by the server, refused by a limit), in service and queued over\n"
           "time, per strategy, outages and incidents shaded (a lower tier's too)", _timeseries_png,
           needs="keeps_series"),
    Output("_latency.png", "latency and requests per client, sorted by latency, per strategy",
           _latency_png, needs="keeps_series"),
    _csv("_timeseries.csv", "every bucket of every run (PoolServer adds server_drops, a strategy that hedges hedges)",
         _timeseries_csv, _OVERLOAD_CSV,
         "TIMESERIES_HEADER", needs="keeps_series"),
    _csv("_latency.csv", "latency percentiles, counts (hedges when a strategy hedges), unfinished, goodput and recovery\n"
         "(repetitions recovered, median time, why some were not judged) per strategy and clients",
         _latency_csv, _OVERLOAD_CSV, "LATENCY_HEADER", needs="keeps_series"),
    Output("_tiers.csv", "with [[simulation.tiers]]: per strategy, clients and tier, attempts arriving\n"
           "per client call (amplification, 95% CI), requests, successes and call latency",
           _written(_tiers_csv), needs="keeps_series", columns=_header("sim.export.tiers_csv", "TIERS_HEADER"),
           text=_tiers_csv, tiered=True),
    Output("_tiers.png", "with [[simulation.tiers]]: amplification per tier, a panel per client count,\n"
           "a line per strategy", _tiers_png, needs="keeps_series", tiered=True),
    Output("_hosts.csv", "with [simulation.fleet]: per strategy, clients and host, requests, successes,\n"
           "errors, timeouts, ejections, time ejected, share of traffic and attempt latency",
           _written(_hosts_csv), needs="keeps_series", columns=_header("sim.export.hosts_csv", "HOSTS_HEADER"),
           text=_hosts_csv, fleet=True),
)


def outputs_for(spec: SimulationSpec, events: str = DEFAULT_EVENTS) -> tuple[Output, ...]:
    """The outputs that apply to a simulation, in writing order (``events``: ``none`` leaves
    out the events file)."""
    return tuple(o for o in OUTPUTS if o.applies(spec.caps) and (bool(spec.tiers) or not o.tiered)
                 and (spec.fleet is not None or not o.fleet)
                 and (events != "none" or o.suffix != EVENTS_SUFFIX))


def help_lines(needs: str | None) -> str:
    """The ``run --help`` listing of the files that need the feature ``needs`` (None: the files
    of every simulation)."""
    chosen = [o for o in OUTPUTS if o.needs == needs]
    width = max(len(f"<title>{o.suffix}") for o in chosen) + 2
    lines = []
    for o in chosen:
        first, *rest = o.help.split("\n")
        lines.append(f"  {f'<title>{o.suffix}':<{width}}{first}")
        lines += [" " * (2 + width) + more for more in rest]
    return "\n".join(lines)


def markdown_table() -> str:
    """README's table of the output files, in writing order: which simulations get each (the
    server kinds offering the feature it needs) and what it holds (a CSV's columns too)."""
    from sim.models import CONTROLS

    rows = ["| file | written for | content |", "|---|---|---|"]
    for o in OUTPUTS:
        who = "every simulation"
        if o.needs is not None:
            kinds = ", ".join(f"`{name}`" for name, cls in CONTROLS.items() if cls.CAPS.has(o.needs))
            who = f"servers with `{o.needs}` ({kinds})"
        if o.tiered:
            who = f"simulations with `[[simulation.tiers]]` ({who})"
        if o.fleet:
            who = f"simulations with `[simulation.fleet]` ({who})"
        content = o.help.replace("\n", " ")
        if o.columns is not None:
            content += f": `{','.join(o.columns())}`"
        rows.append(f"| `<title>{o.suffix}` | {who} | {content} |")
    return "\n".join(rows) + "\n"
