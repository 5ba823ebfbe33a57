"""Golden traces: a fixed small config and seed whose event histories are committed in
``tests/golden/*.csv``. Any change in behaviour (engine, controls, servers, workloads, timeouts,
outages, strategies, streams) shows up here as a changed row.

When a change in behaviour is intended, regenerate the files on purpose, read the diff, and
commit them with the change::

    UPDATE_GOLDEN=1 python3 -m pytest tests/test_golden_trace.py

Times are written as the CSV exports write numbers (``format_float``: the shortest text of the
value rounded to 12 significant digits).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import replace
from heapq import heappop
from pathlib import Path

import pytest

from sim.settings.config import parse_config
from sim.runs.engine import _build, _due_first, record_run
from sim.export.csv_files import format_float

GOLDEN_DIR = Path(__file__).with_name("golden")
HEADER = ["time", "client_id", "event_type", "event_detail"]
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

COMMON = {"repeat": 1, "network_mu": 10.0, "network_sigma": 2.0, "work_to_duration": 1.0}
OPEN = {"repeat": 1, "network_mu": 1.0, "network_sigma": 0.3, "work_to_duration": 0.0}
CONFIG = parse_config({"seed": 7, "simulation": [
    {"title": "golden_locking", "clients": [5], "control": "LockingServer",
     "write_mu": 2.0, "write_sigma": 1.0, **COMMON,
     "strategies": [{"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}]},
    {"title": "golden_write_only_occ", "clients": [4], "control": "WriteOnlyOCCServer",
     "write_mu": 3.0, "write_sigma": 1.0, **COMMON,
     "strategies": [{"type": "DecorrelatedJitter", "base": 2.0, "cap": 500.0}]},
    {"title": "golden_read_write_occ", "clients": [4], "control": "ReadWriteOCCServer",
     "write_mu": 1.0, "write_sigma": 0.5, **COMMON,
     "strategies": [{"type": "FullJitteredExpo", "base": 5.0, "cap": 2000.0}]},
    {"title": "golden_throttling", "clients": [6], "control": "ThrottlingServer",
     "window": 30.0, "limit": 2, **COMMON,
     "strategies": [{"type": "Expo", "base": 4.0, "cap": 100.0, "max_attempts": 3}]},
    {"title": "golden_locking_outage", "clients": [5], "control": "LockingServer",
     "write_mu": 8.0, "write_sigma": 3.0, "outages": [{"start": 20.0, "duration": 30.0}], **COMMON,
     "strategies": [{"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}]},
    # Servers that reply: spike and Poisson workloads, timeouts, retry limits, outages, a backlog.
    {"title": "golden_queue_spike", "clients": [12], "control": "QueueServer", "concurrency": 2,
     "service_time": 4.0, "queue_size": 2, "reject_delay": 1.0, "overload_threshold": 5,
     "overload_rule": "at_start",
     "workload": "spike", "spike_fraction": 0.5, "spike_width": 3.0, "arrival_window": 60.0,
     "horizon": 150.0, "timeout": 15.0, "outages": [{"start": 20.0, "duration": 25.0}], **OPEN,
     "abandoned": "drop",
     "strategies": [{"type": "FullJitteredExpo", "base": 2.0, "cap": 40.0, "max_attempts": 4}]},
    # The same server tick by tick (overload_rule = "per_tick"), overwhelmed above 4 (with 2 in service and
    # 2 queued, as soon as 1 is being rejected), ticks of 0.5, study 004's literal REB.
    {"title": "golden_queue_per_tick", "clients": [12], "control": "QueueServer", "concurrency": 2,
     "service_time": 4.0, "queue_size": 2, "reject_delay": 1.0, "overload_threshold": 4,
     "overload_rule": "per_tick", "overload_tick": 0.5, "abandoned": "drop",
     "workload": "spike", "spike_fraction": 0.5, "spike_width": 3.0, "arrival_window": 60.0,
     "horizon": 150.0, "timeout": 15.0, "outages": [{"start": 20.0, "duration": 25.0}], **OPEN,
     "strategies": [{"type": "FullJitteredFlooredExpo", "base": 2.0, "floor": 6.0, "max_attempts": 5}]},
    {"title": "golden_latency_poisson", "clients": [8], "control": "LatencyServer", "base_latency": 10.0,
     "concurrency_limit": 3, "factor": 1.5, "k": 2.0, "check_interval": 4.0, "workload": "poisson",
     "think_time": 30.0, "horizon": 200.0, "timeout": 25.0, "backlog": 3,
     "outages": [{"start": 60.0, "duration": 40.0}], **OPEN, "backlog_overflow": "drop", "abandoned": "drop",
     "strategies": [{"type": "NormalJitterExpo", "min_delay": 2.0, "factor": 2.7, "max_delay": 100.0}]},
    # The default accept queue, in seconds: SYN retransmits 1, 3, 7 and 15 s after a refused
    # first try (within the 25 s timeout), and stale held requests served at the resume.
    {"title": "golden_latency_syn_retry", "clients": [8], "control": "LatencyServer", "base_latency": 10.0,
     "concurrency_limit": 3, "factor": 1.5, "k": 2.0, "check_interval": 4.0, "workload": "poisson",
     "think_time": 30.0, "horizon": 200.0, "timeout": 25.0, "backlog": 2, "time_unit": "s",
     "outages": [{"start": 60.0, "duration": 40.0}], **OPEN,
     "strategies": [{"type": "NormalJitterExpo", "min_delay": 2.0, "factor": 2.7, "max_delay": 100.0}]},
    {"title": "golden_latency_at_start", "clients": [6], "control": "LatencyServer", "base_latency": 10.0,
     "concurrency_limit": 2, "factor": 1.5, "k": 1.0, "latency_rule": "at_start", "workload": "burst",
     "horizon": 120.0, "timeout": 20.0, "outages": [{"start": 15.0, "duration": 20.0}], **OPEN,
     "abandoned": "drop", "strategies": [{"type": "Constant", "constant": 3.0}]},
]}, "golden")


def render(title: str) -> str:
    spec = CONFIG.simulation(title)
    run = record_run(spec, spec.labels[0], spec.clients[0], 0)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    for t, c, name, detail in run.history.rows():
        writer.writerow([format_float(t), c, name, detail])
    return out.getvalue()


@pytest.mark.parametrize("title", [s.title for s in CONFIG.simulations])
def test_history_matches_golden_file(title: str) -> None:
    path = GOLDEN_DIR / f"{title}.csv"
    current = render(title)
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(current, encoding="utf-8")
    stored = path.read_text(encoding="utf-8")
    assert list(csv.reader(io.StringIO(current))) == list(csv.reader(io.StringIO(stored)))


def test_golden_files_are_not_trivial() -> None:
    """Each trace shows contention: retries, and (for throttling) give-ups and window expiry."""
    for sim in CONFIG.simulations:
        rows = list(csv.DictReader(io.StringIO((GOLDEN_DIR / f"{sim.title}.csv").read_text("utf-8"))))
        kinds = {r["event_type"] for r in rows}
        assert "client_backs_off" in kinds, sim.title
        assert len({r["client_id"] for r in rows} - {"-1"}) == sim.clients[0]  # -1: the server
    throttling = (GOLDEN_DIR / "golden_throttling.csv").read_text("utf-8")
    assert "client_gives_up" in throttling and "server_decrements" in throttling
    for title in ("golden_locking_outage", "golden_queue_spike", "golden_queue_per_tick",
                  "golden_latency_poisson", "golden_latency_at_start", "golden_latency_syn_retry"):
        text = (GOLDEN_DIR / f"{title}.csv").read_text("utf-8")
        assert "server_pauses" in text and "server_resumes" in text, title
    for title in ("golden_queue_spike", "golden_queue_per_tick", "golden_latency_poisson",
                  "golden_latency_at_start", "golden_latency_syn_retry"):
        text = (GOLDEN_DIR / f"{title}.csv").read_text("utf-8")
        assert "client_times_out" in text and "client_succeeds" in text, title
    for title in ("golden_queue_spike", "golden_queue_per_tick"):
        queue = (GOLDEN_DIR / f"{title}.csv").read_text("utf-8")
        assert "server_queues" in queue and "server_rejects" in queue, title


def test_the_per_tick_trace_is_overwhelmed() -> None:
    """The per-tick trace differs from the same server under the at_start rule: its overload acts."""
    spec = CONFIG.simulation("golden_queue_per_tick")
    old = replace(spec, control=replace(spec.control, overload_rule="at_start"))
    times = [record_run(s, s.labels[0], s.clients[0], 0).history.times for s in (spec, old)]
    assert times[0] != times[1]


def test_golden_outages_drop_and_refuse_held_requests() -> None:
    """The replying traces cover a resume that drops stale held requests and a full backlog that
    drops arrivals (``abandoned``, ``backlog_overflow = "drop"``), and the defaults: SYN
    retransmits, some served after the resume, and stale held requests served."""
    metrics = {s.title: record_run(s, s.labels[0], s.clients[0], 0).metrics() for s in CONFIG.simulations}
    assert metrics["golden_queue_spike"].dropped > 0
    assert metrics["golden_latency_poisson"].refused > 0 and metrics["golden_latency_poisson"].dropped > 0
    spec = CONFIG.simulation("golden_latency_syn_retry")
    wiring, _ = _build(spec, spec.strategies[0].chain, spec.clients[0], 0)
    gate = wiring.gate
    served_after_resume = 0
    while (queue := _due_first(wiring)) is not None:  # the heap and ``near``, as the engine pops them
        t, _, handler, c, a = heappop(queue)
        if handler.__name__ == "syn_again" and not gate.paused and gate.still_waiting(c, a >> 3):
            served_after_resume += 1
        handler(t, c, a)
    assert gate.refused > 0 and gate.syn_retries > gate.refused and served_after_resume > 0
    assert gate.abandoned_served > 0 and gate.dropped == 0
