"""The phase portrait predicts the outages it describes (issue 34, item 4), ``-m slow``: the 20x20
portrait of ``examples/server_outage.toml``'s constant retries, and for outages of 5-60 s twenty
runs of the config each (its own repetitions), their state at the resume looked up on it.

Measured (this test's figures, 20 runs each; "returned" within the portrait's 30 s limit):
5 s 20/20 matched (all return), 10 s 20/20, 15 s 20/20, 20 s 13/20 (7 of 20 return: the tipping
point), 25 s 20/20 (none return), 30 s 19/20, 45 s 20/20, 60 s 20/20. Before (a fresh full
timeout for every seeded request, no clients at the door in the state) the state at the resume
of a 30 s outage looked healthy (work ~220) and every such run collapsed.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from sim.models.workloads import Outage
from sim.phase.pool import cell_runner
from sim.phase.portrait import PhaseSettings, compute_portrait
from sim.phase.resume import outage_run, predicted_return
from sim.settings.config import load_config

SERVER_OUTAGE = Path(__file__).parent.parent / "examples" / "server_outage.toml"
LENGTHS_S = (5, 10, 15, 20, 25, 30, 45, 60)
RUNS = 20
# A length is decided when at least 90% of its runs end alike; only then can any state, which
# says one probability for all of them, match >= 90% of them (at a coin flip it cannot).
DECIDED = 0.9


@pytest.mark.slow
def test_the_portrait_predicts_how_the_outages_runs_end() -> None:
    spec = load_config(SERVER_OUTAGE).simulations[0]
    label, clients = "constant 100ms", max(spec.clients)
    with cell_runner(2, in_process=False) as run_all:
        portrait = compute_portrait(spec, label, PhaseSettings(), run_all)
    s = portrait.settings
    start = float(spec.stops[0].start)
    counts = {}
    for seconds in LENGTHS_S:
        run_spec = replace(spec, outages=(Outage(start=start, duration=seconds * 1000.0),))
        runs = [outage_run(run_spec, label, clients, r, portrait.healthy, s.limit, s.step, s.grid.work_max)
                for r in range(RUNS)]
        predicted = [predicted_return(portrait, run.work, run.orbit) for run in runs]
        matched = sum((p >= 0.5) == run.returned for p, run in zip(predicted, runs))
        returned = sum(run.returned for run in runs)
        counts[seconds] = (matched, returned, sum(predicted) / RUNS)
    print({k: f"{m}/{RUNS} matched, {r} returned, mean p {p:.2f}" for k, (m, r, p) in counts.items()})
    assert counts[5][1] == RUNS and counts[60][1] == 0  # the config's: short ones recover, long not
    for seconds, (matched, returned, mean_p) in counts.items():
        if max(returned, RUNS - returned) >= DECIDED * RUNS:
            assert matched >= DECIDED * RUNS, (seconds, counts[seconds])
        else:  # the tipping point: the portrait sees the state near its boundary
            assert 0.0 < mean_p < 1.0, (seconds, counts[seconds])
    decided = [k for k, (m, r, p) in counts.items() if max(r, RUNS - r) >= DECIDED * RUNS]
    assert len(decided) >= len(LENGTHS_S) - 1  # one tipping length at most, at 20 runs each
