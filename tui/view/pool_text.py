"""A worker pool's state at the cursor as one line of text, fitted to a width.

The state is ``sim.analysis.pool_state``'s (workers busy of how many, the queue's length, the
requests dropped so far by reason); here it becomes words, in the longest form that fits: every
word spelt out, then shorter words, then the drops' total alone, then cut with "…". A reason
no request was dropped for is left out (the total says 0 when none was). Nothing here imports
Textual.
"""

from __future__ import annotations

from sim.analysis.pool_state import PoolSnapshot
from sim.core.events import DROP_REASONS

GLYPH = "◆"  # the server's mark on the timeline
# The drop reasons in the shorter forms.
SHORT_REASONS = {"queue_timeout": "timeout", "codel": "codel", "cancelled": "cancel",
                 "limiter": "limit"}
ELLIPSIS = "…"


def _workers(s: PoolSnapshot, short: bool) -> str:
    """``12 of 16 workers busy``, ``8 of 8 workers busy (incident: 8 of 16 kept)``; short
    ``12/16 busy``, ``8/8 busy ┈ of 16``; ``12 workers busy`` when the pool's size is unknown."""
    if s.workers is None:
        return f"{s.busy:,} busy" if short else f"{s.busy:,} workers busy"
    reduced = s.full_workers is not None and s.workers != s.full_workers
    if short:
        return f"{s.busy:,}/{s.workers:,} busy" + (f" ┈ of {s.full_workers:,}" if reduced else "")
    text = f"{s.busy:,} of {s.workers:,} workers busy"
    return text + (f" (incident: {s.workers:,} of {s.full_workers:,} kept)" if reduced else "")


def _drops(s: PoolSnapshot, short: bool, reasons: bool = True) -> str:
    """``dropped 132: 12 queue_timeout, 120 cancelled``; ``dropped 0``; short ``drops 132:
    12 timeout, 120 cancel``; without ``reasons`` the total alone."""
    word = "drops" if short else "dropped"
    counted = [(reason, n) for reason, n in zip(DROP_REASONS, s.drops) if n]
    if not counted or not reasons:
        return f"{word} {s.dropped:,}"
    return f"{word} {s.dropped:,}: " + ", ".join(
        f"{n:,} {SHORT_REASONS[r] if short else r}" for r, n in counted)


def pool_forms(s: PoolSnapshot) -> list[str]:
    """The line in each form, longest first."""
    return [f"{GLYPH} pool: {_workers(s, False)} · queue {s.queued:,} · {_drops(s, False)}",
            f"{GLYPH} {_workers(s, True)} · queue {s.queued:,} · {_drops(s, False)}",
            f"{GLYPH} {_workers(s, True)} · q {s.queued:,} · {_drops(s, True)}",
            f"{GLYPH} {_workers(s, True)} · q {s.queued:,} · {_drops(s, True, reasons=False)}"]


def pool_line(s: PoolSnapshot, width: int) -> str:
    """The longest form that fits ``width`` cells, else the shortest cut with "…"."""
    forms = pool_forms(s)
    for form in forms:
        if len(form) <= width:
            return form
    shortest = forms[-1]
    return shortest[:max(0, width - 1)] + ELLIPSIS if width > 0 else ""
