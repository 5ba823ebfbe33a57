"""Invariants of the overload model on recorded runs: QueueServer and LatencyServer, spike, burst and
Poisson workloads, timeouts, retry limits, outages and the per-bucket time series.

Each history is replayed through small independent models (the server's occupancy, each client's
request/attempt state) and checked against the model's promises and the run's metrics.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict, deque
from dataclasses import fields
from typing import Any

import numpy as np
import pytest
from support import Event, decode, make_spec

from sim.analysis.open_metrics import OpenRunMetrics
from sim.runs.sweep import run_sweep
from sim.runs.engine import Run, record_run, run_metrics
from sim.models.servers import LatencyServer
from sim.models.workloads import WORKLOADS
from sim.settings.spec import DEFAULT_BUCKETS, SimulationSpec

ARRIVALS = {"server_accepts", "server_queues", "server_rejects"}
SERVER_WORK = ARRIVALS | {"server_completes"}

QUEUE: dict[str, Any] = {
    "control": "QueueServer", "concurrency": 3, "service_time": 4.0, "queue_size": 4,
    "reject_delay": 1.0, "overload_threshold": 10, "workload": "spike", "spike_fraction": 0.5,
    "spike_width": 5.0, "arrival_window": 100.0, "horizon": 400.0, "timeout": 12.0,
    "network_mu": 1.0, "network_sigma": 0.5,
}
LATENCY: dict[str, Any] = {
    "control": "LatencyServer", "base_latency": 10.0, "concurrency_limit": 12, "factor": 1.2, "k": 4.0,
    "check_interval": 2.0, "workload": "poisson", "think_time": 25.0, "horizon": 600.0, "timeout": 30.0,
    "network_mu": 1.0, "network_sigma": 0.5,
}
# The same server tipped into collapse: latency outgrows the timeout and retries keep it there.
COLLAPSE: dict[str, Any] = {**LATENCY, "k": 3.0}
# The old rule, latency fixed when a request starts, on a server that collapses under it too.
AT_START: dict[str, Any] = {**LATENCY, "concurrency_limit": 5, "factor": 1.5, "k": 2.0, "think_time": 20.0,
                            "latency_rule": "at_start"}
# QUEUE goes tick by tick (the default overload_rule); this is its old rule.
QUEUE_AT_START: dict[str, Any] = {**QUEUE, "overload_rule": "at_start"}
BASES = [QUEUE, QUEUE_AT_START, LATENCY, COLLAPSE, AT_START]
BASE_IDS = ["QueueServer", "at_start-QueueServer", "LatencyServer", "collapsed-LatencyServer",
            "at_start-LatencyServer"]
STRATEGIES: list[dict[str, Any]] = [
    {"type": "NoBackoff", "max_attempts": 6},
    {"type": "Constant", "constant": 2.0},
    {"type": "FullJitteredExpo", "base": 1.0, "cap": 50.0},
    {"type": "Expo", "base": 1.0, "cap": 30.0, "max_elapsed": 60.0},
    {"type": "NormalJitterExpo", "min_delay": 2.0, "factor": 2.0, "max_delay": 100.0, "jitter": 0.1},
]
CLIENTS = 40


def spec_of(base: dict[str, Any], strategies: list[dict[str, Any]] | None = None, **kw: Any) -> SimulationSpec:
    """A spec from a base table; keys given as None are dropped, and so are parameters of a workload
    the base does not use (so one override list serves spike and Poisson bases alike)."""
    workload = base.get("workload", "burst")
    foreign = ({key for name, cls in WORKLOADS.items() if name != workload for key in cls.__dataclass_fields__}
               - set(WORKLOADS[workload].__dataclass_fields__))  # think_time is poisson's and open's
    table = {**base, "clients": [CLIENTS], "repeat": 2}
    table.update({k: v for k, v in kw.items() if k not in foreign})
    table = {k: v for k, v in table.items() if v is not None}
    control = table.pop("control")
    return make_spec(control, strategies or STRATEGIES, **table)


def names_of(h: list[Event]) -> Counter[str]:
    return Counter(e[2] for e in h)


# --- replaying a history ---------------------------------------------------------------------

def check_clients(spec: SimulationSpec, label: str, h: list[Event], metrics: OpenRunMetrics) -> None:
    """Each client's attempts, replies, timeouts, back-offs and give-ups follow the protocol."""
    strategy = spec.strategy(label).strategy
    timeout, horizon = spec.timeout, float(spec.horizon)
    per_client: dict[int, list[Event]] = defaultdict(list)
    for e in h:
        if e[1] >= 0 and e[2] not in SERVER_WORK:
            per_client[e[1]].append(e)
    open_requests = rejections = 0
    for c, own in per_client.items():
        is_open = waiting = False
        attempt, sent, first, failed_at, previous = 0, 0.0, 0.0, None, None
        for t, _, name, d in own:
            if name == "client_requests_write":
                assert not waiting and failed_at is None
                if d == 1:
                    assert not is_open, f"client {c} started a request with one still open"
                    is_open, first = True, t
                else:
                    assert is_open and previous == "client_backs_off" and d == attempt + 1
                attempt, sent, waiting = d, t, True
                if strategy.max_attempts:
                    assert attempt <= strategy.max_attempts
            elif name == "client_succeeds":
                assert waiting and is_open and d == attempt, f"client {c} succeeded without a request"
                if timeout is not None:
                    assert t < sent + timeout, "a reply after the timeout was counted as a success"
                waiting = is_open = False
            elif name == "client_times_out":
                assert waiting and d == attempt
                assert t == sent + timeout
                waiting, failed_at = False, t
            elif name in ("client_backs_off", "client_gives_up"):
                if failed_at is not None:
                    assert t == failed_at  # the decision follows the timeout at the same instant
                else:  # a rejection reply
                    assert waiting and (timeout is None or t < sent + timeout)
                    rejections += 1
                waiting, failed_at = False, None
                out_of_attempts = bool(strategy.max_attempts) and attempt >= strategy.max_attempts
                out_of_time = strategy.max_elapsed is not None and t - first > strategy.max_elapsed
                if name == "client_gives_up":
                    assert d == attempt and (out_of_attempts or out_of_time)
                    is_open = False
                else:
                    assert not (out_of_attempts or out_of_time)
            else:
                raise AssertionError(f"unexpected client event {name}")
            previous = name
        assert failed_at is None  # a timeout's decision is never cut off by the horizon
        if waiting and timeout is not None:
            # No reply and no timeout yet: the timeout would have fallen at or after the horizon.
            assert sent + timeout >= horizon
        open_requests += is_open
    assert metrics.unfinished == open_requests
    assert metrics.rejections == rejections


def check_queue_server(spec: SimulationSpec, h: list[Event]) -> None:
    """At most ``concurrency`` in service and ``queue_size`` waiting; rejections only when full."""
    control = spec.control
    in_service = queued = 0
    for t, c, name, d in h:
        if name == "server_accepts":
            assert queued == 0
            in_service += 1
        elif name == "server_queues":
            assert in_service == control.concurrency
            queued += 1
            assert d == queued
        elif name == "server_rejects":
            assert in_service == control.concurrency and queued == control.queue_size
        elif name == "server_completes":
            in_service -= 1
            if queued:  # the head of the queue goes into service at once
                queued -= 1
                in_service += 1
            assert d == in_service
        assert 0 <= in_service <= control.concurrency, (t, name)
        assert 0 <= queued <= control.queue_size, (t, name)


def wall_finish(spec: SimulationSpec, due: float) -> float:
    """On the wall clock, a step due inside an outage happens at its end."""
    for outage in spec.outages:
        if outage.start <= due < outage.end:
            return outage.end
    return due


def check_times(spec: SimulationSpec) -> list[float]:
    """When LatencyServer checks its requests: the ticks of its grid that fall outside every
    outage (a stopped server checks nothing), and each resume, before the run ends."""
    interval, horizon = spec.control.check_interval, float(spec.horizon)
    ticks = [n * interval for n in range(1, int(horizon / interval) + 2) if n * interval < horizon]
    ticks = [t for t in ticks if not any(o.start <= t < o.end for o in spec.outages)]
    return sorted(set(ticks) | {o.end for o in spec.outages if o.end < horizon})


def check_latency_server(spec: SimulationSpec, h: list[Event]) -> None:
    """Replays the server: concurrency counts every request in progress, timed out or not.

    Rule ``current`` (study 003's server.go): at each check (``check_times``), the requests whose
    elapsed time exceeds the latency at the concurrency of that moment complete, oldest first, and
    every such request does. Rule ``at_start``: each completes at the latency fixed when it started
    (on the wall clock: at the resume if that falls inside an outage)."""
    control = spec.control
    concurrency = 0
    if control.latency_rule == "at_start":
        due: dict[int, Counter[float]] = defaultdict(Counter)
        for t, c, name, d in h:
            if name == "server_accepts":
                concurrency += 1
                assert d == concurrency
                due[c][wall_finish(spec, t + control.latency(concurrency))] += 1
            elif name == "server_completes":
                concurrency -= 1
                assert d == concurrency >= 0
                assert due[c][t] > 0, f"client {c}'s work finished at {t}, not at its latency"
                due[c][t] -= 1
            else:
                assert name not in ("server_queues", "server_rejects")
        return
    in_flight: deque[tuple[float, int]] = deque()  # (start, client), oldest first
    checks = deque(check_times(spec))
    checked_at, delay = math.nan, math.nan  # the current check, and its latency

    def nothing_left_due(at: float, latency: float) -> None:
        assert not in_flight or at - in_flight[0][0] <= latency, f"a request was due at the check at {at}"

    def checks_before(t: float) -> None:  # checks that completed nothing, or are over
        while checks and checks[0] < t:
            at = checks.popleft()
            nothing_left_due(at, delay if at == checked_at else control.latency(concurrency))

    for t, c, name, d in h:
        checks_before(t)
        if name == "server_accepts":
            concurrency += 1
            assert d == concurrency
            in_flight.append((t, c))
        elif name == "server_completes":
            assert checks and checks[0] == t, f"a completion at {t}, not at a check"
            if checked_at != t:
                checked_at, delay = t, control.latency(concurrency)
            start, client = in_flight.popleft()
            assert client == c, "completions are not oldest first"
            assert t - start > delay
            concurrency -= 1
            assert d == concurrency >= 0
        else:
            assert name not in ("server_queues", "server_rejects")
    checks_before(math.inf)


def server_state(spec: SimulationSpec, h: list[Event], until: float) -> tuple[int, int]:
    """(in service, queued) after every event at or before ``until``."""
    in_service = queued = 0
    for t, _, name, d in h:
        if t > until:
            break
        if name == "server_accepts":
            in_service += 1
        elif name == "server_queues":
            queued += 1
        elif name == "server_completes":
            in_service = d
            queued = max(0, queued - 1) if spec.control.type_name == "QueueServer" else 0
    return in_service, queued


def metrics_equal(a: OpenRunMetrics, b: OpenRunMetrics) -> None:
    assert type(a) is type(b) is OpenRunMetrics
    for f in fields(OpenRunMetrics):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        elif isinstance(x, dict):
            assert x.keys() == y.keys()
            for key in x:
                np.testing.assert_array_equal(x[key], y[key], err_msg=f"series {key}")
        elif isinstance(x, float) and math.isnan(x):
            assert math.isnan(y), f.name
        else:
            assert x == y, f.name


def check_run(spec: SimulationSpec, label: str, repetition: int, clients: int = CLIENTS) -> list[Event]:
    """Every invariant of one recorded run; returns its decoded history."""
    run = record_run(spec, label, clients, repetition)
    h = decode(run)
    m = run.metrics()
    assert isinstance(m, OpenRunMetrics) and run.open_metrics is not None
    horizon = float(spec.horizon)
    names = names_of(h)

    # Time runs forward and nothing is processed after the horizon, where the run ends.
    assert all(a[0] <= b[0] for a, b in zip(h, h[1:]))
    assert h[-1][0] <= horizon
    assert run.done and run.time == horizon == m.duration

    # Counts agree with the history; events are the recorded ones only (no samples, checks, stale
    # timeouts or late replies), and the metrics-only run says the same.
    assert m.events == len(h)
    assert run_metrics(spec, spec.strategy(label).strategy, clients, repetition).events == len(h)
    assert m.work == m.requests == names["client_requests_write"]
    assert m.successes == names["client_succeeds"] == m.latencies.size == m.latency_clients.size
    assert m.timeouts == names["client_times_out"]
    assert m.gave_up == names["client_gives_up"]
    assert m.offered == sum(1 for e in h if e[2] == "client_requests_write" and e[3] == 1)
    assert int(m.attempts_per_client.sum()) == m.work and m.attempts_per_client.size == clients
    assert (m.latencies >= 0).all()

    check_clients(spec, label, h, m)
    if spec.control.type_name == "QueueServer":
        check_queue_server(spec, h)
        assert m.rejections <= names["server_rejects"]  # replies to abandoned attempts are ignored
    else:
        check_latency_server(spec, h)

    # One-shot workloads: one request per client, so at most one success each.
    if not spec.workload.REPEATS:
        firsts = Counter(e[1] for e in h if e[2] == "client_requests_write" and e[3] == 1)
        assert set(firsts.values()) <= {1}
        assert max(Counter(e[1] for e in h if e[2] == "client_succeeds").values(), default=0) <= 1

    # The sweep's metrics-only loop agrees exactly with the recorded run.
    metrics_equal(run_metrics(spec, spec.strategy(label).strategy, clients, repetition), m)
    return h


# --- the invariants --------------------------------------------------------------------------

@pytest.mark.parametrize("base", BASES, ids=BASE_IDS)
@pytest.mark.parametrize("timeout", [True, False], ids=["timeout", "no-timeout"])
def test_invariants(base: dict[str, Any], timeout: bool) -> None:
    spec = spec_of(base) if timeout else spec_of(base, timeout=None)
    assert (spec.timeout is not None) == timeout
    for label in spec.labels:
        for repetition in range(2):
            check_run(spec, label, repetition)


def test_burst_workload_against_a_queue() -> None:
    table = {k: v for k, v in QUEUE.items() if k not in ("workload", "spike_fraction", "spike_width", "arrival_window")}
    spec = spec_of(table)
    assert spec.workload.NAME == "burst"
    h = check_run(spec, spec.labels[1], 0)
    starts = [e[0] for e in h if e[2] == "client_requests_write" and e[3] == 1]
    assert starts == [0.0] * CLIENTS


def test_the_configs_do_overload_the_servers() -> None:
    """The invariants are only worth something if servers fill up, reject, time out and retry."""
    queue = spec_of(QUEUE)
    names = names_of(check_run(queue, "Constant", 0))
    assert names["server_queues"] > 10 and names["server_rejects"] > 10
    assert names["client_times_out"] > 5 and names["client_backs_off"] > 20
    latency = spec_of(COLLAPSE)
    h = check_run(latency, "Constant", 0)
    names = names_of(h)
    assert names["client_times_out"] > 100 and names["client_succeeds"] > 5
    assert max(e[3] for e in h if e[2] == "server_accepts") > latency.control.concurrency_limit


def test_give_ups_honour_max_attempts() -> None:
    for base in (QUEUE, COLLAPSE):
        spec = spec_of(base, strategies=[{"type": "Constant", "constant": 1.0, "max_attempts": 3}])
        gave_up = 0
        for repetition in range(2):
            h = check_run(spec, spec.labels[0], repetition)
            gives = [e[3] for e in h if e[2] == "client_gives_up"]
            assert set(gives) <= {3}
            assert max(e[3] for e in h if e[2] == "client_requests_write") <= 3
            gave_up += len(gives)
        assert gave_up > 0, base["control"]


def test_timeouts_fire_exactly_when_no_reply_came() -> None:
    """A server slower than the timeout: every attempt times out exactly ``timeout`` after it was sent,
    the server still finishes the abandoned work, and none of those late replies counts."""
    spec = spec_of(LATENCY, strategies=[{"type": "Constant", "constant": 5.0}], base_latency=40.0,
                   timeout=20.0, network_sigma=0.0, concurrency_limit=1000)
    h = check_run(spec, "Constant", 0)
    m = run_metrics(spec, spec.strategies[0].strategy, CLIENTS, 0)
    names = names_of(h)
    assert names["client_succeeds"] == 0 and m.successes == 0 and m.latencies.size == 0
    assert names["server_completes"] > 50  # wasted work
    sent: dict[tuple[int, int], float] = {}
    for t, c, name, d in h:
        if name == "client_requests_write":
            sent[(c, d)] = t
        elif name == "client_times_out":
            assert t == sent.pop((c, d)) + 20.0
    # Every attempt without a reply timed out, except those whose timeout falls after the horizon.
    assert all(t + 20.0 >= spec.horizon for t in sent.values())


def test_late_replies_never_complete_a_later_attempt() -> None:
    """With fixed network delay and no overload slowdown, a genuine reply takes at least two network
    hops plus the service time after its attempt; a stale reply arriving sooner must be ignored."""
    spec = spec_of(QUEUE, strategies=[{"type": "Constant", "constant": 1.0}], network_sigma=0.0,
                   overload_threshold=0, timeout=12.0, queue_size=8)
    h = check_run(spec, "Constant", 0)
    minimum = 2 * spec.network_mu + spec.control.service_time
    sent: dict[int, float] = {}
    for t, c, name, d in h:
        if name == "client_requests_write":
            sent[c] = t
        elif name == "client_succeeds":
            assert t - sent[c] >= minimum - 1e-9
    names = names_of(h)
    assert names["server_completes"] > names["client_succeeds"]  # some replies were stale


# --- LatencyServer's formula -----------------------------------------------------------------

def test_latency_formula() -> None:
    server = LatencyServer(base_latency=100.0, concurrency_limit=30, factor=1.05, k=15.0)
    assert [server.latency(c) for c in (1, 10, 30)] == [100.0] * 3
    assert server.latency(45) == pytest.approx(100.0 * 1.05)
    assert server.latency(60) == pytest.approx(100.0 * 1.05 ** 2)
    assert server.latency(31) == pytest.approx(100.0 * 1.05 ** (1 / 15))
    values = [server.latency(c) for c in range(1, 5000)]
    assert all(a <= b for a, b in zip(values, values[1:]))
    # Far above the limit the latency saturates instead of overflowing.
    huge = server.latency(10 ** 6)
    assert math.isfinite(huge) and huge > 1e300
    assert server.latency(10 ** 7) == huge
    flat = LatencyServer(base_latency=5.0, concurrency_limit=1, factor=1.0, k=1.0)
    assert flat.latency(10 ** 6) == 5.0


# --- Poisson workload and the horizon --------------------------------------------------------

def test_poisson_clients_send_until_the_horizon() -> None:
    spec = spec_of(LATENCY, strategies=[{"type": "Constant", "constant": 5.0}], think_time=6.0,
                   concurrency_limit=1000)
    horizon = spec.horizon
    for repetition in range(2):
        h = check_run(spec, "Constant", repetition)
        firsts: dict[int, list[float]] = defaultdict(list)
        for t, c, name, d in h:
            if name == "client_requests_write" and d == 1:
                firsts[c].append(t)
        assert set(firsts) == set(range(CLIENTS))
        for c, starts in firsts.items():
            assert len(starts) > 10
            assert starts[-1] > 0.9 * horizon, f"client {c} stopped sending at {starts[-1]}"
        assert max(e[0] for e in h) > horizon - 5.0


def test_unfinished_counts_requests_open_at_the_horizon() -> None:
    """A server slower than the horizon leaves every started request open."""
    spec = spec_of(LATENCY, strategies=[{"type": "Constant", "constant": 5.0}],
                   base_latency=1000.0, timeout=None, horizon=200.0)
    h = check_run(spec, "Constant", 0)
    m = run_metrics(spec, spec.strategies[0].strategy, CLIENTS, 0)
    started = {e[1] for e in h if e[2] == "client_requests_write"}
    assert m.unfinished == len(started) > 0 and m.successes == 0
    # And a fast one leaves few.
    fast = spec_of(LATENCY, strategies=[{"type": "Constant", "constant": 5.0}], base_latency=1.0)
    check_run(fast, "Constant", 0)


# --- outages ---------------------------------------------------------------------------------

@pytest.mark.parametrize("abandoned", ["serve", "drop"])
@pytest.mark.parametrize("backlog", [None, 4], ids=["unbounded", "backlog-4"])
@pytest.mark.parametrize("base", [QUEUE, LATENCY], ids=["QueueServer", "LatencyServer"])
def test_outages_stop_the_server(base: dict[str, Any], backlog: int | None, abandoned: str) -> None:
    """Nothing happens at the server inside an outage. Arrivals wait (the first ``backlog`` of
    them; later ones are refused, and their SYN retransmits, a second later, come after every
    client's timeout here); at the resume, every held request is served in arrival order
    (``abandoned = "serve"``), or exactly those whose client still waits for that attempt and
    the rest are dropped (``"drop"``)."""
    # The first outage outlasts every client's timeout, the second does not.
    windows = [{"start": 30.0, "duration": 30.0}, {"start": 80.0, "duration": 8.0}]
    spec = spec_of(base, strategies=[{"type": "Constant", "constant": 3.0}],
                   outages=windows, network_sigma=0.0, backlog=backlog, abandoned=abandoned)
    assert spec.timeout > 8.0 and spec.timeout < 1000.0  # a SYN retransmit (1 s) comes too late
    delay, timeout = spec.network_mu, spec.timeout
    held_total = served_total = refused_total = stale_total = 0
    for repetition in range(2):
        h = check_run(spec, "Constant", repetition)
        m = run_metrics(spec, spec.strategies[0].strategy, CLIENTS, repetition)
        pauses = [e for e in h if e[2] == "server_pauses"]
        resumes = [e for e in h if e[2] == "server_resumes"]
        assert [e[0] for e in pauses] == [o.start for o in spec.outages]
        assert [e[0] for e in resumes] == [o.end for o in spec.outages]
        assert {e[1] for e in pauses + resumes} == {-1}  # the server's own events
        dropped = refused = 0
        for outage in spec.outages:
            inside = [e for e in h if outage.start < e[0] < outage.end and e[2] in SERVER_WORK]
            assert inside == [], inside[:3]
            # Arrivals in the outage, in order; a paused server holds the first `backlog`.
            arrivals = [(t, c) for t, c, name, _ in h
                        if name == "client_requests_write" and outage.start <= t + delay < outage.end]
            held = arrivals if backlog is None else arrivals[:backlog]
            refused += len(arrivals) - len(held)
            # A client still waits at the resume unless its timeout fell before it (the resume
            # comes first at a tie: it was scheduled first).
            waiting = Counter(c for t, c in held if t + timeout >= outage.end)
            # ... apart from requests that arrive at the resume's very moment (a tie: no jitter
            # here, so a retry sent 1 before the resume arrives on it), which were never held.
            fresh = Counter(c for t, c, name, _ in h
                            if name == "client_requests_write" and t + delay == outage.end)
            handled = Counter(c for t, c, name, _ in h if name in ARRIVALS and t == outage.end) - fresh
            assert handled == (Counter(c for t, c in held) if abandoned == "serve" else waiting)
            stale = len(held) - sum(waiting.values())
            if abandoned == "drop":
                dropped += stale
            held_total += len(held)
            served_total += sum(waiting.values())
            stale_total += stale
            # Work in progress at the pause finishes after the resume (LatencyServer's times, which
            # may never come once it collapses, are checked by check_latency_server).
            if base is QUEUE and server_state(spec, h, outage.start)[0]:
                assert any(e[2] == "server_completes" and e[0] > outage.end for e in h)
        assert (m.dropped, m.refused) == (dropped, refused)
        refused_total += refused
    # The case is not empty: requests were held, some for clients still waiting, some stale
    # (and refused).
    assert 0 < served_total < held_total and stale_total > 0
    assert (refused_total > 0) == (backlog is not None)


# --- spike start times -----------------------------------------------------------------------

def test_spike_start_times() -> None:
    spec = spec_of(QUEUE, strategies=[{"type": "Constant", "constant": 3.0}], spike_fraction=0.3,
                   spike_width=4.0, arrival_window=150.0, clients=[50])
    in_spike = round(0.3 * 50)
    for repetition in range(3):
        h = check_run(spec, "Constant", repetition, clients=50)
        starts = {c: t for t, c, name, d in h if name == "client_requests_write" and d == 1}
        assert set(starts) == set(range(50))
        assert sum(t < 4.0 for t in starts.values()) >= in_spike
        assert all(0 <= starts[c] <= 4.0 for c in range(in_spike))
        assert all(0 <= t < 150.0 for t in starts.values())
        # The rest spread over the window, not bunched in the spike.
        rest = sorted(starts[c] for c in range(in_spike, 50))
        assert rest[-1] > 100.0 and rest[len(rest) // 2] > 30.0


# --- time series -----------------------------------------------------------------------------

SERIES_EVENTS = {
    "offered": lambda name, d: name == "client_requests_write" and d == 1,
    "retries": lambda name, d: name == "client_requests_write" and d > 1,
    "goodput": lambda name, d: name == "client_succeeds",
    "timed_out": lambda name, d: name == "client_times_out",
    "accepted": lambda name, d: name in ("server_accepts", "server_queues"),
    "rejected": lambda name, d: name == "server_rejects",
}


@pytest.mark.parametrize("base", [QUEUE, LATENCY], ids=["QueueServer", "LatencyServer"])
@pytest.mark.parametrize("bucket", [None, 30.0, 7.0], ids=["default", "30", "7"])
def test_series_sum_the_events_per_bucket(base: dict[str, Any], bucket: float | None) -> None:
    kw = {"bucket": bucket} if bucket else {}
    spec = spec_of(base, strategies=[{"type": "Constant", "constant": 2.0}], **kw)
    horizon = spec.horizon
    width = bucket if bucket else horizon / DEFAULT_BUCKETS
    n = math.ceil(horizon / width - 1e-9)
    assert spec.bucket_width == width
    for repetition in range(2):
        h = check_run(spec, "Constant", repetition)
        m = run_metrics(spec, spec.strategies[0].strategy, CLIENTS, repetition)
        assert m.bucket == width
        assert set(m.series) == {"offered", "retries", "accepted", "rejected", "timed_out",
                                 "in_service", "queued", "goodput"}
        inverse = 1.0 / width
        for name, matches in SERIES_EVENTS.items():
            expected = np.zeros(n, np.int64)
            for t, _, event, d in h:
                if matches(event, d):
                    expected[int(t * inverse)] += 1
            assert len(m.series[name]) == n
            np.testing.assert_array_equal(m.series[name], expected, err_msg=name)
        assert m.series["offered"].sum() == m.offered
        assert m.series["goodput"].sum() == m.successes
        assert m.series["timed_out"].sum() == m.timeouts
        assert m.series["offered"].sum() + m.series["retries"].sum() == m.work


def test_default_bucket_is_a_two_hundredth_of_the_horizon() -> None:
    spec = spec_of(LATENCY, horizon=500.0)
    assert spec.bucket is None and spec.bucket_width == 2.5
    m = run_metrics(spec, spec.strategies[1].strategy, 10, 0)
    assert m.bucket == 2.5 and all(len(v) == 200 for v in m.series.values())


BUSY_AT_THE_HORIZON = [
    {**QUEUE, "service_time": 20.0, "arrival_window": 400.0},
    {**LATENCY, "think_time": 2.0},
]


@pytest.mark.parametrize("base", BUSY_AT_THE_HORIZON, ids=["QueueServer", "LatencyServer"])
@pytest.mark.parametrize("bucket", [20.0, 35.0], ids=["divides", "partial-last"])
def test_series_sample_the_server_at_each_bucket_end(base: dict[str, Any], bucket: float) -> None:
    """in_service and queued are the server's state at the end of each bucket, the last one
    included (at the horizon when the last bucket is cut short by it)."""
    spec = spec_of(base, strategies=[{"type": "NoBackoff"}], bucket=bucket, horizon=200.0)
    h = check_run(spec, "NoBackoff", 0)
    m = run_metrics(spec, spec.strategies[0].strategy, CLIENTS, 0)
    n = len(m.series["in_service"])
    expected = [server_state(spec, h, min((b + 1) * bucket, spec.horizon)) for b in range(n)]
    assert [(int(a), int(b)) for a, b in zip(m.series["in_service"], m.series["queued"])] == expected
    assert expected[-1][0] > 0  # the server is busy at the horizon, so the last sample matters


# --- metrics, determinism --------------------------------------------------------------------

def test_stepping_matches_running() -> None:
    spec = spec_of(QUEUE, outages=[{"start": 50.0, "duration": 20.0}])
    label = spec.labels[2]
    whole = record_run(spec, label, 20, 1)
    stepped = Run(spec, label, 20, 1)
    while stepped.step() is not None:
        pass
    assert stepped.done and stepped.history.rows() == whole.history.rows()
    metrics_equal(stepped.metrics(), whole.metrics())


def test_same_seed_same_metrics() -> None:
    spec = spec_of(LATENCY, outages=[{"start": 100.0, "duration": 50.0}])
    for s in spec.strategies:
        metrics_equal(run_metrics(spec, s.strategy, CLIENTS, 1), run_metrics(spec, s.strategy, CLIENTS, 1))
    a = run_metrics(spec, spec.strategies[1].strategy, CLIENTS, 0)
    b = run_metrics(spec, spec.strategies[1].strategy, CLIENTS, 1)
    assert a.work != b.work or not np.array_equal(a.latencies, b.latencies)


def test_sweep_is_the_same_with_one_or_two_workers() -> None:
    spec = make_spec("QueueServer", STRATEGIES[1:3], clients=[10, 30], repeat=2, concurrency=2,
                     service_time=3.0, queue_size=2, reject_delay=1.0, overload_threshold=6,
                     workload="spike", spike_fraction=0.5, spike_width=5.0, arrival_window=50.0,
                     horizon=300.0, timeout=20.0, outages=[{"start": 30.0, "duration": 20.0}])
    one, two = run_sweep(spec, workers=1), run_sweep(spec, workers=2)
    for name in ("work", "duration", "gave_up", "events"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert one.open_runs.keys() == two.open_runs.keys() and len(one.open_runs) == 2 * 2 * 2
    for key in one.open_runs:
        metrics_equal(one.open_runs[key], two.open_runs[key])
    for s in range(2):
        for k in range(2):
            assert one.latency(s, k) == pytest.approx(two.latency(s, k), nan_ok=True)
            assert one.open_mean("requests", s, k) == two.open_mean("requests", s, k)
            a, b = one.recovery(s, k), two.recovery(s, k)
            assert (a is None and b is None) or a == pytest.approx(b, nan_ok=True)
