"""The timeline's legend: one entry per mark the run uses, the backoff's wait, the density
bars of crowded lanes and the outage and incident shading, fitted to one row.

Entries come from the run (only what it holds is explained, in the words of its model: a ✗ is a
"reject" against a lock, a "timeout" against a queue) and the grid (density bounds). Nothing
here imports Textual; the widget styles the entries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .rundata import RunData
from .marks import MARK_RANK, MARKS, marks_present, run_labels
from .timeline_grid import Grid

OUTAGE_GLYPH = "░"
INCIDENT_GLYPH = "┈"  # an incident that does not stop the server: lighter than an outage
TOKENS_GLYPH = "4"  # an example count: the legend says what the number beside a label is
BREAKER_STATE_GLYPHS = "◉◐"
WAIT_GLYPH = "─"
DENSITY_GLYPHS = "▂▄▆█"

# Shorter words, applied when the legend does not fit its row.
SHORT_WORDS: dict[str, str] = {"backoff": "wait", "accept": "acc", "commit": "ok",
                               "success": "ok", "reject": "rej", "abort": "abrt",
                               "timeout": "t/o", "give up": "quit", "server": "srv",
                               "version": "ver", "outage": "down", "incident": "inc", "write": "wr",
                               "read": "rd", "retry denied": "deny", "call refused": "refd",
                               "breaker": "brk", "policy state": "state"}
# How a legend too wide for its row gives way, step by step: shorter words for the least telling
# entries, then without the server lane's own marks; failures, give-ups and outages, what a
# reader looks for, keep their words longest.
FIT_STEPS: tuple[tuple[str, str], ...] = (
    *(("shorten", name) for name in ("server", "version", "write", "read", "backoff", "accept",
                                     "done")),
    ("drop", "server"), ("drop", "version"),
    *(("shorten", name) for name in ("policy", "density", "breaker", "denied", "give_up",
                                     "failure", "incident", "outage")),
    ("drop", "incident"), ("drop", "outage"),
)


@dataclass(frozen=True)
class LegendEntry:
    """A glyph (coloured as ``mark``'s kind; None: the muted label colour) and its words."""

    glyph: str
    label: str
    mark: str | None = None
    name: str = ""


def density_label(bounds: tuple[int, ...]) -> str:
    """Events per cell of each bar, ``≤2 ≤5 ≤9 >9 events/cell`` (from the quartile bounds)."""
    return " ".join([*(f"≤{b:,}" for b in bounds), f">{bounds[-1]:,}"]) + " events/cell"


def timeline_legend(data: RunData, grid: Grid | None, codes: frozenset[int] | None = None,
                    bounds: tuple[int, ...] | None = None) -> list[LegendEntry]:
    """What the timeline of ``data`` shows, in reading order (the marks of ``codes`` and the
    density ``bounds`` instead of the run's own, for a legend shared by several runs)."""
    present = set(data.codes_present if codes is None else codes)
    labels = run_labels(present)
    entries = []
    for name in marks_present(present):
        mark = MARKS[MARK_RANK[name] - 1]
        glyph = mark.glyph + (WAIT_GLYPH * 2 if name == "backoff" else "")
        entries.append(LegendEntry(glyph, labels[name], name, name))
    tokens, breaker = data.policy_kinds
    if tokens or breaker:  # beside the lane labels: tokens left, a breaker open or half-open
        glyph = (TOKENS_GLYPH if tokens else "") + (BREAKER_STATE_GLYPHS if breaker else "")
        entries.append(LegendEntry(glyph, "policy state", None, "policy"))
    if grid is not None and grid.density:
        entries.append(LegendEntry(DENSITY_GLYPHS,
                                   density_label(grid.density_bounds if bounds is None else bounds),
                                   None, "density"))
    if data.outages:
        entries.append(LegendEntry(OUTAGE_GLYPH, "outage", None, "outage"))
    if data.incidents:
        entries.append(LegendEntry(INCIDENT_GLYPH, "incident", None, "incident"))
    return entries


def legend_width(entries: list[LegendEntry]) -> int:
    return sum(len(e.glyph) + len(e.label) + 2 for e in entries) - 1 if entries else 0


def _shorten(entry: LegendEntry) -> LegendEntry:
    if entry.name == "density":
        return replace(entry, label=entry.label.replace(" events/cell", ""))
    words = "/".join(SHORT_WORDS.get(word, word) for word in entry.label.split("/"))
    return replace(entry, label=words)


def fit_legend(entries: list[LegendEntry], width: int) -> list[LegendEntry]:
    """The entries in ``width`` cells: shorter words for the least telling entries first, then
    without the server lane's own marks (the row is cut at the edge if even that does not fit)."""
    for step, name in FIT_STEPS:
        if legend_width(entries) <= width:
            break
        if step == "drop":
            entries = [e for e in entries if e.name != name]
        else:
            entries = [_shorten(e) if e.name == name else e for e in entries]
    return entries
