"""Which failures a call retries: ``RetryOn(kinds = [...])``, the retry conditions of real
libraries (Envoy's ``retry_on``, gRPC's ``retryableStatusCodes``) in the failure kinds simulated
here (``sim.vocabulary.outcomes``). A failure of another kind ends the call with no retry;
an attempt the chain itself refused (``denied``, an open breaker) is left to the other links.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.vocabulary.errors import ParamError
from sim.vocabulary.outcomes import ABORTED, DENIED, REJECTED, SERVER_ERROR, TIMED_OUT
from sim.policies.limits import Limit
from sim.policies.seam import GiveUp, Link, register_policy

NOT_RETRIABLE = GiveUp("retry_on", denied=False)
KINDS = {"rejected": REJECTED, "aborted": ABORTED, "timed_out": TIMED_OUT, "server_error": SERVER_ERROR}


@register_policy
@dataclass(frozen=True, kw_only=True)
class RetryOn(Limit):
    """Retry only failures of these kinds (``rejected``, ``aborted``, ``timed_out``, ``server_error``)."""

    kinds: tuple[str, ...] | list[str] = ("rejected", "aborted", "timed_out", "server_error")

    def validate(self) -> None:
        if isinstance(self.kinds, str) or not isinstance(self.kinds, (list, tuple)):
            raise ParamError("kinds", f"must be a list of failure kinds, got {self.kinds!r}",
                             f"e.g. kinds = [\"rejected\", \"timed_out\"]; the kinds are {', '.join(KINDS)}")
        for kind in self.kinds:
            if kind not in KINDS:
                raise ParamError("kinds", f"names an unknown failure kind {kind!r}", f"the kinds are {', '.join(KINDS)}")
        object.__setattr__(self, "kinds", tuple(self.kinds))  # frozen: a TOML list kept as a tuple

    def link(self) -> Link:
        return _RetryOnLink(frozenset(KINDS[k] for k in self.kinds))


class _RetryOnLink(Link):
    __slots__ = ("kinds",)

    def __init__(self, kinds: frozenset[int]) -> None:
        self.kinds = kinds

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if verdict.__class__ is GiveUp or kind == DENIED or kind in self.kinds:
            return verdict
        return NOT_RETRIABLE
