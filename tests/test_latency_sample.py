"""The one latency-sampling rule: the client models' incremental sample, the kernels' and a
replay's at once (``sampled``) keep the same successes, at every length, past the sample too."""

from __future__ import annotations

import numpy as np
import pytest

from sim.core import latency_sample
from sim.core.latency_sample import LatencySample, sampled, stride_for
from sim.kernels.jit import plain
from sim.kernels.outputs import keep_latency

SAMPLE = 8  # small, so that a few hundred successes cross it several times


def test_the_stride_is_the_smallest_power_of_two_that_keeps_at_most_the_sample() -> None:
    for n in range(0, 300):
        s = stride_for(n, SAMPLE)
        assert s & (s - 1) == 0  # a power of two
        assert -(-n // s) <= SAMPLE  # ceil(n / s) kept
        assert s == 1 or -(-n // (s // 2)) > SAMPLE  # half of it would keep too many


@pytest.mark.parametrize("n", [0, 1, SAMPLE, SAMPLE + 1, 2 * SAMPLE, 2 * SAMPLE + 1, 100, 257])
def test_the_client_models_sample_is_the_rule(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    monkeypatch.setattr(latency_sample, "LATENCY_SAMPLE", SAMPLE)
    sample = LatencySample()
    values = np.arange(n, dtype=np.float64) * 1.5
    for i, v in enumerate(values):
        sample.keep(float(v), i % 3, float(i))
    assert sample.latencies == sampled(values).tolist()
    assert sample.times == sampled(np.arange(n, dtype=np.float64)).tolist()
    assert sample.clients == sampled(np.arange(n) % 3).tolist()


@pytest.mark.parametrize("n", [0, 1, SAMPLE + 1, 100, 257])
def test_the_kernels_sample_is_the_rule(n: int) -> None:
    # The kernels' transcription over arrays (its plain source: the same code numba compiles).
    values = np.arange(n, dtype=np.float64) * 1.5
    lat_v, lat_t = np.zeros(SAMPLE + 2), np.zeros(SAMPLE + 2)
    lat_c = np.zeros(SAMPLE + 2, dtype=np.int64)
    state = np.array([0, 1, 0], dtype=np.int64)  # kept, stride, since the last kept
    for i, v in enumerate(values):
        plain(keep_latency)(lat_v, lat_c, lat_t, state, 0, 1, 2, float(v), i % 3, float(i), SAMPLE)
    kept = int(state[0])
    assert lat_v[:kept].tolist() == sampled(values, SAMPLE).tolist()
    assert lat_c[:kept].tolist() == sampled(np.arange(n) % 3, SAMPLE).tolist()
