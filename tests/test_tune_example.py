"""``examples/tune.toml``: a bundled tune (issue 23) — an exponential backoff's first delay and
factor tuned for the recovery time after a 15 s outage, constant retries beside it.

Fast: the example loads as a tune of the strategy it names. Slow: it runs, and what its header
says holds (seed 0, 16 trials, measured: constant never recovers, 30 s; the tuned backoff
0.9 s held out; trials with a first delay under ~60 ms and a small factor never recover)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sim

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "tune.toml"


def test_the_example_is_a_tune_of_the_expo_backoff() -> None:
    config = sim.load(EXAMPLE)
    (plan,) = config.tunes
    assert plan.label == "expo backoff" and plan.objective == "recovery_time"
    assert [param.name for param in plan.params] == ["min_delay", "factor"]


@pytest.mark.slow
def test_the_tuned_backoff_recovers_where_constant_retries_never_do() -> None:
    rows = {r["strategy"]: r for r in sim.tune(EXAMPLE, workers=2).rows("pareto")}
    constant, tuned = rows["constant"], rows["expo backoff tuned"]
    horizon_after_outage = 60_000.0 - 30_000.0
    assert float(constant["recovery_time_mean"]) == horizon_after_outage  # never recovered
    assert float(tuned["recovery_time_mean"]) < 5_000.0
