"""Parity with the ``backoff-simulator`` reference: mean work against figures computed from its
algorithm (``reference_model``, an independent transcription), where write durations matter.

The reference's code draws write durations as ``abs(N(write_mu, write_sigma))``. With
``write_sigma`` comparable to ``write_mu`` that differs a lot from ``max(0, N)``: e.g.
WriteOnlyOCC, write 1±4, 15 clients, Constant 3 has mean work ≈ 35.5 in the reference and was
≈ 25 here while this project clipped at zero.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_model import reference_work
from support import make_spec

from sim.analysis.stats import estimate
from sim.runs.engine import run_metrics

RUNS = 1000  # per side; the standard error of each mean is then about 0.1 requests
# Both sides are means of independent runs, so their difference has standard error
# sqrt(se_ours² + se_ref²); a correct model stays within 4 of them but with probability ~6e-5
# (normal tail), while the clipped model was over 40 of them away in the first case.
Z = 4.0
NETWORK = {"network_mu": 10.0, "network_sigma": 2.0}

CASES = [  # (control, write_mu, write_sigma, clients, constant backoff)
    ("WriteOnlyOCCServer", 1.0, 4.0, 15, 3.0),  # the case
    ("WriteOnlyOCCServer", 2.0, 2.0, 8, 1.0),
    ("LockingServer", 1.0, 4.0, 10, 3.0),
    ("ReadWriteOCCServer", 0.5, 3.0, 10, 2.0),
]


def ours(control: str, write_mu: float, write_sigma: float, clients: int, constant: float) -> np.ndarray:
    spec = make_spec(control, [{"type": "Constant", "constant": constant}], clients=[clients],
                     repeat=1, write_mu=write_mu, write_sigma=write_sigma, seed=11, **NETWORK)
    strategy = spec.strategies[0].strategy
    return np.array([run_metrics(spec, strategy, clients, r).work for r in range(RUNS)], float)


def reference(control: str, write_mu: float, write_sigma: float, clients: int, constant: float) -> np.ndarray:
    rng = np.random.default_rng(2024)
    return np.array([reference_work(control, clients, constant, write_mu=write_mu,
                                    write_sigma=write_sigma, rng=rng, **NETWORK)
                     for _ in range(RUNS)], float)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-write{c[1]:g}+-{c[2]:g}")
def test_mean_work_matches_the_reference_algorithm(case) -> None:
    a, b = ours(*case), reference(*case)
    ea, eb = estimate(a), estimate(b)
    se = math.hypot(a.std(ddof=1), b.std(ddof=1)) / math.sqrt(RUNS)
    assert abs(ea.mean - eb.mean) < Z * se, (
        f"ours {ea.format(2)} vs the reference's {eb.format(2)} (mean ± 95% CI over {RUNS} runs)")


def test_write_durations_are_folded_not_clipped() -> None:
    """Straight from the draw: |N(1, 4)| has mean ≈ 3.39 (the folded normal's), never 0; the
    clipped max(0, N(1, 4)) would have mean ≈ 2.17 and 40% zeros."""
    from sim.runs.engine import build_wiring

    spec = make_spec("LockingServer", write_mu=1.0, write_sigma=4.0, clients=[1], repeat=1)
    draw = spec.control.write_durations(build_wiring(spec, 1, 0))
    values = np.array([draw() for _ in range(20_000)])
    mu, sigma = 1.0, 4.0
    folded_mean = (sigma * math.sqrt(2 / math.pi) * math.exp(-mu**2 / (2 * sigma**2))
                   + mu * math.erf(mu / (sigma * math.sqrt(2))))
    # Standard error of the sample mean ≈ sd/sqrt(n) ≈ 2.5/141 ≈ 0.018: 5 of them.
    assert abs(values.mean() - folded_mean) < 0.09
    assert values.min() > 0
