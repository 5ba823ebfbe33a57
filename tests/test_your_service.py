"""``examples/your_service.toml``: a 64-worker service whose service times come from a file,
open traffic at 80% load, a 1 s timeout and a capacity incident (half the workers for 5 s),
two server defences against three client policies (README, "Your service, step by step").

The fast tests check that the example describes what it says: the file it reads is the
bundled sample (mean 61.8 ms, so 64 workers serve 1.04 calls/ms and 160 clients at a call each
193 ms offer 0.83: 80%), the incident halves the pool to under the offered load. The ``slow``
test runs it at 20 repetitions and checks the README's claims (seed 0, measured: FIFO with
backoff 0/20 recovered, FIFO without retries and with the shared budget 20/20, the queue
timeout 20/20 for each policy); thresholds as in tests/test_service_incident.py (at most 5 of
20 for a collapse, at least 15 for a recovery: binomial tails under 0.3% at p = 0.95).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sim
from sim.models.service_times import read_service_file

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "your_service.toml"
TITLES = ["Your_Service_FIFO", "Your_Service_Queue_Timeout"]
LABELS = ("no retries", "backoff, 4 attempts", "shared retry budget")


def test_the_example_is_a_64_worker_service_at_80_percent_load_losing_half() -> None:
    config = sim.load(EXAMPLE)
    assert [s.title for s in config.simulations] == TITLES
    times = read_service_file(EXAMPLE.parent / "service_times.csv")
    capacity = 64 / float(times.mean())  # calls per ms the pool serves at full strength
    for spec in config.simulations:
        pool = spec.control
        assert type(pool).__name__ == "PoolServer" and pool.workers == 64
        assert pool.service_distribution == "empirical"
        assert Path(pool.service_file).resolve() == (EXAMPLE.parent / "service_times.csv").resolve()
        assert spec.workload.NAME == "open" and spec.labels == LABELS
        offered = spec.max_clients / spec.workload.think_time
        assert 0.78 < offered / capacity < 0.82
        (incident,) = spec.degradations
        assert incident.capacity == 0.5
        assert offered > 0.5 * capacity  # the half pool cannot keep up: a backlog builds
    assert config.simulations[1].control.queue_timeout == 200.0


def test_the_service_times_file_has_a_measured_shape() -> None:
    """A lognormal body (median ~40 ms) and a slow tail: the mean sits well above the median."""
    times = read_service_file(EXAMPLE.parent / "service_times.csv")
    assert len(times) == 2000 and times.min() > 0
    assert 35 < float(sorted(times)[len(times) // 2]) < 45
    assert float(times.mean()) > 1.4 * float(sorted(times)[len(times) // 2])


@pytest.mark.slow
def test_fifo_needs_a_shared_budget_or_no_retries_and_the_queue_timeout_keeps_every_policy_up() -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace("repeat = 2\n", "repeat = 20\n")
    text = text.replace('service_file = "service_times.csv"',
                        f'service_file = "{(EXAMPLE.parent / "service_times.csv").as_posix()}"')
    rows = sim.run(text, workers=2).rows("latency")
    recovered = {(r["simulation"], r["strategy"]): int(r["recovered_runs"]) for r in rows}
    assert all(int(r["runs"]) == 20 for r in rows)
    assert recovered["Your_Service_FIFO", "backoff, 4 attempts"] <= 5
    assert recovered["Your_Service_FIFO", "no retries"] >= 15
    assert recovered["Your_Service_FIFO", "shared retry budget"] >= 15
    for label in LABELS:
        assert recovered["Your_Service_Queue_Timeout", label] >= 15
