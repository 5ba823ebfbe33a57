"""Policies in runs: the config keys, FlakyServer, the surge, the new events (log, CSV, replay)
and the per-run metrics they feed (retries_denied, amplification, breaker_open_time)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim.settings.config import parse_config
from sim.core import events as ev
from sim.runs.engine import record_run, run_metrics
from sim.vocabulary.errors import ConfigError
from sim.export.csv_files import histories_csv_text, read_events_csv
from sim.policies.grpc_throttle import GrpcThrottle
from sim.policies.limits import MaxAttempts
from sim.policies.token_bucket import TokenBucket

from support import decode, sim_table

FLAKY = dict(control="FlakyServer", failure_rate=0.5, workload="poisson", think_time=100.0,
             horizon=5000.0, network_mu=10.0, network_sigma=3.0, clients=[20], repeat=1)
NO_BACKOFF = {"type": "Constant", "constant": 0.0}


def spec_of(strategies: list[dict], **overrides):
    table = sim_table(strategies=strategies, **{**FLAKY, **overrides})
    return parse_config({"simulation": [table]}, "p.toml").simulations[0]


def config_error(table: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config({"simulation": [table]}, "p.toml")
    return info.value.lines()


# --- config -------------------------------------------------------------------------------------

def test_entries_carry_their_policies_then_the_simulation_s() -> None:
    spec = spec_of([{**NO_BACKOFF, "max_attempts": 4, "name": "three"},
                    {**NO_BACKOFF, "name": "bucket", "policies": [{"type": "TokenBucket"}]},
                    {"preset": "grpc", "throttling": True}],
                   policies=[{"type": "GrpcThrottle", "scope": "shared"}])
    assert spec.labels == ("three", "bucket", "grpc(throttling=True)")
    shared = GrpcThrottle(scope="shared")
    assert spec.strategy("three").policies == (shared,)
    assert spec.strategy("bucket").policies == (TokenBucket(), shared)
    grpc = spec.strategy("grpc(throttling=True)")
    assert grpc.strategy.type_name == "GrpcBackoff"
    assert grpc.strategy.initial_backoff == pytest.approx(100.0)  # 0.1 s in ms
    assert grpc.policies == (MaxAttempts(max_attempts=4), GrpcThrottle(), shared)


def test_repeated_types_are_labelled_by_parameters_and_policies() -> None:
    spec = spec_of([dict(NO_BACKOFF), {**NO_BACKOFF, "policies": [{"type": "TokenBucket", "capacity": 3}]}])
    assert spec.labels == ("Constant(constant=0)", "Constant(constant=0) + TokenBucket(capacity=3)")


def test_a_preset_s_times_follow_time_unit() -> None:
    spec = spec_of([{"preset": "grpc"}], time_unit="s")
    assert spec.strategies[0].strategy.initial_backoff == pytest.approx(0.1)
    lines = config_error(sim_table(strategies=[{"preset": "grpc"}], **{**FLAKY, "time_unit": "tick"}))
    assert lines == ["p.toml: simulation 't': key 'strategies[0].unit_seconds': is needed: time_unit 'tick' has "
                     "no length in seconds (give unit_seconds = seconds per time unit in the preset entry)"]


def test_every_policy_mistake_is_one_line_naming_its_key() -> None:
    table = sim_table(strategies=[{**NO_BACKOFF, "policies": [{"type": "TokenBucket", "capacity": -1}]},
                                  {"preset": "nope"}, {"name": "x"}],
                      **{**FLAKY, "policies": [{"type": "Breaker"}]})
    lines = config_error(table)
    keys = [line.split("key '")[1].split("'")[0] for line in lines]
    assert keys == ["policies[0].type", "strategies[0].policies[0].capacity", "strategies[1].preset",
                    "strategies[2]"]
    assert all(line.startswith("p.toml: simulation 't': ") for line in lines)


# --- FlakyServer and the surge ------------------------------------------------------------------

def test_flaky_server_fails_attempts_at_its_rate() -> None:
    for p in (0.0, 0.2, 0.5, 1.0):
        spec = spec_of([{**NO_BACKOFF, "max_attempts": 1}], failure_rate=p)
        m = run_metrics(spec, spec.strategies[0].chain, 20, 0)
        # One attempt per call: successes / calls estimates 1 − p; 4 binomial standard errors,
        # plus the calls still in flight at the horizon (at most one per client).
        n = m.offered
        assert abs(m.successes / n - (1 - p)) <= 4 * math.sqrt(p * (1 - p) / n) + 20 / n
        assert m.rejections == pytest.approx(n * p, abs=4 * math.sqrt(n * p * (1 - p)) + 20)


def test_flaky_server_latency_adds_to_every_call() -> None:
    spec = spec_of([{**NO_BACKOFF, "max_attempts": 1}], failure_rate=0.0, latency=50.0, network_sigma=0.0)
    m = run_metrics(spec, spec.strategies[0].chain, 20, 0)
    # Two network legs of exactly 10 plus the server's 50.
    assert np.allclose(m.latencies, 70.0)


def test_a_surge_multiplies_new_calls_in_its_window() -> None:
    base = spec_of([{**NO_BACKOFF, "max_attempts": 1}], failure_rate=0.0, think_time=200.0, clients=[100])
    surged = spec_of([{**NO_BACKOFF, "max_attempts": 1}], failure_rate=0.0, think_time=200.0, clients=[100],
                     surge_start=2000.0, surge_duration=1000.0, surge_factor=4.0)
    a = run_metrics(base, base.strategies[0].chain, 100, 0)
    b = run_metrics(surged, surged.strategies[0].chain, 100, 0)
    window = slice(int(2000 / a.bucket) + 2, int(3000 / a.bucket))  # after the first gaps shrink
    before = slice(0, int(2000 / a.bucket))
    # Same draws before the surge; inside it a call starts every 20 + 200/4 = 70 ms per client
    # instead of every 220: over 3x the calls (asserted 2x, the window's first gaps are mixed).
    assert np.array_equal(a.series["offered"][before], b.series["offered"][before])
    assert b.series["offered"][window].sum() > 2 * a.series["offered"][window].sum()
    with pytest.raises(ConfigError, match="surge_factor"):
        parse_config({"simulation": [sim_table(**{**FLAKY, "surge_factor": 0.0})]})


# --- events and metrics -------------------------------------------------------------------------

def test_denied_retries_are_events_with_the_policy_and_counted() -> None:
    # Every attempt fails: a client's bucket (5 tokens, +0.1 per call) allows 4 retries, then
    # about one per 10 calls; each refusal is one client_retry_denied naming the bucket.
    spec = spec_of([{**NO_BACKOFF, "policies": [{"type": "TokenBucket"}]}], failure_rate=1.0)
    label = spec.labels[0]
    run = record_run(spec, label, 20, 0)
    m = run_metrics(spec, spec.strategies[0].chain, 20, 0)
    events = decode(run)
    denied = [e for e in events if e[2] == "client_retry_denied"]
    assert len(denied) == m.retries_denied > 0
    assert {e[3] for e in denied} == {ev.DENY_REASON_INDEX["token_bucket"]}
    assert not [e for e in events if e[2] == "client_gives_up"]
    # A denied retry ends its call: every finished call but those in flight ends denied.
    assert m.offered - m.retries_denied <= 20
    assert m.amplification == pytest.approx(m.work / m.offered)
    # Retries: 4 per client from the full bucket plus 0.1 per call, at most.
    assert m.work - m.offered <= 20 * 4 + 0.1 * m.offered + 20


def test_limits_still_give_up() -> None:
    spec = spec_of([{**NO_BACKOFF, "max_attempts": 2, "policies": [{"type": "GrpcThrottle", "max_tokens": 1000}]}],
                   failure_rate=1.0)
    m = run_metrics(spec, spec.strategies[0].chain, 20, 0)
    events = decode(record_run(spec, spec.labels[0], 20, 0))
    names = {e[2] for e in events}
    # 1000 tokens last 500 failures before the throttle bites; until then max_attempts ends calls.
    assert "client_gives_up" in names
    assert m.amplification <= 2.0


def test_breaker_transitions_are_events_and_its_open_time_adds_up() -> None:
    # Polly's ratio breaker with a small minimum: every attempt fails, so each client's breaker
    # opens at its 2nd failure and every probe after a break fails and re-opens it: it is open
    # (or half-open) from its first opening to the horizon.
    spec = spec_of([{**NO_BACKOFF, "max_attempts": 2, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 500.0}]}],
        failure_rate=1.0, clients=[5])
    run = record_run(spec, spec.labels[0], 5, 0)
    m = run_metrics(spec, spec.strategies[0].chain, 5, 0)
    events = decode(run)
    opens = {}
    for t, c, name, _ in events:
        if name == "breaker_opens":
            opens.setdefault(c, t)
    assert sorted(opens) == list(range(5))
    assert any(e[2] == "breaker_half_opens" for e in events)
    assert not any(e[2] == "breaker_closes" for e in events)
    expected = sum(spec.horizon - t for t in opens.values()) / 5
    assert m.breaker_open_time == pytest.approx(expected)
    refused = [e for e in events if e[2] == "client_retry_denied" and e[3] == ev.DENY_REASON_INDEX["breaker_open"]]
    assert m.retries_denied >= len(refused) > 0
    # Refused attempts never reach the server: every write is a request the server answered.
    assert m.work == sum(1 for e in events if e[2] == "client_requests_write")
    assert m.rejections == sum(1 for e in events if e[2] == "server_rejects")


def test_a_recovering_breaker_closes() -> None:
    spec = spec_of([{**NO_BACKOFF, "max_attempts": 3, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 200.0}]}],
        failure_rate=0.5, clients=[5])
    events = decode(record_run(spec, spec.labels[0], 5, 0))
    names = [e[2] for e in events]
    assert "breaker_opens" in names and "breaker_closes" in names


def test_new_events_round_trip_through_the_events_csv(tmp_path: Path) -> None:
    spec = spec_of([{**NO_BACKOFF, "max_attempts": 2, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 200.0},
        {"type": "TokenBucket", "capacity": 2}]}], failure_rate=0.7, clients=[5])
    run = record_run(spec, spec.labels[0], 5, 0)
    text = histories_csv_text([(spec.title, spec.labels[0], 5, 0, run.history)])
    assert ",client_retry_denied,policy=" in text and ",breaker_opens," in text
    path = tmp_path / "t_events.csv"
    path.write_text(text)
    (history,) = read_events_csv(path).values()
    # Times are written to 12 significant digits; everything else reads back exactly.
    assert [r[1:] for r in history.rows()] == [r[1:] for r in run.history.rows()]
    assert np.allclose([r[0] for r in history.rows()], [r[0] for r in run.history.rows()], rtol=1e-11)


def test_runs_are_reproducible_with_policies() -> None:
    spec = spec_of([{**NO_BACKOFF, "policies": [{"type": "TokenBucket", "scope": "shared"},
                                                {"type": "CircuitBreaker", "kind": "brooker"}]}])
    a = run_metrics(spec, spec.strategies[0].chain, 20, 0)
    b = run_metrics(spec, spec.strategies[0].chain, 20, 0)
    assert (a.work, a.successes, a.retries_denied) == (b.work, b.successes, b.retries_denied)
    assert a.retries_denied > 0


def test_contention_clients_hear_their_policies_too() -> None:
    # 30 clients against one lock: rejections are frequent; a shared gRPC throttle (10 tokens,
    # −1 per rejection, no retry at ≤ 5) denies retries after a few rejections, and commits
    # (+0.1 each) earn back too little for most clients.
    table = sim_table("LockingServer", [{"type": "Constant", "constant": 5.0, "policies": [
        {"type": "GrpcThrottle", "scope": "shared"},
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 20.0}]}],
        clients=[30], repeat=1)
    spec = parse_config({"simulation": [table]}).simulations[0]
    run = record_run(spec, spec.labels[0], 30, 0)
    m = run_metrics(spec, spec.strategies[0].chain, 30, 0)
    events = decode(run)
    assert m.retries_denied == sum(1 for e in events if e[2] == "client_retry_denied") > 0
    # Work counts writes sent; an attempt the breaker refused is none.
    assert m.work == sum(1 for e in events if e[2] == "client_requests_write")
    assert m.amplification == pytest.approx(m.work / 30)


def test_backing_off_shows_the_budget_s_tokens_left() -> None:
    # Every attempt fails: a client's bucket starts full at 5 (the call start's +0.1 is capped),
    # each retry spends 1, so its first four back-offs leave 4, 3, 2 and 1 tokens; the fifth
    # failure finds 1 token, not more than the cost, and is denied.
    spec = spec_of([{**NO_BACKOFF, "policies": [{"type": "TokenBucket"}]}], failure_rate=1.0, clients=[3])
    events = decode(record_run(spec, spec.labels[0], 3, 0))
    for c in range(3):
        mine = [(name, detail) for _, client, name, detail in events
                if client == c and name in ("client_backs_off", "client_retry_denied")]
        assert mine[:5] == [("client_backs_off", 4), ("client_backs_off", 3), ("client_backs_off", 2),
                            ("client_backs_off", 1),
                            ("client_retry_denied", ev.DENY_REASON_INDEX["token_bucket"])]
    assert ev.format_detail(ev.CLIENT_BACKS_OFF, 3) == "tokens=3"
    # Without a token-holding policy a back-off has no detail, as before.
    plain = spec_of([{**NO_BACKOFF, "max_attempts": 3}], failure_rate=1.0, clients=[3])
    assert {d for _, _, name, d in decode(record_run(plain, plain.labels[0], 3, 0))
            if name == "client_backs_off"} == {ev.NO_DETAIL}


def test_timeseries_png_of_a_server_with_no_queue_draws_without_warnings() -> None:
    # FlakyServer with no latency never holds a request: both server-state series are zero, so
    # the figure has no server-state panel (and no matplotlib "No artists with labels" warning).
    import warnings

    from sim.runs.sweep import run_sweep
    from sim.export.overload_plots import timeseries_figure

    spec = spec_of([{**NO_BACKOFF, "max_attempts": 2}], failure_rate=0.3, horizon=1000.0, clients=[5])
    result = run_sweep(spec, workers=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = timeseries_figure(result)
    assert len(fig.axes) == len(spec.labels) and fig.axes[0].get_legend() is not None


def test_a_first_attempt_an_open_breaker_refuses_is_a_call_refused_not_a_retry_denied() -> None:
    # One client, every attempt fails, a ratio breaker that opens at its 2nd failure and stays
    # open (a break longer than the run), 3 attempts a call, no backoff. Call 1: attempts 1 and 2
    # fail (the breaker opens), retry 3 is refused: 1 retry denied. Every later call: its first
    # attempt is refused (a call refused, the call fails fast), then retries 2 and 3 are refused
    # too (2 retries denied), and MaxAttempts ends it. So with N calls: N − 1 calls refused and
    # 1 + 2(N − 1) retries denied; before, the refused first attempts counted as denied retries.
    spec = spec_of([{**NO_BACKOFF, "max_attempts": 3, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 1e9}]}],
        failure_rate=1.0, clients=[1])
    m = run_metrics(spec, spec.strategies[0].chain, 1, 0)
    events = decode(record_run(spec, spec.labels[0], 1, 0))
    calls = m.offered
    assert calls > 10
    assert m.calls_refused == calls - 1
    assert m.retries_denied == 1 + 2 * (calls - 1)
    assert m.calls_refused == sum(1 for e in events if e[2] == "client_call_refused")
    assert m.retries_denied == sum(1 for e in events if e[2] == "client_retry_denied")
    assert m.work == 2  # refused attempts never reach the server
    refused = next(e for e in events if e[2] == "client_call_refused")
    assert ev.format_detail(ev.CLIENT_CALL_REFUSED, refused[3]) == "policy=breaker_open"


def test_a_call_refused_round_trips_through_the_events_csv(tmp_path: Path) -> None:
    spec = spec_of([{**NO_BACKOFF, "max_attempts": 3, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 1e9}]}],
        failure_rate=1.0, clients=[1])
    run = record_run(spec, spec.labels[0], 1, 0)
    text = histories_csv_text([(spec.title, spec.labels[0], 1, 0, run.history)])
    assert ",client_call_refused,policy=breaker_open" in text
    path = tmp_path / "t_events.csv"
    path.write_text(text)
    (history,) = read_events_csv(path).values()
    assert [r[1:] for r in history.rows()] == [r[1:] for r in run.history.rows()]


def test_calls_refused_is_a_column_of_the_runs_and_metrics_csv() -> None:
    from sim.runs.sweep import SweepResult
    from sim.export.csv_files import metrics_csv_text, runs_csv_text

    spec = spec_of([{**NO_BACKOFF, "max_attempts": 3, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 1e9}]}],
        failure_rate=1.0, clients=[1])
    m = run_metrics(spec, spec.strategies[0].chain, 1, 0)
    result = SweepResult.empty(spec)
    result.store(0, 0, [m])
    runs = runs_csv_text(result).splitlines()
    row = dict(zip(runs[0].split(","), runs[1].split(",")))
    assert (row["calls_refused"], row["retries_denied"]) == (str(m.calls_refused), str(m.retries_denied))
    metrics = metrics_csv_text(result).splitlines()
    row = dict(zip(metrics[0].split(","), metrics[1].split(",")))
    assert float(row["calls_refused_mean"]) == m.calls_refused > 0


def test_flaky_server_failures_are_server_errors_not_throttling() -> None:
    # botocore standard mode against a server that fails every attempt: a 500 is a transient
    # error, so each retry acquires 14 quota tokens (5 after a throttling error) and its delay is
    # U(0, 1)·50 ms·2ⁿ (1 s·2ⁿ after throttling). One client, the quota at 500: its first
    # back-off leaves 486 tokens and its second 472; every first delay is under 50 ms.
    spec = spec_of([{"preset": "botocore-standard"}], failure_rate=1.0, clients=[1], think_time=1000.0)
    events = decode(record_run(spec, spec.labels[0], 1, 0))
    tokens = [d for _, _, name, d in events if name == "client_backs_off"]
    assert tokens[:2] == [500 - 14, 500 - 28]
    writes = [(t, d) for t, _, name, d in events if name == "client_requests_write"]
    firsts = [t for t, d in writes if d == 1]
    seconds = [t for t, d in writes if d == 2]
    assert len(seconds) > 5
    # Each second attempt follows its call's first by 2 network hops (mean 10 ms each, sd 3:
    # under 40 ms together) plus the delay, under 50 ms.
    assert all(0 < s - f < 90.0 for f, s in zip(firsts, seconds))


@pytest.mark.parametrize("failure_rate", [0.3, 0.5, 0.8])
def test_finagle_budgets_retry_a_fifth_of_requests_or_of_successes(failure_rate: float) -> None:
    # Without the reserve (min_retries_per_sec = 0) and with more failures than the budget
    # covers (failure_rate ≥ 0.3 > 0.2), every retry spends a withdrawal of 5 deposits, so the
    # retries per call tend to 0.2 × the deposits per call: RetryFilter (finagle-retry, no attempt
    # limit to speak of) deposits for every call, so 0.2; RequeueFilter (finagle) only for a call
    # that succeeds, so 0.2 × the success fraction (finagle f3a7326e, 2020: "as the backend
    # service's SR drops, clients' available retry budget will decrease linearly"). Off by the
    # budget's empty first moments and the tokens left at the horizon, 100 calls/s for 60 s:
    # well under 0.005 of a retry per call (measured ≤ 0.002 at seeds 0-1).
    strategies = [{"preset": "finagle-retry", "min_retries_per_sec": 0, "max_retries": 1000, "scope": "shared"},
                  {"preset": "finagle", "min_retries_per_sec": 0, "scope": "shared"}]
    spec = spec_of(strategies, failure_rate=failure_rate, think_time=1000.0, horizon=60000.0,
                   clients=[100], repeat=2)
    for repetition in range(2):
        retry, requeue = (run_metrics(spec, s.chain, 100, repetition) for s in spec.strategies)
        assert retry.amplification - 1 == pytest.approx(0.2, abs=0.005)
        successes = requeue.successes / requeue.calls
        assert requeue.amplification - 1 == pytest.approx(0.2 * successes, abs=0.005)
        assert requeue.amplification < retry.amplification


@pytest.mark.parametrize("think_time", [1000.0, 100.0])
def test_finagle_requeue_budget_under_total_failure_is_its_reserve_at_any_load(think_time: float) -> None:
    # Every attempt fails, so RequeueFilter deposits nothing: the reserve alone, 10 retries/s ×
    # 10 s = 100 a window, whatever the load (100 or ~830 calls/s). A withdrawal expires after
    # 0.9-1.0 ttl (10 slices), so 60 s hold 6 to 60/9 + 1 windows: 600 to 767 retries.
    # RetryFilter deposits for every call: 0.2 × calls on top (each call wants 2 retries > 0.2),
    # less the fifths deposited by the calls of the run's last moments, whose retries would come
    # after the horizon (measured 3-6 retries at 100-3300 calls/s, seeds 0-2: under 1%).
    spec = spec_of([{"preset": "finagle", "scope": "shared"}, {"preset": "finagle-retry", "scope": "shared"}],
                   failure_rate=1.0, think_time=think_time, horizon=60000.0, clients=[100])
    requeue, retry = (run_metrics(spec, s.chain, 100, 0) for s in spec.strategies)
    requeued = round((requeue.amplification - 1) * requeue.calls)
    assert 600 <= requeued <= 767
    retried = round((retry.amplification - 1) * retry.calls)
    assert 0.99 * (600 + 0.2 * retry.calls) <= retried <= 767 + 0.2 * retry.calls


def test_calls_refused_is_an_explore_metric() -> None:
    # The explore cell keeps every per-run metric of a run with series, the refused calls too.
    from sim.exploration.summary import metric_names, run_values

    spec = spec_of([{**NO_BACKOFF, "max_attempts": 3, "policies": [
        {"type": "CircuitBreaker", "kind": "ratio", "minimum_throughput": 2, "break_duration": 1e9}]}],
        failure_rate=1.0, clients=[1])
    m = run_metrics(spec, spec.strategies[0].chain, 1, 0)
    assert "calls_refused" in metric_names(spec)
    assert run_values(spec, m)["calls_refused"] == m.calls_refused > 0
