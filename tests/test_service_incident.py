"""``examples/service_incident.toml``: a worker pool at 80% load loses half its workers for 10 s
under open arrivals and a 1 s timeout; one simulation per server defence, each with clients
that make 4 attempts per call and clients that make one (README, "Server defences under an
incident").

The fast test checks that the example loads and describes the point it claims (the load, the
incident, the defences). The ``slow`` test runs the main contrast at 20 repetitions and checks
the finding README's table quotes: with retries, FIFO and FIFO with ``cancel = "dequeue"``
stay collapsed, a 100 ms ``queue_timeout`` and LIFO recover; without retries FIFO recovers,
with the example's 4 workers and with 16 (clients scaled to keep 80% load). Measured: 0/20,
0/20, 20/20, 20/20 and 20/20 at both sizes (seed 0; ``python bench/defences.py --pool 16``). The thresholds (at most 5 of 20
recovered for a collapse, at least 15 of 20 for a recovery) leave room for other seeds: a
defence that recovers with probability 0.95 falls under 15 of 20 with probability < 0.3%
(binomial), and symmetrically for a collapse.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sim

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "service_incident.toml"
DEFENCES = ["Pool_FIFO", "Pool_Cancel_Dequeue", "Pool_Queue_Timeout", "Pool_LIFO",
            "Pool_Adaptive_LIFO", "Pool_AIMD", "Pool_Gradient2", "Pool_Vegas"]


def test_the_example_loads_and_is_the_point_it_describes() -> None:
    config = sim.load(EXAMPLE)
    assert [s.title for s in config.simulations] == DEFENCES
    text = EXAMPLE.read_text(encoding="utf-8")
    blocks = text.split("[[simulation]]")[1:]
    for block in blocks:
        # 32 clients, a call each every 100 ms, against 4 workers of 10 ms: 0.32 / 0.4 = 80%
        assert 'control = "PoolServer"' in block and 'workload = "open"' in block
        assert "clients = [32]" in block and "think_time = 100.0" in block
        assert "workers = 4" in block and "service_time = 10.0" in block
        assert "timeout = 1000.0" in block
        assert "incidents = [{ start = 20000.0, duration = 10000.0, capacity = 0.5 }]" in block
        assert 'max_attempts = 4, name = "4 attempts"' in block and 'max_attempts = 1, name = "no retries"' in block
    for spec in config.simulations:
        assert spec.labels == ("4 attempts", "no retries")


def contrast_config(repeat: int, workers: int = 4) -> str:
    """The example's FIFO, cancel-dequeue, queue-timeout and LIFO simulations, ``repeat`` runs
    each, with ``workers`` in the pool and 8 clients a worker (80% load, as the example's 32 for 4)."""
    head, *blocks = EXAMPLE.read_text(encoding="utf-8").split("[[simulation]]")
    keep = [b for b in blocks if any(f'title = "{t}"' in b for t in DEFENCES[:4])]
    assert len(keep) == 4

    def sized(block: str) -> str:
        return (block.replace("repeat = 2\n", f"repeat = {repeat}\n")
                .replace("workers = 4\n", f"workers = {workers}\n")
                .replace("clients = [32]", f"clients = [{8 * workers}]"))

    return head + "".join("[[simulation]]" + sized(b) for b in keep)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [4, 16])
def test_fifo_with_retries_collapses_where_queue_timeout_and_lifo_recover(workers: int) -> None:
    rows = sim.run(contrast_config(20, workers), workers=2).rows("latency")
    recovered = {(r["simulation"], r["strategy"]): int(r["recovered_runs"]) for r in rows}
    assert all(int(r["runs"]) == 20 for r in rows)
    assert recovered["Pool_FIFO", "4 attempts"] <= 5
    assert recovered["Pool_Cancel_Dequeue", "4 attempts"] <= 5
    assert recovered["Pool_Queue_Timeout", "4 attempts"] >= 15
    assert recovered["Pool_LIFO", "4 attempts"] >= 15
    assert recovered["Pool_FIFO", "no retries"] >= 15
