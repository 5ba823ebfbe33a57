"""The AWS post "Exponential Backoff And Jitter": with read-then-write OCC, un-jittered capped
exponential backoff makes clients collide again and again, so it does far more work than full
jitter. Common random numbers make the paired comparison sharp with only 20 repetitions.
"""

from __future__ import annotations

import numpy as np
from support import make_spec

from sim.analysis.stats import paired_difference, significantly_different
from sim.runs.engine import run_metrics

CLIENTS = 50
REPEAT = 20


def test_full_jitter_does_less_work_than_plain_exponential() -> None:
    spec = make_spec("ReadWriteOCCServer",
                     [{"type": "Expo", "base": 5.0, "cap": 2000.0},
                      {"type": "FullJitteredExpo", "base": 5.0, "cap": 2000.0}],
                     clients=[CLIENTS], repeat=REPEAT, network_mu=10.0, network_sigma=2.0,
                     write_mu=0.0, write_sigma=0.0, seed=2015, title="aws")
    work = {s.label: np.array([run_metrics(spec, s.strategy, CLIENTS, r).work for r in range(REPEAT)])
            for s in spec.strategies}
    expo, full = work["Expo"], work["FullJitteredExpo"]
    assert expo.min() >= CLIENTS and full.min() >= CLIENTS  # everyone wrote at least once
    assert expo.mean() > full.mean()
    assert significantly_different(expo, full)
    difference = paired_difference(expo, full)
    assert difference.mean - difference.ci95 > 0
