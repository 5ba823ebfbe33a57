"""Dotted key paths into a validated spec: every kind of key resolves, sets through
``dataclasses.replace`` and re-validates; a bad path or value is a specific message; and the
spec-wide checks agree with the config loader, value for value."""

from __future__ import annotations

from typing import Any

import pytest
from support import make_spec, sim_table

from sim.settings.config import parse_config
from sim.vocabulary.errors import ConfigError, ParamError
from sim.exploration.checks import check_spec
from sim.exploration.paths import PathError, resolve

OPEN = dict(control="LatencyServer", base_latency=100.0, concurrency_limit=30, factor=1.05, k=15.0,
            workload="poisson", think_time=1000.0, horizon=30000.0, timeout=2000.0,
            outages=[{"start": 10000.0, "duration": 3000.0}], clients=[20])
TWO_STRATEGIES = [{"type": "Constant", "constant": 100.0, "name": "constant"},
                  {"type": "FullJitteredExpo", "base": 50.0, "cap": 5000.0, "name": "jitter"}]


def open_spec(**kw: Any):
    table = {**OPEN, **kw}
    control = table.pop("control")
    return make_spec(control, TWO_STRATEGIES, **table)


@pytest.mark.parametrize("text, value, read", [
    ("horizon", 40000.0, lambda s: s.horizon),
    ("repeat", 3, lambda s: s.repeat),
    ("concurrency_limit", 40, lambda s: s.control.concurrency_limit),
    ("control.factor", 1.1, lambda s: s.control.factor),
    ("think_time", 500.0, lambda s: s.workload.think_time),
    ("workload.think_time", 700.0, lambda s: s.workload.think_time),
    ("outages[0].duration", 9000.0, lambda s: s.outages[0].duration),
    ("outages[0].start", 0.0, lambda s: s.outages[0].start),
    ("strategies[1].base", 20.0, lambda s: s.strategies[1].strategy.base),
    ("strategies[0].max_attempts", 4, lambda s: s.strategies[0].strategy.max_attempts),
    ("clients", 50, lambda s: s.clients[0]),
])
def test_each_kind_of_key_sets_one_value_and_nothing_else(text: str, value: Any, read) -> None:
    spec = open_spec()
    path = resolve(text, spec)
    changed = path.set(spec, value)
    assert read(changed) == value
    assert path.get(changed) == value
    assert type(path.get(changed)) is type(value)
    # Everything else is untouched, and the labels stay (so rows line up across cells).
    assert changed.labels == spec.labels
    assert changed.title == spec.title
    if path.get(spec) is not None:  # an unset limit (None) cannot be set back: numbers only
        assert path.set(changed, path.get(spec)) == spec


def test_setting_a_strategy_parameter_keeps_its_label_and_the_other_strategies() -> None:
    spec = open_spec()
    changed = resolve("strategies[1].cap", spec).set(spec, 9000.0)
    assert changed.strategies[0] == spec.strategies[0]
    assert changed.strategies[1].label == "jitter"
    assert changed.strategies[1].strategy.cap == 9000.0


@pytest.mark.parametrize("text, fragment", [
    ("nope", "'nope' is not a key of this simulation"),
    ("outages[1].duration", "outages[1] does not exist: outages has 1 entry"),
    ("strategies[0].base", "'base' is not a key of strategies[0] (Constant)"),
    ("outages.duration", "'outages' is a list"),
    ("title", "is not a numeric key"),
    ("control", "names a table or a list"),
    ("horizon[0]", "'horizon' is not a list"),
    ("think time", "cannot read the path"),
])
def test_bad_paths_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(PathError) as info:
        resolve(text, open_spec())
    assert fragment in str(info.value)


def test_models_revalidate_a_new_value() -> None:
    spec = open_spec()
    with pytest.raises(ParamError) as info:
        resolve("think_time", spec).set(spec, -1.0)
    assert info.value.key == "think_time" and "must be > 0" in info.value.message
    with pytest.raises(ParamError) as info:
        resolve("strategies[1].base", spec).set(spec, -1.0)
    assert info.value.key == "strategies[1].base"


def test_integer_keys_take_whole_numbers_only() -> None:
    spec = open_spec()
    path = resolve("concurrency_limit", spec)
    assert path.integer
    assert path.set(spec, 40.0).control.concurrency_limit == 40
    with pytest.raises(ParamError, match="whole number"):
        path.set(spec, 40.5)
    with pytest.raises(ParamError, match="must be a number"):
        path.set(spec, True)


# Spec-wide rules: the same value must be refused by the config loader and by check_spec, and
# accepted by both. Each case: a key, a value, and whether it is valid.
CASES = [
    ("repeat", 0, False), ("repeat", 1, True), ("network_mu", -0.5, False), ("network_mu", 0.0, True),
    ("network_sigma", -1.0, False), ("work_to_duration", -1.0, False), ("seed", 0, True),
    ("horizon", 0.0, False), ("horizon", 12000.0, True), ("timeout", 0.0, False), ("timeout", 1.0, True),
    ("bucket", 0.0, False), ("bucket", 50000.0, False), ("bucket", 100.0, True),
    ("outages[0].start", 30000.0, False), ("outages[0].start", -1.0, False), ("outages[0].start", 0.0, True),
    ("outages[0].duration", 0.0, False), ("clients", 0, False),
    # The bounds of sim.vocabulary.bounds (every number finite in arithmetic, integers in int64, seeds in
    # 64 bits, spans a normal float), on simulation keys and on model parameters alike.
    ("network_mu", 2e15, False), ("network_mu", 1e15, True), ("horizon", 2e15, False),
    ("timeout", 1e-10, False), ("timeout", 1e-9, True), ("repeat", 2**63, False),
    ("seed", 2**64, False), ("seed", 2**64 - 1, True), ("clients", 2**63, False),
    ("outages[0].duration", 1e15, False), ("base_latency", 2e15, False),
    ("concurrency_limit", 2**63, False), ("think_time", 2e15, False),
    ("strategies[0].constant", 2e15, False), ("strategies[0].constant", 1e15, True),
]


def _raw_with(key: str, value: Any) -> dict[str, Any]:
    control = OPEN["control"]
    table = sim_table(control, TWO_STRATEGIES, **{k: v for k, v in OPEN.items() if k != "control"})
    if key.startswith("outages[0]."):
        table["outages"] = [{**table["outages"][0], key.split(".")[1]: value}]
    elif key.startswith("strategies[0]."):
        table["strategies"] = [{**table["strategies"][0], key.split(".")[1]: value}, *table["strategies"][1:]]
    elif key == "clients":
        table["clients"] = [value]
    else:
        table[key] = value
    return table


@pytest.mark.parametrize("key, value, valid", CASES)
def test_check_spec_agrees_with_the_config_loader(key: str, value: Any, valid: bool) -> None:
    loader_ok = True
    try:
        parse_config({"simulation": [_raw_with(key, value)]})
    except ConfigError:
        loader_ok = False
    spec = open_spec()
    path = resolve(key, spec)
    explore_ok = True
    try:
        check_spec(path.set(spec, value))
    except ParamError:
        explore_ok = False
    assert loader_ok == valid
    assert explore_ok == valid


def test_keys_only_replying_servers_take_are_refused_for_contention_controls() -> None:
    spec = make_spec("LockingServer")
    path = resolve("timeout", spec)  # a field of the spec, None for this control
    with pytest.raises(ParamError, match="needs a server that replies"):
        check_spec(path.set(spec, 100.0))


# PoolServer: every numeric key, its adaptive limit's parameters included, is an axis.
POOL = dict(workers=4, service_time=10.0, service_distribution="lognormal", service_p99=40.0,
            queue_size=20, queue_timeout=50.0, codel_target=5.0, codel_interval=100.0,
            concurrency_limit={"algorithm": "gradient2", "min_limit": 1, "initial_limit": 8},
            factor=1.05, k=15.0, slowdown_above=3, workload="open", think_time=100.0,
            horizon=30000.0, timeout=200.0, clients=[20])


def pool_spec(**kw: Any):
    return make_spec("PoolServer", TWO_STRATEGIES, **{**POOL, **kw})


@pytest.mark.parametrize("text, value, read", [
    ("workers", 8, lambda c: c.workers),
    ("service_time", 12.0, lambda c: c.service_time),
    ("service_p99", 60.0, lambda c: c.service_p99),
    ("queue_size", 5, lambda c: c.queue_size),
    ("queue_timeout", 25.0, lambda c: c.queue_timeout),
    ("codel_target", 10.0, lambda c: c.codel_target),
    ("codel_interval", 50.0, lambda c: c.codel_interval),
    ("factor", 1.2, lambda c: c.factor),
    ("k", 5.0, lambda c: c.k),
    ("slowdown_above", 2, lambda c: c.slowdown_above),
    ("concurrency_limit.initial_limit", 12, lambda c: c.concurrency_limit.initial_limit),
    ("concurrency_limit.smoothing", 0.5, lambda c: c.concurrency_limit.smoothing),
    ("control.concurrency_limit.rtt_tolerance", 2.0, lambda c: c.concurrency_limit.rtt_tolerance),
    ("concurrency_limit.queue_size", 2, lambda c: c.concurrency_limit.queue_size),
])
def test_pool_server_keys_are_axes(text: str, value: Any, read) -> None:
    spec = pool_spec()
    path = resolve(text, spec)
    changed = path.set(spec, value)
    assert read(changed.control) == value and path.get(changed) == value
    assert type(path.get(changed)) is type(value)
    assert changed.control.concurrency_limit.algorithm == "gradient2"  # the rest of the table kept
    check_spec(changed)


@pytest.mark.parametrize("text, kw, fragment", [
    ("concurrency_limit.backoff_ratio", {}, "'backoff_ratio' is not a key of control.concurrency_limit"),
    ("concurrency_limit.algorithm", {}, "numeric keys of control.concurrency_limit (AdaptiveLimit): "
                                        "initial_limit, min_limit, max_concurrency, smoothing"),
    ("concurrency_limit.initial_limit", {"concurrency_limit": None}, "is not set in this simulation"),
    ("concurrency_limit", {}, "names a table"),
])
def test_bad_pool_limit_paths_say_what_is_wrong(text: str, kw: dict, fragment: str) -> None:
    table = {key: value for key, value in {**POOL, **kw}.items() if value is not None}
    spec = make_spec("PoolServer", TWO_STRATEGIES, **table)
    with pytest.raises(PathError) as info:
        resolve(text, spec)
    assert fragment in str(info.value)


def test_a_limit_parameter_is_revalidated_and_bounded() -> None:
    spec = pool_spec()
    with pytest.raises(ParamError) as info:
        resolve("concurrency_limit.smoothing", spec).set(spec, 1.5)
    assert info.value.key == "concurrency_limit.smoothing" and "(0, 1]" in info.value.message
    with pytest.raises(ParamError) as info:
        resolve("concurrency_limit.initial_limit", spec).set(spec, 500)  # over max_concurrency 200
    assert info.value.key == "concurrency_limit.initial_limit"
    path = resolve("concurrency_limit.long_window", spec)
    with pytest.raises(ParamError, match="concurrency_limit.long_window"):
        check_spec(path.set(spec, 2**63))
    with pytest.raises(ConfigError, match="concurrency_limit.long_window"):
        parse_config({"simulation": [sim_table("PoolServer", TWO_STRATEGIES, **{
            **POOL, "concurrency_limit": {"algorithm": "gradient2", "long_window": 2**63}})]})
