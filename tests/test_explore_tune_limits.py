"""A tune is held to the resource limits before any work: not only the simulation it starts
from, but a trial at the costliest corner of its bounds, its held-out evaluation (the original
strategies plus up to five tuned variants) and all its trials together; a refusal is one line
naming the key, exit 2, and nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import sim_table, toml_text

import sim.runs.resources as resources
import sim.exploration.tune as tune
from sim.commands import cli
from sim.runs.resources import EVENTS_LIMIT, EVENTS_PER_REQUEST, check_resources
from sim.vocabulary.errors import ConfigError
from sim.exploration.tune_checks import check_tunes
from sim.exploration.plan import parse_document
from sim.exploration.tune import MAX_FRONT_VARIANTS

CLIENTS = 10
NO_MEMORY_LIMIT = (None, None)


def open_table(requests_per_client: float, trials: int = 1) -> dict:
    """A replying server whose runs make ``requests_per_client`` first requests per client:
    horizon / think_time + 1 of them (sim.runs.resources.requests_per_client)."""
    table = sim_table("LatencyServer", [{"type": "Constant", "constant": 100.0, "name": "constant"}],
                      title="Big", clients=[CLIENTS], repeat=1, base_latency=100.0, concurrency_limit=3,
                      factor=1.05, k=1.5, workload="poisson", think_time=1.0,
                      horizon=requests_per_client - 1, timeout=2000.0)
    table["tune"] = {"strategy": "constant", "params": {"constant": [10, 1000]}, "trials": trials}
    return table


def plan_and_base(table: dict):
    doc = parse_document({"simulation": [table]}, "big.toml")
    return doc.tunes[0], doc.simulations[0]


# A run's estimate is EVENTS_PER_REQUEST × clients × requests per client (E); a one-strategy
# sweep at one client count estimates E for the sweep and 2E for its two recorded runs
# (representative and largest: both the 10 clients), so 3E per strategy.
def per_strategy(events_per_run: float) -> float:
    return 3 * events_per_run


def requests_for(events_per_run: float) -> float:
    return events_per_run / (EVENTS_PER_REQUEST * CLIENTS)


def test_the_held_out_evaluation_is_refused_when_the_simulation_alone_passes() -> None:
    # E = 1e9: the simulation (and a trial) 3e9 events; the evaluation, 1 + 1 + 4 = 6
    # strategies, 1.8e10: over the 1e10 limit.
    table = open_table(requests_for(1e9))
    plan, base = plan_and_base(table)
    check_resources([base], workers=2, memory=NO_MEMORY_LIMIT)  # what was checked before: passes
    assert per_strategy(1e9) * (1 + 1 + MAX_FRONT_VARIANTS) > EVENTS_LIMIT > per_strategy(1e9)
    with pytest.raises(ConfigError) as info:
        check_tunes([plan], workers=2, memory=NO_MEMORY_LIMIT)
    line = info.value.format()
    assert "\n" not in line and info.value.key == "horizon"
    assert "held-out evaluation (the original strategy and up to 5 tuned variants)" in line
    check_tunes([plan], workers=2, force=True, memory=NO_MEMORY_LIMIT)  # a soft limit: --force lifts it


def test_all_trials_together_are_held_to_the_events_limit() -> None:
    # E = 2e8: a trial 6e8, the evaluation 3.6e9; 20 trials and the evaluation 1.56e10.
    table = open_table(requests_for(2e8), trials=20)
    plan, _ = plan_and_base(table)
    with pytest.raises(ConfigError) as info:
        check_tunes([plan], workers=2, memory=NO_MEMORY_LIMIT)
    assert info.value.key == "tune.trials" and "20 trials" in info.value.message
    check_tunes([plan_and_base(open_table(requests_for(2e8), trials=5))[0]], workers=2,
                memory=NO_MEMORY_LIMIT)  # 5 × 6e8 + 3.6e9 = 6.6e9: under the limit


def test_the_costliest_corner_is_the_one_checked(monkeypatch) -> None:
    # The events estimate does not depend on a strategy's parameters today; make it grow with
    # the constant delay to see which corner is checked and named.
    real = resources.expected_events

    def by_delay(spec, clients):
        return real(spec, clients) * max(s.strategy.constant for s in spec.strategies)

    monkeypatch.setattr(resources, "expected_events", by_delay)
    # E = 4e6 × the delay: the simulation (delay 100) 3 × 4e8 = 1.2e9 events, a trial at the
    # upper bound (1000) 1.2e10, over the limit; at the lower bound (10) 1.2e8.
    plan, base = plan_and_base(open_table(requests_for(4e6)))
    check_resources([base], workers=2, memory=NO_MEMORY_LIMIT)
    with pytest.raises(ConfigError) as info:
        check_tunes([plan], workers=2, memory=NO_MEMORY_LIMIT)
    assert "a trial at constant = 1000 (the costliest corner of the bounds)" in info.value.message


def test_the_command_refuses_before_any_work_with_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(resources, "machine_memory", lambda: NO_MEMORY_LIMIT)
    monkeypatch.setattr(tune, "run_tune", lambda *a, **kw: pytest.fail("the tune must not start"))
    config = tmp_path / "big.toml"
    config.write_text(toml_text(open_table(requests_for(1e9))), "utf-8")
    out = tmp_path / "out"
    assert cli.main(["explore", str(config), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: {config}: simulation 'Big': key 'horizon': tune: its held-out evaluation")
    assert not out.exists()
