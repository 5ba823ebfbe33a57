"""``retry_probability`` (issue 34): a retry is sent only with that probability, else the call
ends. Against a FlakyServer that fails each attempt with probability f, a call of at most
``max_attempts`` = n attempts, each retry taken with probability q, makes 1 + fq + (fq)² + ... +
(fq)^(n−1) attempts on average (Brooker's 1 + p + p² + p³ with p = fq)."""

from __future__ import annotations

import math

import pytest
from support import make_spec

from sim.vocabulary.errors import ConfigError
from sim.runs.engine import run_metrics

FLAKY = dict(failure_rate=0.5, latency=5.0, workload="poisson", think_time=50.0, horizon=20000.0,
             network_mu=1.0, network_sigma=0.2, clients=[50], repeat=1)


def amplification(q: float | None, attempts: int = 4) -> tuple[float, int]:
    entry = {"type": "Constant", "constant": 1.0, "max_attempts": attempts}
    if q is not None:
        entry["retry_probability"] = q
    spec = make_spec("FlakyServer", [entry], **FLAKY)
    m = run_metrics(spec, spec.strategies[0].chain, 50, 0)
    return m.amplification, m.calls


@pytest.mark.parametrize("q", [0.0, 0.5, 1.0])
def test_attempts_per_call_follow_the_geometric_sum(q: float) -> None:
    """Within 4 standard errors of the theory: a call's attempts vary by at most their range
    (4), so the mean of ~18,000 calls is within 4 · 1.5 / sqrt(calls) (its s.d. is under 1.5)."""
    p = 0.5 * q
    expected = sum(p ** k for k in range(4))
    got, calls = amplification(q)
    assert abs(got - expected) < 4 * 1.5 / math.sqrt(calls), (q, got, expected)


def test_a_certain_retry_is_no_retry_probability_at_all() -> None:
    """q = 1 takes every retry: with a strategy that draws no jitter, the very same run."""
    assert amplification(1.0) == amplification(None)


@pytest.mark.parametrize("q", [-0.1, 1.5, True])
def test_a_bad_probability_is_one_line(q: object) -> None:
    with pytest.raises(ConfigError) as info:
        make_spec("FlakyServer", [{"type": "Constant", "constant": 1.0, "retry_probability": q}], **FLAKY)
    assert "retry_probability" in str(info.value) and "\n" not in str(info.value)
