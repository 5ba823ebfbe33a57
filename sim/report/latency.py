"""Rich renderables for simulations against replying servers: the latency table.

What a user comparing strategies under overload wants is how many requests each strategy sent,
how long clients waited, how many never got through, and whether the server came back after an
outage. Work, duration and cost (the contention table) say little here: duration is the horizon.
Colour is never the only signal: the best cells carry a ★, strategies that never recover say
``✗ never (0/3)`` in bold, and columns that are zero in every run are left out and named in the
caption.
"""

from __future__ import annotations

import math

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from sim.analysis.best import BEST, best_rows, star_rule
from sim.analysis.recovery import NEVER_GLYPH, RecoverySummary
from sim.runs.sweep import SweepResult
from sim.settings.spec import SimulationSpec
from sim.export.palette import Palette
from sim.vocabulary.units import goodput_unit, per_unit  # noqa: F401 (goodput_unit: re-exported)

NEVER_MARK = f"{NEVER_GLYPH} never"

# (column header, OpenRunMetrics attribute): means over repetitions.
COUNT_COLUMNS = (("requests", "requests"), ("successes", "successes"), ("timeouts", "timeouts"),
                 ("gave up", "gave_up"), ("unfinished", "unfinished"))
# With a strategy that hedges, ``hedges`` (hedged copies sent beside the requests) follows ``requests``.
HEDGES_COLUMN = ("hedges", "hedges")
LATENCY_COLUMNS = ("p50", "p90", "p99", "max", "mean")
OPTIONAL_COLUMNS = ("timeouts", "gave up")  # dropped (and named) when zero in every run
STRATEGY_MIN_WIDTH = 14
RECOVERY_MIN_WIDTH = 14
# Columns dropped first on narrow terminals; unfinished goes last: it says what p50 covers.
NARROW_DROP_ORDER = ("p90", "mean", "max", "gave up", "timeouts", "p99", "goodput", "successes", "unfinished")
# Left out before a recovery verdict is wrapped onto several lines.
SOFT_DROPS = NARROW_DROP_ORDER[:3]


def _count(value: float) -> str:
    """Whole numbers as such; means to one decimal below 100 (the CSV keeps every digit)."""
    if math.isnan(value):
        return "—"
    return f"{value:,.0f}" if value == round(value) or abs(value) >= 100 else f"{value:,.1f}"


def _latency(value: float) -> str:
    if math.isnan(value):
        return "—"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.1f}"


def _table(title: str) -> Table:
    """Compact: no vertical rules, two spaces between columns, so wide tables fit 120 columns."""
    return Table(title=title, title_justify="left", header_style="bold", box=box.SIMPLE_HEAD,
                 collapse_padding=True, pad_edge=False, show_edge=False, caption_justify="left")


def _rate(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3g}"


def recovery_number(value: float) -> str:
    """A recovery time as the tables print it (whole units from 1,000 up)."""
    return _latency(value)


def recovery_text(summary: RecoverySummary | None, palette: Palette | None = None) -> Text:
    """``—`` when nothing was judged; ``3/3 recovered, median 600 (400–1,000)`` when every
    repetition recovered; ``1/3 recovered`` in bold; ``✗ never (0/3)`` in bold red (times in
    the simulation's time unit, which the table's title names)."""
    if summary is None:
        return Text("—", style="dim")
    text = summary.text(recovery_number, glyph=True)
    if summary.never:
        return Text(text, style=f"bold {palette.base['error'] if palette else 'red'}")
    return Text(text, style="" if summary.all_recovered else "bold")


def unjudged_notes(result: SweepResult) -> list[str]:
    """``not judged at 10, 30 clients: baseline too noisy to tell 80% from 90%``: each reason
    repetitions were not judged for, with the client counts where it applies."""
    where: dict[str, list[str]] = {}
    for k, n in enumerate(result.spec.clients):
        for s in range(len(result.spec.labels)):
            note = result.recovery_note(s, k)
            if note and str(n) not in where.setdefault(note, []):
                where[note].append(str(n))
    return [f"not judged at {', '.join(counts)} clients: {note}." for note, counts in where.items()]


def _marked(text: str, markable: bool, best: bool, accent: str) -> str | Text:
    """``text ★`` in bold for the best cell of a marked column; others padded to keep digits aligned."""
    if not markable:
        return text
    return Text(f"{text} {BEST}", style=f"bold {accent}") if best else f"{text}  "


def count_columns(spec: SimulationSpec) -> tuple[tuple[str, str], ...]:
    """The count columns of ``spec``'s latency table: ``COUNT_COLUMNS``, with ``hedges`` after
    ``requests`` when a strategy entry hedges."""
    if not spec.hedges:
        return COUNT_COLUMNS
    return COUNT_COLUMNS[:1] + (HEDGES_COLUMN,) + COUNT_COLUMNS[1:]


def strategy_values(result: SweepResult, k: int) -> list[dict[str, float | RecoverySummary | None]]:
    """Per strategy at client-count index ``k``: the latency table's cells by column, unformatted
    (counts and goodput are means over repetitions, latencies pooled; recovery as ``recovery``)."""
    counts = count_columns(result.spec)
    return [{**{col: result.open_mean(attr, s, k) for col, attr in counts},
             **result.latency(s, k), "goodput": result.open_mean("goodput", s, k),
             "recovery": result.recovery(s, k)}
            for s in range(len(result.spec.labels))]


def silent_columns(sections: list[list[dict[str, float | None]]]) -> list[str]:
    """The optional columns that are zero in every row of every section."""
    return [col for col in OPTIONAL_COLUMNS
            if all(row[col] == 0 for section in sections for row in section)]




def column_header(col: str, time_unit: str) -> str:
    """A column's header in the CLI table: goodput says its rate (``goodput/tick``)."""
    return f"goodput/{time_unit}" if col == "goodput" else col


def format_value(col: str, value: float) -> str:
    """A count, latency or goodput cell as the table prints it (not ``recovery``)."""
    if col == "goodput":
        return _rate(value)
    return _latency(value) if col in LATENCY_COLUMNS else _count(value)


def latency_table(result: SweepResult, palette: Palette | None = None,
                  hidden: tuple[str, ...] = ()) -> Table:
    """Strategy × client count: request counts, latency percentiles, goodput, recovery time.

    ``hidden`` columns are left out (``LatencyReport`` drops some on narrow terminals); columns
    that are zero in every run are left out too. The caption names both.
    """
    spec = result.spec
    accent = palette.base["accent"] if palette else "yellow"
    has_outage = bool(spec.disruptions)  # outages and incidents alike
    # per client count, per strategy: the cells by column name, unformatted
    sections = [strategy_values(result, k) for k in range(len(spec.clients))]
    silent = silent_columns(sections)
    columns = [col for col in (*(c for c, _ in count_columns(spec)), *LATENCY_COLUMNS, "goodput",
                               *(("recovery",) if has_outage else ()))
               if col not in silent and col not in hidden]

    unit = spec.time_unit
    rate_factor, rate_unit = goodput_unit(unit, [row["goodput"] for section in sections for row in section])
    table = _table(f"{spec.title} · {spec.control.type_name} · {spec.workload.NAME} workload · "
                   f"{spec.repeat} repeat{'' if spec.repeat == 1 else 's'} · times in {unit}")
    table.add_column("clients", justify="right", no_wrap=True)
    # Labels wrap before numbers do, but never down to nothing (LatencyReport drops columns first).
    table.add_column("strategy", min_width=min(STRATEGY_MIN_WIDTH, max(map(len, spec.labels))))
    for col in columns:
        if col == "recovery":  # the verdict wraps rather than widen the table
            table.add_column(col, justify="right", min_width=RECOVERY_MIN_WIDTH)
        else:
            table.add_column(column_header(col, rate_unit), justify="right", no_wrap=True)

    for k, n in enumerate(spec.clients):
        if k:
            table.add_section()
        section = sections[k]
        best = best_rows(section)
        for s, row in enumerate(section):
            cells: list[str | Text] = [str(n) if s == 0 else "", spec.labels[s]]
            for col in columns:
                value = row[col] * rate_factor if col == "goodput" else row[col]
                if col == "recovery":
                    cells.append(recovery_text(value, palette))
                else:
                    cells.append(_marked(format_value(col, value), col in best,
                                         best.get(col) == s, accent))
            table.add_row(*cells)

    notes = [f"{star_rule(has_outage, spec.hedges)}. Counts are means over "
             f"repetitions (unfinished: clients still waiting at the horizon); latency (first attempt "
             f"to success, successful requests only; mean: their mean) is pooled over them; goodput is successes "
             f"{per_unit(rate_unit)}."]
    if has_outage:
        notes.append(f"recovery: repetitions whose goodput came back to at least 85% of its "
                     f"pre-outage level, above 80% beyond noise, and median latency to within 2x, "
                     f"to the horizon; median time from the outage's end (range); {NEVER_MARK}: "
                     f"none did, short of 90% beyond noise; undecided, —: too noisy to tell 80% "
                     f"from 90%.")
        notes += unjudged_notes(result)
    if silent:
        notes.append(f"zero in every run, not shown: {', '.join(silent)}.")
    shown_hidden = [col for col in hidden if col not in silent]
    if shown_hidden:
        notes.append(f"too narrow a terminal for: {', '.join(shown_hidden)} (all columns are in "
                     f"the _latency.csv file).")
    table.caption = "\n".join(notes)
    return table


class LatencyReport:
    """``latency_table`` fitted to the console: on a narrow terminal the least telling columns
    go first (their values stay in the CSV), rather than rich squeezing strategy names away."""

    def __init__(self, result: SweepResult, palette: Palette | None = None) -> None:
        self.result = result
        self.palette = palette

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        hidden: tuple[str, ...] = ()
        table = latency_table(self.result, self.palette)
        # Rich's minimum ignores that it would squeeze a wrapping column to nothing: measure the
        # natural width, less what the strategy labels and recovery verdicts give up by wrapping.
        result = self.result
        labels = result.spec.labels
        label_slack = max(map(len, labels)) - min(STRATEGY_MIN_WIDTH, max(map(len, labels)))
        verdicts = [len(recovery_text(result.recovery(s, k))) for s in range(len(labels))
                    for k in range(len(result.spec.clients))] if result.spec.disruptions else []
        verdict_slack = max(0, max(verdicts, default=0) - RECOVERY_MIN_WIDTH)

        def fits(table: Table, slack: int) -> bool:
            return Measurement.get(console, options.update(width=10_000), table).maximum - slack <= options.max_width

        # A recovery verdict on one line is worth more than the least telling columns: leave
        # those out first (p90, mean, max) if that keeps every verdict whole.
        if verdict_slack:
            for n in range(len(SOFT_DROPS) + 1):
                candidate = latency_table(self.result, self.palette, SOFT_DROPS[:n]) if n else table
                if fits(candidate, label_slack):
                    yield candidate
                    return
        for col in NARROW_DROP_ORDER:
            if fits(table, label_slack + verdict_slack):
                break
            hidden += (col,)
            table = latency_table(self.result, self.palette, hidden)
        yield table
