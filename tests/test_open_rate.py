"""Open traffic by ``rate`` (calls per second of the whole workload) or ``load`` (a fraction of
the server's capacity) instead of ``think_time`` (issue 34): either is the same run as the
``think_time`` it works out, and every misuse is one line."""

from __future__ import annotations

from typing import Any

import pytest
from support import make_spec

from sim.vocabulary.errors import ConfigError

# examples/service_incident.toml's pool: 4 workers of 10 ms (0.4 calls/ms), 32 open clients
# each starting a call every 100 ms: 0.32 calls/ms, 320 a second, 80% load.
POOL: dict[str, Any] = dict(control="PoolServer", workers=4, service_time=10.0, service_distribution="exponential",
                            workload="open", clients=[32], horizon=2000.0, timeout=1000.0, repeat=1)


def spec(**keys: Any):
    control = keys.pop("control", POOL["control"])
    return make_spec(control, [{"type": "Constant", "constant": 0.0, "max_attempts": 1}],
                     **{**{k: v for k, v in POOL.items() if k != "control"}, **keys})


def test_rate_and_load_are_the_think_time_they_work_out() -> None:
    by_think = spec(think_time=100.0)
    assert spec(rate=320.0).workload == by_think.workload  # 320/s over 32 clients: one per 100 ms
    assert spec(load=0.8).workload == by_think.workload  # 80% of 4 / 10 ms
    assert spec(rate=320.0) == by_think and spec(load=0.8) == by_think
    # A lognormal's mean is its median times exp(σ²/2): the load counts the mean.
    skewed = spec(load=0.5, service_distribution="lognormal", service_p99=50.0)
    mean = skewed.control.mean_service
    assert skewed.workload.think_time == pytest.approx(32 / (0.5 * 4 / mean))
    queue = make_spec("QueueServer", [{"type": "Constant", "constant": 0.0, "max_attempts": 1}], concurrency=5,
                      service_time=5.0, workload="open", clients=[10], horizon=100.0, load=0.5, repeat=1)
    assert queue.workload.think_time == pytest.approx(10 / (0.5 * 5 / 5.0))


@pytest.mark.parametrize("keys, message", [
    ({"rate": 320.0, "think_time": 100.0}, "key 'rate': and think_time both set the open workload's pace"),
    ({"rate": 320.0, "load": 0.8}, "key 'load': and rate both set"),
    ({"rate": 320.0, "workload": "poisson"}, "key 'rate': sets an open workload's pace, but workload is 'poisson'"),
    ({"load": 0.8, "clients": [16, 32]}, "key 'load': sets the pace of one client count"),
    ({"rate": -1.0}, "key 'rate': must be > 0"),
    ({"rate": 320.0, "time_unit": "tick"}, "key 'rate': is in calls per second, but time_unit 'tick'"),
    ({"load": 0.8, "control": "FlakyServer", "failure_rate": 0.1}, "key 'load': is a fraction of the capacity"),
])
def test_misuse_is_one_line(keys: dict[str, Any], message: str) -> None:
    drop = {"workers", "service_time", "service_distribution"} if keys.get("control") == "FlakyServer" else set()
    with pytest.raises(ConfigError) as info:
        control = keys.pop("control", POOL["control"])
        make_spec(control, [{"type": "Constant", "constant": 0.0, "max_attempts": 1}],
                  **{**{k: v for k, v in POOL.items() if k != "control" and k not in drop}, **keys})
    text = str(info.value)
    assert message in text, text
    assert all("\n" not in line for line in info.value.lines()), text
