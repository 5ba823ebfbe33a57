"""A run's retry-policy state at any event, counted back from its events.

Two kinds of state are in the events: the tokens a budget had left after each retry it granted
(``client_backs_off``'s ``tokens=N``: a token bucket, gRPC's throttle, a retry quota, a rate
limit), a retry a token budget refused (``client_retry_denied`` naming it: ``REFUSED`` until the
next grant shows the tokens again), and each circuit breaker's transitions (``breaker_opens``,
``breaker_half_opens``, ``breaker_closes``). State shared by every client of the run (a policy
with ``scope = "shared"``) is the last such event of any client; per-client state is each
client's own, and a group of clients is summed up by its most drained (fewest tokens,
``REFUSED`` first) and its worst breaker (open, then half-open).

Everything is read from the events up to a cursor, so seeking anywhere gives the state of that
moment. Moving forward only applies the events since the last cursor (playback costs the events
it passes); moving back recounts from the start with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.core import events as ev

# The reasons of ``client_retry_denied`` that are a token budget running dry.
TOKEN_REASONS = tuple(ev.DENY_REASON_INDEX[r] for r in ("token_bucket", "grpc_throttle", "retry_quota"))
UNKNOWN = -2   # no token event yet
REFUSED = -1   # the last token event was a refusal
CLOSED, OPEN, HALF_OPEN = 0, 1, 2
BREAKER_CODES = {ev.BREAKER_CLOSES: CLOSED, ev.BREAKER_OPENS: OPEN, ev.BREAKER_HALF_OPENS: HALF_OPEN}
# How bad a breaker state is, to pick a group's worst: open > half-open > closed.
_BREAKER_BADNESS = np.array([0, 2, 1], dtype=np.int8)


@dataclass(frozen=True)
class Scopes:
    """Which policy state is shared by all clients of the run."""

    tokens_shared: bool = False
    breaker_shared: bool = False


def scopes_of(policies: tuple) -> Scopes:
    """The scopes of a strategy's token budget (the first that holds tokens, as the engine reads
    it: ``sim.models.policy_events``) and of its circuit breaker."""
    tokens = breaker = None
    for policy in policies:
        name = type(policy).__name__
        if tokens is None and name in ("TokenBucket", "GrpcThrottle", "RetryQuota", "RateLimit"):
            tokens = policy.scope == "shared"
        if breaker is None and name == "CircuitBreaker":
            breaker = policy.scope == "shared"
    return Scopes(bool(tokens), bool(breaker))


def policy_kinds(codes: np.ndarray, details: np.ndarray) -> tuple[bool, bool]:
    """(tokens, breaker): does the run record a budget's tokens, a breaker's transitions?"""
    tokens = bool(((codes == ev.CLIENT_BACKS_OFF) & (details >= 0)).any())
    breaker = bool(np.isin(codes, list(BREAKER_CODES)).any())
    return tokens, breaker


class Track:
    """One kind of state: its events (index, client, value) and each client's value so far."""

    def __init__(self, index: np.ndarray, clients: np.ndarray, values: np.ndarray,
                 n_clients: int, initial: int) -> None:
        self.index, self.clients, self.values = index, clients, values
        self.initial = initial
        self.per_client = np.full(n_clients, initial, dtype=np.int64)
        self.last = initial  # the last value of any client (the shared state)
        self.applied = 0     # events of the track applied so far

    def advance(self, cursor: int) -> None:
        """Apply the track's events up to event ``cursor`` (recount when going back)."""
        upto = int(np.searchsorted(self.index, cursor, side="right"))
        if upto < self.applied:
            self.per_client.fill(self.initial)
            self.applied = 0
        if upto == self.applied:
            if upto == 0:
                self.last = self.initial
            return
        clients = self.clients[self.applied:upto]
        values = self.values[self.applied:upto]
        # The last event of each client in the slice wins.
        reversed_clients = clients[::-1]
        unique, first = np.unique(reversed_clients, return_index=True)
        keep = unique >= 0
        self.per_client[unique[keep]] = values[::-1][first[keep]]
        self.last = int(values[-1])
        self.applied = upto


class PolicyState:
    """Per client and shared policy state of one run at a cursor (see the module docstring).

    Token values are the tokens left (>= 0) or ``REFUSED``; breaker values ``CLOSED``, ``OPEN``
    or ``HALF_OPEN``; None where nothing is known yet, the state is not of that scope, or the run
    records no such state.
    """

    def __init__(self, codes: np.ndarray, clients: np.ndarray, details: np.ndarray,
                 n_clients: int, scopes: Scopes = Scopes()) -> None:
        self.scopes = scopes
        granted = (codes == ev.CLIENT_BACKS_OFF) & (details >= 0)
        refused = (codes == ev.CLIENT_RETRY_DENIED) & np.isin(details, TOKEN_REASONS)
        token = np.flatnonzero(granted | refused)
        values = np.where(refused[token], REFUSED, details[token]).astype(np.int64)
        self.tokens = Track(token, clients[token], values, n_clients, UNKNOWN) if token.size else None
        breaker = np.flatnonzero(np.isin(codes, list(BREAKER_CODES)))
        states = np.zeros(breaker.size, dtype=np.int64)
        for code, state in BREAKER_CODES.items():
            states[codes[breaker] == code] = state
        self.breaker = Track(breaker, clients[breaker], states, n_clients, CLOSED) if breaker.size else None
        grants = values[values >= 0]
        self.max_tokens = int(grants.max()) if grants.size else 0  # the most any grant left

    @property
    def present(self) -> bool:
        """Does the run record any policy state?"""
        return self.tokens is not None or self.breaker is not None

    def advance(self, cursor: int) -> None:
        """Read the state at event ``cursor``."""
        for track in (self.tokens, self.breaker):
            if track is not None:
                track.advance(cursor)

    def shared(self) -> tuple[int | None, int | None]:
        """(tokens, breaker) shared by all clients at the cursor."""
        tokens = None
        if self.tokens is not None and self.scopes.tokens_shared and self.tokens.last != UNKNOWN:
            tokens = self.tokens.last
        breaker = self.breaker.last if self.breaker is not None and self.scopes.breaker_shared else None
        return tokens, breaker

    def groups(self, groups: int, size: int) -> tuple[list[int | None], list[int | None]]:
        """(tokens, breaker) per-client state of each group of ``size`` consecutive clients at
        the cursor: the most drained client's tokens, the worst breaker of the group."""
        tokens: list[int | None] = [None] * groups
        breakers: list[int | None] = [None] * groups
        if self.tokens is not None and not self.scopes.tokens_shared:
            values = self.tokens.per_client
            for group in range(groups):
                chunk = values[group * size:(group + 1) * size]
                known = chunk[chunk != UNKNOWN]
                if known.size:
                    tokens[group] = int(known.min())  # REFUSED (−1) is the most drained
        if self.breaker is not None and not self.scopes.breaker_shared:
            states = self.breaker.per_client
            for group in range(groups):
                chunk = states[group * size:(group + 1) * size]
                if chunk.size:
                    breakers[group] = int(chunk[np.argmax(_BREAKER_BADNESS[chunk])])
        return tokens, breakers
