"""A run in which no attempt failed stands for every other strategy's run at its coordinates:
the explore's whole-cell tasks simulate it once, and the results are those of running each."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
from support import make_spec

from sim.runs import sweep
from sim.runs.engine import run_metrics
from sim.runs.shared_runs import no_attempt_failed, stands_for
from sim.runs.sweep import run_sweeps

STRATEGIES = [
    {"type": "Constant", "constant": 100.0, "name": "constant"},
    {"type": "NormalJitterExpo", "min_delay": 100.0, "factor": 2.718, "max_delay": 300000.0,
     "jitter": 0.1, "name": "expo"},
    {"type": "Constant", "constant": 100.0, "name": "budget",
     "policies": [{"type": "RetryBudget", "percent": 20, "min_retries_per_s": 10, "ttl": 10000,
                   "scope": "shared"}]},
    {"type": "Constant", "constant": 100.0, "name": "short timeout",
     "policies": [{"type": "AttemptTimeout", "timeout": 150.0}]},
]
# Light load (20 clients, one request each 10 s, 30 in service at once): nothing fails.
CALM = dict(base_latency=100.0, concurrency_limit=30, factor=1.05, k=15.0, workload="poisson",
            think_time=10000.0, horizon=30000.0, timeout=2000.0, clients=[20], repeat=2)


def _same(a, b) -> None:
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, dict):
            assert x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x), f.name
        elif isinstance(x, float) and x != x:  # NaN: no recovery to time
            assert y != y, f.name
        else:
            assert np.array_equal(np.asarray(x), np.asarray(y)), f.name


def test_a_run_without_failures_is_every_strategys_run() -> None:
    spec = make_spec("LatencyServer", STRATEGIES, **CALM)
    chains = [s.chain for s in spec.strategies]
    for r in range(spec.repeat):
        template = run_metrics(spec, chains[0], 20, r)
        assert no_attempt_failed(template) and template.successes > 0
        for chain in chains[1:3]:
            assert stands_for(chains[0], chain)
            _same(run_metrics(spec, chain, 20, r), template)
        # An attempt timeout shorter than the service time: that strategy's attempts do fail.
        assert not stands_for(chains[0], chains[3])
        assert not no_attempt_failed(run_metrics(spec, chains[3], 20, r))


def test_whole_cell_tasks_give_the_per_strategy_results_with_fewer_runs(monkeypatch) -> None:
    calm = make_spec("LatencyServer", STRATEGIES, title="Calm", **CALM)
    outage = make_spec("LatencyServer", STRATEGIES, title="Outage",
                       **{**CALM, "outages": [{"start": 10000.0, "duration": 8000.0}]})
    simulated = []

    def counted(spec, chain, n, r):
        simulated.append(spec.title)
        return run_metrics(spec, chain, n, r)

    monkeypatch.setattr(sweep, "run_metrics", counted)
    apart = run_sweeps([calm, outage], workers=1)
    assert len(simulated) == 2 * 4 * 2
    simulated.clear()
    whole = run_sweeps([calm, outage], workers=1, whole_cells=True)
    # Calm: one run per repetition stands for the next two; the short timeout runs its own.
    assert simulated.count("Calm") == 2 * 2 and simulated.count("Outage") == 4 * 2
    for a, b in zip(apart, whole):
        for name in ("work", "duration", "cost", "gave_up", "events"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        for key, m in a.open_runs.items():
            _same(m, b.open_runs[key])
