"""The HTML report of ``backoff-sim explore --report``: a section per map (its cells' table as
the CSV holds it, the map as the PNG draws it, the summary the command prints) and per tune.

The page and its parts are ``sim.report.html``'s; this module only says what a map shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sim.report.html import Chart, Report, Section, Table, config_of, report_palette, rich_text, version

if TYPE_CHECKING:  # pragma: no cover
    from sim.exploration.runner import ExploreResult
    from sim.exploration.tune import TuneResult


def explore_report(results: Sequence[ExploreResult], tunes: Sequence[TuneResult] = ()) -> Report:
    """The report of ``backoff-sim explore``: a section per map (its cells' table, the map as
    the PNG draws it, the summary the command prints) and per tune (its trials)."""
    from sim.exploration.axes import format_value
    from sim.exploration.figure import explore_figure
    from sim.exploration.pareto import pareto_csv_text, tune_csv_text
    from sim.exploration.report import LEGEND, boundary_lines, explore_summary, tune_summary
    from sim.exploration.table import explore_csv_text
    from sim.report.html.svg import figure_svg
    from sim.report.html.words import described
    from sim.export.names import safe_title
    from sim.export.provenance import command_line

    palette = report_palette()
    sections = []
    for i, result in enumerate(results):
        plan = result.plan
        labels = plan.base.labels
        key = f"bs{i}"
        axes = "; ".join(f"{a.name}: {', '.join(format_value(v) for v in a.values)}" for a in plan.axes)
        stories = [f"{label!r}: {' / '.join(lines)}" for s, label in enumerate(labels)
                   if (lines := boundary_lines(result, s))]
        verdict = (f"{plan.title} map ({LEGEND}): " + "; ".join(stories) + "." if stories else
                   f"{plan.title}: a map of {plan.metric} over {len(plan.cells):,} cells.")
        words = (*described(plan.base), f"Map axes: {axes}; metric: {plan.metric}.")
        chart = Chart(f"the map of {plan.metric}", figure_svg(explore_figure(result, palette), labels, key, 0))
        table = Table(f"{safe_title(plan.title)}_explore.csv", explore_csv_text(result), "the map's cells")
        sections.append(Section(f"{plan.title}: map", key, labels, words, verdict, (chart,), (table,),
                                rich_text(explore_summary(result))))
    for j, tune in enumerate(tunes, start=len(sections)):
        plan = tune.plan
        tables = [Table(f"{safe_title(plan.title)}_tune.csv", tune_csv_text(tune), "every trial")]
        if tune.final is not None:
            tables.append(Table(f"{safe_title(plan.title)}_pareto.csv", pareto_csv_text(tune),
                                "the evaluated candidates"))
        sections.append(Section(f"{plan.title}: tune {plan.label!r}", f"bs{j}", (), (), "", (),
                                tuple(tables), rich_text(tune_summary(tune))))
    specs = [r.plan.base for r in results] + [t.plan.base for t in tunes]
    name, text = config_of(specs)
    return Report(f"backoff-sim explore: {', '.join(s.title for s in specs)}", command_line(),
                  command_line(), version(), tuple(s.seed for s in specs), tuple(sections), name, text)
