"""The HTML report of ``backoff-sim phase --report``: per simulation, its portraits (the PNG's
figure), the cells' table as the CSV holds it, and the command's line per portrait.

The page and its parts are ``sim.report.html``'s; this module only says what a portrait shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sim.report.html import Chart, Report, Section, Table, config_of, report_palette, version

if TYPE_CHECKING:  # pragma: no cover
    from sim.phase.portrait import Portrait
    from sim.settings.spec import SimulationSpec


def phase_report(portraits: Sequence[tuple[SimulationSpec, Sequence[Portrait], Sequence[str]]]) -> Report:
    """The report of ``backoff-sim phase``: per simulation, its portraits (the PNG's figure), the
    cells' table and the command's line per portrait (basins, healthy state, returning share)."""
    from sim.report.html.svg import figure_svg
    from sim.report.html.words import described
    from sim.export.names import safe_title
    from sim.export.provenance import command_line
    from sim.phase.csv import PHASE_CSV_SUFFIX, phase_csv_text
    from sim.phase.figure import phase_figure

    palette = report_palette()
    sections = []
    for i, (spec, shown, notes) in enumerate(portraits):
        key = f"bs{i}"
        labels = tuple(p.label for p in shown)
        chart = Chart("drift arrows, the return probability shaded, the boundary where half the runs return",
                      figure_svg(phase_figure(list(shown), palette), labels, key, 0))
        table = Table(f"{safe_title(spec.title)}{PHASE_CSV_SUFFIX}", phase_csv_text(list(shown)),
                      "the portrait's cells")
        verdict = " ".join(f"{note}." for note in notes)  # the command's own line per portrait
        sections.append(Section(f"{spec.title}: phase portrait", key, labels, tuple(described(spec)),
                                verdict, (chart,), (table,)))
    specs = [spec for spec, _, _ in portraits]
    name, text = config_of(specs)
    return Report(f"backoff-sim phase: {', '.join(s.title for s in specs)}", command_line(), command_line(),
                  version(), tuple(s.seed for s in specs), tuple(sections), name, text)
