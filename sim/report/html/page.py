"""The report's page: its parts (``Report``, ``Section``, ``Table``, ``Chart``) and their HTML.

A table is its CSV's text, shown cell for cell: the page holds the very strings the CSV file
holds (``Output.text``, ``explore_csv_text``, ``phase_csv_text``), never numbers formatted
again. Everything the page needs is inside it: the style sheet and script (``assets``), the
charts as inline SVG, the config as a ``data:`` link to download.
"""

from __future__ import annotations

import base64
import csv
import io
import re
from dataclasses import dataclass
from html import escape

from sim.report.html.assets import CSS, JS

_NUMBER = re.compile(r"-?(\d[\d,]*)(\.\d+)?([eE][-+]?\d+)?")


@dataclass(frozen=True)
class Table:
    """A CSV shown as a sortable table: the file it is written to, and its text."""

    name: str
    text: str
    caption: str = ""


@dataclass(frozen=True)
class Chart:
    """A chart (an ``<svg>`` element) and what it shows."""

    caption: str
    svg: str


@dataclass(frozen=True)
class Section:
    """One simulation (or map, or portrait): its words, verdict, charts and tables. ``key``
    prefixes the ids of its strategies' parts in the charts (``svg.figure_svg``)."""

    title: str
    key: str
    labels: tuple[str, ...]
    words: tuple[str, ...]
    verdict: str
    charts: tuple[Chart, ...] = ()
    tables: tuple[Table, ...] = ()
    notes: str = ""  # preformatted text: the command's own summary, as it printed it


@dataclass(frozen=True)
class Report:
    """A whole report: what wrote it and how to write it again, the config, the sections."""

    title: str
    command: str  # the command line that wrote it
    again: str  # a command that writes it again
    version: str
    seeds: tuple[int, ...]
    sections: tuple[Section, ...]
    config_name: str = ""
    config_text: str = ""


def table_html(table: Table) -> str:
    """The CSV's rows as an HTML table, each cell the CSV's own text."""
    rows = list(csv.reader(io.StringIO(table.text)))
    header, body = rows[0], [r for r in rows[1:] if r and not r[0].startswith("# end:")]
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in header)
    lines = []
    for row in body:
        cells = "".join(f'<td class="num">{escape(c)}</td>' if _NUMBER.fullmatch(c) else
                        f"<td>{escape(c)}</td>" for c in row)
        lines.append(f"<tr>{cells}</tr>")
    caption = escape(table.caption or table.name)
    return (f'<div class="table-wrap"><table class="sortable" data-csv="{escape(table.name)}">'
            f"<caption>{caption} · <code>{escape(table.name)}</code> · {len(body):,} rows "
            f"(click a header to sort)</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(lines)}</tbody></table></div>")


def _toggles(section: Section) -> str:
    if len(section.labels) < 2 or not section.charts:
        return ""
    boxes = "".join(
        f'<label><input type="checkbox" class="strategy-toggle" checked '
        f'data-prefix="{section.key}-{s}-"> {escape(label)}</label>'
        for s, label in enumerate(section.labels))
    return f'<div class="toggles">Strategies in the charts: {boxes}</div>'


def section_html(section: Section) -> str:
    words = "".join(f"<li>{escape(line)}</li>" for line in section.words)
    parts = [f'<section id="{section.key}"><h2>{escape(section.title)}</h2>',
             f'<ul class="words">{words}</ul>' if words else "",
             f'<p class="verdict">{escape(section.verdict)}</p>' if section.verdict else "",
             _toggles(section)]
    parts += [f'<figure class="chart">{c.svg}<figcaption>{escape(c.caption)}</figcaption></figure>'
              for c in section.charts]
    if section.notes:
        parts.append(f"<h3>Summary</h3><pre>{escape(section.notes)}</pre>")
    parts += [table_html(t) for t in section.tables]
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def _config_html(report: Report) -> str:
    if not report.config_text:
        return '<p class="muted">The config was not read from a file: none is embedded.</p>'
    data = base64.b64encode(report.config_text.encode("utf-8")).decode("ascii")
    name = escape(report.config_name)
    return (f'<details><summary>The config, <code>{name}</code> '
            f'(<a download="{name}" href="data:application/toml;charset=utf-8;base64,{data}">'
            f"download</a>)</summary><pre>{escape(report.config_text)}</pre></details>")


def page_html(report: Report) -> str:
    """The whole self-contained page."""
    verdicts = "".join(f"<p>{escape(s.verdict)}</p>" for s in report.sections if s.verdict)
    facts = {"backoff-sim": report.version, "seed": ", ".join(map(str, sorted(set(report.seeds)))),
             "written by": report.command, "to write it again": report.again}
    made = "".join(f"<li>{escape(k)}: <code>{escape(v)}</code></li>" for k, v in facts.items() if v)
    contents = "".join(f'<li><a href="#{s.key}">{escape(s.title)}</a></li>' for s in report.sections)
    body = "\n".join(section_html(s) for s in report.sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="backoff-sim {escape(report.version)}">
<title>{escape(report.title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{escape(report.title)}</h1>
<div class="verdict" id="verdict"><strong>Verdict.</strong> {verdicts}</div>
<ul class="muted">{made}</ul>
{_config_html(report)}
<nav><ul>{contents}</ul></nav>
</header>
<main>
{body}
</main>
<script>{JS}</script>
</body>
</html>
"""
