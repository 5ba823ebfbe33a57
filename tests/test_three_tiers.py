"""``examples/three_tiers.toml``: retries at every layer of a three-tier chain against retrying at
the top only, a retry budget per tier, and deadline propagation, when the bottom loses half its
workers for 5 s (README, "Retries at every layer").

The fast test checks that the example loads and is the point it describes. The ``slow`` test
runs the main contrast at 60% load (96 clients) for 20 repetitions and checks README's finding:
retries at every layer never recover, the top alone or a budget always do. Measured (seed 0):
20/20 never recovered against 0/20 and 0/20. The thresholds (at least 15 of 20 never recovered
for a collapse, at most 5 for a recovery) leave room for other seeds: an arrangement that
recovers with probability 0.95 has more than 5 of 20 runs never recover with probability
< 0.3% (binomial), and symmetrically for a collapse.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

import sim
from sim.runs.engine import run_metrics

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "three_tiers.toml"
TITLES = ["Every_Layer", "Top_Only", "Retry_Budget", "Deadlines"]


def test_the_example_loads_and_is_the_point_it_describes() -> None:
    config = sim.load(EXAMPLE)
    assert [s.title for s in config.simulations] == TITLES
    for spec in config.simulations:
        # Clients call once a second each, openly; the bottom's 16 workers of 100 ms serve
        # 0.16 calls/ms: 64, 96 and 128 clients are 40%, 60% and 80% of it.
        assert spec.clients == (64, 96, 128) and spec.workload.think_time == 1000.0
        bottom = spec.tiers[1].control
        assert (bottom.workers, bottom.service_time, bottom.service_distribution) == (16, 100.0, "exponential")
        assert bottom.queue_timeout == 200.0
        (incident,) = spec.tiers[1].incidents
        assert (incident.start, incident.duration, incident.capacity) == (20000.0, 5000.0, 0.5)
        assert spec.strategies[0].strategy.max_attempts == 4  # the clients always retry
        assert (spec.timeout, spec.tiers[0].timeout, spec.tiers[1].timeout) == (1000.0, 600.0, 500.0)
    by_title = {s.title: s for s in config.simulations}
    assert [t.retry.strategy.max_attempts for t in by_title["Every_Layer"].tiers] == [4, 4]
    assert [t.retry.strategy.max_attempts for t in by_title["Top_Only"].tiers] == [1, 1]
    assert all(t.retry.policies and t.retry.policies[0].type_name == "RetryBudget"
               for t in by_title["Retry_Budget"].tiers)
    assert all(t.propagate_deadline for t in by_title["Deadlines"].tiers)
    assert not any(t.propagate_deadline or t.retry.policies for t in by_title["Every_Layer"].tiers)


def never_recovered(title: str, clients: int, repeat: int) -> int:
    spec = replace(sim.load(EXAMPLE).simulation(title), clients=(clients,), repeat=repeat)
    chain = spec.strategies[0].chain
    verdicts = [run_metrics(spec, chain, clients, r).recovery_time for r in range(repeat)]
    assert all(v is not None for v in verdicts)  # every run judged
    return sum(math.isnan(v) for v in verdicts)


@pytest.mark.slow
def test_retries_at_every_layer_collapse_where_the_top_alone_or_a_budget_recover() -> None:
    assert never_recovered("Every_Layer", 96, 20) >= 15
    assert never_recovered("Top_Only", 96, 20) <= 5
    assert never_recovered("Retry_Budget", 96, 20) <= 5
