"""A state for a run to start from, instead of every client at its first start (phase portraits).

The state of a simulation against a replying server, as the phase portrait sees it: the work at
the server (requests queued or in service) and the retry orbit (clients backing off, waiting to
send their call again). ``Clients`` puts a run in it at t = 0; without one (the default) nothing
of a run changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.vocabulary.errors import UserError


@dataclass(frozen=True)
class InitialState:
    """``work`` requests at the server and ``orbit`` clients in backoff at t = 0.

    The orbit's clients come first; the work's requests are the current attempts of the next
    clients, and beyond the clients left, orphan requests (abandoned work the server still
    holds, whose replies nobody waits for). Each orbit client has a uniform random fraction of
    its backoff left, as a client caught at a random moment of it would. Every client of the
    state is on its call's ``attempt``-th attempt: a backoff strategy remembers how many failed
    before (the backoff after the state's failures is that of the ``attempt``-th).

    ``age``: how old the work's live requests may be. 0 (the default): each was sent just
    before t = 0, its client's timeout a full one away. Above 0: each was sent a uniform random
    time in [0, ``age``) before t = 0 (drawn after the orbit's residuals, from the same stream),
    so its timeout falls due that much sooner -- as after an outage, whose waiting clients'
    attempts are of every age up to the timeout (``sim.phase.state``).
    """

    work: int
    orbit: int
    attempt: int = 1
    age: float = 0.0
    # ``held``: how many of the work's requests are at the server (None: all); the others are at
    # the door (a stopped server's full accept queue refused their SYN): each reaches the server
    # at the first of ``retransmits`` (times after its attempt was sent, e.g. Linux's 1, 3, 7 s)
    # not before its age, or never (it times out) when none falls within the timeout.
    held: int | None = None
    retransmits: tuple[float, ...] = ()
    # The accept queue's requests are stale (an outage longer than the timeout: their clients
    # timed out long before the resume): the first ``held`` of the work are orphans.
    stale: bool = False

    def __post_init__(self) -> None:
        for name, low in (("work", 0), ("orbit", 0), ("attempt", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise UserError(f"initial state: {name} must be a whole number, {low} or more, got {value!r}")
        age = self.age
        if isinstance(age, bool) or not isinstance(age, (int, float)) or not 0.0 <= age < float("inf"):
            raise UserError(f"initial state: age must be a time, 0 or more, got {age!r}")

    def live(self, clients: int) -> int:
        """How many of the work's requests are live (their client waits for the reply) among
        ``clients`` closed clients: the clients not in the orbit, less the accept queue's stale
        requests (``stale``), which are orphans."""
        orbit = min(self.orbit, clients)
        live = min(self.work, clients - orbit)
        if self.stale and self.held is not None:
            live = min(live, max(0, self.work - self.held))
        return live

    def arrival(self, age: float, timeout: float | None) -> float | None:
        """When a request at the door, sent ``age`` before t = 0, reaches the server: at its
        attempt's first SYN retransmit not before ``age``; None (never: its client times out
        first) when no retransmit falls within the timeout."""
        due = next((r - age for r in self.retransmits if r >= age), None)
        if due is None or (timeout is not None and due + age >= timeout):
            return None
        return due
