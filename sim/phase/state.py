"""The state a portrait is drawn in, as an outage leaves it (issue 34, item 4).

A portrait's state is (work, orbit). Two facts of an outage's end decide where a run goes and are
in neither number as a run at a moment shows them, so the portrait's state is reduced from them:

- **Clients at the door or in flight.** During an outage a client whose SYN found the accept
  queue full waits for its retransmit (``sim.models.outage``): its request is neither at the
  server nor in backoff, yet it reaches the server within a second of the resume. Work is
  therefore *requests at the server, plus clients waiting for a reply whose request has not
  reached it* (``resume_state``): every waiting client's request, and the stale ones the server
  holds. (At 100 ms after the resume of ``examples/server_outage.toml``'s 30 s outage the server
  held ~220 requests while ~800 more clients were at the door: the state looked healthy and the
  run collapsed.)
- **The age of outstanding work.** A seeded request used to be sent just before t = 0, its
  timeout a full one away; after an outage the waiting clients' attempts are of every age, so
  their timeouts fall due over the next timeout, and they retry that much sooner. A portrait's
  seeded requests are given ages uniform over [0, ``outage_age``): a client of a call
  in progress repeats (attempt, timeout, backoff) cycles whose waiting part is one timeout long,
  so a client caught waiting at a moment independent of its cycle is a uniform time into it
  (the renewal argument); an outage shorter than the timeout caps the age at its length, since
  no attempt held by it is older than the outage (calls that began before it were answered or
  are the few in service at the pause).

The seeded start follows an outage's resume: the accept queue's requests (``backlog`` of them,
all when it is unbounded) reach the server at t = 0, and the others, at the door, when their
next SYN retransmit falls (their age since their attempt's send matters here too: a client whose
retransmit is due after its timeout never reaches the server, it times out and retries;
``outage_door``). After an outage longer than the timeout the queue's requests are stale (its
first arrivals, whose clients have long timed out: ``stale_queue``), orphans the server still
serves (``abandoned = "serve"``; with ``"drop"`` they are gone and the queue holds none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sim.settings.spec import SimulationSpec

if TYPE_CHECKING:
    from sim.core.wiring import Wiring
    from sim.models.clients import Clients


def outage_age(spec: SimulationSpec) -> float:
    """How old a portrait's seeded requests may be (uniform below it): the timeout, or the
    config's first outage if shorter; 0 without an outage or a timeout (a fresh full timeout
    each, the state of a run at its start)."""
    stops = spec.stops
    if not stops or not spec.timeout:
        return 0.0
    return float(min(float(spec.timeout), float(stops[0].duration)))


def stale_queue(spec: SimulationSpec) -> bool:
    """Whether the accept queue's requests are stale at the resume: they came first (the queue
    fills within ``backlog`` arrivals of the pause), so an outage longer than the timeout has
    seen every one of their clients time out."""
    return bool(spec.stops and spec.backlog is not None and spec.timeout
                and float(spec.stops[0].duration) > float(spec.timeout))


def outage_door(spec: SimulationSpec) -> tuple[int | None, tuple[float, ...]]:
    """Where an outage leaves a state's requests: how many the accept queue holds (``backlog``;
    None: no bound, every request held, delivered at the resume) and, for the others (at the
    door), the times after their attempt's send at which their SYN goes again (Linux's 1, 3, 7 ...
    s with ``"syn-retry"``; none with ``"drop"``: they only time out)."""
    if not spec.stops or spec.backlog is None:
        return None, ()
    from sim.runs.engine import accept_queue

    queue = accept_queue(spec)
    if stale_queue(spec) and queue.abandoned == "drop":
        return 0, _retransmits(queue)  # the stale requests are dropped at the resume: none held
    return int(spec.backlog), _retransmits(queue)


def _retransmits(queue) -> tuple[float, ...]:
    from itertools import accumulate

    if queue.overflow != "syn-retry" or queue.unit_seconds is None:
        return ()
    return tuple(accumulate(queue.syn_gaps[:-1]))


def resume_state(wiring: Wiring, side: Clients, outage_duration: float, timeout: float | None,
                 serve_abandoned: bool = True) -> tuple[int, int]:
    """The portrait's state of a run just before an outage's resume: (work, orbit).

    Work = the requests the stopped server holds (its accept queue, ``OutageGate``, and those in
    service at the pause) + the clients waiting for a reply whose request is not among them (at
    the door, or in flight). The held requests whose client still waits are counted once, as
    that client's; stale held ones count only where the resume serves them (``abandoned``).
    Requests in service at the pause are stale (their clients timed out) when the
    outage outlasts the timeout; otherwise they are counted as their waiting clients'.
    """
    gate = wiring.gate
    held = list(getattr(gate, "_held", ()))
    still = gate.still_waiting if gate is not None else None
    live_held = sum(1 for _, c, a in held if still is not None and still(c, a))
    in_service = int(sum(wiring.server_state()))
    waiting_of = side._waiting  # a flag per client, or (open arrivals) the attempts waited for
    waiting = len(waiting_of) if isinstance(waiting_of, dict) else int(waiting_of.count(True))
    stale_held = len(held) - live_held if serve_abandoned else 0  # ``abandoned = "drop"``: dropped at the resume
    live_in_service = 0
    if timeout is None or outage_duration < float(timeout):
        live_in_service = min(in_service, max(0, waiting - live_held))
    stale_in_service = in_service - live_in_service
    # Every waiting client's request (wherever it is) and every stale request the server holds.
    return waiting + stale_held + stale_in_service, int(side.in_backoff)
