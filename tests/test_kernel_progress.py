"""Progress inside a run taken by a compiled kernel (issue 39, item 6): the kernel returns to
Python every ``engine.STALL_EVENTS`` items (``ArrayRun.drive``), where the guard reports the
events done to ``engine.progress_hook``, for runs of metrics and for the runs a sweep records;
the results are the same with and without anyone listening. The runs are made long by a
smaller ``STALL_EVENTS`` (4,096 items instead of ~4 M), the kernels run as their plain source
(so on any machine), and only calls are counted, never time.
"""

from __future__ import annotations

import pytest

from sim.kernels import contention, jit
from sim.runs import engine, fast
from sim.runs.sweep import EventCount, run_sweep
from sim.settings.config import load_config

STALL = 4096  # items between two of the guard's looks, here


@pytest.fixture
def occ(monkeypatch: pytest.MonkeyPatch):
    """The sample's read-then-write OCC simulation, its first strategy (retries at once: a run of
    100 clients is ~14,000 events, three looks of the guard)."""
    monkeypatch.setattr(engine, "STALL_EVENTS", STALL)
    from pathlib import Path
    spec = load_config(Path(__file__).resolve().parent.parent / "sim" / "sample.toml").simulations[1]
    return spec, spec.strategies[0]


def _listening(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    reports: list[int] = []
    monkeypatch.setattr(engine, "progress_hook", reports.append)
    return reports


def test_a_kernel_run_of_metrics_reports_its_events_as_it_goes(occ, monkeypatch):
    spec, entry = occ
    plain = jit.plain(contention.run)
    quiet = engine.kernel_metrics(spec, entry.chain, 100, 0, kernel=plain)
    reports = _listening(monkeypatch)
    heard = engine.kernel_metrics(spec, entry.chain, 100, 0, kernel=plain)
    assert heard == quiet
    # A report at each look, about every STALL items of the run's 14,000 or so (the first item
    # popped past each mark: items pop in time order, not seq order), none past its end.
    assert len(reports) >= 3
    assert all(n > 0 for n in reports) and sum(reports) <= quiet.events


def test_a_recorded_kernel_run_reports_too_when_asked(occ, monkeypatch):
    spec, entry = occ
    plain = jit.plain(contention.run)
    quiet = engine.kernel_record(spec, entry.label, 100, 0, kernel=plain)
    reports = _listening(monkeypatch)
    heard = engine.kernel_record(spec, entry.label, 100, 0, kernel=plain, report=True)
    assert len(reports) >= 3
    assert heard.history.packed == quiet.history.packed and heard.history.times == quiet.history.times
    assert heard.metrics() == quiet.metrics()
    reports.clear()
    engine.kernel_record(spec, entry.label, 100, 0, kernel=plain)  # the app's replays: silent
    assert reports == []


def test_a_sweep_s_event_count_moves_within_its_kernel_runs(occ, monkeypatch):
    # A sweep of one strategy at 100 clients in this process (one worker), every run by the
    # kernel (the one it records too): its EventCount is told of events many times per run, and
    # ends at the runs' exact total.
    spec, entry = occ
    from dataclasses import replace
    spec = replace(spec, clients=(100,), repeat=3, strategies=(entry,))
    monkeypatch.setattr(fast, "kernel_fits", lambda spec, chain, clients: fast.kernel_expresses(spec, chain))
    monkeypatch.setattr(contention, "run", jit.plain(contention.run))
    ticks = []
    events = EventCount()
    result = run_sweep(spec, workers=1, events=events, tick=lambda: ticks.append(events.value), record=True)
    total = events.value
    assert len(ticks) >= 3 * 3  # three looks in each of the three runs, the recorded one too
    assert ticks == sorted(ticks) and ticks[-1] < total
    quiet = [engine.kernel_metrics(spec, entry.chain, 100, r, kernel=jit.plain(contention.run)) for r in range(3)]
    assert total == sum(m.events for m in quiet) == result.total_events
    assert result.events[0, 0].tolist() == [m.events for m in quiet]
    assert result.duration[0, 0].tolist() == [m.duration for m in quiet]
