"""How an attempt ended, as the client hears it: the vocabulary shared by clients and policies.

Small integer codes (the hot loop compares ints). A success (accepted or committed) is reported
with ``on_success``; the failure kinds below with ``on_failure``. ``DENIED`` is not a server's
answer: the client's own policy chain refused to send the attempt (an open circuit breaker).

How the kinds map to what real libraries see (used by kind-aware policies and strategies):
``REJECTED`` is a throttling error (HTTP 429/503 SlowDown, gRPC RESOURCE_EXHAUSTED/UNAVAILABLE),
``ABORTED`` a transient conflict, ``TIMED_OUT`` a read/connect timeout.
"""

from __future__ import annotations

SUCCEEDED = 0
REJECTED = 1
ABORTED = 2
TIMED_OUT = 3
DENIED = 4

KIND_NAMES: tuple[str, ...] = ("succeeded", "rejected", "aborted", "timed_out", "denied")
FAILURE_KINDS: tuple[int, ...] = (REJECTED, ABORTED, TIMED_OUT, DENIED)
