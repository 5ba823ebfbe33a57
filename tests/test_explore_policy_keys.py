"""Policy fields as explore axes and tune parameters: ``strategies[i].policies[j].NAME`` sets one
policy of one strategy's chain (as the strategy runs it: the preset's policies, the entry's own,
then the simulation's), ``policies[j].NAME`` sets one of the simulation's own policies in every
strategy; a bad path is one line naming the key and the valid choices."""

from __future__ import annotations

from typing import Any

import pytest
from support import make_spec, sim_table

from sim.runs.sweep import run_sweep
from sim.vocabulary.errors import ConfigError, ParamError
from sim.exploration.backends import LocalBackend
from sim.exploration.cache import CellCache
from sim.exploration.paths import PathError, resolve
from sim.exploration.plan import parse_document
from sim.exploration.tune import run_tune, trial_spec
from sim.policies.retry_budget import RetryBudget

FLAKY = dict(control="FlakyServer", failure_rate=0.3, workload="poisson", think_time=100.0,
             horizon=2000.0, clients=[10], repeat=2, network_mu=10.0, network_sigma=3.0,
             work_to_duration=0.0)
SHARED = [{"type": "GrpcThrottle", "max_tokens": 10, "token_ratio": 0.1, "scope": "shared"}]
STRATEGIES = [
    {"type": "Constant", "constant": 0.0, "max_attempts": 4, "name": "three retries"},
    {"type": "Constant", "constant": 0.0, "max_attempts": 4, "name": "budget",
     "policies": [{"type": "RetryBudget", "percent": 20.0, "scope": "shared"}]},
    {"preset": "grpc", "name": "grpc"},
]


def table(**kw: Any) -> dict[str, Any]:
    base = {**FLAKY, "title": "Flaky", **kw}
    control = base.pop("control")
    strategies = base.pop("strategies", STRATEGIES)
    return sim_table(control, strategies, **base)


def spec(**kw: Any):
    t = table(**kw)
    return make_spec(t.pop("control"), t.pop("strategies"), **t)


def test_a_strategy_policy_field_sets_that_policy_of_that_strategy_only() -> None:
    s = spec(policies=SHARED)
    path = resolve("strategies[1].policies[0].percent", s)
    assert not path.integer and path.get(s) == 20.0
    changed = path.set(s, 5.0)
    assert changed.strategies[1].policies[0] == RetryBudget(percent=5.0, scope="shared")
    assert changed.strategies[1].policies[1:] == s.strategies[1].policies[1:]
    assert changed.strategies[0] == s.strategies[0] and changed.strategies[2] == s.strategies[2]
    assert changed.labels == s.labels
    assert path.set(changed, 20.0) == s


def test_a_preset_policy_is_addressed_by_its_place_in_the_chain() -> None:
    s = spec()
    # grpc's preset expands to MaxAttempts(5) (gRPC's default) first.
    path = resolve("strategies[2].policies[0].max_attempts", s)
    assert path.integer and path.get(s) == s.strategies[2].policies[0].max_attempts
    assert path.set(s, 3).strategies[2].policies[0].max_attempts == 3


def test_a_simulation_policy_field_sets_it_in_every_strategy() -> None:
    s = spec(policies=SHARED)
    assert s.shared_policies == 1
    path = resolve("policies[0].max_tokens", s)
    changed = path.set(s, 50.0)
    assert path.get(changed) == 50.0
    for before, after in zip(s.strategies, changed.strategies):
        assert after.policies[:-1] == before.policies[:-1]  # the entries' own are untouched
        assert after.policies[-1].max_tokens == 50.0
        assert after.policies[-1].token_ratio == before.policies[-1].token_ratio
    assert changed.labels == s.labels


@pytest.mark.parametrize("text, fragments", [
    ("strategies[1].policies[2].percent",
     ["strategies[1].policies[2] does not exist", "has 1 entry", "policies[0] RetryBudget"]),
    ("strategies[0].policies[0].percent", ["strategies[0].policies[0] does not exist",
                                           "strategies[0] has no policies"]),
    ("policies[0].capacity", ["policies[0] does not exist", "no policies = [...] of its own",
                              "strategies[i].policies[j].PARAM"]),
    ("strategies[1].policies[0].pct", ["'pct' is not a key of strategies[1].policies[0] (RetryBudget)",
                                       "numeric keys", "percent, min_retries_per_s, ttl"]),
    ("strategies[1].policies[0].scope", ["'strategies[1].policies[0].scope' is not a numeric key",
                                         "percent, min_retries_per_s"]),
    ("strategies[1].policies[0]", ["names a table or a list"]),
    ("strategies[1].policies.percent", ["'strategies[1].policies' is a list",
                                        "strategies[1].policies[0].percent"]),
])
def test_bad_policy_paths_name_the_key_and_the_choices(text: str, fragments: list[str]) -> None:
    with pytest.raises(PathError) as info:
        resolve(text, spec())
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


def test_a_simulation_policy_index_out_of_range_lists_the_simulation_policies() -> None:
    with pytest.raises(PathError) as info:
        resolve("policies[1].max_tokens", spec(policies=SHARED))
    assert "policies[1] does not exist: policies has 1 entry" in str(info.value)
    assert "policies[0] GrpcThrottle" in str(info.value)


def test_a_policy_revalidates_a_new_value() -> None:
    s = spec()
    with pytest.raises(ParamError) as info:
        resolve("strategies[1].policies[0].percent", s).set(s, -1.0)
    assert info.value.key == "strategies[1].policies[0].percent" and "between 0 and" in info.value.message


def test_an_explore_axis_over_a_policy_field_and_its_mistakes_in_a_config() -> None:
    t = table()
    t["explore"] = {"axes": [{"key": "strategies[1].policies[0].percent", "values": [0.0, 50.0]}],
                    "metric": "amplification"}
    plan = parse_document({"simulation": [t]}, "f.toml").explores[0]
    assert [c.spec.strategies[1].policies[0].percent for c in plan.cells] == [0.0, 50.0]
    t["explore"]["axes"][0]["key"] = "strategies[1].policies[3].percent"
    with pytest.raises(ConfigError) as info:
        parse_document({"simulation": [t]}, "f.toml")
    line = str(info.value)
    assert "explore.axes[0].key" in line and "policies[0] RetryBudget" in line and "\n" not in line
    t["explore"]["axes"][0] = {"key": "strategies[1].policies[0].percent", "values": [-5.0, 5.0]}
    with pytest.raises(ConfigError, match=r"percent = -5.*must be between 0"):
        parse_document({"simulation": [t]}, "f.toml")


def test_the_budget_percent_axis_changes_the_runs() -> None:
    # A budget with no percentage and no reserve refuses every retry (Finagle: deposits of 0,
    # a reserve of min_retries_per_s × ttl = 0), so each call is one attempt: amplification 1.
    # With retries allowed, a server failing 30% of attempts gets retries: amplification > 1.
    s = spec(strategies=[STRATEGIES[1]])
    zero = resolve("strategies[0].policies[0].min_retries_per_s", s).set(s, 0)
    none = resolve("strategies[0].policies[0].percent", zero).set(zero, 0.0)
    some = resolve("strategies[0].policies[0].percent", zero).set(zero, 100.0)
    amp_none = run_sweep(none, workers=1).amplification
    amp_some = run_sweep(some, workers=1).amplification
    assert (amp_none == 1.0).all()
    assert (amp_some > 1.0).all()


def test_a_tune_over_a_policy_field_keeps_the_chain_in_the_tuned_variant() -> None:
    t = table(strategies=STRATEGIES[:2], policies=SHARED)
    t["tune"] = {"strategy": "budget", "params": {"policies[0].percent": [1.0, 60.0]},
                 "objective": "amplification", "trials": 3, "batch": 3}
    plan = parse_document({"simulation": [t]}, "f.toml").tunes[0]
    assert plan.params[0].path.text == "strategies[1].policies[0].percent"
    one = trial_spec(plan, {"policies[0].percent": 7.0}, label="budget tuned")
    assert one.labels == ("budget tuned",)
    assert one.strategies[0].policies[0].percent == 7.0
    assert one.strategies[0].policies[1:] == plan.base.strategies[1].policies[1:]  # the shared one too
    result = run_tune(plan, LocalBackend(1), CellCache(None))
    tuned = result.final_spec.strategy("budget tuned")
    assert tuned.policies[0].percent == result.best.params["policies[0].percent"]
    assert len(tuned.policies) == len(plan.base.strategies[1].policies)


def test_a_tune_parameter_that_is_not_a_policy_field_is_one_line() -> None:
    t = table(strategies=STRATEGIES[:2])
    t["tune"] = {"strategy": "budget", "params": {"policies[0].scope": [1, 2]}}
    with pytest.raises(ConfigError) as info:
        parse_document({"simulation": [t]}, "f.toml")
    line = str(info.value)
    assert "tune.params.policies[0].scope" in line and "numeric keys" in line and "percent" in line
