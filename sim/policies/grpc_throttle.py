"""gRPC retry throttling (proposal A6, ``retryThrottling``), as grpc-go implements it.

Source: grpc/proposal ``A6-client-retries.md`` ("Throttling Retry Attempts and Hedged RPCs");
grpc-go ``clientconn.go`` (``retryThrottler``) and ``stream.go`` (``shouldRetry``). Tokens start
at ``max_tokens``; every failed attempt costs one token (floored at 0) before anything else is
decided, so the failure that ends a call counts too; every success adds ``token_ratio`` (capped
at ``max_tokens``). No retry while ``tokens <= max_tokens / 2`` (checked after the decrement,
as grpc-go's ``throttle()`` does). A6 gives no defaults; these are its documented example.
gRPC keeps one throttle per server name in a process: ``scope = "shared"`` models clients that
share a channel, ``"client"`` one process per client. Every failure kind counts (a rejection, a
server error, a timeout): grpc-go's ``shouldRetry`` calls ``throttle()`` only for a status code in
the policy's ``retryableStatusCodes``, and the model takes every failure as retryable (as if the
config listed the server's codes there: UNAVAILABLE, RESOURCE_EXHAUSTED, INTERNAL...); a
non-retryable code would end the call without touching the tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.vocabulary.errors import ParamError
from sim.policies.seam import GiveUp, Link, Policy, is_failure_from_server, register_policy

THROTTLED = GiveUp("grpc_throttle")


@register_policy
@dataclass(frozen=True, kw_only=True)
class GrpcThrottle(Policy):
    """−1 token per failed attempt, +token_ratio per success; no retry while tokens ≤ max/2."""

    max_tokens: float = 10.0
    token_ratio: float = 0.1

    def validate(self) -> None:
        if not 0 < self.max_tokens <= 1000:
            raise ParamError("max_tokens", f"must be in (0, 1000] (A6), got {self.max_tokens!r}")
        if not self.token_ratio > 0:
            raise ParamError("token_ratio", f"must be > 0, got {self.token_ratio!r}")
        if round(self.token_ratio, 3) != self.token_ratio:
            raise ParamError("token_ratio", f"must have at most 3 decimal places (A6), got {self.token_ratio!r}")

    def link(self) -> Link:
        return _ThrottleLink(float(self.max_tokens), float(self.token_ratio))


class _ThrottleLink(Link):
    __slots__ = ("tokens", "max", "thresh", "ratio")

    def __init__(self, max_tokens: float, ratio: float) -> None:
        self.tokens = max_tokens
        self.max = max_tokens
        self.thresh = max_tokens / 2
        self.ratio = ratio

    def on_failure(self, t: float, kind: int, attempt: int, start: float,
                   verdict: float | GiveUp) -> float | GiveUp:
        if not is_failure_from_server(kind):
            return verdict
        tokens = self.tokens - 1
        if tokens < 0:
            tokens = 0.0
        self.tokens = tokens
        if tokens <= self.thresh and verdict.__class__ is not GiveUp:
            return THROTTLED
        return verdict

    def on_hedge(self, t: float, kind: int | None = None) -> bool:
        # A6: "subsequent hedged RPCs will only be sent if token_count is greater than the
        # threshold"; after a failed copy, checked after its decrement (as ``on_failure``).
        if kind is None or not is_failure_from_server(kind):
            return self.tokens > self.thresh
        tokens = self.tokens - 1
        if tokens < 0:
            tokens = 0.0
        if tokens > self.thresh:
            self.tokens = tokens
            return True
        return False  # the failure ends the copies: on_failure counts it

    def on_copy_failure(self, t: float, kind: int) -> None:
        # A6: every failed RPC decrements token_count, a hedged one too.
        if is_failure_from_server(kind):
            self.tokens = max(0.0, self.tokens - 1)

    def on_success(self, t: float, attempt: int, start: float) -> None:
        tokens = self.tokens + self.ratio
        self.tokens = self.max if tokens > self.max else tokens
