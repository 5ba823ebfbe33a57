"""Event types, as small integer codes for the hot loop and names as the reference prints them.

A handler in the engine returns one packed int per event: ``code | (detail + 1) << DETAIL_SHIFT``,
so the metrics-only loop allocates nothing and the recording loop stores one int.
"""

from __future__ import annotations

CLIENT_REQUESTS_WRITE = 0
CLIENT_REQUESTS_VERSION = 1
CLIENT_BACKS_OFF = 2
CLIENT_GIVES_UP = 3
SERVER_ACCEPTS = 4
SERVER_REJECTS = 5
SERVER_REPORTS_VERSION = 6
SERVER_TENTATIVELY_WRITES = 7
SERVER_ABORTS = 8
SERVER_COMMITS = 9
SERVER_DECREMENTS = 10
# Open workloads and overload servers (QueueServer, LatencyServer), timeouts and outages.
CLIENT_TIMES_OUT = 11
CLIENT_SUCCEEDS = 12
SERVER_QUEUES = 13
SERVER_COMPLETES = 14
SERVER_PAUSES = 15
SERVER_RESUMES = 16
# Retry policies (sim.policies): a retry a policy refused, and a circuit breaker's transitions.
CLIENT_RETRY_DENIED = 17
BREAKER_OPENS = 18
BREAKER_HALF_OPENS = 19
BREAKER_CLOSES = 20
# A first attempt an open circuit breaker refused before sending (Polly's BrokenCircuitException,
# resilience4j's CallNotPermittedException): the call fails fast; not a retry.
CLIENT_CALL_REFUSED = 21
# A request the server dropped without serving it (PoolServer: a queue timeout, CoDel, a client
# that no longer waits); its detail names the reason (``DROP_REASONS``).
SERVER_DROPS = 22
# An incident (``sim.models.incidents``) starts or ends: the whole server keeps part of its
# capacity, slows down or fails a fraction of attempts; the detail names the kind
# (``INCIDENT_KINDS``). An incident of capacity 0 is an outage: ``server_pauses``/``resumes``.
SERVER_INCIDENT_STARTS = 23
SERVER_INCIDENT_ENDS = 24
# A fleet's outlier detection (``sim.models.fleet``) ejects a host from the balancer's set, or
# returns it; the detail is the host's ejection multiplier (Envoy's ``ejectTimeBackoff``).
HOST_EJECTED = 25
HOST_RETURNS = 26
# A fleet's active health checks mark a host unhealthy, or healthy again.
HOST_UNHEALTHY = 27
HOST_HEALTHY = 28
# A strategy entry's hedging (``sim.models.hedging``) sends another copy of an attempt still
# unanswered: the detail is the copy's number (1: the first hedge; the attempt is copy 0), the
# event carries the attempt's call, and the copy's arrival at its server follows. Recorded since
# hedges are counted from events (an events file without it does not say which copies were hedges).
CLIENT_HEDGES = 29

EVENT_NAMES: tuple[str, ...] = (
    "client_requests_write",
    "client_requests_version",
    "client_backs_off",
    "client_gives_up",
    "server_accepts",
    "server_rejects",
    "server_reports_version",
    "server_tentatively_writes",
    "server_aborts",
    "server_commits",
    "server_decrements",
    "client_times_out",
    "client_succeeds",
    "server_queues",
    "server_completes",
    "server_pauses",
    "server_resumes",
    "client_retry_denied",
    "breaker_opens",
    "breaker_half_opens",
    "breaker_closes",
    "client_call_refused",
    "server_drops",
    "server_incident_starts",
    "server_incident_ends",
    "host_ejected",
    "host_returns",
    "host_unhealthy",
    "host_healthy",
    "client_hedges",
)
EVENT_CODES: dict[str, int] = {name: code for code, name in enumerate(EVENT_NAMES)}

# The word that labels an event's integer detail, e.g. ``version=3``.
DETAIL_LABELS: dict[int, str] = {
    SERVER_REPORTS_VERSION: "version",
    SERVER_COMMITS: "version",
    SERVER_ACCEPTS: "count",
    SERVER_DECREMENTS: "count",
    CLIENT_GIVES_UP: "attempts",
    CLIENT_REQUESTS_WRITE: "attempt",
    CLIENT_TIMES_OUT: "attempt",
    CLIENT_SUCCEEDS: "attempts",
    SERVER_QUEUES: "queued",
    SERVER_COMPLETES: "in_service",
    CLIENT_RETRY_DENIED: "policy",
    CLIENT_CALL_REFUSED: "policy",
    CLIENT_BACKS_OFF: "tokens",  # with a token-holding policy: the tokens left after the retry
    SERVER_DROPS: "reason",
    SERVER_INCIDENT_STARTS: "kind",
    SERVER_INCIDENT_ENDS: "kind",
    HOST_EJECTED: "multiplier",
    HOST_RETURNS: "multiplier",
    CLIENT_HEDGES: "copy",
}
# The policies that deny retries, by the reason their GiveUp names (``sim.policies``): the detail
# of ``client_retry_denied`` is an index into this tuple and reads ``policy=token_bucket``. A
# reason not listed (a policy added later) reads as the last, ``policy``.
DENY_REASONS: tuple[str, ...] = ("token_bucket", "grpc_throttle", "retry_quota", "retry_budget",
                                 "concurrency_budget", "breaker", "breaker_open", "policy")
DENY_REASON_INDEX: dict[str, int] = {name: i for i, name in enumerate(DENY_REASONS)}
# Why a server dropped a request (``server_drops``' detail, ``reason=queue_timeout``): it waited
# longer than ``queue_timeout``; CoDel dropped it; its client had stopped waiting for it
# (``cancel``); the adaptive ``concurrency_limit`` refused it on arrival. Later reasons are
# appended, so recorded indices keep their meaning.
DROP_REASONS: tuple[str, ...] = ("queue_timeout", "codel", "cancelled", "limiter")
DROP_REASON_INDEX: dict[str, int] = {name: i for i, name in enumerate(DROP_REASONS)}
# What an incident changes (``server_incident_starts``' detail, ``kind=slowdown``).
INCIDENT_KINDS: tuple[str, ...] = ("capacity", "slowdown", "error_rate")
# The detail names of an incident's start and end: its kinds, then a fleet host's crash
# (``sim.models.fleet``), which no whole-server incident has.
INCIDENT_DETAILS: tuple[str, ...] = INCIDENT_KINDS + ("crash",)
# Events whose detail is a name from a tuple rather than a number.
DETAIL_NAMES: dict[int, tuple[str, ...]] = {CLIENT_RETRY_DENIED: DENY_REASONS, CLIENT_CALL_REFUSED: DENY_REASONS,
                                            SERVER_DROPS: DROP_REASONS,
                                            SERVER_INCIDENT_STARTS: INCIDENT_DETAILS,
                                            SERVER_INCIDENT_ENDS: INCIDENT_DETAILS}

DETAIL_SHIFT = 5
# What a handler returns for internal bookkeeping (a bucket sample, a stale reply): not recorded.
NO_EVENT = -1
CODE_MASK = (1 << DETAIL_SHIFT) - 1
NO_DETAIL = -1


# A fleet's events name their host (``sim.models.fleet``): ``(host + 1) << HOST_SHIFT`` above
# the detail, so a run without a fleet packs exactly as before (no host: 0 there).
HOST_SHIFT = 40
DETAIL_MASK = (1 << (HOST_SHIFT - DETAIL_SHIFT)) - 1
NO_HOST = -1


def pack(code: int, detail: int = NO_DETAIL) -> int:
    """Pack an event code and an optional non-negative integer detail into one int."""
    return code | ((detail + 1) << DETAIL_SHIFT)


def host_tag(host: int) -> int:
    """What a fleet ORs into the packed events of ``host`` (``host_of`` reads it back)."""
    return (host + 1) << HOST_SHIFT


def unpack(packed: int) -> tuple[int, int]:
    """Return ``(code, detail)``; detail is ``NO_DETAIL`` when the event has none."""
    return packed & CODE_MASK, ((packed >> DETAIL_SHIFT) & DETAIL_MASK) - 1


def host_of(packed: int) -> int:
    """The fleet host an event happened at, ``NO_HOST`` when it names none."""
    return (packed >> HOST_SHIFT) - 1


def format_detail(code: int, detail: int) -> str:
    """The reference's free-form detail text, e.g. ``version=3``; empty when there is none."""
    if detail == NO_DETAIL:
        return ""
    names = DETAIL_NAMES.get(code)
    if names is not None:
        return f"{DETAIL_LABELS[code]}={names[detail] if 0 <= detail < len(names) else detail}"
    return f"{DETAIL_LABELS.get(code, 'value')}={detail}"


def attempts_and_retries(attempts: int) -> str:
    """``4 attempts (3 retries)``: ``max_attempts`` counts the first attempt, a retry does not,
    so every place that shows one says both."""
    retries = attempts - 1
    return (f"{attempts} attempt{'s' if attempts != 1 else ''} "
            f"({'no' if retries == 0 else retries} retr{'y' if retries == 1 else 'ies'})")


def retry_note(code: int, detail: int) -> str:
    """What an attempt count in an event's detail is in retries, for the app's and the CLI's
    event tables (the CSV keeps ``format_detail`` alone): ``retry 2`` for a third attempt,
    ``3 retries`` for a call that gave up or succeeded after four; empty for a first attempt."""
    if detail == NO_DETAIL or detail < 1:
        return ""
    if code in (CLIENT_REQUESTS_WRITE, CLIENT_TIMES_OUT):
        return f"retry {detail - 1}" if detail > 1 else ""
    if code in (CLIENT_GIVES_UP, CLIENT_SUCCEEDS):
        retries = detail - 1
        return "no retries" if retries == 0 else f"{retries} retr{'y' if retries == 1 else 'ies'}"
    return ""


def shown_detail(code: int, detail: int) -> str:
    """``format_detail`` with its ``retry_note``: ``attempt=3 (retry 2)``."""
    text = format_detail(code, detail)
    note = retry_note(code, detail)
    return f"{text} ({note})" if note else text


CLIENT_EVENTS = frozenset({CLIENT_REQUESTS_WRITE, CLIENT_REQUESTS_VERSION, CLIENT_BACKS_OFF,
                           CLIENT_GIVES_UP, CLIENT_TIMES_OUT, CLIENT_SUCCEEDS, CLIENT_RETRY_DENIED,
                           BREAKER_OPENS, BREAKER_HALF_OPENS, BREAKER_CLOSES, CLIENT_CALL_REFUSED,
                           CLIENT_HEDGES})


def is_server_event(code: int) -> bool:
    """True for events that happen at the server, not at a client."""
    return code not in CLIENT_EVENTS
