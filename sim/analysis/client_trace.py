"""One client's attempts across a recorded run: where they are, which comes next.

What following a client in the app reads (the timeline highlights the attempts, keys jump to the
next or previous one): every request the client sent (``client_requests_write``: the attempt
number is its detail) and every attempt an open breaker refused before sending
(``client_call_refused``), in event order. Columns as ``History.codes()`` unpacks them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.core import events as ev

ATTEMPT_CODES = (ev.CLIENT_REQUESTS_WRITE, ev.CLIENT_CALL_REFUSED)


def attempt_indices(clients: np.ndarray, codes: np.ndarray, client: int) -> np.ndarray:
    """Indices (ascending) of ``client``'s attempts among a run's events."""
    mine = np.asarray(clients) == client
    return np.flatnonzero(mine & np.isin(codes, ATTEMPT_CODES))


@dataclass(frozen=True, eq=False)
class ClientTrace:
    """A client's attempts in one run (``indices`` into its events, ascending)."""

    client: int
    indices: np.ndarray

    @classmethod
    def of(cls, clients: np.ndarray, codes: np.ndarray, client: int) -> ClientTrace:
        return cls(client, attempt_indices(clients, codes, client))

    @property
    def total(self) -> int:
        return len(self.indices)

    def seen(self, cursor: int) -> int:
        """How many of the attempts happened at or before event ``cursor``."""
        return int(np.searchsorted(self.indices, cursor, side="right"))

    def next(self, cursor: int, direction: int) -> int | None:
        """The first attempt after event ``cursor`` (``direction`` 1) or the last before it
        (-1); None when there is none that way."""
        if direction > 0:
            i = int(np.searchsorted(self.indices, cursor, side="right"))
            return int(self.indices[i]) if i < len(self.indices) else None
        i = int(np.searchsorted(self.indices, cursor, side="left")) - 1
        return int(self.indices[i]) if i >= 0 else None

    def up_to(self, cursor: int) -> np.ndarray:
        """The indices of the attempts at or before event ``cursor``."""
        return self.indices[:self.seen(cursor)]
