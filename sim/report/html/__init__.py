"""``--report FILE.html``: one self-contained HTML file that shares a result.

``run`` and the app's export hand their sweeps to ``run_report`` here; ``explore`` and
``phase`` to theirs beside their figures (``sim.exploration.html_report``,
``sim.phase.html_report``), which use the parts here. A builder gathers the CSVs' texts (the
same functions the CSV files are written from), the figures the PNGs are drawn from (as SVG,
``svg``) and the words (``words``, a fleet's ``fleet_words``) into a ``Report`` (``page``);
``write_report`` writes its page atomically. ``option`` is the flag. Nothing here imports Textual.
"""

from __future__ import annotations

import io
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sim.report.html.page import Chart, Report, Section, Table, page_html

if TYPE_CHECKING:  # pragma: no cover
    from sim.runs.sweep import SweepResult
    from sim.settings.spec import SimulationSpec

__all__ = ["REPORT_THEME", "Chart", "Report", "Section", "Table", "config_of", "report_palette",
           "rich_text", "run_report", "version", "write_report"]

# The charts' theme: drawn light, inverted for a dark reader (``assets``).
REPORT_THEME = "backoff-light"
# Tables whose CSVs the report shows (the runs', events' and time series' files are too long to
# read in a page: they stay files).
RUN_TABLES = {"_metrics.csv": "metrics", "_latency.csv": "latency, with the recovery verdict",
              "_tiers.csv": "tiers", "_hosts.csv": "hosts of the fleet: what each got and answered"}


def report_palette():
    """The palette the charts are drawn in (``REPORT_THEME``)."""
    from sim.export.palette import load_palette

    return load_palette(REPORT_THEME)


def version() -> str:
    """The installed version, as the provenance file gives it."""
    from sim.export.provenance import package_version

    return package_version() or "unknown (not installed)"


def config_of(specs: Sequence[SimulationSpec]) -> tuple[str, str]:
    """The config file the simulations were read from (provenance's): its name and text (""
    when none)."""
    from sim.export.provenance import config_file

    for path in filter(None, map(config_file, specs)):
        try:
            return path.name, path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return path.name, ""
    return "", ""


def _again(spec: SimulationSpec | None, path: Path) -> str:
    """``backoff-sim run CONFIG --seed N --report FILE``: provenance's command, with the report."""
    from sim.export.provenance import command_line, provenance

    if spec is None:
        return command_line()
    return f"{provenance(spec, [])['reproduce']} --report {shlex.quote(str(path))}"


PROSE_WIDTH = 110  # the report's text lines wrap here; its tables are printed whole
TABLE_WIDTH = 10_000  # as ``sim.commands.stdout.print_table`` prints one to a file


def rich_text(renderable) -> str:
    """A rich renderable as a file gets it, in plain text: prose wrapped at PROSE_WIDTH, every
    table whole (at 110 columns explore's 12-column maps wrapped each "fluid ✓" onto two lines
    and cut headers to "21,0…"), no trailing spaces."""
    from rich.console import Console, Group
    from rich.table import Table

    parts = renderable.renderables if isinstance(renderable, Group) else [renderable]
    buffer = io.StringIO()
    for part in parts:
        width = TABLE_WIDTH if isinstance(part, Table) else PROSE_WIDTH
        Console(file=buffer, width=width, color_system=None, force_terminal=False).print(part)
    lines = (line.rstrip(" ") for line in buffer.getvalue().split("\n"))
    return "\n".join(lines).rstrip() + "\n"


def _run_section(i: int, result: SweepResult, palette) -> Section:
    from sim.report.html.svg import figure_svg
    from sim.report.html.words import described, run_verdict
    from sim.export.names import safe_title
    from sim.export.outputs import Job, outputs_for

    spec = result.spec
    key = f"bs{i}"
    job = Job(result, {}, {}, palette)
    stem = safe_title(spec.title)
    tables = tuple(Table(stem + o.suffix, o.text(job), RUN_TABLES[o.suffix])
                   for o in outputs_for(spec) if o.text is not None and o.suffix in RUN_TABLES)
    figures = []
    if spec.caps.keeps_series:
        from sim.export.overload_plots import latency_figure, timeseries_figure

        figures += [("the time series of the first repetition at the largest client count, "
                     "incidents shaded", timeseries_figure(result, palette)),
                    ("latency and requests per client", latency_figure(result, palette))]
        if spec.tiers:
            from sim.export.tier_plots import tiers_figure

            figures.append(("amplification per tier", tiers_figure(result, palette)))
    else:
        from sim.export.plots import metrics_figure

        figures.append(("work, duration and cost against clients (95% CI)", metrics_figure(result, palette)))
    charts = tuple(Chart(caption, figure_svg(fig, spec.labels, key, j))
                   for j, (caption, fig) in enumerate(figures))
    return Section(spec.title, key, spec.labels, tuple(described(spec)), run_verdict(result),
                   charts, tables)


def run_report(results: Sequence[SweepResult], path: str | Path) -> Report:
    """The report of ``backoff-sim run`` (or the app's export): a section per simulation;
    ``path`` is where it goes (the command that writes it again names it)."""
    palette = report_palette()
    specs = [r.spec for r in results]
    name, text = config_of(specs)
    sections = tuple(_run_section(i, r, palette) for i, r in enumerate(results))
    from sim.export.provenance import command_line

    return Report(f"backoff-sim: {', '.join(s.title for s in specs)}", command_line(),
                  _again(specs[0] if specs else None, Path(path)), version(),
                  tuple(s.seed for s in specs), sections, name, text)


def write_report(path: str | Path, report: Report) -> Path:
    """Write the report's page to ``path`` atomically (a temp file beside it, then a rename)."""
    from sim.export.atomic import atomic_write_text

    return atomic_write_text(path, page_html(report))
