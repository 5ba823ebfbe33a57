"""A strategy entry's whole retry policy, as a run builds it: the ordered links of every client.

``ChainSpec(strategy, policies)`` is frozen and validated; ``build(uniforms)`` gives one
:class:`~sim.policies.seam.Chain` per client. Order: the strategy's own limits
(``max_attempts``, ``max_elapsed``), the policies in the order given, the strategy, then the
policies that look at its delay (``Deadline(stop_before=true)``, ``RateLimit``). So a retry that a
limit or budget refuses draws no jitter, as before.

The fast path: when ``plain`` is true (the strategy alone: no policies, no limits), the engine's
clients keep their inline code (``strategy.delays(uniform)``) and never build chains, so a chain of
only a strategy costs nothing. Limits and policies go through the chain.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from typing import Any

from sim.vocabulary.errors import ParamError, build_every_mistake
from sim.models import STRATEGIES
from sim.models.strategies import Strategy, Uniform
from sim.models.hedging import Hedging
from sim.policies.limits import AttemptTimeout, MaxAttempts, MaxElapsed
from sim.policies.seam import POLICIES, Chain, Link, Policy, StrategyLink, ViewedPolicy


@dataclass(frozen=True)
class ChainSpec:
    """A strategy and its policies (validated specs, no state); ``hedging``: the entry's hedged
    requests (``sim.models.hedging``), which the run's server side sends (``sim.models.fleet``)."""

    strategy: Strategy | None
    policies: tuple[Policy, ...] = ()
    hedging: Hedging | None = None

    @property
    def plain(self) -> bool:
        """The strategy alone (no limits, no policies): the engine may skip the chain entirely."""
        s = self.strategy
        return (not self.policies and s is not None and s.max_attempts is None
                and s.max_elapsed is None and s.retry_probability is None)

    @property
    def attempt_timeout(self) -> float | None:
        timeouts = [p.timeout for p in self.policies if isinstance(p, AttemptTimeout)]
        return min(timeouts) if timeouts else None

    def ordered(self) -> tuple[Policy | Strategy, ...]:
        """The links' specs in the order the chain asks them."""
        head: list[Policy | Strategy] = []
        s = self.strategy
        if s is not None and s.max_attempts is not None:
            head.append(MaxAttempts(max_attempts=s.max_attempts))
        if s is not None and s.max_elapsed is not None:
            head.append(MaxElapsed(max_elapsed=s.max_elapsed))
        before = [p for p in self.policies if not p.needs_delay and not isinstance(p, AttemptTimeout)]
        after = [p for p in self.policies if p.needs_delay]
        return (*head, *before, *(() if s is None else (s,)), *after)

    def build(self, uniforms: Sequence[Uniform],
              thinks: Sequence[Callable[[], float]] | None = None) -> list[Chain]:
        """One chain per client; ``uniforms[c]`` is client c's jitter stream, ``thinks[c]`` its
        last think time (for a strategy that starts from it, ``Strategy.FROM_THINK_TIME``)."""
        n = len(uniforms)
        columns: list[list[Link]] = []
        for spec in self.ordered():
            if isinstance(spec, Strategy):
                columns.append([StrategyLink(spec, u, None if thinks is None else thinks[c])
                                for c, u in enumerate(uniforms)])
            else:
                columns.append(spec.links(n))
        timeout = self.attempt_timeout
        return [Chain([column[c] for column in columns], timeout) for c in range(n)]

    def call_chains(self, uniforms: Sequence[Uniform]) -> Callable[[int], Chain]:
        """For clients whose calls overlap (open arrivals): a function giving a fresh chain for
        each call of client c. The policies' state is the client's (or the run's, ``scope =
        "shared"``), held by all its calls, as one client library instance holds it; what is
        the call's own is fresh: the strategy's delay sequence and a viewed policy's per-call
        bookkeeping (``ViewedPolicy.view``)."""
        n = len(uniforms)
        makers: list[Callable[[int], Link]] = []
        for spec in self.ordered():
            if isinstance(spec, Strategy):
                makers.append(lambda c, spec=spec: StrategyLink(spec, uniforms[c]))
            elif isinstance(spec, ViewedPolicy):
                shared = spec.state() if spec.scope == "shared" else None
                states = [shared] * n if shared is not None else [spec.state() for _ in range(n)]
                makers.append(lambda c, spec=spec, states=states: spec.view(states[c]))
            else:
                links = spec.links(n)
                makers.append(lambda c, links=links: links[c])
        timeout = self.attempt_timeout
        return lambda c: Chain([make(c) for make in makers], timeout)

    def describe(self) -> str:
        parts = [] if self.strategy is None else [self.strategy.describe()]
        hedging = [] if self.hedging is None else [self.hedging.describe()]
        return " + ".join(parts + [p.describe() for p in self.policies] + hedging)


def _construct(registry: Mapping[str, type], raw: Mapping[str, Any], what: str) -> Any:
    """Build a registered class from ``{type = NAME, field = value, ...}``; one-line errors."""
    if not isinstance(raw, Mapping):
        raise ParamError("type", f"each {what} must be a table like {{ type = \"...\" }}, got {raw!r}")
    name = raw.get("type")
    cls = registry.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ParamError("type", f"unknown {what} {name!r}", f"choose one of {', '.join(registry)}")
    args = {k: v for k, v in raw.items() if k not in ("type", "name")}
    known = {f.name for f in fields(cls)}
    for key in args:
        if key not in known:
            raise ParamError(key, f"is not a parameter of {name}",
                             f"{name} takes {', '.join(sorted(known)) or 'no parameters'}")
    try:
        return cls(**args)
    except TypeError as exc:  # a required parameter is missing
        missing = sorted(f.name for f in fields(cls) if f.name not in args
                         and f.default is MISSING and f.default_factory is MISSING)
        raise ParamError(missing[0] if missing else "type", f"{name} needs {', '.join(missing) or exc}") from None


def policy_with_mistakes(raw: Mapping[str, Any]) -> tuple[Policy | None, list[ParamError]]:
    """``policy_from_dict`` with every mistake of the table, not only the first: each unknown key,
    and each the policy itself refuses (``build_every_mistake``); the policy None if any."""
    name = raw.get("type") if isinstance(raw, Mapping) else None
    cls = POLICIES.get(name) if isinstance(name, str) else None
    if cls is None:  # not a table, or of no known type: the one mistake _construct names
        try:
            return policy_from_dict(raw), []
        except ParamError as exc:
            return None, [exc]
    known = {f.name for f in fields(cls)}
    args = {k: v for k, v in raw.items() if k not in ("type", "name")}
    problems = [ParamError(key, f"is not a parameter of {name}",
                           f"{name} takes {', '.join(sorted(known)) or 'no parameters'}")
                for key in args if key not in known]
    missing = sorted(f.name for f in fields(cls) if f.name not in args
                     and f.default is MISSING and f.default_factory is MISSING)
    if missing:
        return None, [*problems, ParamError(missing[0], f"{name} needs {', '.join(missing)}")]
    try:
        built, found = build_every_mistake(cls, {k: v for k, v in args.items() if k in known})
    except TypeError as exc:
        return None, [*problems, ParamError("type", f"{name} needs {exc}")]
    return (None if problems else built), problems + found


def policy_from_dict(raw: Mapping[str, Any]) -> Policy:
    """``{ type = "TokenBucket", capacity = 5 }`` → a validated Policy (ParamError otherwise)."""
    return _construct(POLICIES, raw, "policy")


def strategy_from_dict(raw: Mapping[str, Any]) -> Strategy:
    """``{ type = "Expo", base = 5, cap = 1000 }`` → a validated Strategy (ParamError otherwise)."""
    return _construct(STRATEGIES, raw, "strategy")


def hedging_from_dict(raw: Mapping[str, Any]) -> Hedging:
    """``{ max_attempts = 2, delay = 50.0, budget = 10.0 }`` → a validated Hedging."""
    known = ("max_attempts", "delay", "budget")
    for key in raw:
        if key not in known:
            raise ParamError(key, "is not a hedging key", f"hedging takes {', '.join(known)}")
    missing = [k for k in known[:2] if k not in raw]
    if missing:
        raise ParamError(missing[0], "is missing", "hedging = { max_attempts = 2, delay = 50.0 }")
    for key, value in raw.items():
        if key == "budget" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParamError(key, f"must be a number, got {value!r}")
    if not isinstance(raw["max_attempts"], int):
        raise ParamError("max_attempts", f"must be an integer, got {raw['max_attempts']!r}")
    return Hedging(int(raw["max_attempts"]), float(raw["delay"]),
                   None if raw.get("budget") is None else float(raw["budget"]))


def chain_from_data(data: Mapping[str, Any]) -> ChainSpec:
    """A preset's expansion (``{"strategy": {...}, "policies": [...], "hedging": {...}}``) → a ChainSpec."""
    raw_strategy = data.get("strategy")
    strategy = None if raw_strategy is None else strategy_from_dict(raw_strategy)
    policies = tuple(policy_from_dict(p) for p in data.get("policies", ()))
    hedging = None if data.get("hedging") is None else hedging_from_dict(data["hedging"])
    return ChainSpec(strategy, policies, hedging)
