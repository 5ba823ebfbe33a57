"""A rate too low to judge says so, with the rate it would need (issue 34 item 3): a run whose
baseline has fewer than ``WINDOW_SUCCESSES`` successes per window is not judged, and the run's
table and the app's Recovered column say "too few calls per window to judge (needs ≥ X/s)"; a
run at a normal rate is judged as before."""

from __future__ import annotations

import math
from typing import Any

import pytest
from support import make_spec

from sim.analysis.recovery import (RECOVERY_WINDOW, THRESHOLD, TOO_FEW, WINDOW_SUCCESSES, WINDOW_Z, Recovery,
                                   recovery_verdict, too_few_note, undecided_reason, window_rate_needed)
from sim.analysis.replay import RunSummary
from sim.report.latency import unjudged_notes
from sim.runs.engine import run_metrics
from sim.runs.sweep import run_sweep
from tui.view.compare_columns import _recovered

# 4 workers of 10 ms, open arrivals, a 2 s outage at 30 s of 60 s: the default bucket is 300 ms
# (a 200th of the horizon), a window 10 of them, 3 s.
OUTAGE: dict[str, Any] = dict(control="PoolServer", workers=4, service_time=10.0, service_distribution="exponential",
                              workload="open", clients=[8], horizon=60000.0, timeout=1000.0, repeat=2,
                              outages=[{"start": 30000.0, "duration": 2000.0}])
ONE_TRY = [{"type": "Constant", "constant": 0.0, "max_attempts": 1}]
# The rate a window's test needs: WINDOW_SUCCESSES = WINDOW_Z² / THRESHOLD = 9 / 0.85 = 10.59
# successes in 3 s, 3.53 a second (the derivation is sim.analysis.recovery's).
NEEDED_PER_S = WINDOW_Z ** 2 / THRESHOLD / 3.0


def test_the_rate_needed_is_the_window_rule_s() -> None:
    assert WINDOW_SUCCESSES == pytest.approx(10.588, abs=1e-3)
    assert window_rate_needed(RECOVERY_WINDOW, 300.0) * 1000 == pytest.approx(NEEDED_PER_S)
    assert too_few_note(window_rate_needed(10, 300.0), "ms") == f"{TOO_FEW} (needs ≥ 3.53/s)"
    assert too_few_note(window_rate_needed(10, 1.0), "tick") == f"{TOO_FEW} (needs ≥ 1.06 per tick)"
    assert undecided_reason(too_few_note(1.0, "s")) == TOO_FEW


def test_below_the_rate_a_window_without_a_success_would_pass() -> None:
    """Why the rule: at 8 successes a window (under 10.6) a server dead after the outage would
    be "recovered" by the window's test, so the verdict says too few instead; at 40 a window
    the same death is "never"."""
    import numpy as np

    for per_window, note in ((8, True), (40, False)):
        per_bucket = per_window / RECOVERY_WINDOW
        goodput = np.concatenate([np.full(100, per_bucket), np.zeros(100)])  # dead from 100 on
        times = np.arange(int(per_bucket * 100)) / per_bucket + 0.01
        latencies = np.ones(times.size)
        verdict = recovery_verdict(goodput, 1.0, [type("O", (), {"start": 100.0, "end": 110.0})()], times,
                                   latencies, time_unit="s")
        if note:
            assert verdict.time is None and verdict.note.startswith(TOO_FEW), verdict
            assert verdict.needed_rate == pytest.approx(WINDOW_SUCCESSES / RECOVERY_WINDOW)
        else:
            assert verdict.time is not None and math.isnan(verdict.time), verdict


def test_a_low_rate_run_says_so_with_the_rate_it_needs() -> None:
    """1 call a second: some 3 calls a window, under the 10.6 it needs."""
    spec = make_spec(strategies=ONE_TRY, **OUTAGE, rate=1.0)
    m = run_metrics(spec, spec.strategies[0].chain, 8, 0)
    assert m.recovery_time is None
    assert m.recovery_note == f"{TOO_FEW} (needs ≥ {NEEDED_PER_S:.3g}/s)" == f"{TOO_FEW} (needs ≥ 3.53/s)"
    result = run_sweep(spec, workers=1)
    assert unjudged_notes(result) == [f"not judged at 8 clients: {TOO_FEW} (needs ≥ 3.53/s)."]
    assert result.recovery(0, 0) is None  # no repetition judged
    cell = _recovered(RunSummary(work=1, duration=1.0, gave_up=0, caps=spec.caps, recovery_note=m.recovery_note))
    assert cell == "— too few calls (needs ≥ 3.53/s)"


def test_a_normal_run_is_judged() -> None:
    """60 calls a second: 180 a window, judged (it recovers: nothing retries)."""
    spec = make_spec(strategies=ONE_TRY, **OUTAGE, rate=60.0)
    for r in range(2):
        m = run_metrics(spec, spec.strategies[0].chain, 8, r)
        assert not m.recovery_note.startswith(TOO_FEW)
        assert m.recovery_time is not None and not math.isnan(m.recovery_time), r
    assert unjudged_notes(run_sweep(spec, workers=1)) == []


def test_the_note_is_an_undecided_reason_for_the_counts() -> None:
    """A too-few run counts as undecided where repetitions are summed (``undecided_reason``)."""
    assert isinstance(Recovery(None, too_few_note(1.0, "ms")).note, str)
    assert undecided_reason("no baseline before the outage") is None
