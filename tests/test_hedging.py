"""Hedging on a strategy entry (issue 35, sim.models.hedging): the config's key and presets,
copies to one server or through a fleet, and hedges as gRPC's throttle counts them."""

from __future__ import annotations

from typing import Any

import pytest

from sim.core import events as ev
from sim.policies.chain import ChainSpec
from sim.models.hedging import Hedging
from sim.policies.presets import PRESETS, expand_preset
from sim.runs.engine import Run
from sim.runs.shared_runs import stands_for
from sim.settings.config import parse_config
from sim.settings.spec import SimulationSpec
from sim.vocabulary.errors import ConfigError, ParamError

HEDGING_PRESETS = ("grpc-hedging", "polly-v8-hedging")
# One replying server of each kind, small and fast (times in ms).
SERVERS: dict[str, dict[str, Any]] = {
    "PoolServer": {"control": "PoolServer", "workers": 2, "service_time": 1.0, "service_distribution": "exponential"},
    "QueueServer": {"control": "QueueServer", "concurrency": 2, "service_time": 3.0},
    "LatencyServer": {"control": "LatencyServer", "base_latency": 3.0, "concurrency_limit": 40, "factor": 1.05,
                      "k": 15.0},
    "FlakyServer": {"control": "FlakyServer", "failure_rate": 0.2},
}


def table(strategy: dict[str, Any], *, server: str = "PoolServer", fleet: dict[str, Any] | None = None,
          horizon: float = 1500.0, clients: int = 20, **kw: Any) -> dict[str, Any]:
    """Open clients (a call per client every 40 ms on average) against ``server``."""
    out: dict[str, Any] = {"title": "hedge", "clients": [clients], "repeat": 1, "network_mu": 0.0,
                           "network_sigma": 0.0, "workload": "open", "think_time": 40.0, "horizon": horizon,
                           "strategies": [strategy], **SERVERS[server]}
    if fleet is not None:
        out["fleet"] = fleet
    out.update(kw)
    return out


def spec_of(t: dict[str, Any]) -> SimulationSpec:
    return parse_config({"simulation": [t]}).simulations[0]


def run_of(t: dict[str, Any]) -> Run:
    spec = spec_of(t)
    return Run(spec, spec.labels[0], spec.clients[0], 0).run()


def once(hedging: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "NoBackoff", "max_attempts": 1, "name": "once", "hedging": hedging, **extra}


def one_line_error(t: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        spec_of(t)
    message = str(info.value)
    assert "\n" not in message
    return message


# --- the presets: the libraries' defaults ----------------------------------------------------

@pytest.mark.parametrize("settings, expected", [
    # Polly v8 HedgingStrategyOptions: MaxHedgedAttempts 1 beyond the original, Delay 2 s (2000 ms)
    ({"preset": "polly-v8-hedging"}, Hedging(2, 2000.0)),
    ({"preset": "polly-v8-hedging", "max_hedged_attempts": 10, "delay": 50.0}, Hedging(11, 50.0)),
    # gRPC A6: hedgingDelay 0 s when unset, maxAttempts as given up to the client's limit 5
    ({"preset": "grpc-hedging", "max_attempts": 3}, Hedging(3, 0.0)),
    ({"preset": "grpc-hedging", "max_attempts": 9, "hedging_delay": 25.0}, Hedging(5, 25.0)),
    ({"preset": "grpc-hedging", "max_attempts": 3, "budget": 10.0}, Hedging(3, 0.0, 10.0)),
])
def test_hedging_presets_take_the_libraries_defaults(settings: dict[str, Any], expected: Hedging) -> None:
    spec = spec_of(table(settings))  # times in ms
    [entry] = spec.strategies
    assert entry.hedging == expected
    assert entry.chain.hedging == expected
    # no retry after the copies: gRPC's "no additional retry attempts", a Polly pipeline of hedging alone
    assert [p.max_attempts for p in entry.policies] == [1]


def test_the_grpc_hedging_preset_adds_the_throttle_on_request() -> None:
    [entry] = spec_of(table({"preset": "grpc-hedging", "max_attempts": 2, "throttling": True})).strategies
    assert [p.type_name for p in entry.policies] == ["MaxAttempts", "GrpcThrottle"]


@pytest.mark.parametrize("settings, key, words", [
    ({"preset": "grpc-hedging"}, "strategies[0].max_attempts", "is required"),  # A6: no default
    ({"preset": "grpc-hedging", "max_attempts": 1}, "strategies[0].max_attempts", ">= 2"),
    ({"preset": "polly-v8-hedging", "max_hedged_attempts": 11}, "strategies[0].max_hedged_attempts", "1 to 10"),
    ({"preset": "polly-v8-hedging", "hedging": {"max_attempts": 2, "delay": 1.0}}, "strategies[0].hedging",
     "is set by preset"),
])
def test_hedging_preset_mistakes_name_their_key(settings: dict[str, Any], key: str, words: str) -> None:
    message = one_line_error(table(settings))
    assert f"key {key!r}" in message and words in message


def test_the_preset_table_lists_both_with_their_sources() -> None:
    for name in HEDGING_PRESETS:
        assert name in PRESETS and PRESETS[name].source
    assert expand_preset({"preset": "polly-v8-hedging"}, 1.0)["hedging"]["delay"] == 2.0  # seconds as the unit


@pytest.mark.parametrize("server", sorted(SERVERS))
@pytest.mark.parametrize("fleet", [None, {"hosts": 3, "balancer": "round_robin"}], ids=["alone", "fleet"])
@pytest.mark.parametrize("preset", HEDGING_PRESETS)
def test_every_hedging_preset_runs_on_every_server(preset: str, fleet: dict[str, Any] | None, server: str) -> None:
    # "Presets work with every server": each replying server, alone and as a fleet, with copies
    # 2 ms apart (service takes 3 ms or a random time of mean 1, or fails: attempts hedge).
    settings = {"max_attempts": 3, "hedging_delay": 2.0} if preset == "grpc-hedging" else {"delay": 2.0}
    run = run_of(table({"preset": preset, **settings}, server=server, fleet=fleet, horizon=600.0))
    m, series = run.metrics(), run._wiring.series
    assert m.successes > 0
    assert sum(series.hedges) > 0
    assert sum(run._wiring.fleet.requests) == m.work + sum(series.hedges)  # every copy reached a server


# --- one server: the copies go to it ---------------------------------------------------------

def test_a_lone_server_hedges_and_its_events_name_no_host() -> None:
    run = run_of(table(once({"max_attempts": 3, "delay": 1.0}), service_distribution="lognormal",
                       service_p99=20.0))
    fleet = run._wiring.fleet
    assert fleet.n == 1 and fleet.hedges[0] > 0
    assert {ev.host_of(p) for p in run.history.packed} == {ev.NO_HOST}
    assert run.metrics().hosts == ()  # no hosts file: the server is no fleet


def test_copies_on_one_server_are_distinct_requests_there() -> None:
    # cancel = "immediate" keeps the requests it may take back in sets keyed by (client, token):
    # the copies of an attempt on the one server must not collapse into one, or a worker is
    # never freed. With a delay of 0 each call sends its 3 copies at once (2 hedges); the first
    # to finish wins and the other 2 are taken back, each dropped as cancelled (served or
    # queued; continuous service times never tie): drops = hedges = 2 per call, every call done.
    run = run_of(table(once({"max_attempts": 3, "delay": 0.0}), cancel="immediate", workers=3,
                       service_distribution="lognormal", service_p99=10.0, horizon=2000.0))
    series, m = run._wiring.series, run.metrics()
    assert max(series.in_service) <= 3
    assert m.unfinished == 0 and m.successes == m.offered
    assert sum(series.server_drops) == m.hedges == 2 * m.offered


# --- counted as gRPC counts hedges ----------------------------------------------------------

def test_a_grpc_throttle_stops_hedges_once_its_tokens_are_down() -> None:
    # Every attempt fails (error_rate 1): a failed copy sends the next at once, so without a
    # throttle every call sends its one hedge. With one shared GrpcThrottle(10, 0.1) and no
    # success to refill it, each failed copy costs a token, and A6 sends a hedge only while the
    # tokens, after that decrement, are above 5: the triggers leave 9, 8, 7, 6 at best, so at
    # most 4 hedges in the whole run, whatever the calls' overlap.
    errors = [{"start": 0.0, "duration": 1500.0, "error_rate": 1.0}]
    plain = run_of(table(once({"max_attempts": 2, "delay": 1000.0}), incidents=errors))
    throttle = {"type": "GrpcThrottle", "scope": "shared"}
    gated = run_of(table(once({"max_attempts": 2, "delay": 1000.0}, policies=[throttle]), incidents=errors))
    calls = plain.metrics().work
    assert sum(plain._wiring.series.hedges) >= calls - 20  # every call hedges (those still open aside)
    assert 0 < sum(gated._wiring.series.hedges) <= 4
    assert gated._wiring.fleet.hedges_denied > 0


def test_a_retry_budget_pays_for_hedges() -> None:
    # A RetryBudget with no reserve and a 1% deposit per request: a hedge withdraws a retry's
    # worth (100 deposits), so hedges are about 1% of calls, far below the plain run's.
    hedging = {"max_attempts": 2, "delay": 0.0}
    budget = {"type": "RetryBudget", "percent": 1.0, "min_retries_per_s": 0, "scope": "shared"}
    plain = run_of(table(once(hedging)))
    paid = run_of(table(once(hedging, policies=[budget])))
    calls = paid.metrics().work
    assert sum(plain._wiring.series.hedges) == plain.metrics().work  # delay 0: every attempt hedges
    # deposits of the last ttl (10 s > horizon) over 100, +1 for the rounding of the last
    assert 0 < sum(paid._wiring.series.hedges) <= calls / 100 + 1


# --- the config's one-line refusals ----------------------------------------------------------

def test_hedging_on_the_fleet_is_refused_pointing_at_the_entries() -> None:
    message = one_line_error(table({"type": "NoBackoff"}, fleet={"hosts": 2, "hedging": {"max_attempts": 2,
                                                                                          "delay": 5.0}}))
    assert "key 'fleet.hedging'" in message and "strategies = [{ ..., hedging =" in message


def test_hedging_needs_a_replying_server_and_no_tiers() -> None:
    contention = {"title": "c", "clients": [2], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.1,
                  "control": "LockingServer", "write_mu": 2.0, "write_sigma": 1.0,
                  "strategies": [once({"max_attempts": 2, "delay": 5.0})]}
    assert "key 'strategies[0].hedging'" in one_line_error(contention)
    tier = {"control": "PoolServer", "workers": 2, "service_time": 1.0}
    assert "key 'strategies[0].hedging'" in one_line_error(table(once({"max_attempts": 2, "delay": 5.0}),
                                                                 tiers=[tier]))
    hedged_tier = {**tier, "retry": once({"max_attempts": 2, "delay": 5.0})}
    assert "key 'tiers[0].retry.hedging'" in one_line_error(table({"type": "NoBackoff"}, tiers=[hedged_tier]))


@pytest.mark.parametrize("hedging, key", [
    ({"max_attempts": 1, "delay": 5.0}, "strategies[0].hedging.max_attempts"),
    ({"max_attempts": 2}, "strategies[0].hedging.delay"),
    ({"max_attempts": 2, "delay": 5.0, "budget": 0.0}, "strategies[0].hedging.budget"),
    ({"max_attempts": 2, "delay": 5.0, "after": 1}, "strategies[0].hedging.after"),
    (3, "strategies[0].hedging"),
])
def test_hedging_mistakes_name_their_key(hedging: Any, key: str) -> None:
    assert f"key {key!r}" in one_line_error(table(once(hedging)))


def test_hedging_is_part_of_an_entry_s_identity() -> None:
    # Two entries that differ only in hedging are two strategies (labelled apart), and a run
    # without failures of one does not stand for the other's (a hedge needs no failure).
    spec = spec_of(table({"type": "NoBackoff"}, strategies=[
        {"type": "NoBackoff"}, {"type": "NoBackoff", "hedging": {"max_attempts": 2, "delay": 5.0}}]))
    assert len(set(spec.labels)) == 2
    plain, hedged = (s.chain for s in spec.strategies)
    assert not stands_for(plain, hedged) and stands_for(hedged, hedged)
    assert isinstance(hedged, ChainSpec) and "hedging(2 copies" in hedged.describe()
    with pytest.raises(ParamError):
        Hedging(2, -1.0)


# --- the outputs: hedges in their own column, amplification counting every copy -------------

def test_the_latency_table_counts_hedges_in_a_column_of_their_own(tmp_path) -> None:
    import sim
    from sim.report.latency import latency_table, strategy_values
    from sim.runs.sweep import run_sweep
    from support import toml_text
    from tui.view.latency_rows import latency_rows

    hedged = table(once({"max_attempts": 2, "delay": 1.0}), service_distribution="lognormal", service_p99=20.0,
                   horizon=800.0)
    path = tmp_path / "hedged.toml"
    path.write_text(toml_text(hedged))
    result = sim.run(path, workers=1)
    [row] = result.rows("latency")
    spec = spec_of(hedged)
    run = Run(spec, spec.labels[0], spec.clients[0], 0).run()
    m = run.metrics()
    assert float(row["hedges"]) == m.hedges == sum(run._wiring.fleet.hedges) > 0  # one repetition
    # amplification counts every copy: the attempts and their hedges, per call
    assert m.amplification == (m.work + m.hedges) / m.offered > 1
    assert sum(r["hedges"] for r in result.rows("timeseries")) == m.hedges
    sweep = run_sweep(spec, workers=1)
    assert [c.header for c in latency_table(sweep).columns][2:4] == ["requests", "hedges"]
    assert strategy_values(sweep, 0)[0]["hedges"] == m.hedges
    rows, _ = latency_rows(sweep, 0)
    assert rows[0].cells["hedges"] == f"{m.hedges:,}"
    from sim.report.html.words import run_verdict
    assert f"{m.hedges:,} hedges" in run_verdict(sweep)  # the report's words say them too
    plain = tmp_path / "plain.toml"
    plain.write_text(toml_text(table({"type": "NoBackoff", "max_attempts": 1}, horizon=300.0)))
    assert "hedges" not in sim.run(plain, workers=1).rows("latency")[0]


@pytest.mark.parametrize("server, extra", [
    ("PoolServer", {"queue_timeout": 2.0, "cancel": "immediate"}),  # drops: queue timeouts, cancelled copies
    ("FlakyServer", {"latency": 1.0}),  # a failed attempt's completion
])
def test_every_server_event_of_a_fleet_names_its_host(server: str, extra: dict[str, Any]) -> None:
    # The server's own events (a PoolServer's drops, a FlakyServer's completions of failed
    # attempts) are not returned through a host's door: each must still name its host.
    run = run_of(table(once({"max_attempts": 2, "delay": 0.5}), server=server, fleet={"hosts": 3},
                       horizon=600.0, clients=60, **extra))
    server_codes = {ev.SERVER_DROPS, ev.SERVER_COMPLETES, ev.SERVER_ACCEPTS, ev.SERVER_QUEUES, ev.SERVER_REJECTS}
    seen = [p for p in run.history.packed if ev.unpack(p)[0] in server_codes]
    assert seen and all(ev.host_of(p) != ev.NO_HOST for p in seen)
    if server == "PoolServer":
        assert any(ev.unpack(p)[0] == ev.SERVER_DROPS for p in seen)


# --- incidents of a fleet: each window whole, each message at its entry -----------------------

def test_a_fleet_s_incident_windows_end_on_their_own_host() -> None:
    # Host 0 errs from 100 to 300, host 1 from 150 to 200: the windows read back from the events
    # are those two (an end paired by kind alone would cut host 0's at 200), and a whole-fleet
    # incident, each host's own copy (absorb_incidents), is one window.
    import numpy as np

    from sim.analysis.replay import incident_windows
    from sim.core.history import unpack_hosts

    incidents = [{"start": 100.0, "duration": 200.0, "error_rate": 0.2, "hosts": [0]},
                 {"start": 150.0, "duration": 50.0, "error_rate": 0.2, "hosts": [1]},
                 {"start": 400.0, "duration": 50.0, "slowdown": 2.0}]
    run = run_of(table({"type": "NoBackoff", "max_attempts": 1}, fleet={"hosts": 3}, horizon=600.0,
                       incidents=incidents))
    h = run.history
    packed = np.asarray(h.packed, dtype=np.int64)
    windows = incident_windows(np.asarray(h.times), np.asarray(h.clients), h.codes(), h.details(),
                               unpack_hosts(packed))
    assert sorted((s, e) for s, e, _ in windows) == [(100.0, 300.0), (150.0, 200.0), (400.0, 450.0)]


def test_whole_server_entries_keep_their_positions_beside_per_host_ones() -> None:
    # A per-host entry is split off the list (sim.settings.fleet.split_incidents): a mistake in
    # a whole-fleet one after it is still named at its place in the file.
    crash = {"start": 1.0, "duration": 5.0, "kind": "crash", "hosts": [0]}
    bad = {"start": 1.0, "duration": -5.0, "error_rate": 0.5}
    base = table({"type": "NoBackoff"}, fleet={"hosts": 2}, horizon=100.0)
    assert "key 'incidents[1].duration'" in one_line_error({**base, "incidents": [crash, bad]})
    outages = [{"start": 1.0, "duration": 2.0, "hosts": [1]}, {"start": 10.0, "duration": -2.0}]
    assert "key 'outages[1].duration'" in one_line_error({**base, "outages": outages})
    late = {"start": 300.0, "duration": 5.0, "slowdown": 2.0}
    assert "key 'incidents[1].start'" in one_line_error({**base, "incidents": [crash, late]})


def test_the_timeseries_png_shades_a_fleet_s_incidents_by_host() -> None:
    from sim.export.overload_plots import fleet_window_label
    from sim.models.fleet import HostIncident

    assert fleet_window_label(HostIncident(1.0, 2.0, "crash", None, (0,)), 3) == "host 0: crash"
    assert fleet_window_label(HostIncident(1.0, 2.0, "error_rate", 0.3, (1, 2)), 3) == "hosts 1, 2: errors 30%"
    assert fleet_window_label(HostIncident(1.0, 2.0, "slowdown", 2.0, (0, 1, 2)), 3) == "slowdown ×2"


def test_a_map_may_vary_an_entry_s_hedging() -> None:
    from sim.exploration.paths import resolve

    spec = spec_of(table(once({"max_attempts": 2, "delay": 5.0})))
    changed = resolve("strategies[0].hedging.delay", spec).set(spec, 9.0)
    assert changed.strategies[0].hedging == Hedging(2, 9.0) and changed.strategies[0].chain.hedging.delay == 9.0
    assert resolve("strategies[0].hedging.max_attempts", spec).set(spec, 4).strategies[0].hedging.max_attempts == 4
    with pytest.raises(ParamError, match="must be >= 0"):
        resolve("strategies[0].hedging.delay", spec).set(spec, -1.0)


@pytest.mark.parametrize("policy, most", [
    # Brooker's bucket: 5 tokens, no refill, a hedge needs more than its cost of 1: 5 → 4 → 3 → 2 → 1,
    # then 1 is not more than 1: exactly 4 hedges in the run.
    ({"type": "TokenBucket", "capacity": 5.0, "refill": 0.0, "scope": "shared"}, 4),
    # botocore's quota: 10, a retry's cost 5, no refund: 10 → 5 → 0: exactly 2 hedges.
    ({"type": "RetryQuota", "capacity": 10, "retry_cost": 5, "success_refund": 0, "scope": "shared"}, 2),
])
def test_retry_buckets_pay_for_hedges(policy: dict[str, Any], most: int) -> None:
    run = run_of(table(once({"max_attempts": 2, "delay": 0.0}, policies=[policy]), horizon=300.0))
    assert sum(run._wiring.series.hedges) == most
    assert run._wiring.fleet.hedges_denied == run.metrics().work - most  # every other attempt asked, refused


def test_envoy_s_concurrency_budget_holds_a_slot_per_hedge() -> None:
    # ConcurrencyBudget(percent 0, min_concurrency 1): at most one retry slot in the cluster at
    # once; a hedge takes it until its attempt's outcome. Every attempt wants a hedge at once
    # (delay 0; without the budget every call hedges, as test_a_retry_budget_pays_for_hedges
    # shows); with calls overlapping, some find the slot taken: fewer hedges than calls, more
    # than none (a slot held forever would allow one hedge in all), each refusal counted.
    budget = {"type": "ConcurrencyBudget", "percent": 0.0, "min_concurrency": 1}
    run = run_of(table(once({"max_attempts": 2, "delay": 0.0}, policies=[budget]), clients=60,
                       service_distribution="lognormal", service_p99=20.0, horizon=600.0))
    hedges, calls = sum(run._wiring.series.hedges), run.metrics().work
    assert 0 < hedges < calls
    assert run._wiring.fleet.hedges_denied == calls - hedges
