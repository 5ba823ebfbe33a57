"""Hedged requests on a strategy entry (issue 35): ``hedging = { max_attempts, delay, budget }``.

As gRPC's ``hedgingPolicy`` (proposal A6) and Polly v8's hedging strategy do it: the attempt is
sent at once; while none of its copies has answered, another copy goes out every ``delay``, up to
``max_attempts`` copies in all; a copy that fails sends the next at once (gRPC's non-fatal
status codes: every failure the model knows is one). The first success wins: the other copies
are *cancelled* (the server hears each as a client that stopped waiting: a PoolServer with
``cancel`` drops its work, any other server finishes it, wasted) and their replies are
*ignored*. The call fails only when every copy failed (or its client timed out). The copies go
through the balancer of a fleet (to hosts not yet tried, if it has them) or to the one server.

Counted against the entry's policies as gRPC counts hedges against its retry throttle: a hedge
is sent only if every policy's ``Link.on_hedge`` allows it (``GrpcThrottle``: tokens above
``max_tokens / 2``; ``RetryBudget``, ``TokenBucket``, ``RetryQuota``: it pays as a retry;
``ConcurrencyBudget``: it holds a retry slot);
every copy that fails costs what a
failed attempt costs (``Link.on_copy_failure``; the copy whose failure ends the call is heard by
``on_failure`` as any failed attempt), a success adds what a success adds. ``budget`` (percent,
optional): a hedging budget, a token bucket on hedges of its own, each attempt depositing
``budget/100`` tokens (at most ``HEDGE_BURST``, the bucket full at the start) and each hedge
taking one. Simulated by the reference engine alone (``sim.models.fleet``). Each hedge is an
event of its call, ``client_hedges`` (the copy's number), recorded just before the copy's
arrival, so a run's record says which copies were hedges (``sim.analysis.replay.hedges_sent``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sim.vocabulary.errors import ParamError

# A hedging budget's bucket holds at most this many hedges (Finagle's retry budget keeps a like floor).
HEDGE_BURST = 10.0
MAX_COPIES = 1000  # copies of one attempt at most


@dataclass(frozen=True)
class Hedging:
    """``max_attempts`` copies in all (the attempt and its hedges), one more every ``delay``
    while none has answered; ``budget``: hedges as at most that percent of attempts (a bucket)."""

    max_attempts: int
    delay: float
    budget: float | None = None

    def __post_init__(self) -> None:
        problems = hedging_mistakes(self.max_attempts, self.delay, self.budget)
        if problems:
            raise problems[0]

    def describe(self) -> str:
        """A label: ``hedging(3 copies, every 50)``, with the budget if any."""
        budget = f", budget {self.budget:g}%" if self.budget is not None else ""
        return f"hedging({self.max_attempts} copies, every {self.delay:g}{budget})"


def hedging_mistakes(max_attempts: int | None, delay: float | None, budget: float | None) -> list[ParamError]:
    """Every value of a hedging table out of its range (None: not given, not checked)."""
    out = []
    if max_attempts is not None and not 2 <= max_attempts <= MAX_COPIES:
        out.append(ParamError("max_attempts", f"must be from 2 (the attempt and a hedge) to {MAX_COPIES}, "
                              f"got {max_attempts!r}"))
    if delay is not None and not 0 <= delay < math.inf:
        out.append(ParamError("delay", f"must be >= 0, got {delay!r}"))
    if budget is not None and not budget > 0:
        out.append(ParamError("budget", f"must be > 0 (percent of attempts), got {budget!r}"))
    return out
