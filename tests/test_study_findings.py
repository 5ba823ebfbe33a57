"""The two overload studies' qualitative findings, from the shipped examples with their fixed seeds.

- Study 004 (``examples/spike_queue.toml``): after a traffic spike against a queue service, the two
  exponential strategies send far fewer requests and have a lower median latency than no backoff,
  constant and uniform random backoff.
- Study 003 (``examples/server_outage.toml``): after an outage, constant 100 ms retries keep the
  latency-collapse server down until the horizon, while NormalJitterExpo lets it recover.

Study 004 runs two of the example's five repetitions to stay fast; study 003 runs all three.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from sim.config import SimulationSpec, load_config
from sim.sweep import SweepResult, run_sweep

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXPONENTIAL = {"Expo", "FullJitteredExpo"}
OTHERS = {"NoBackoff", "Constant", "UniformRandom"}


def example(name: str) -> SimulationSpec:
    (spec,) = load_config(EXAMPLES / name).simulations
    return spec


def by_type(result: SweepResult) -> dict[str, int]:
    return {s.strategy.type_name: i for i, s in enumerate(result.spec.strategies)}


def test_spike_queue_exponential_backoff_sends_fewer_requests_and_is_faster() -> None:
    spec = example("spike_queue.toml")
    assert spec.repeat >= 2
    result = run_sweep(replace(spec, repeat=2), workers=1)
    index = by_type(result)
    assert set(index) == EXPONENTIAL | OTHERS
    requests = {name: result.open_mean("requests", s, 0) for name, s in index.items()}
    p50 = {name: result.latency(s, 0)["p50"] for name, s in index.items()}
    for expo in EXPONENTIAL:
        for other in OTHERS:
            assert requests[expo] < requests[other] / 3, (expo, other, requests)
            assert p50[expo] < p50[other], (expo, other, p50)
            # Not only on average: in every repetition (the strategies share their random numbers).
            for r in range(2):
                a, b = result.open_run(index[expo], 0, r), result.open_run(index[other], 0, r)
                assert a.requests < b.requests / 3
                assert a.latency_percentiles()["p50"] < b.latency_percentiles()["p50"]
    # The exponential clients all get through within the horizon; the others leave many behind.
    clients = spec.clients[0]
    for expo in EXPONENTIAL:
        assert result.open_mean("successes", index[expo], 0) == clients
    for other in OTHERS:
        assert result.open_mean("unfinished", index[other], 0) > clients / 4


def test_server_outage_constant_retries_never_recover_and_exponential_backoff_does() -> None:
    spec = example("server_outage.toml")
    result = run_sweep(spec, workers=1)
    index = by_type(result)
    constant, expo = index["Constant"], index["NormalJitterExpo"]
    outage = spec.outages[0]
    for r in range(spec.repeat):
        stuck, recovered = result.open_run(constant, 0, r), result.open_run(expo, 0, r)
        assert stuck.recovery_time is not None and math.isnan(stuck.recovery_time)
        assert not stuck.recovered
        assert recovered.recovered and 0 <= recovered.recovery_time < spec.horizon - outage.end
        # What recovery means here: over the last quarter of the horizon, goodput is back at its
        # pre-outage level with backoff and a small fraction of it with constant retries.
        level = {name: m.series["goodput"] for name, m in (("stuck", stuck), ("recovered", recovered))}
        buckets = len(level["stuck"])
        before = slice(int(outage.start / 2 / stuck.bucket), int(outage.start / stuck.bucket))
        tail = slice(3 * buckets // 4, buckets)
        assert level["recovered"][tail].mean() > 0.9 * level["recovered"][before].mean()
        assert level["stuck"][tail].mean() < 0.2 * level["stuck"][before].mean()
        # Constant retries time out over and over; backoff sends far fewer requests.
        assert stuck.timeouts > 5 * recovered.timeouts
        assert stuck.requests > 2 * recovered.requests
    assert math.isnan(result.recovery(constant, 0))
    assert np.isfinite(result.recovery(expo, 0))
