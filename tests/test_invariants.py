"""Invariants of every control, checked on recorded runs over several strategies and seeds.

Each recorded history is decoded into ``(time, client, event name, detail)`` and checked against
the protocol, the metrics and the control's own promise (one lock holder, versions that only grow
by one, at most ``limit`` admissions per window).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from support import Event, decode, make_spec

from sim.runs.engine import Run, record_run, run_metrics
from sim.settings.spec import SimulationSpec

CONTROLS = ["LockingServer", "WriteOnlyOCCServer", "ReadWriteOCCServer", "ThrottlingServer"]
STRATEGIES: list[dict[str, Any]] = [
    {"type": "NoBackoff"},
    {"type": "Constant", "constant": 1.5},
    {"type": "Expo", "base": 2.0, "cap": 200.0},
    {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0},
    {"type": "EqualJitteredExpo", "base": 2.0, "cap": 1000.0},
    {"type": "DecorrelatedJitter", "base": 2.0, "cap": 500.0},
    {"type": "CsmaBinaryExponential", "slot": 1.0, "max_attempts": 1000},
]
SEEDS = [0, 1, 2]
CLIENTS = (1, 12, 25)

# The protocol: which event may follow a client's previous event (None: its first event).
WRITE_ONLY_RESPONSES = {
    "LockingServer": {"server_accepts", "server_rejects"},
    "ThrottlingServer": {"server_accepts", "server_rejects"},
    "WriteOnlyOCCServer": {"server_tentatively_writes"},
}
FINAL = {"LockingServer": "server_commits", "WriteOnlyOCCServer": "server_commits",
         "ReadWriteOCCServer": "server_commits", "ThrottlingServer": "server_decrements"}


def protocol(control: str) -> dict[str | None, set[str]]:
    failed = {"client_backs_off", "client_gives_up"}
    if control == "ReadWriteOCCServer":
        return {
            None: {"client_requests_version"},
            "client_requests_version": {"server_reports_version"},
            "server_reports_version": {"client_requests_write"},
            "client_requests_write": {"server_tentatively_writes"},
            "server_tentatively_writes": {"server_commits", "server_aborts"},
            "server_aborts": failed,
            "client_backs_off": {"client_requests_version"},
            "server_commits": set(), "client_gives_up": set(),
        }
    return {
        None: {"client_requests_write"},
        "client_requests_write": WRITE_ONLY_RESPONSES[control],
        "server_accepts": {"server_commits" if control == "LockingServer" else "server_decrements"},
        "server_tentatively_writes": {"server_commits", "server_aborts"},
        "server_rejects": failed, "server_aborts": failed,
        "client_backs_off": {"client_requests_write"},
        "server_commits": set(), "server_decrements": set(), "client_gives_up": set(),
    }


def by_client(history: list[Event]) -> dict[int, list[Event]]:
    out: dict[int, list[Event]] = defaultdict(list)
    for e in history:
        out[e[1]].append(e)
    return out


def check_run(spec: SimulationSpec, label: str, clients: int, repetition: int) -> list[Event]:
    """Every control-independent invariant, plus the control's own; returns the history."""
    run = record_run(spec, label, clients, repetition)
    control = spec.control.type_name
    h = decode(run)
    metrics = run.metrics()
    names = [e[2] for e in h]

    # Time never goes backwards; the run ends when its last event happens.
    assert all(a[0] <= b[0] for a, b in zip(h, h[1:]))
    assert run.done and metrics.duration == h[-1][0] == run.time
    assert names[-1] in {FINAL[control], "client_gives_up"}
    assert metrics.work == names.count("client_requests_write")
    assert metrics.gave_up == names.count("client_gives_up")
    assert metrics.events == len(h)
    assert metrics.cost == spec.work_to_duration * metrics.work + metrics.duration
    # The sweep's metrics-only loop agrees exactly with the recorded run.
    assert run_metrics(spec, spec.strategy(label).strategy, clients, repetition) == metrics

    # Each client follows the protocol and ends exactly once: committed (accepted) or gave up.
    allowed = protocol(control)
    success = "server_accepts" if control == "ThrottlingServer" else "server_commits"
    per_client = by_client(h)
    assert set(per_client) == set(range(clients))
    strategy = spec.strategy(label).strategy
    for c, own in per_client.items():
        previous = None
        for e in own:
            assert e[2] in allowed[previous], (c, previous, e)
            previous = e[2]
        assert previous in {FINAL[control], "client_gives_up"}
        successes = sum(e[2] == success for e in own)
        assert successes == (0 if previous == "client_gives_up" else 1)
        if strategy.max_attempts is not None:
            assert sum(e[2] == "client_requests_write" for e in own) <= strategy.max_attempts

    CONTROL_CHECKS[control](spec, h)
    return h


def check_locking(spec: SimulationSpec, h: list[Event]) -> None:
    holder: int | None = None
    for t, c, name, _ in h:
        if name == "server_accepts":
            assert holder is None, f"lock taken by {c} at {t} while {holder} holds it"
            holder = c
        elif name == "server_commits":
            assert holder == c
            holder = None
        elif name == "server_rejects":
            assert holder is not None, "rejected while the lock was free"
    assert holder is None


def check_versions(spec: SimulationSpec, h: list[Event]) -> None:
    committed = [d for _, _, name, d in h if name == "server_commits"]
    assert committed == list(range(1, len(committed) + 1))
    reported = [d for _, _, name, d in h if name == "server_reports_version"]
    assert reported == sorted(reported)
    # Read-then-write: a commit carries the version its client read, plus one.
    last_read: dict[int, int] = {}
    current = 0
    for _, c, name, d in h:
        if name == "server_reports_version":
            assert d == current
            last_read[c] = d
        elif name == "server_commits":
            current = d
            if c in last_read:
                assert d == last_read[c] + 1


def check_throttle(spec: SimulationSpec, h: list[Event]) -> None:
    window, limit = spec.control.window, spec.control.limit
    count = 0
    accepted_at: dict[int, float] = {}
    accepts: list[float] = []
    for t, c, name, d in h:
        if name == "server_accepts":
            count += 1
            accepted_at[c] = t
            accepts.append(t)
            # Admissions in the sliding window ending now, this one included.
            assert sum(t - window < a <= t for a in accepts) <= limit
        elif name == "server_decrements":
            count -= 1
            assert t == accepted_at[c] + window
        elif name == "server_rejects":
            assert count == limit
        if name in ("server_accepts", "server_decrements"):
            assert 0 <= d <= limit and d == count
    assert count == 0


CONTROL_CHECKS = {"LockingServer": check_locking, "WriteOnlyOCCServer": check_versions,
                  "ReadWriteOCCServer": check_versions, "ThrottlingServer": check_throttle}


def spec_for(control: str, strategy: dict[str, Any], seed: int = 0, **kw: Any) -> SimulationSpec:
    return make_spec(control, [strategy], clients=list(CLIENTS), repeat=2, seed=seed, **kw)


@pytest.mark.parametrize("control", CONTROLS)
@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s["type"])
def test_invariants(control: str, strategy: dict[str, Any]) -> None:
    for seed in SEEDS:
        spec = spec_for(control, strategy, seed)
        for clients in CLIENTS:
            check_run(spec, spec.labels[0], clients, seed % 2)


@pytest.mark.parametrize("control", CONTROLS)
def test_contention_actually_happens(control: str) -> None:
    """The invariants above are only worth something if runs do contend and retry."""
    spec = spec_for(control, {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0})
    h = check_run(spec, spec.labels[0], 25, 0)
    names = [e[2] for e in h]
    assert names.count("client_backs_off") > 10
    assert names.count("client_requests_write") > 25


@pytest.mark.parametrize("control", CONTROLS)
def test_max_attempts_limits_writes(control: str) -> None:
    spec = spec_for(control, {"type": "NoBackoff", "max_attempts": 2})
    for repetition in range(3):
        h = check_run(spec, spec.labels[0], 25, repetition)
        writes: dict[int, int] = defaultdict(int)
        gave_up = 0
        for _, c, name, d in h:
            if name == "client_requests_write":
                writes[c] += 1
            elif name == "client_gives_up":
                gave_up += 1
                assert d == 2 == writes[c]
        assert max(writes.values()) <= 2
        assert gave_up > 0
        m = run_metrics(spec, spec.strategies[0].strategy, 25, repetition)
        assert m.gave_up == gave_up


@pytest.mark.parametrize("control", CONTROLS)
def test_max_elapsed_gives_up_once_past_it(control: str) -> None:
    limit = 40.0
    spec = spec_for(control, {"type": "Constant", "constant": 3.0, "max_elapsed": limit})
    total_gave_up = 0
    for repetition in range(3):
        h = check_run(spec, spec.labels[0], 25, repetition)
        first: dict[int, float] = {}  # each client's first request (a read, for read-then-write)
        for t, c, name, _ in h:
            first.setdefault(c, t)
            if name == "client_backs_off":
                assert t - first[c] <= limit
            elif name == "client_gives_up":
                assert t - first[c] > limit
                total_gave_up += 1
    assert total_gave_up > 0


def test_default_retry_limits_of_real_clients() -> None:
    """GoogleDrive stops after 6 attempts; CSMA after 16."""
    spec = make_spec("LockingServer", [{"type": "GoogleDrive"}, {"type": "CsmaBinaryExponential", "slot": 0.01}],
                     clients=[30], repeat=1, write_mu=5000.0, write_sigma=5.0)
    for label, limit in [("GoogleDrive", 6), ("CsmaBinaryExponential", 16)]:
        h = check_run(spec, label, 30, 0)
        gives = [d for _, _, name, d in h if name == "client_gives_up"]
        assert gives and set(gives) == {limit}


@pytest.mark.parametrize("control", CONTROLS)
def test_stepping_matches_running(control: str) -> None:
    spec = spec_for(control, {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0})
    label = spec.labels[0]
    whole = record_run(spec, label, 12, 1)
    stepped = Run(spec, label, 12, 1)
    returned = []
    while not stepped.done:
        assert stepped.peek() is not None
        returned.append(stepped.step())
    assert stepped.step() is None and stepped.peek() is None
    assert stepped.history.rows() == whole.history.rows()
    assert returned == [whole.history.event(i) for i in range(len(whole.history))]
    assert stepped.metrics() == whole.metrics()
    # Running in slices with run(until=...) also gives the same history.
    sliced = Run(spec, label, 12, 1)
    t = 0.0
    while not sliced.done:
        t += 7.5
        sliced.run(until=t)
        assert sliced.history.times == [x for x in whole.history.times if x <= t]
    assert sliced.history.rows() == whole.history.rows()
    # And a mix: a few steps, then run() to the end.
    mixed = Run(spec, label, 12, 1)
    for _ in range(5):
        mixed.step()
    assert mixed.run().history.rows() == whole.history.rows()
