"""Outages stop the contention controls too: nothing happens at the server inside the window
(neither new arrivals nor writes, commits, aborts or window expiries), and held work resumes."""

from __future__ import annotations

import pytest

from sim import events as ev
from sim.engine import record_run, run_metrics

from support import CONTROL_PARAMS, make_spec

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
