"""``--report FILE.html``: one self-contained HTML file that shares a result.

``run``, ``explore``, ``phase`` and the app's export hand their results to a builder here
(``run_report``, ``explore_report``, ``phase_report``), which gathers the CSVs' texts (the same
functions the CSV files are written from), the figures the PNGs are drawn from (as SVG,
``svg``) and the words (``words``) into a ``Report`` (``page``); ``write_report`` writes its
page atomically. Nothing here imports Textual.
"""

from __future__ import annotations

import io
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sim.export.html_report.page import Chart, Report, Section, Table, page_html

if TYPE_CHECKING:  # pragma: no cover
    from sim.exploration.runner import ExploreResult
    from sim.exploration.tune import TuneResult
    from sim.phase.portrait import Portrait
    from sim.runs.sweep import SweepResult
    from sim.spec import SimulationSpec

__all__ = ["REPORT_THEME", "explore_report", "phase_report", "run_report", "write_report"]

# The charts' theme: drawn light, inverted for a dark reader (``assets``).
REPORT_THEME = "backoff-light"
# Tables whose CSVs the report shows (the runs', events' and time series' files are too long to
# read in a page: they stay files).
RUN_TABLES = {"_metrics.csv": "metrics", "_latency.csv": "latency, with the recovery verdict",
              "_tiers.csv": "tiers"}


def _palette():
    from sim.export.palette import load_palette

    return load_palette(REPORT_THEME)


def _version() -> str:
    from sim.export.provenance import package_version

    return package_version() or "unknown (not installed)"


def _config(specs: Sequence[SimulationSpec]) -> tuple[str, str]:
    """The config file the simulations were read from: its name and text ("" when none)."""
    for spec in specs:
        if spec.source and not spec.source.startswith("<") and Path(spec.source).is_file():
            path = Path(spec.source)
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


def _text(renderable) -> str:
    """A rich renderable as the terminal shows it, in plain text."""
    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=110, color_system=None, force_terminal=False).print(renderable)
    return buffer.getvalue().rstrip() + "\n"


def _run_section(i: int, result: SweepResult, palette) -> Section:
    from sim.export.html_report.svg import figure_svg
    from sim.export.html_report.words import described, run_verdict
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


def run_report(results: Sequence[SweepResult], path: str | Path, title: str | None = None) -> Report:
    """The report of ``backoff-sim run`` (or the app's export): a section per simulation."""
    palette = _palette()
    specs = [r.spec for r in results]
    name, text = _config(specs)
    sections = tuple(_run_section(i, r, palette) for i, r in enumerate(results))
    from sim.export.provenance import command_line

    return Report(title or f"backoff-sim: {', '.join(s.title for s in specs)}", command_line(),
                  _again(specs[0] if specs else None, Path(path)), _version(),
                  tuple(s.seed for s in specs), sections, name, text)


def explore_report(results: Sequence[ExploreResult], tunes: Sequence[TuneResult] = ()) -> Report:
    """The report of ``backoff-sim explore``: a section per map (its cells' table, the map as
    the PNG draws it, the summary the command prints) and per tune (its trials)."""
    from sim.exploration.figure import explore_figure
    from sim.exploration.pareto import pareto_csv_text, tune_csv_text
    from sim.exploration.report import LEGEND, boundary_lines, explore_summary, tune_summary
    from sim.exploration.table import explore_csv_text
    from sim.export.html_report.svg import figure_svg
    from sim.export.html_report.words import described
    from sim.export.names import safe_title
    from sim.export.provenance import command_line

    palette = _palette()
    sections = []
    for i, result in enumerate(results):
        plan = result.plan
        labels = plan.base.labels
        key = f"bs{i}"
        axes = "; ".join(f"{a.name}: {', '.join(f'{v:g}' for v in a.values)}" for a in plan.axes)
        stories = [f"{label!r}: {' / '.join(lines)}" for s, label in enumerate(labels)
                   if (lines := boundary_lines(result, s))]
        verdict = (f"{plan.title} map ({LEGEND}): " + "; ".join(stories) + "." if stories else
                   f"{plan.title}: a map of {plan.metric} over {len(plan.cells):,} cells.")
        sections.append(Section(
            f"{plan.title}: map", key, labels, (*described(plan.base), f"Map axes: {axes}; metric: {plan.metric}."),
            verdict, (Chart(f"the map of {plan.metric}", figure_svg(explore_figure(result, palette), labels, key, 0)),),
            (Table(f"{safe_title(plan.title)}_explore.csv", explore_csv_text(result), "the map's cells"),),
            _text(explore_summary(result))))
    for j, tune in enumerate(tunes, start=len(sections)):
        plan = tune.plan
        tables = [Table(f"{safe_title(plan.title)}_tune.csv", tune_csv_text(tune), "every trial")]
        if tune.final is not None:
            tables.append(Table(f"{safe_title(plan.title)}_pareto.csv", pareto_csv_text(tune),
                                "the evaluated candidates"))
        sections.append(Section(f"{plan.title}: tune {plan.label!r}", f"bs{j}", (), (), "", (),
                                tuple(tables), _text(tune_summary(tune))))
    specs = [r.plan.base for r in results] + [t.plan.base for t in tunes]
    name, text = _config(specs)
    return Report(f"backoff-sim explore: {', '.join(s.title for s in specs)}", command_line(),
                  command_line(), _version(), tuple(s.seed for s in specs), tuple(sections), name, text)


def phase_report(portraits: Sequence[tuple[SimulationSpec, Sequence[Portrait], Sequence[str]]]) -> Report:
    """The report of ``backoff-sim phase``: per simulation, its portraits (the PNG's figure), the
    cells' table and the command's line per portrait (basins, healthy state, returning share)."""
    from sim.export.html_report.svg import figure_svg
    from sim.export.html_report.words import described
    from sim.export.names import safe_title
    from sim.export.provenance import command_line
    from sim.phase.csv import PHASE_CSV_SUFFIX, phase_csv_text
    from sim.phase.figure import phase_figure

    palette = _palette()
    sections = []
    for i, (spec, shown, notes) in enumerate(portraits):
        key = f"bs{i}"
        labels = tuple(p.label for p in shown)
        sections.append(Section(
            f"{spec.title}: phase portrait", key, labels, tuple(described(spec)), " ".join(notes),
            (Chart("drift arrows, the return probability shaded, the boundary where half the runs return",
                   figure_svg(phase_figure(list(shown), palette), labels, key, 0)),),
            (Table(f"{safe_title(spec.title)}{PHASE_CSV_SUFFIX}", phase_csv_text(list(shown)), "the portrait's cells"),)))
    specs = [spec for spec, _, _ in portraits]
    name, text = _config(specs)
    return Report(f"backoff-sim phase: {', '.join(s.title for s in specs)}", command_line(), command_line(),
                  _version(), tuple(s.seed for s in specs), tuple(sections), name, text)


def write_report(path: str | Path, report: Report) -> Path:
    """Write the report's page to ``path`` atomically (a temp file beside it, then a rename)."""
    from sim.export.atomic import atomic_write_text

    return atomic_write_text(path, page_html(report))
