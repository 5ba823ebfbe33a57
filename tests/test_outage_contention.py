"""Outages stop the contention controls too: nothing happens at the server inside the window
(neither new arrivals nor writes, commits, aborts or window expiries); work in progress resumes
with its remaining time; an outage after the work is no part of the run."""

from __future__ import annotations

import pytest
from support import CONTROL_PARAMS, make_spec

from sim.core import events as ev
from sim.runs.engine import record_run, run_metrics

START, DURATION = 15.0, 40.0


@pytest.mark.parametrize("control", sorted(CONTROL_PARAMS))
def test_no_server_work_inside_an_outage(control: str) -> None:
    spec = make_spec(control, clients=[12], outages=[{"start": START, "duration": DURATION}],
                     strategies=[{"type": "Constant", "constant": 1.0}])
    for repetition in range(3):
        run = record_run(spec, "Constant", 12, repetition)
        rows = [run.history.event(i) for i in range(len(run.history))]
        inside = [(t, code) for t, _, code, _ in rows
                  if START < t < START + DURATION and ev.is_server_event(code)]
        assert inside == []
        codes = [code for _, _, code, _ in rows]
        assert codes.count(ev.SERVER_PAUSES) == 1 and codes.count(ev.SERVER_RESUMES) == 1
        # every client still finishes after the resume
        finishing = ev.SERVER_ACCEPTS if control == "ThrottlingServer" else ev.SERVER_COMMITS
        assert codes.count(finishing) == 12
        assert run.metrics() == run_metrics(spec, spec.strategies[0].strategy, 12, repetition)


def test_work_in_progress_finishes_as_long_after_the_resume() -> None:
    """A write that would have ended d after the pause began ends d after the resume."""
    spec = make_spec("LockingServer", clients=[1], network_mu=10.0, network_sigma=0.0,
                     write_mu=20.0, write_sigma=0.0, outages=[{"start": 15.0, "duration": 100.0}],
                     strategies=[{"type": "NoBackoff"}])
    run = record_run(spec, "NoBackoff", 1, 0)
    times = {ev.EVENT_NAMES[code]: t for t, _, code, _ in (run.history.event(i) for i in range(len(run.history)))}
    assert times["server_accepts"] == 10.0
    # the write would end at 30, 15 after the pause began at 15: it ends 15 after the resume at 115
    assert times["server_commits"] == pytest.approx(130.0)


def _first(run, name: str) -> float:
    return next(t for t, _, code, _ in (run.history.event(i) for i in range(len(run.history)))
                if ev.EVENT_NAMES[code] == name)


# (control, extra keys, event that starts the work, event that ends it)
TIMED_WORK = [
    ("LockingServer", {"write_sigma": 0.0}, "server_accepts", "server_commits"),
    ("WriteOnlyOCCServer", {"write_sigma": 0.0}, "server_tentatively_writes", "server_commits"),
    ("ReadWriteOCCServer", {"write_sigma": 0.0}, "server_tentatively_writes", "server_commits"),
    ("ThrottlingServer", {"limit": 1}, "server_accepts", "server_decrements"),
]


@pytest.mark.parametrize("control, extra, starts, ends", TIMED_WORK, ids=[w[0] for w in TIMED_WORK])
@pytest.mark.parametrize("length", [104.0, 106.0])
def test_work_in_progress_resumes_with_its_remaining_time(control: str, extra: dict, starts: str,
                                                          ends: str, length: float) -> None:
    """Work started 5 before a 100-long pause finishes exactly 100 later than without the pause,
    whether it was due inside the pause (104) or after it (106, which used to finish on time)."""
    key = "window" if control == "ThrottlingServer" else "write_mu"
    table = dict(clients=[1], network_mu=10.0, network_sigma=0.0, strategies=[{"type": "NoBackoff"}],
                 **{**CONTROL_PARAMS[control], **extra, key: length})
    free = record_run(make_spec(control, **table), "NoBackoff", 1, 0)
    began = _first(free, starts)
    assert _first(free, ends) == pytest.approx(began + length)
    paused = record_run(make_spec(control, outages=[{"start": began + 5.0, "duration": 100.0}], **table),
                        "NoBackoff", 1, 0)
    assert _first(paused, starts) == began
    assert _first(paused, ends) == pytest.approx(began + length + 100.0)


@pytest.mark.parametrize("length", [104.0, 106.0])
def test_queue_service_resumes_with_its_remaining_time(length: float) -> None:
    table = dict(clients=[1], network_mu=1.0, network_sigma=0.0, strategies=[{"type": "NoBackoff"}],
                 concurrency=1, service_time=length, horizon=1000.0)
    free = record_run(make_spec("QueueServer", **table), "NoBackoff", 1, 0)
    began = _first(free, "server_accepts")
    assert _first(free, "server_completes") == pytest.approx(began + length)
    paused = record_run(make_spec("QueueServer", outages=[{"start": began + 5.0, "duration": 100.0}],
                                  **table), "NoBackoff", 1, 0)
    assert _first(paused, "server_completes") == pytest.approx(began + length + 100.0)


@pytest.mark.parametrize("control", sorted(CONTROL_PARAMS))
def test_an_outage_after_the_work_changes_neither_duration_nor_cost(control: str) -> None:
    """The work ends long before an outage at 5000-6000: its pause and resume are not events of
    the run, and duration (the last event of the work), cost and events are as without it."""
    strategies = [{"type": "Constant", "constant": 1.0}]
    plain = make_spec(control, clients=[8], strategies=strategies)
    late = make_spec(control, clients=[8], strategies=strategies, outages=[{"start": 5000.0, "duration": 1000.0}])
    for repetition in range(2):
        a = run_metrics(plain, plain.strategies[0].strategy, 8, repetition)
        b = run_metrics(late, late.strategies[0].strategy, 8, repetition)
        assert b == a and a.duration < 1000.0
        run = record_run(late, "Constant", 8, repetition)
        assert run.metrics() == b and len(run.history) == b.events
        codes = {code for _, _, code, _ in (run.history.event(i) for i in range(len(run.history)))}
        assert not codes & {ev.SERVER_PAUSES, ev.SERVER_RESUMES}


def test_events_count_recorded_events_only() -> None:
    """With an outage inside the work, the pause and resume are events; held arrivals are not."""
    spec = make_spec("LockingServer", clients=[12], outages=[{"start": START, "duration": DURATION}],
                     strategies=[{"type": "Constant", "constant": 1.0}])
    run = record_run(spec, "Constant", 12, 0)
    m = run_metrics(spec, spec.strategies[0].strategy, 12, 0)
    assert m.events == len(run.history) == run.metrics().events
    assert m.duration == run.history.times[-1] > START + DURATION


@pytest.mark.parametrize("control", sorted(CONTROL_PARAMS))
def test_an_outage_may_start_at_zero(control: str) -> None:
    spec = make_spec(control, clients=[6], outages=[{"start": 0.0, "duration": DURATION}],
                     strategies=[{"type": "Constant", "constant": 1.0}])
    run = record_run(spec, "Constant", 6, 0)
    rows = [run.history.event(i) for i in range(len(run.history))]
    assert rows[0][0] == 0.0 and rows[0][2] == ev.SERVER_PAUSES
    server = [t for t, _, code, _ in rows[1:] if ev.is_server_event(code)]
    assert server[0] == DURATION  # the resume, then the requests held since t = 0
    finishing = ev.SERVER_ACCEPTS if control == "ThrottlingServer" else ev.SERVER_COMMITS
    assert sum(code == finishing for _, _, code, _ in rows) == 6
    assert run.metrics() == run_metrics(spec, spec.strategies[0].strategy, 6, 0)
