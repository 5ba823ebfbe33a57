"""Incidents (``sim.models.incidents``): a capacity fraction, a slowdown and an error rate for a
window, on every server that replies; capacity 0 is an outage, byte for byte.

Every expected figure is derived in a comment from the server's rules; runs have no network
jitter where an exact figure is asserted.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from support import make_spec

from sim.analysis.replay import incident_windows
from sim.core import events as ev
from sim.vocabulary.errors import ConfigError, ParamError
from sim.exploration.checks import check_spec
from sim.exploration.paths import resolve
from sim.exploration.summary import has_verdict
from sim.export.csv_files import read_events_csv, write_events_csv
from sim.models import CONTROLS
from sim.models.incidents import Incident, Incidents, incident_label, kept_slots, merged_windows, slot_speed
from sim.models.outage import OutageGate
from sim.models.servers import LatencyServer
from sim.runs.engine import record_run, run_metrics

ONE_TRY = [{"type": "Constant", "constant": 1.0}]

# A QueueServer kept saturated: 50 closed-loop clients, each back at once, against 4 slots of a
# constant 10 (no overload threshold, no timeout, a queue that holds them all), no network delay.
# Each busy slot then completes exactly one request every 10, so 4 slots make 0.4 per unit.
SATURATED: dict[str, Any] = {
    "control": "QueueServer", "concurrency": 4, "service_time": 10.0, "queue_size": 1000,
    "overload_threshold": 0, "workload": "poisson", "think_time": 0.01, "horizon": 3000.0,
    "network_mu": 0.0, "network_sigma": 0.0, "clients": [50], "repeat": 1, "strategies": ONE_TRY,
}


def _events(run) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    h = run.history
    return (np.asarray(h.times), np.asarray(h.clients), h.codes(), h.details())


def _completions(run, start: float, end: float) -> int:
    times, _, codes, _ = _events(run)
    return int(np.count_nonzero((codes == ev.SERVER_COMPLETES) & (times >= start) & (times < end)))


# --- capacity ----------------------------------------------------------------------------------

def test_kept_slots_round_up_and_serve_more_slowly_where_the_fraction_is_not_whole() -> None:
    """Issue 34: a fraction of slots rounded to the nearest kept 1 worker at 0.3 serving (100%
    of it) and 3 at 0.5 at 67%; now the kept slots' speed makes up the fraction exactly."""
    assert [kept_slots(4, 0.5), kept_slots(5, 0.5), kept_slots(64, 0.5), kept_slots(5, 0.29)] == [2, 3, 32, 2]
    assert kept_slots(5, 0.01) == 1 and kept_slots(7, 1.0) == 7 and kept_slots(30, 0.1) == 3
    for slots, capacity in ((1, 0.3), (3, 0.5), (5, 0.29), (5, 0.01), (4, 0.5), (30, 0.1), (7, 1.0)):
        kept, speed = kept_slots(slots, capacity), slot_speed(slots, capacity)
        assert kept * speed == pytest.approx(slots * capacity) and 0 < speed <= 1.0
    assert slot_speed(4, 0.5) == slot_speed(64, 0.5) == slot_speed(30, 0.1) == 1.0  # whole: as before


@pytest.mark.parametrize("control", ["QueueServer", "QueueServer per_tick", "PoolServer"])
@pytest.mark.parametrize("slots, capacity", [(1, 0.3), (3, 0.5)])
def test_a_fractional_capacity_reduces_a_saturated_servers_throughput(control: str, slots: int,
                                                                      capacity: float) -> None:
    """One slot at 0.3 serves 30% of what it did, three at 0.5 half: each busy slot completes
    a request every 10 / speed, so over the 990 units after the first service time the count is
    slots · capacity · 990 / 10, give or take one per kept slot (where the stretch cuts its
    cycle), and one more for the requests in service at the start finishing at full speed."""
    keys = dict(SATURATED, concurrency=slots)
    if control == "PoolServer":
        keys = {k: v for k, v in keys.items() if k not in ("concurrency", "queue_size", "overload_threshold")}
        keys.update(control="PoolServer", workers=slots, service_distribution="constant")
    elif control.endswith("per_tick"):
        keys.update(overload_rule="per_tick")
    spec = make_spec(**keys, incidents=[{"start": 1000.0, "duration": 1000.0, "capacity": capacity}])
    run = record_run(spec, spec.labels[0], 50, 0)
    before, inside = _completions(run, 100.0, 1000.0), _completions(run, 1010.0, 2000.0)
    assert abs(before - slots * 900 / 10) <= slots
    expected = slots * capacity * 990 / 10
    assert abs(inside - expected) <= kept_slots(slots, capacity) + 1, (inside, expected)


@pytest.mark.parametrize("rule", ["at_start", "per_tick"])
def test_half_capacity_halves_a_saturated_queue_servers_throughput_in_the_window(rule: str) -> None:
    # 4 slots at capacity 0.5 keep 2 (kept_slots): 0.2 completions per unit instead of 0.4. Over
    # a stretch of length L, each busy slot completes L / 10 requests, give or take one (where
    # the stretch cuts its cycle), so the counts are within ±slots of slots·L/10. The stretch
    # in the window starts one service time in: the 4 requests in service at its start finish.
    # per_tick with no threshold never stands still (p = 1): the same completions.
    spec = make_spec(**SATURATED, overload_rule=rule,
                     incidents=[{"start": 1000.0, "duration": 1000.0, "capacity": 0.5}])
    run = record_run(spec, spec.labels[0], 50, 0)
    before = _completions(run, 100.0, 1000.0)
    inside = _completions(run, 1010.0, 2000.0)
    after = _completions(run, 2010.0, 3000.0)
    assert abs(before - 4 * 900 / 10) <= 4
    assert abs(inside - 2 * 990 / 10) <= 2
    assert abs(after - 4 * 990 / 10) <= 4
    assert (inside / 990) / (before / 900) == pytest.approx(0.5, abs=0.03)
    # Work in service finishes: the 4 requests in service at the start all complete in the
    # first service time, and none of the 2 started after it can (each takes 10).
    assert _completions(run, 1000.0, 1010.0) == 4


def test_capacity_returns_at_once_when_the_incident_ends() -> None:
    # At the end, the 2 slots regained take queued requests at that instant: the server's state
    # sampled at the next bucket end shows all 4 busy again (the queue is never empty).
    spec = make_spec(**SATURATED, bucket=15.0,
                     incidents=[{"start": 1000.0, "duration": 1000.0, "capacity": 0.5}])
    m = run_metrics(spec, spec.strategies[0].chain, 50, 0)
    in_service = np.asarray(m.series["in_service"])
    inside = in_service[int(1030 / 15):int(2000 / 15)]
    assert set(inside.tolist()) == {2}
    assert in_service[int(2000 / 15) + 1] == 4


def test_latency_server_capacity_is_its_concurrency_limit() -> None:
    # Study 003's law with the limit at capacity × limit, unrounded: at concurrency 8 a limit of
    # 10 halved to 5 gives base · factor^((8 − 5)/k); a slowdown multiplies every latency.
    server = LatencyServer(base_latency=100.0, concurrency_limit=10, factor=2.0, k=4.0)
    assert server.law(0.5)(5) == 100.0
    assert server.law(0.5)(8) == pytest.approx(100.0 * 2.0 ** (3 / 4))
    assert server.law(0.35)(8) == pytest.approx(100.0 * 2.0 ** ((8 - 3.5) / 4))
    assert [server.law()(c) for c in (1, 10, 14)] == [server.latency(c) for c in (1, 10, 14)]
    assert server.law(1.0, 3.0)(14) == pytest.approx(3 * server.latency(14))


def test_latency_server_at_half_capacity_slows_down_at_the_lower_limit() -> None:
    # 8 clients (no think time to speak of) under a limit of 10: at most 8 in progress, so the
    # base latency 10 before the window. With the limit at 5, a request that starts in the window
    # with c in progress (itself included; at_start: fixed then) takes 10 · 2^(c − 5) above 5:
    # 20, 40 or 80, and 80 once all 8 are in.
    table = {"control": "LatencyServer", "base_latency": 10.0, "concurrency_limit": 10, "factor": 2.0,
             "k": 1.0, "latency_rule": "at_start", "workload": "poisson", "think_time": 1e-6,
             "horizon": 3000.0, "network_mu": 0.0, "network_sigma": 0.0, "clients": [8], "repeat": 1,
             "strategies": ONE_TRY, "incidents": [{"start": 1000.0, "duration": 1000.0, "capacity": 0.5}]}
    spec = make_spec(**table)
    m = run_metrics(spec, spec.strategies[0].chain, 8, 0)
    lat, at = np.asarray(m.latencies), np.asarray(m.latency_times)
    started = at - lat
    assert set(np.round(lat[started < 990.0], 9).tolist()) == {10.0}
    inside = set(np.round(lat[(started > 1000.0) & (at < 2000.0)], 9).tolist())
    assert inside <= {10.0, 20.0, 40.0, 80.0} and 80.0 in inside


# --- slowdown ------------------------------------------------------------------------------------

LOW_LOAD: dict[str, Any] = {
    "workload": "poisson", "think_time": 50.0, "horizon": 4000.0, "network_mu": 1.0,
    "network_sigma": 0.0, "clients": [3], "repeat": 1, "strategies": ONE_TRY,
}
SERVERS: dict[str, dict[str, Any]] = {
    "QueueServer": {"control": "QueueServer", "concurrency": 10, "service_time": 10.0, "queue_size": 10},
    "LatencyServer": {"control": "LatencyServer", "base_latency": 10.0, "concurrency_limit": 10,
                      "factor": 2.0, "k": 1.0, "latency_rule": "at_start"},
    "FlakyServer": {"control": "FlakyServer", "failure_rate": 0.0, "latency": 10.0},
    "PoolServer": {"control": "PoolServer", "workers": 10, "service_time": 10.0, "queue_size": 10},
}


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_slowdown_multiplies_the_latency_of_work_that_starts_in_the_window(server: str) -> None:
    # A light load (3 clients, never more than the limit or the slots in progress), a constant
    # network delay of 1 each way: a call takes 1 + 10 + 1 = 12, and 1 + 3 · 10 + 1 = 32 when
    # its request reaches the server (1 after the call starts) inside the window [1000, 2000).
    spec = make_spec(**SERVERS[server], **LOW_LOAD,
                     incidents=[{"start": 1000.0, "duration": 1000.0, "slowdown": 3.0}])
    m = run_metrics(spec, spec.strategies[0].chain, 3, 0)
    lat, at = np.asarray(m.latencies), np.asarray(m.latency_times)
    arrived = at - lat + 1.0
    inside = (arrived >= 1000.0) & (arrived < 2000.0)
    assert inside.sum() >= 20 and (~inside).sum() >= 50
    assert np.allclose(lat[inside], 32.0) and np.allclose(lat[~inside], 12.0)


# --- error rate ----------------------------------------------------------------------------------

def test_error_rate_fails_that_fraction_of_attempts_within_binomial_bounds() -> None:
    # 30 clients against a server with room for all (FlakyServer without failures), retrying
    # after 1: every attempt that arrives in the window fails independently with p = 0.3, so of
    # n arrivals k fail with k ~ Binomial(n, 0.3): |k − 0.3 n| stays within 4 standard
    # deviations (two-sided chance of falling outside 6e-5). None fails outside the window.
    table = {**SERVERS["FlakyServer"], **LOW_LOAD, "think_time": 5.0, "clients": [30],
             "incidents": [{"start": 1000.0, "duration": 2000.0, "error_rate": 0.3}]}
    spec = make_spec(**table)
    run = record_run(spec, spec.labels[0], 30, 0)
    times, _, codes, _ = _events(run)
    window = (times >= 1000.0) & (times < 3000.0)
    failed = int(np.count_nonzero(window & (codes == ev.SERVER_REJECTS)))
    arrivals = failed + int(np.count_nonzero(window & (codes == ev.SERVER_ACCEPTS)))
    assert arrivals > 3000
    sd = math.sqrt(arrivals * 0.3 * 0.7)
    assert abs(failed - 0.3 * arrivals) <= 4 * sd
    assert not np.any(~window & (codes == ev.SERVER_REJECTS))
    # A failure is a server error the client hears and retries: every failure is followed by
    # a retry of the same call, so calls still succeed.
    assert run.open_metrics.rejections == failed and run.open_metrics.successes > 0


def test_error_draws_come_from_their_own_stream() -> None:
    # The incident stream is the only one that moves: up to the window's start the run is the
    # run without the incident, event for event.
    table = {**SERVERS["QueueServer"], **LOW_LOAD, "network_sigma": 0.5}
    plain = record_run(make_spec(**table), "Constant", 3, 0)
    erring = record_run(make_spec(**table, incidents=[{"start": 2000.0, "duration": 500.0, "error_rate": 0.5}]),
                        "Constant", 3, 0)
    n = int(np.searchsorted(plain.history.times, 2000.0))
    assert plain.history.packed[:n] == erring.history.packed[:n]
    assert plain.history.times[:n] == erring.history.times[:n]


# --- outages: capacity 0 -------------------------------------------------------------------------

@pytest.mark.parametrize("control,table", [
    ("QueueServer", {**SATURATED, "clients": [20], "timeout": 40.0, "backlog": 5}),
    ("LatencyServer", {**SERVERS["LatencyServer"], **LOW_LOAD, "latency_rule": "current", "timeout": 30.0}),
    ("LockingServer", {"clients": [6], "repeat": 1, "write_mu": 5.0, "write_sigma": 1.0}),
])
def test_outages_are_a_shorthand_for_capacity_zero_incidents_byte_for_byte(control: str, table: dict) -> None:
    table = {k: v for k, v in table.items() if k != "control"}
    window = {"start": 400.0, "duration": 300.0} if control != "LockingServer" else {"start": 3.0, "duration": 20.0}
    as_outage = make_spec(control, **table, outages=[window])
    as_incident = make_spec(control, **table, incidents=[{**window, "capacity": 0.0}])
    assert as_incident.stops == as_outage.stops and not as_incident.degradations
    label = as_outage.labels[0]
    n = table["clients"][0]
    a, b = record_run(as_outage, label, n, 0), record_run(as_incident, label, n, 0)
    assert a.history.times == b.history.times and a.history.clients == b.history.clients
    assert a.history.packed == b.history.packed
    assert ev.SERVER_PAUSES in set(a.history.codes().tolist())
    assert a.metrics() == b.metrics() if control == "LockingServer" else (
        same_verdict(a.open_metrics, b.open_metrics))


def same_verdict(a, b) -> bool:
    """The same recovery verdict: time (nan, never, equal to nan) and note."""
    ta, tb = a.recovery_time, b.recovery_time
    both_never = ta is not None and tb is not None and math.isnan(ta) and math.isnan(tb)
    return (ta == tb or both_never) and a.recovery_note == b.recovery_note


# --- events, verdict, explore ---------------------------------------------------------------------

def test_incident_events_name_their_kind_and_read_back(tmp_path) -> None:
    spec = make_spec(**{**SATURATED, "clients": [10]}, incidents=[
        {"start": 500.0, "duration": 1000.0, "slowdown": 2.0},
        {"start": 700.0, "duration": 100.0, "error_rate": 0.5},
        {"start": 2000.0, "duration": 100.0, "capacity": 0.5}])
    run = record_run(spec, spec.labels[0], 10, 0)
    times, clients, codes, details = _events(run)
    assert incident_windows(times, clients, codes, details) == (
        (500.0, 1500.0, "slowdown"), (700.0, 800.0, "error_rate"), (2000.0, 2100.0, "capacity"))
    marks = [(float(times[i]), ev.format_detail(int(codes[i]), int(details[i])))
             for i in np.flatnonzero(codes == ev.SERVER_INCIDENT_STARTS)]
    assert marks == [(500.0, "kind=slowdown"), (700.0, "kind=error_rate"), (2000.0, "kind=capacity")]
    assert set(clients[np.isin(codes, list(Incidents.EVENTS))].tolist()) == {-1}
    path = write_events_csv({spec.labels[0]: run}, tmp_path / "events.csv")
    (history,) = read_events_csv(path).values()
    assert history.packed == run.history.packed


def test_incidents_are_no_servers_own_events() -> None:
    for cls in CONTROLS.values():
        assert not cls.CAPS.events & Incidents.EVENTS
    assert not Incidents.EVENTS & OutageGate.EVENTS


def test_the_recovery_verdict_judges_from_the_first_incident_to_the_last() -> None:
    # Baseline before the first incident, judgement after the last one's end; overlapping kinds
    # join into one window (merged_windows), touching ones too.
    assert merged_windows([(10, 20), (15, 30), (30, 35), (50, 60)]) == ((10, 35), (50, 60))
    spec = make_spec(**SATURATED, incidents=[{"start": 1000.0, "duration": 500.0, "slowdown": 2.0},
                                             {"start": 1200.0, "duration": 600.0, "error_rate": 0.2}])
    assert [(o.start, o.end) for o in spec.disruptions] == [(1000.0, 1800.0)]
    assert has_verdict(spec)
    m = run_metrics(spec, spec.strategies[0].chain, 50, 0)
    assert m.recovery_time is not None and not math.isnan(m.recovery_time)


def test_explore_sets_incident_keys_and_rechecks_the_list() -> None:
    spec = make_spec(**SATURATED, incidents=[{"start": 1000.0, "duration": 500.0, "capacity": 0.5},
                                             {"start": 1200.0, "duration": 100.0, "slowdown": 3.0}])
    longer = resolve("incidents[0].duration", spec).set(spec, 900.0)
    assert longer.incidents[0].duration == 900.0 and longer.disruptions[0].end == 1900.0
    stopped = resolve("incidents[0].capacity", spec).set(spec, 0.0)
    assert [(o.start, o.end) for o in stopped.stops] == [(1000.0, 1500.0)]
    with pytest.raises(ParamError, match="between 0 and 1"):
        resolve("incidents[0].capacity", spec).set(spec, 1.5)
    with pytest.raises(ParamError, match="exactly one"):
        resolve("incidents[1].capacity", spec).set(spec, 0.5)
    with pytest.raises(ParamError, match=r"incidents\[1\].start: precedes"):
        check_spec(resolve("incidents[1].start", spec).set(spec, 10.0))


def test_labels_say_what_each_incident_does() -> None:
    assert [incident_label(Incident(0.0, 1.0, **kw)) for kw in
            ({"capacity": 0.5}, {"slowdown": 3.0}, {"error_rate": 0.3}, {"capacity": 0.0})] == [
        "capacity 50%", "slowdown ×3", "errors 30%", "outage"]


# --- validation ----------------------------------------------------------------------------------

@pytest.mark.parametrize("incidents,words", [
    ([{"start": 1.0, "duration": 1.0}], "incidents[0].capacity': an incident sets exactly one of"),
    ([{"start": 1.0, "duration": 1.0, "capacity": 0.5, "slowdown": 2.0}], "got capacity and slowdown"),
    ([{"start": 1.0, "duration": 1.0, "capacity": 1.5}], "capacity': must be between 0 and 1"),
    ([{"start": 1.0, "duration": 1.0, "error_rate": -0.1}], "error_rate': must be >= 0"),
    ([{"start": 1.0, "duration": 1.0, "slowdown": 0.5}], "slowdown': must be >= 1"),
    ([{"start": 1.0, "duration": 0.0, "slowdown": 2.0}], "duration': must be > 0"),
    ([{"start": 1.0, "duration": 1.0, "eror_rate": 0.3}], "did you mean 'error_rate'?"),
    ([{"start": 1.0, "duration": "x", "capacity": 0.5}], "duration': must be a number"),
    ([{"start": 10.0, "duration": 10.0, "capacity": 0.5}, {"start": 15.0, "duration": 5.0, "capacity": 0.2}],
     "incidents[1].start': overlaps an earlier capacity incident (10 to 20)"),
    ([{"start": 10.0, "duration": 10.0, "capacity": 0.5}, {"start": 5.0, "duration": 1.0, "slowdown": 2.0}],
     "incidents[1].start': precedes the previous incident's start"),
    ([{"start": 5000.0, "duration": 1.0, "slowdown": 2.0}], "is at or after the horizon (3000)"),
    ("often", "incidents': must be a list of tables"),
])
def test_a_wrong_incident_is_refused_in_one_line(incidents: Any, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_spec(**SATURATED, incidents=incidents)
    (line,) = caught.value.lines()
    assert words in line and "\n" not in line


def test_kinds_of_one_kind_may_not_overlap_but_different_kinds_may() -> None:
    spec = make_spec(**SATURATED, incidents=[{"start": 10.0, "duration": 10.0, "capacity": 0.5},
                                             {"start": 15.0, "duration": 10.0, "slowdown": 2.0},
                                             {"start": 15.0, "duration": 1.0, "error_rate": 0.1}])
    assert len(spec.degradations) == 3
    with pytest.raises(ConfigError, match="overlaps an outage"):
        make_spec(**SATURATED, outages=[{"start": 10.0, "duration": 10.0}],
                  incidents=[{"start": 15.0, "duration": 10.0, "capacity": 0.5}])


@pytest.mark.parametrize("control,table,incident,words", [
    ("FlakyServer", {"failure_rate": 0.1, "latency": 5.0}, {"capacity": 0.5}, "no capacity to take away"),
    ("FlakyServer", {"failure_rate": 0.1, "latency": 0.0}, {"slowdown": 2.0}, "has nothing to stretch"),
    ("LockingServer", {"write_mu": 1.0, "write_sigma": 0.1}, {"error_rate": 0.5}, "needs a server that replies"),
])
def test_a_server_refuses_incidents_it_cannot_run(control: str, table: dict, incident: dict, words: str) -> None:
    base = {**LOW_LOAD} if control != "LockingServer" else {"clients": [3], "repeat": 1}
    with pytest.raises(ConfigError, match=words):
        make_spec(control, **table, **base, incidents=[{"start": 10.0, "duration": 10.0, **incident}])
    # capacity 0 (an outage) stops any server
    assert make_spec(control, **table, **base,
                     incidents=[{"start": 10.0, "duration": 10.0, "capacity": 0.0}]).stops


def test_a_backlog_is_allowed_with_a_capacity_zero_incident() -> None:
    spec = make_spec(**SATURATED, timeout=50.0, backlog=3,
                     incidents=[{"start": 10.0, "duration": 10.0, "capacity": 0.0}])
    assert spec.backlog == 3 and spec.stops


@pytest.mark.parametrize("name", sorted(n for n, c in CONTROLS.items() if c.CAPS.replies))
def test_every_replying_server_runs_each_incident_it_honours(name: str) -> None:
    """Each kind a server declares (``Control.INCIDENTS``) runs through its hooks and records its
    start and end; a server that forgets its hooks fails here."""
    cls = CONTROLS[name]
    table = {**SERVERS.get(name, {}), **LOW_LOAD, "clients": [5]}
    table.pop("control", None)
    for kind, level in (("capacity", 0.5), ("slowdown", 2.0), ("error_rate", 0.5)):
        if kind not in cls.INCIDENTS:
            continue
        spec = make_spec(name, **table, incidents=[{"start": 500.0, "duration": 500.0, kind: level}])
        run = record_run(spec, spec.labels[0], 5, 0)
        codes = run.history.codes().tolist()
        assert codes.count(ev.SERVER_INCIDENT_STARTS) == 1 and codes.count(ev.SERVER_INCIDENT_ENDS) == 1


# --- explore, the PNG, the app's views -----------------------------------------------------------

def test_a_map_over_an_incidents_duration_has_a_verdict_per_cell() -> None:
    from sim.exploration.backends import LocalBackend
    from sim.exploration.cache import CellCache
    from sim.exploration.plan import parse_document
    from sim.exploration.runner import run_explores
    from sim.exploration.table import explore_csv_text
    from support import sim_table

    table = sim_table(**{**SATURATED, "clients": [20], "repeat": 2, "timeout": 60.0,
                         "incidents": [{"start": 1000.0, "duration": 100.0, "capacity": 0.5}]})
    table["explore"] = {"axes": [{"key": "incidents[0].duration", "values": [100.0, 400.0]}]}
    doc = parse_document({"seed": 3, "simulation": [table]}, "map.toml")
    result = run_explores(doc.explores, LocalBackend(1), CellCache(None))[0]
    text = explore_csv_text(result)
    assert "incidents[0].duration" in text.splitlines()[0] and "recovered" in text.splitlines()[0]
    assert len(text.splitlines()) == 1 + 2 * len(doc.simulations[0].strategies)


def test_the_timeseries_png_names_each_incident() -> None:
    from sim.export.overload_plots import timeseries_figure
    from sim.runs.sweep import run_sweep

    spec = make_spec(**{**SATURATED, "clients": [10], "horizon": 1500.0},
                     outages=[{"start": 200.0, "duration": 100.0}],
                     incidents=[{"start": 500.0, "duration": 400.0, "capacity": 0.5},
                                {"start": 600.0, "duration": 100.0, "error_rate": 0.3}])
    fig = timeseries_figure(run_sweep(spec, workers=1))
    ax = fig.axes[0]
    assert [t.get_text().strip() for t in ax.texts] == ["outage", "capacity 50%", "errors 30%"]
    # the error window starts inside the capacity window: its name is a row lower
    assert ax.texts[2].get_position()[1] < ax.texts[1].get_position()[1]
    assert {"outage", "incident"} <= set(ax.get_legend_handles_labels()[1])


def test_the_app_shades_incidents_and_says_which_are_under_way() -> None:
    from tui.view.legend import timeline_legend
    from tui.view.rundata import RunData
    from tui.view.timeline_grid import build_grid
    from tui.widgets.status import Status, clock_parts

    spec = make_spec(**{**SATURATED, "clients": [10]},
                     incidents=[{"start": 1000.0, "duration": 1000.0, "slowdown": 2.0}])
    run = record_run(spec, spec.labels[0], 10, 0)
    data = RunData.from_history(run.history, 10, run.open_metrics)
    assert data.incidents == ((1000.0, 2000.0, "slowdown"),) and not data.outages
    assert data.incidents_at(1500.0) == ("slowdown",) and data.incidents_at(2500.0) == ()
    assert data.series.incidents == ((1000.0, 2000.0),)
    grid = build_grid(data, 4, 30)  # about 3000 over 30 columns: 100 a column
    marked = set(np.flatnonzero(grid.incident).tolist())
    assert set(range(10, 20)) <= marked <= set(range(9, 21)) and not grid.outage.any()
    assert "incident" in [entry.label for entry in timeline_legend(data, grid)]
    parts = [p.plain for p in clock_parts(Status(incidents=("slowdown",)))]
    assert "┈ incident: slowdown" in parts
