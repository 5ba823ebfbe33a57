"""The mark of each event type: the glyph the timeline and the log draw for it, the word the
legend gives it, its colour (by broad kind) and its rank in a timeline cell.

Finer than the colour kinds of ``sim.export.palette``: a lock granted (``+ accept``) and a write done
(``✓ commit``) are both successes, a version read (``○ read``) and a write (``● write``) both
requests, but a reader of the timeline has to tell them apart, so each gets a glyph of its own.
A timeline cell that holds several events shows the highest-ranked mark (a give-up outranks a
rejection, which outranks a commit...). Nothing here imports Textual.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.core import events as ev
from sim.export.palette import KIND_BACKOFF, KIND_FAILURE, KIND_GIVE_UP, KIND_REQUEST, KIND_SERVER, KIND_SUCCESS


@dataclass(frozen=True)
class Mark:
    """How one family of events is drawn."""

    name: str
    kind: str  # the colour: a key of ``sim.export.palette.EVENT_KINDS``
    glyph: str
    label: str  # the legend's word


# In rank order, lowest first (rank = index + 1; 0 is an empty cell).
MARKS: tuple[Mark, ...] = (
    Mark("backoff", KIND_BACKOFF, "·", "backoff"),
    Mark("server", KIND_SERVER, "◆", "server"),
    Mark("version", KIND_SERVER, "◇", "version"),
    Mark("read", KIND_REQUEST, "○", "read"),
    Mark("write", KIND_REQUEST, "●", "write"),
    Mark("accept", KIND_SUCCESS, "+", "accept"),
    Mark("done", KIND_SUCCESS, "✓", "commit"),
    Mark("failure", KIND_FAILURE, "✗", "reject"),
    Mark("breaker", KIND_FAILURE, "◉", "breaker"),
    Mark("denied", KIND_GIVE_UP, "⊖", "retry denied"),
    Mark("give_up", KIND_GIVE_UP, "⊘", "give up"),
)
MARK_RANK: dict[str, int] = {mark.name: rank for rank, mark in enumerate(MARKS, start=1)}

CODE_MARKS: dict[int, str] = {
    ev.CLIENT_REQUESTS_WRITE: "write",
    ev.CLIENT_REQUESTS_VERSION: "read",
    ev.CLIENT_BACKS_OFF: "backoff",
    ev.CLIENT_GIVES_UP: "give_up",
    ev.SERVER_ACCEPTS: "accept",
    ev.SERVER_REJECTS: "failure",
    ev.SERVER_REPORTS_VERSION: "version",
    ev.SERVER_TENTATIVELY_WRITES: "server",
    ev.SERVER_ABORTS: "failure",
    ev.SERVER_COMMITS: "done",
    ev.SERVER_DECREMENTS: "server",
    ev.CLIENT_TIMES_OUT: "failure",
    ev.CLIENT_SUCCEEDS: "done",
    ev.SERVER_QUEUES: "server",
    ev.SERVER_COMPLETES: "server",
    ev.SERVER_PAUSES: "failure",
    ev.SERVER_RESUMES: "server",
    ev.CLIENT_RETRY_DENIED: "denied",
    ev.BREAKER_OPENS: "breaker",
    ev.BREAKER_HALF_OPENS: "breaker",
    ev.BREAKER_CLOSES: "breaker",
    ev.CLIENT_CALL_REFUSED: "denied",
    ev.SERVER_DROPS: "failure",
    ev.SERVER_INCIDENT_STARTS: "failure",
    ev.SERVER_INCIDENT_ENDS: "server",
    ev.HOST_EJECTED: "failure",
    ev.HOST_RETURNS: "server",
    ev.HOST_UNHEALTHY: "failure",
    ev.HOST_HEALTHY: "server",
    ev.CLIENT_HEDGES: "write",  # a hedged copy is a write sent
}
# Rank of each event code (index = code), for numpy lookups.
CODE_RANK = np.array([MARK_RANK[CODE_MARKS[code]] for code in range(len(ev.EVENT_NAMES))],
                     dtype=np.int8)
CODE_GLYPHS: tuple[str, ...] = tuple(MARKS[MARK_RANK[CODE_MARKS[code]] - 1].glyph
                                     for code in range(len(ev.EVENT_NAMES)))

# What a ✓ and a ✗ are depends on the events the run holds (first code present wins).
DONE_WORDS: tuple[tuple[int, str], ...] = ((ev.SERVER_COMMITS, "commit"),
                                           (ev.CLIENT_SUCCEEDS, "success"))
FAILURE_WORDS: tuple[tuple[int, str], ...] = ((ev.SERVER_REJECTS, "reject"),
                                              (ev.SERVER_ABORTS, "abort"),
                                              (ev.CLIENT_TIMES_OUT, "timeout"))
# ``⊖``: a retry a policy denied, a call an open breaker refused, or both.
DENIED_WORDS: tuple[tuple[int, str], ...] = ((ev.CLIENT_RETRY_DENIED, "retry denied"),
                                             (ev.CLIENT_CALL_REFUSED, "call refused"))


def run_labels(codes_present: set[int]) -> dict[str, str]:
    """Legend words for a run holding ``codes_present``: ``✗`` is "reject", "abort",
    "timeout" or a mix ("reject/timeout"), ``✓`` "commit" or "success", ``⊖`` "retry denied",
    "call refused" or both."""
    labels = {mark.name: mark.label for mark in MARKS}
    done = [word for code, word in DONE_WORDS if code in codes_present]
    failure = [word for code, word in FAILURE_WORDS if code in codes_present]
    denied = [word for code, word in DENIED_WORDS if code in codes_present]
    if done:
        labels["done"] = "/".join(done)
    if failure:
        labels["failure"] = "/".join(failure)
    if denied:
        labels["denied"] = "/".join(denied)
    return labels


def marks_present(codes_present: set[int]) -> list[str]:
    """The marks a run's events use, in legend order (the client's story first)."""
    used = {CODE_MARKS[code] for code in codes_present}
    order = ("write", "read", "backoff", "accept", "done", "failure", "breaker", "denied", "give_up",
             "version", "server")
    return [name for name in order if name in used]
