"""How an attempt ended, as the client hears it: the vocabulary shared by clients and policies.

Small integer codes (the hot loop compares ints). A success (accepted or committed) is reported
with ``on_success``; the failure kinds below with ``on_failure``. ``DENIED`` is not a server's
answer: the client's own policy chain refused to send the attempt (an open circuit breaker).

How the kinds map to what real libraries see (used by kind-aware policies and strategies):
``REJECTED`` is a throttling error (HTTP 429/503 SlowDown, gRPC RESOURCE_EXHAUSTED/UNAVAILABLE),
``ABORTED`` a transient conflict, ``TIMED_OUT`` a read/connect timeout, ``SERVER_ERROR`` a
transient server error that is no throttling (HTTP 500/502/504 without a throttling error code,
gRPC INTERNAL/UNKNOWN): what ``FlakyServer`` answers. botocore (``retries/standard.py``) retries it
as a transient error (``TransientRetryableChecker``: 500, 502, 503, 504) at the non-throttling
cost and base delay, and its adaptive mode (``retries/adaptive.py``) does not slow down for it;
policies that do not look at the kind count it as any failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

Uniform = Callable[[], float]

SUCCEEDED = 0
REJECTED = 1
ABORTED = 2
TIMED_OUT = 3
DENIED = 4
SERVER_ERROR = 5

KIND_NAMES: tuple[str, ...] = ("succeeded", "rejected", "aborted", "timed_out", "denied", "server_error")
FAILURE_KINDS: tuple[int, ...] = (REJECTED, ABORTED, TIMED_OUT, DENIED, SERVER_ERROR)


class ChainFactory(Protocol):
    """What a run's clients need of a strategy entry's policy (``sim.policies.chain.ChainSpec``):
    declared here so the models depend on the seam only, not on the registries above them."""

    @property
    def plain(self) -> bool: ...
    @property
    def strategy(self) -> Any: ...
    @property
    def attempt_timeout(self) -> float | None: ...
    def build(self, uniforms: Sequence[Uniform],
              thinks: Sequence[Callable[[], float]] | None = None) -> list[Any]: ...
    def call_chains(self, uniforms: Sequence[Uniform]) -> Callable[[int], Any]: ...


@dataclass(frozen=True, slots=True)
class GiveUp:
    """No (more) retries: ``reason`` names the policy; ``denied`` False means a limit ran out."""

    reason: str
    denied: bool = True
