"""The retry-policy seam: what a client asks its policy chain before and after each attempt.

A client keeps the call's own bookkeeping: the number of the attempt (1 for the first), and
``start``, the time the call began. Everything else (token buckets, quotas, breakers, the backoff
strategy itself) is a *link* of the client's :class:`Chain`, asked in order:

``chain.on_attempt(t, attempt, start) -> float | GiveUp``
    before sending an attempt: ``0.0`` sends now, a positive value holds the send that long (a
    client-side rate limiter), a :class:`GiveUp` refuses it (an open circuit breaker refuses
    even a first attempt). The client then reports the refused attempt as a failure of kind
    ``DENIED`` (it never reached the server).
``chain.on_failure(t, kind, attempt, start) -> float | GiveUp``
    attempt number ``attempt`` failed at ``t`` with ``kind`` (``sim.vocabulary.outcomes``): the delay
    before the next attempt, or a :class:`GiveUp` naming the reason. ``GiveUp.denied`` says
    whether a policy denied the retry (``client_retry_denied``) or a limit ran out
    (``client_gives_up``).
``chain.on_success(t, attempt, start)``
    attempt number ``attempt`` succeeded (accepted or committed) at ``t``.

How an engine's client calls it (the slow path; see ``ChainSpec.plain`` for the fast one)::

    chains = spec.chain.build(jitter_streams)          # one Chain per client, per run

    def send(t, c, a):
        hold = chains[c].on_attempt(t, attempts[c] + 1, first[c])
        if hold.__class__ is GiveUp:                    # refused before sending
            attempts[c] += 1
            return after_failure(t, c, DENIED)
        if hold:                                        # a rate limiter holds the send
            heappush(heap, (t + hold, seq(), really_send, c, 0))
        ...

    def after_failure(t, c, kind):
        verdict = chains[c].on_failure(t, kind, attempts[c], first[c])
        if verdict.__class__ is GiveUp:
            return (retry_denied if verdict.denied else gives_up) ...   # verdict.reason
        heappush(heap, (t + verdict, seq(), send, c, 0))

    def succeeded(t, c, a):
        chains[c].on_success(t, attempts[c], first[c])

Every link hears every failure and success, even after an earlier link gave up (it receives
the verdict so far): a gRPC throttle still loses a token on the failure that ends a call, a
breaker still counts it. Only ``on_attempt`` stops at the first refusal. State is per client
(``scope = "client"``) or shared by all clients of a run (``scope = "shared"``: every client's
chain holds a view of the same state). Policies are plain deterministic state machines: no
randomness, no engine import; only the strategy link draws from the client's uniform stream.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import ClassVar

from sim.vocabulary.errors import ParamError
from sim.vocabulary.params import describe_params
from sim.vocabulary.outcomes import DENIED, ChainFactory, GiveUp, Uniform  # noqa: F401  (re-exported)


class Link:
    """One policy's state machine in a client's chain. Defaults hear nothing and change nothing.

    A subclass overrides only the hooks it needs; the chain calls only overridden hooks, so an
    idle hook costs nothing. ``verdict`` is the delay proposed so far (a float) or a GiveUp.
    """

    __slots__ = ()

    def on_attempt(self, t: float, attempt: int, start: float) -> float | GiveUp | None:
        """Before sending: None (no objection), a hold in time units, or a refusal."""
        return None

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        """After a failed attempt: the verdict, changed or passed on."""
        return verdict

    def on_success(self, t: float, attempt: int, start: float) -> None:
        """After a successful attempt."""

    def on_give_up(self, t: float) -> None:
        """The call ended without success (the chain's final verdict was a GiveUp)."""

    def on_hedge(self, t: float, kind: int | None = None) -> bool:
        """Before a hedged copy of an attempt (``sim.models.hedging``): False refuses it (the
        link may take what the hedge costs, as a retry would). ``kind``: the copy that just failed
        and would send this one at once (None: the hedging delay is up); a link that counts
        failures counts it only when it allows the hedge (refused, the failure ends the copies
        and ``on_failure`` hears it)."""
        return True

    def on_copy_failure(self, t: float, kind: int) -> None:
        """A hedged copy failed while the call goes on (its other copies, or the next): what a
        failed attempt costs, without a verdict."""


def _overrides(link: Link, name: str) -> bool:
    return getattr(type(link), name) is not getattr(Link, name)


class Chain:
    """A client's ordered links; each hook asks only the links that override it."""

    __slots__ = ("links", "attempt_timeout", "_attempt", "_failure", "_success", "_give_up", "_hedge",
                 "_copy_failure")

    def __init__(self, links: Sequence[Link], attempt_timeout: float | None = None) -> None:
        self.links = tuple(links)
        self.attempt_timeout = attempt_timeout
        self._attempt = tuple(x.on_attempt for x in self.links if _overrides(x, "on_attempt"))
        self._failure = tuple(x.on_failure for x in self.links if _overrides(x, "on_failure"))
        self._success = tuple(x.on_success for x in self.links if _overrides(x, "on_success"))
        self._give_up = tuple(x.on_give_up for x in self.links if _overrides(x, "on_give_up"))
        self._hedge = tuple(x.on_hedge for x in self.links if _overrides(x, "on_hedge"))
        self._copy_failure = tuple(x.on_copy_failure for x in self.links if _overrides(x, "on_copy_failure"))

    def on_attempt(self, t: float, attempt: int, start: float) -> float | GiveUp:
        hold = 0.0
        for hook in self._attempt:
            answer = hook(t, attempt, start)
            if answer is None:
                continue
            if answer.__class__ is GiveUp:
                return answer
            if answer > hold:
                hold = answer
        return hold

    def on_failure(self, t: float, kind: int, attempt: int, start: float) -> float | GiveUp:
        verdict: float | GiveUp = 0.0
        for hook in self._failure:
            verdict = hook(t, kind, attempt, start, verdict)
        if verdict.__class__ is GiveUp:
            for hook in self._give_up:
                hook(t)
        return verdict

    def on_success(self, t: float, attempt: int, start: float) -> None:
        for hook in self._success:
            hook(t, attempt, start)

    def on_hedge(self, t: float, kind: int | None = None) -> bool:
        """Whether a hedge may go out: every link that gates hedges allows it (asked in order,
        stopping at the first refusal, as ``on_attempt``)."""
        for hook in self._hedge:
            if not hook(t, kind):
                return False
        return True

    def on_copy_failure(self, t: float, kind: int) -> None:
        for hook in self._copy_failure:
            hook(t, kind)


# A strategy's ``retry_probability`` drew against its retry: the call ends, a limit's way.
RETRY_NOT_TAKEN = GiveUp("retry_probability", denied=False)


class StrategyLink(Link):
    """The backoff strategy as a link: a fresh delay sequence for each call (the reset after a
    success), advanced once per failure that is still to be retried. A strategy that defines
    ``kind_delays(uniform)`` (botocore's standard mode) is told the failure's kind; one that
    starts from the call's think time (``FROM_THINK_TIME``) asks ``think()`` for it."""

    __slots__ = ("_strategy", "_uniform", "_next", "_by_kind", "_think", "_retry_probability")

    def __init__(self, strategy: object, uniform: Uniform,
                 think: Callable[[], float] | None = None) -> None:
        self._strategy = strategy
        self._uniform = uniform
        self._retry_probability = getattr(strategy, "retry_probability", None)
        self._by_kind = hasattr(strategy, "kind_delays")
        self._think = think if getattr(strategy, "FROM_THINK_TIME", False) else None
        if getattr(strategy, "FROM_THINK_TIME", False) and think is None:
            raise ValueError(f"{type(strategy).__name__} needs each client's last think time")
        self._next: Callable = float

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if verdict.__class__ is GiveUp:
            return verdict
        p = self._retry_probability
        if p is not None and self._uniform() >= p:  # the retry is not taken: the call ends
            return RETRY_NOT_TAKEN
        if attempt == 1 or self._next is float:
            if self._by_kind:
                self._next = self._strategy.kind_delays(self._uniform)  # type: ignore[attr-defined]
            elif self._think is not None:
                self._next = self._strategy.think_delays(  # type: ignore[attr-defined]
                    self._uniform, self._think()).__next__
            else:
                self._next = self._strategy.delays(self._uniform).__next__  # type: ignore[attr-defined]
        return self._next(kind) if self._by_kind else self._next()


# --- policy specs: the frozen, validated face of a link, as a config names it -------------------

POLICIES: dict[str, type[Policy]] = {}


def register_policy(cls: type[Policy]) -> type[Policy]:
    """Add a policy class to the registry under its class name."""
    POLICIES[cls.__name__] = cls
    return cls


@dataclass(frozen=True, kw_only=True)
class Policy:
    """A policy's parameters; ``links(n)`` builds its state for the n clients of one run."""

    SCOPES: ClassVar[tuple[str, ...]] = ("client", "shared")
    scope: str = "client"

    def __post_init__(self) -> None:
        if self.scope not in self.SCOPES:
            choices = " or ".join(repr(s) for s in self.SCOPES)
            raise ParamError("scope", f"must be {choices}, got {self.scope!r}")
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ParamError(f.name, f"must be a finite number, got {value!r}")
        self.validate()

    def validate(self) -> None:
        """Raise ``ParamError`` for impossible parameters."""

    @property
    def needs_delay(self) -> bool:
        """True for links that look at the strategy's delay: they are placed after the strategy."""
        return False

    def link(self) -> Link:
        """One fresh state machine."""
        raise NotImplementedError

    def links(self, n: int) -> list[Link]:
        """Per-client links: independent states, or views of one shared state."""
        if self.scope == "shared":
            shared = self.link()
            return [shared] * n
        return [self.link() for _ in range(n)]

    @property
    def type_name(self) -> str:
        return type(self).__name__

    def params(self) -> dict[str, object]:
        """Parameters that differ from the class default (the policy's label)."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                out[f.name] = value
        return out

    def describe(self) -> str:
        return describe_params(self.type_name, self.params())


@dataclass(frozen=True, kw_only=True)
class ViewedPolicy(Policy):
    """A policy whose state may be shared while each client's link keeps its own call's
    bookkeeping (a retry quota's last acquisition, a retry budget's per-request cap): every
    client gets a view of one state (``scope = "shared"``) or of its own."""

    def state(self) -> object:
        """One fresh state (a quota, a budget)."""
        raise NotImplementedError

    def view(self, state: object) -> Link:
        """One client's link onto ``state``."""
        raise NotImplementedError

    def link(self) -> Link:
        return self.view(self.state())

    def links(self, n: int) -> list[Link]:
        if self.scope == "shared":
            shared = self.state()
            return [self.view(shared) for _ in range(n)]
        return [self.link() for _ in range(n)]


def is_failure_from_server(kind: int) -> bool:
    """A refused (``DENIED``) attempt never reached the server: counters of outcomes skip it."""
    return kind != DENIED
