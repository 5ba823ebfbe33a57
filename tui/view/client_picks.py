"""What the user types to pick the timeline's clients: ids and ranges, ``3, 10-19, c40``.

The lane labels read ``c7`` and ``c10-19``, so a label copied from the timeline is accepted as
typed. Nothing here imports Textual.
"""

from __future__ import annotations

import numpy as np


def parse_clients(text: str, n_clients: int) -> np.ndarray | None:
    """The client ids ``text`` names (ascending, no repeats); None for an empty text (every
    client). ``ValueError`` says what is wrong, where, and what to type instead."""
    ids: set[int] = set()
    parts = [part.strip() for part in text.replace(" ", ",").split(",")]
    for part in filter(None, parts):
        bounds = [bound.strip().removeprefix("c") for bound in part.split("-")]
        if len(bounds) > 2 or not all(bound.isdigit() for bound in bounds):
            raise ValueError(f"{part!r} is not a client id or range: type ids and ranges "
                             f"like 3, 10-19 (clients 0-{n_clients - 1})")
        lo, hi = int(bounds[0]), int(bounds[-1])
        if lo > hi:
            raise ValueError(f"{part!r} runs backwards: write it as {hi}-{lo}")
        if hi >= n_clients:
            raise ValueError(f"{part!r}: this run has clients 0-{n_clients - 1}")
        ids.update(range(lo, hi + 1))
    return np.array(sorted(ids), dtype=np.int64) if ids else None


def describe_clients(ids: np.ndarray) -> str:
    """``3, 10-19`` for the ids picked: consecutive runs as ranges."""
    if not len(ids):
        return ""
    breaks = np.flatnonzero(np.diff(ids) != 1) + 1
    runs = np.split(ids, breaks)
    return ", ".join(f"{r[0]}" if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
