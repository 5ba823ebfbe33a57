"""A fleet behind a balancer (sim.models.fleet): routing, the balancers against queueing theory,
host-aware retries, per-host incidents, outlier ejection, and the config's one-line errors."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import one_error_line, section, sim_process, toml_text

from sim.settings.config import load_config, parse_config
from sim.core import events as ev
from sim.core.history import unpack_hosts
from sim.vocabulary.errors import ConfigError, ParamError
from sim.export.csv_files import histories_csv_text, read_events_csv
from sim.runs import fast
from sim.runs.engine import Run, run_metrics
from sim.settings.spec import SimulationSpec


def fleet_table(fleet: dict[str, Any] | None, *, clients: int = 40, think: float = 100.0,
                horizon: float = 4000.0, strategy: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """An open workload of ``clients / think`` calls per unit against PoolServer hosts of one
    worker and exponential service of mean 1 (each host an M/M/1 queue), no network delay."""
    table: dict[str, Any] = {
        "title": "fleet", "clients": [clients], "repeat": 1, "network_mu": 0.0, "network_sigma": 0.0,
        "control": "PoolServer", "workers": 1, "service_time": 1.0, "service_distribution": "exponential",
        "workload": "open", "think_time": think, "horizon": horizon,
        "strategies": [strategy or {"type": "NoBackoff", "max_attempts": 1, "name": "once"}],
    }
    if fleet is not None:
        table["fleet"] = fleet
    table.update(kw)
    return table


def spec_of(table: dict[str, Any]) -> SimulationSpec:
    return parse_config({"simulation": [table]}).simulations[0]


def run_of(table: dict[str, Any]) -> Run:
    spec = spec_of(table)
    return Run(spec, spec.labels[0], spec.clients[0], 0).run()


def batch_se(values: list[float], batches: int = 20) -> float:
    """The standard error of a mean of correlated queueing samples, by batch means: the
    ``batches`` means of consecutive runs of samples are nearly independent once each batch
    is far longer than the queue's relaxation time (tens of services here)."""
    means = [float(np.mean(b)) for b in np.array_split(np.asarray(values), batches)]
    return float(np.std(means, ddof=1) / math.sqrt(batches))


# --- a fleet of one host is the server alone -------------------------------------------------

@pytest.mark.parametrize("balancer", ["round_robin", "random", "least_request", "p2c", "ring_hash"])
def test_one_host_is_the_server_alone(balancer: str) -> None:
    # Host 0 draws the run's own server stream and the balancer its own: every event, time and
    # metric is the server's, the events only naming host 0.
    alone = run_of(fleet_table(None, horizon=1500.0))
    fleet = run_of(fleet_table({"hosts": 1, "balancer": balancer}, horizon=1500.0))
    a, f = alone.history, fleet.history
    assert a.times == f.times and a.clients == f.clients
    assert [p & ((1 << ev.HOST_SHIFT) - 1) for p in f.packed] == a.packed
    hosts = set(unpack_hosts(f.packed).tolist())
    assert hosts == {ev.NO_HOST, 0}
    assert alone.metrics().successes == fleet.metrics().successes


def test_no_fleet_no_host_column() -> None:
    run = run_of(fleet_table(None, horizon=300.0))
    text = histories_csv_text([("fleet", "once", 40, 0, run.history)])
    header = text.splitlines()[0].split(",")
    assert header[-1] == "call" and "host" not in header  # the call column is the last


def test_events_name_their_host_and_read_back(tmp_path: Path) -> None:
    run = run_of(fleet_table({"hosts": 3, "balancer": "round_robin"}, horizon=600.0))
    text = histories_csv_text([("fleet", "once", 40, 0, run.history)], hosts=True)
    lines = text.splitlines()
    assert lines[0].endswith(",host")
    server = [line for line in lines[1:-1] if ",server_" in line]
    client = [line for line in lines[1:-1] if ",client_" in line]
    assert server and all(line.rsplit(",", 1)[1] in {"0", "1", "2"} for line in server)
    assert client and all(line.endswith(",") for line in client)
    path = tmp_path / "e.csv"
    path.write_text(text)
    back = next(iter(read_events_csv(path).values()))
    assert back.packed == run.history.packed  # the host read back into each event


# --- the balancers ----------------------------------------------------------------------------

def test_round_robin_takes_turns() -> None:
    run = run_of(fleet_table({"hosts": 5, "balancer": "round_robin"}, horizon=2000.0))
    requests = run._wiring.fleet.requests
    assert max(requests) - min(requests) <= 1 and sum(requests) == run.metrics().offered


def test_weighted_round_robin_follows_the_weights() -> None:
    # Smooth weighted round robin gives host h exactly w_h picks in each window of sum(w) picks:
    # after N picks each host is within one window's share of N · w_h / sum(w).
    weights = [1.0, 2.0, 5.0]
    run = run_of(fleet_table({"hosts": 3, "balancer": "round_robin", "weights": weights}, horizon=2000.0))
    requests = run._wiring.fleet.requests
    total = sum(requests)
    for h, w in enumerate(weights):
        assert abs(requests[h] - total * w / sum(weights)) <= w


def test_ring_hash_keeps_each_client_on_one_host() -> None:
    run = run_of(fleet_table({"hosts": 6, "balancer": "ring_hash"}, horizon=2000.0))
    h = run.history
    codes = np.asarray(h.packed) & ev.CODE_MASK
    hosts = unpack_hosts(h.packed)
    accepted = codes == ev.SERVER_ACCEPTS
    by_client: dict[int, set[int]] = {}
    for c, host in zip(np.asarray(h.clients)[accepted].tolist(), hosts[accepted].tolist()):
        by_client.setdefault(c, set()).add(host)
    assert all(len(s) == 1 for s in by_client.values())
    assert len({next(iter(s)) for s in by_client.values()}) > 1  # and clients spread over hosts


def test_random_balancing_makes_each_host_mm1() -> None:
    # Random splitting of a Poisson stream of rate λ over n hosts gives each a Poisson stream of
    # λ/n, so each host is M/M/1 at ρ = λ/(n μ): mean time in system 1 / (μ − λ/n) = 2 at ρ = 0.5.
    # Thresholds: each host's share of requests within 4 binomial standard deviations of 1/n, its
    # mean within 4 batch-means standard errors of 2 (each fails with probability ~6e-5).
    n, rho = 4, 0.5
    clients, think = 40, 40 / (n * rho)
    run = run_of(fleet_table({"hosts": n, "balancer": "random"}, clients=clients, think=think, horizon=20000.0))
    fleet = run._wiring.fleet
    total = sum(fleet.requests)
    for h in range(n):
        assert abs(fleet.requests[h] - total / n) < 4 * math.sqrt(total * (1 / n) * (1 - 1 / n))
        lat = fleet.latencies[h]
        assert abs(np.mean(lat) - 1 / (1 - rho)) < 4 * batch_se(lat)


def supermarket_mean(lam: float, terms: int = 40) -> float:
    """Mean time in system of the supermarket model (two choices, n → ∞, service rate 1;
    Mitzenmacher; Vvedenskaya, Dobrushin, Karpelevich): Σ_{i≥1} λ^(2^i − 2)."""
    return sum(lam ** (2 ** i - 2) for i in range(1, terms))


def two_choice_means(n: int, lam: float, horizon: float) -> dict[str, float]:
    clients = 200
    think = clients / (n * lam)
    out = {}
    for balancer in ("random", "p2c", "least_request"):
        run = run_of(fleet_table({"hosts": n, "balancer": balancer}, clients=clients, think=think, horizon=horizon))
        lat = [x for h in run._wiring.fleet.latencies for x in h]
        out[balancer] = float(np.mean(lat))
    return out


def test_two_choices_beat_random_and_shortest_queue_beats_both() -> None:
    # At λ = 0.9 random balancing gives each host M/M/1: 1 / (1 − 0.9) = 10; two choices give
    # 2.61 as n → ∞ (a little more for finite n); joining the shortest queue less still. With 20
    # hosts over a short run: p2c under half of random's theory (a factor ~3.5 apart), JSQ below p2c.
    means = two_choice_means(20, 0.9, 1500.0)
    assert means["p2c"] < 0.5 * 10.0
    assert means["least_request"] < means["p2c"] < means["random"]


@pytest.mark.slow
def test_two_choices_match_the_supermarket_model() -> None:
    # n = 100, λ = 0.9: Σ λ^(2^i − 2) = 2.61 (against 10 for random). The finite-n mean is above
    # the limit by O(1/n) and the run starts empty (a transient of a few dozen services against a
    # horizon of 3000): within 5% of 2.61. Least request (JSQ) below it.
    theory = supermarket_mean(0.9)
    assert abs(theory - 2.61) < 0.01
    means = two_choice_means(100, 0.9, 3000.0)
    assert abs(means["p2c"] - theory) < 0.05 * theory
    assert means["least_request"] < means["p2c"]
    assert means["random"] > 3 * means["p2c"]


# --- the fast paths never take a fleet ---------------------------------------------------------

def test_a_fleet_never_goes_to_a_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same model without a fleet is one the pool_open kernel expresses; with one, none does,
    # and a run that would take a kernel (numba on, kernels warm) takes the reference engine.
    plain = spec_of(fleet_table(None))
    fleet = spec_of(fleet_table({"hosts": 3}))
    chain = plain.strategies[0].chain
    assert fast.kernel_name(plain, chain) == fast.POOL_OPEN
    assert fast.kernel_name(fleet, chain) is None
    monkeypatch.setattr(fast, "available", lambda: True)
    monkeypatch.setattr(fast, "_warm", True)
    assert fast.kernel_fits(plain, chain, 40) and not fast.kernel_fits(fleet, chain, 40)
    metrics = run_metrics(fleet, chain, 40, 0)  # the reference engine: no numba needed
    assert metrics.successes == Run(fleet, fleet.labels[0], 40, 0).run().metrics().successes


# --- config errors: one line naming the key ------------------------------------------------------

@pytest.mark.parametrize("fleet, key, words", [
    ({"hosts": 0}, "fleet.hosts", "must be >= 1"),
    ({"balancer": "random"}, "fleet.hosts", "is missing"),
    ({"hosts": 2, "balancer": "fastest"}, "fleet.balancer", "must be one of"),
    ({"hosts": 2, "weights": [1.0]}, "fleet.weights", "one weight per host"),
    ({"hosts": 2, "weights": [1.0, 0.0]}, "fleet.weights", "> 0"),
    ({"hosts": 2, "retry_other_host": "yes"}, "fleet.retry_other_host", "true or false"),
    ({"hosts": 2, "host_selection_attempts": -1}, "fleet.host_selection_attempts", ">= 0"),
    ({"hosts": 2, "panic_threshold": 150.0}, "fleet.panic_threshold", "at most 100"),
    ({"hosts": 2, "hostz": 3}, "fleet.hostz", "is not a [simulation.fleet] key"),
    ({"hosts": 2, "outlier_detection": {"consecutive_errors": 0}}, "fleet.outlier_detection.consecutive_errors",
     ">= 1"),
    ({"hosts": 2, "outlier_detection": {"max_ejection_percent": 120.0}},
     "fleet.outlier_detection.max_ejection_percent", "between 0 and 100"),
    ({"hosts": 2, "outlier_detection": {"base_ejection_time": 500.0, "max_ejection_time": 100.0}},
     "fleet.outlier_detection.max_ejection_time", ">= base_ejection_time"),
    ({"hosts": 2, "outlier_detection": {"eject": 1}}, "fleet.outlier_detection.eject", "not an outlier_detection key"),
    ({"hosts": 2, "hedging": {"max_attempts": 2, "delay": 5.0}}, "fleet.hedging", "is set on a strategy entry now"),
])
def test_fleet_mistakes_name_their_key(fleet: dict[str, Any], key: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        spec_of(fleet_table(fleet))
    message = str(info.value)
    assert "\n" not in message and f"key {key!r}" in message and words in message


@pytest.mark.parametrize("incident, fleet, key, words", [
    ({"start": 10.0, "duration": 5.0, "kind": "crash", "hosts": [0]}, None, "incidents[0].hosts", "needs a fleet"),
    ({"start": 10.0, "duration": 5.0, "kind": "melt", "hosts": [0]}, {"hosts": 2}, "incidents[0].kind", '"crash"'),
    ({"start": 10.0, "duration": 5.0, "kind": "crash", "hosts": [2]}, {"hosts": 2}, "incidents[0].hosts",
     "names host 2"),
    ({"start": 10.0, "duration": 5.0, "kind": "crash", "hosts": 3}, {"hosts": 2}, "incidents[0].hosts",
     "from 1 to the fleet's 2 hosts"),
    ({"start": 10.0, "duration": 5.0, "slowdown": 0.5, "hosts": [1]}, {"hosts": 2}, "incidents[0].slowdown", ">= 1"),
    ({"start": 10.0, "duration": 5.0, "kind": "crash", "error_rate": 0.5, "hosts": [1]}, {"hosts": 2},
     "incidents[0].error_rate", "no level"),
])
def test_host_incident_mistakes_name_their_key(incident: dict, fleet: dict | None, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        spec_of(fleet_table(fleet, incidents=[incident]))
    message = str(info.value)
    assert "\n" not in message and f"key {key!r}" in message and words in message


def test_a_fleet_mistake_exits_2_in_one_line(tmp_path: Path) -> None:
    table = fleet_table(None)
    text = toml_text(table) + "\n[simulation.fleet]\nhosts = 2\nbalancer = \"fastest\"\n"
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out = sim_process("run", str(path), "--out", str(tmp_path / "out"))
    assert out.returncode == 2
    assert "fleet.balancer" in one_error_line(out.stderr)
    assert not (tmp_path / "out").exists()


# --- per-host incidents -----------------------------------------------------------------------

def crash_table(fleet: dict[str, Any], hosts: Any = (0,), **kw: Any) -> dict[str, Any]:
    """A fleet whose hosts ``hosts`` are crashed (connections refused) for the whole run."""
    horizon = kw.pop("horizon", 3000.0)
    crash = {"start": 0.0, "duration": horizon, "kind": "crash",
             "hosts": list(hosts) if not isinstance(hosts, int) else hosts}
    return fleet_table(fleet, horizon=horizon, incidents=[crash], **kw)


def test_incidents_hit_only_the_hosts_named() -> None:
    # An error rate of 1 on hosts [1, 3] fails every attempt sent there and none elsewhere; the
    # count form (hosts = 2) names the first two hosts.
    errors = {"start": 0.0, "duration": 2000.0, "error_rate": 1.0, "hosts": [1, 3]}
    fleet = run_of(fleet_table({"hosts": 4, "balancer": "round_robin"}, horizon=2000.0, incidents=[errors]))._wiring.fleet
    for h in range(4):
        if h in (1, 3):
            assert fleet.successes[h] == 0 and fleet.errors[h] == fleet.requests[h] > 0
        else:
            assert fleet.errors[h] == 0 and fleet.successes[h] > 0
    spec = spec_of(fleet_table({"hosts": 4}, incidents=[{**errors, "hosts": 2}]))
    assert spec.fleet.incidents[0].hosts == (0, 1)


def test_a_crashed_host_refuses_at_once_and_names_itself() -> None:
    run = run_of(crash_table({"hosts": 3, "balancer": "round_robin"}, hosts=[2], horizon=1000.0))
    fleet, h = run._wiring.fleet, run.history
    assert fleet.successes[2] == 0 and fleet.errors[2] == fleet.requests[2] > 0
    codes, hosts = np.asarray(h.packed) & ev.CODE_MASK, unpack_hosts(h.packed)
    assert set(hosts[codes == ev.SERVER_REJECTS].tolist()) == {2}
    starts = [ev.unpack(p) for p in h.packed if p & ev.CODE_MASK == ev.SERVER_INCIDENT_STARTS]
    assert starts == [(ev.SERVER_INCIDENT_STARTS, ev.INCIDENT_DETAILS.index("crash"))]


def test_sinkholing_least_request_pulls_traffic_into_a_crashed_host() -> None:
    # A host that fails at once never holds an outstanding attempt, so least_request always
    # finds it among the least loaded. At a load of 0.9 per host the others are busy most of
    # the time (an M/M/1 host is idle 1 − ρ of it), so whenever all are, the crashed one
    # alone is least loaded: far more than its 1/n share (here: more than 3/n), while round
    # robin gives it 1/n to within one request.
    n = 10
    load = {"clients": 900, "think": 100.0, "horizon": 1500.0}
    sink = run_of(crash_table({"hosts": n, "balancer": "least_request"}, **load))._wiring.fleet
    turn = run_of(crash_table({"hosts": n, "balancer": "round_robin"}, **load))._wiring.fleet
    assert sink.requests[0] > 3 * sum(sink.requests) / n
    assert abs(turn.requests[0] - sum(turn.requests) / n) <= 1


# --- retries to another host (Envoy's previous_hosts predicate) -------------------------------

def bad_host_success(k: int, fleet: dict[str, Any]) -> tuple[float, int]:
    """2 hosts, random balancing, host 1 failing every attempt; calls of up to 1 + k attempts a
    short constant backoff apart: the share of finished calls that succeeded, and their count."""
    failing = {"start": 0.0, "duration": 6000.0, "error_rate": 1.0, "hosts": [1]}
    strategy = {"type": "Constant", "constant": 1.0, "max_attempts": k + 1, "name": f"k{k}"}
    run = run_of(fleet_table({"hosts": 2, "balancer": "random", **fleet}, clients=20, think=20.0,
                             horizon=6000.0, strategy=strategy, incidents=[failing]))
    m = run.metrics()
    finished = m.offered - m.unfinished
    return m.successes / finished, finished


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_envoy_27317_retries_land_on_the_failing_host_again(k: int) -> None:
    # Envoy #27317's arithmetic: each attempt lands on the failing host with probability 1/2,
    # independently, so a call of 1 + k attempts fails with 0.5^(k+1): success 1 − 0.5^(k+1)
    # (50%, 75%, 87.5%, 93.75%). Within 4 binomial standard deviations over the calls.
    share, calls = bad_host_success(k, {})
    p = 1 - 0.5 ** (k + 1)
    assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / calls)


@pytest.mark.parametrize("k", [1, 2])
def test_retry_other_host_with_envoys_default_selection_attempts(k: int) -> None:
    # With previous_hosts and host_selection_retry_max_attempts = 1 (the default) a retry picks
    # at most twice; both picks land on the tried (failing) host with 0.5^2, and Envoy then
    # keeps the last: a call fails with 0.5 · 0.25^k (k = 1: 87.5% succeed, not 100%).
    share, calls = bad_host_success(k, {"retry_other_host": True})
    p = 1 - 0.5 * 0.25 ** k
    assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / calls)


def test_retry_other_host_succeeds_after_one_retry() -> None:
    # With enough selection attempts (30: a retry stays on the failing host with 0.5^31, ~5e-10)
    # every call succeeds by its second attempt: 100% after one retry.
    share, calls = bad_host_success(1, {"retry_other_host": True, "host_selection_attempts": 30})
    assert share == 1.0 and calls > 1000


# --- outlier detection (Envoy's consecutive errors) -------------------------------------------

FAST_OD = {"consecutive_errors": 5, "interval": 100.0, "base_ejection_time": 300.0,
           "max_ejection_percent": 10.0, "max_ejection_time": 1000.0}


def host_events(run: Run, code: int, host: int) -> list[float]:
    h = run.history
    codes, hosts = np.asarray(h.packed) & ev.CODE_MASK, unpack_hosts(h.packed)
    return np.asarray(h.times)[(codes == code) & (hosts == host)].tolist()


def test_outlier_detection_ejects_after_consecutive_errors() -> None:
    # The crashed host is ejected at its 5th consecutive error (every reply it sends is one),
    # returns after base_ejection_time · multiplier (checked every interval, so within one
    # interval after), and each ejection lasts longer: min(300 · j, 1000) for the j-th,
    # lowered again only after an interval in. It stays out most of the run.
    n = 10
    run = run_of(crash_table({"hosts": n, "balancer": "least_request", "outlier_detection": FAST_OD},
                             clients=300, think=100.0, horizon=4000.0))
    fleet = run._wiring.fleet
    ejected = host_events(run, ev.HOST_EJECTED, 0)
    returned = host_events(run, ev.HOST_RETURNS, 0)
    refusals = host_events(run, ev.SERVER_REJECTS, 0)
    assert ejected and sum(t <= ejected[0] for t in refusals) == 5
    assert fleet.ejections[0] == len(ejected) >= 3
    for j, (out, back) in enumerate(zip(ejected, returned), start=1):
        due = min(300.0 * j, 1000.0)
        assert due <= back - out < due + 100.0
    for h in range(1, n):
        assert fleet.ejections[h] == 0
    assert fleet.ejected_time(4000.0)[0] > 0.6 * 4000.0
    # Ejected, the sink gets little: far below least_request's pull without ejection.
    assert fleet.requests[0] < sum(fleet.requests) / n


@pytest.mark.parametrize("crashed, percent", [(3, 10.0), (3, 20.0), (5, 30.0)])
def test_max_ejection_percent_is_never_exceeded(crashed: int, percent: float) -> None:
    # Envoy's ejectHost: an ejection goes ahead only if 100 · (ejected + 1) / hosts ≤
    # max_ejection_percent, so at most floor(hosts · percent / 100) hosts are ever out together,
    # and with more crashed hosts than that exactly that many are out at some point.
    n = 10
    od = {**FAST_OD, "max_ejection_percent": percent}
    run = run_of(crash_table({"hosts": n, "balancer": "round_robin", "outlier_detection": od},
                             hosts=list(range(crashed)), clients=300, think=100.0, horizon=3000.0))
    fleet = run._wiring.fleet
    allowed = math.floor(n * percent / 100)
    assert fleet.max_ejected == min(allowed, crashed)
    # The same from the events: the count of hosts out, event by event, never passes it.
    h = run.history
    out = 0
    for p in h.packed:
        code = p & ev.CODE_MASK
        out += (code == ev.HOST_EJECTED) - (code == ev.HOST_RETURNS)
        assert out <= allowed


def test_no_ejection_below_one_host_in_ten() -> None:
    # 10% of 5 hosts is half a host: Envoy ejects none (its always_eject_one_host is off by default).
    run = run_of(crash_table({"hosts": 5, "balancer": "round_robin", "outlier_detection": FAST_OD},
                             clients=200, think=100.0, horizon=1000.0))
    assert run._wiring.fleet.ejections == [0] * 5


def test_panic_threshold_uses_every_host_when_too_few_are_in() -> None:
    # 4 hosts, 3 crashed, ejection allowed for all: with the panic threshold at 0 the 3 go out
    # and the last takes nearly everything; at Envoy's 50% the balancer panics once fewer than
    # 2 hosts are in (1 of 4 = 25% < 50%) and keeps sending to the crashed hosts.
    od = {**FAST_OD, "max_ejection_percent": 100.0}
    shares = {}
    for panic in (0.0, 50.0):
        fleet = run_of(crash_table({"hosts": 4, "balancer": "round_robin", "outlier_detection": od,
                                    "panic_threshold": panic}, hosts=[0, 1, 2], clients=100, think=100.0,
                                   horizon=3000.0))._wiring.fleet
        shares[panic] = fleet.requests[3] / sum(fleet.requests)
        assert fleet.max_ejected == 3  # ejections go on in panic; the balancer ignores them
    assert shares[0.0] > 0.9 and shares[50.0] < 0.5


# --- the hosts table ------------------------------------------------------------------------------

def test_hosts_table_rows_and_determinism(tmp_path: Path) -> None:
    import sim

    table = crash_table({"hosts": 10, "balancer": "least_request", "outlier_detection": FAST_OD},
                        clients=300, think=100.0, horizon=2000.0, repeat=2)
    fleet = table.pop("fleet")
    text = toml_text(table) + section("fleet", fleet)
    path = tmp_path / "fleet.toml"
    path.write_text(text)
    first = sim.run(path, workers=1)
    rows = first.rows("hosts")
    assert [r["host"] for r in rows] == list(range(10))
    assert sum(r["share"] for r in rows) == pytest.approx(1.0)
    assert sum(r["requests"] for r in rows) == pytest.approx(first[0].open_mean("requests", 0, 0))
    assert rows[0]["ejections"] >= 1 and rows[0]["successes"] == 0 and rows[0]["ejected_time"] > 0
    assert all(r["ejections"] == 0 and r["errors"] == 0 for r in rows[1:])
    assert rows[1]["p50"] <= rows[1]["p99"]
    assert sim.run(path, workers=1).csv_text("hosts") == first.csv_text("hosts")


def test_no_fleet_no_hosts_table(tmp_path: Path) -> None:
    import sim

    path = tmp_path / "plain.toml"
    path.write_text(toml_text(fleet_table(None, horizon=300.0)))
    assert "hosts" not in sim.run(path, workers=1).kinds


def test_a_host_outage_stops_that_host_only() -> None:
    # Host 1 stops from 500 to 1500 (an outage on it, written both ways): arrivals routed to it
    # wait in its accept queue and are served at the resume; the others serve on. The pause and
    # resume name host 1, and the balancer, seeing its requests outstanding, routes around it
    # (least_request): host 1 gets far fewer requests than the others meanwhile.
    for table in ({"outages": [{"start": 500.0, "duration": 1000.0, "hosts": [1]}]},
                  {"incidents": [{"start": 500.0, "duration": 1000.0, "capacity": 0.0, "hosts": [1]}]}):
        run = run_of(fleet_table({"hosts": 3, "balancer": "least_request"}, clients=60, think=100.0,
                                 horizon=2500.0, **table))
        pauses = [(t, ev.host_of(p)) for t, p in zip(run.history.times, run.history.packed)
                  if p & ev.CODE_MASK in (ev.SERVER_PAUSES, ev.SERVER_RESUMES)]
        assert pauses == [(500.0, 1), (1500.0, 1)]
        h = run.history
        codes, hosts, times = np.asarray(h.packed) & ev.CODE_MASK, unpack_hosts(h.packed), np.asarray(h.times)
        served = (codes == ev.SERVER_COMPLETES) & (times > 600.0) & (times < 1500.0)
        assert not np.any(served & (hosts == 1)) and np.any(served & (hosts == 0))
        fleet = run._wiring.fleet
        assert fleet.successes[1] > 0  # before, and at the resume


def test_host_outages_and_whole_fleet_outages_do_not_mix() -> None:
    with pytest.raises(ConfigError) as info:
        spec_of(fleet_table({"hosts": 2}, outages=[{"start": 10.0, "duration": 5.0},
                                                   {"start": 100.0, "duration": 5.0, "hosts": [1]}]))
    assert "key 'outages'" in str(info.value) and "hosts = [...]" in str(info.value)
    with pytest.raises(ConfigError) as info:
        spec_of(fleet_table(None, outages=[{"start": 100.0, "duration": 5.0, "hosts": [1]}]))
    assert "key 'outages[0].hosts'" in str(info.value) and "needs a fleet" in str(info.value)


# --- active health checks -------------------------------------------------------------------------

def test_health_checks_take_a_crashed_host_out_after_their_lag() -> None:
    # Probes every 50 from t = 50; host 0 crashes at 1000 (and recovers at 2000), each window's
    # edge scheduled before the probe at that instant: its third failed probe in a row (at 1000,
    # 1050, 1100) marks it unhealthy at 1100, its second passed one (2000, 2050) healthy again at
    # 2050; meanwhile the balancer sends it nothing.
    crash = {"start": 1000.0, "duration": 1000.0, "kind": "crash", "hosts": [0]}
    check = {"interval": 50.0, "unhealthy_threshold": 3, "healthy_threshold": 2}
    run = run_of(fleet_table({"hosts": 4, "balancer": "round_robin", "health_check": check},
                             clients=60, think=100.0, horizon=3000.0, incidents=[crash]))
    assert host_events(run, ev.HOST_UNHEALTHY, 0) == [1100.0]
    assert host_events(run, ev.HOST_HEALTHY, 0) == [2050.0]
    h = run.history
    codes, hosts, times = np.asarray(h.packed) & ev.CODE_MASK, unpack_hosts(h.packed), np.asarray(h.times)
    arrivals = np.isin(codes, [ev.SERVER_ACCEPTS, ev.SERVER_QUEUES, ev.SERVER_REJECTS]) & (hosts == 0)
    assert not np.any(arrivals & (times > 1100.0) & (times < 2050.0))
    assert np.any(arrivals & (times > 1000.0) & (times < 1100.0))  # the lag: refused meanwhile


def test_a_passed_health_check_returns_an_ejected_host() -> None:
    # Envoy's successful_active_health_check_uneject_host: a host ejected for errors that its
    # health check finds up (an erring host is up) is back at the next probe, long before its
    # base_ejection_time of 300.
    errors = {"start": 0.0, "duration": 3000.0, "error_rate": 1.0, "hosts": [0]}
    check = {"interval": 50.0, "unhealthy_threshold": 1, "healthy_threshold": 1}
    run = run_of(fleet_table({"hosts": 10, "balancer": "round_robin", "outlier_detection": FAST_OD,
                              "health_check": check}, clients=300, think=100.0, horizon=3000.0, incidents=[errors]))
    out, back = host_events(run, ev.HOST_EJECTED, 0), host_events(run, ev.HOST_RETURNS, 0)
    assert out and back
    assert all(b - o <= 50.0 for o, b in zip(out, back))


def test_health_check_mistakes_name_their_key() -> None:
    with pytest.raises(ConfigError) as info:
        spec_of(fleet_table({"hosts": 2, "health_check": {"interval": 50.0, "unhealthy_threshold": 0,
                                                          "healthy_threshold": 1}}))
    assert "key 'fleet.health_check.unhealthy_threshold'" in str(info.value)
    with pytest.raises(ConfigError) as info:
        spec_of(fleet_table({"hosts": 2, "health_check": {"interval": 50.0}}))
    assert "key 'fleet.health_check.unhealthy_threshold'" in str(info.value) and "is missing" in str(info.value)


def test_a_whole_fleet_incident_hits_every_host_as_its_own() -> None:
    # An error rate without hosts hits every host, and the balancer sees each host's errors
    # (the hosts' counts; ejection could follow): the fleet's error replies are the hosts'.
    errors = {"start": 0.0, "duration": 2000.0, "error_rate": 0.5}
    spec = spec_of(fleet_table({"hosts": 3}, horizon=2000.0, incidents=[errors]))
    assert spec.incidents == () and spec.fleet.incidents[0].hosts == (0, 1, 2)
    run = Run(spec, spec.labels[0], spec.clients[0], 0).run()
    fleet = run._wiring.fleet
    assert all(e > 0 for e in fleet.errors)
    assert sum(fleet.errors) == run.metrics().rejections
    with pytest.raises(ConfigError) as info:
        spec_of(fleet_table({"hosts": 3}, incidents=[errors, {**errors, "hosts": [1]}]))
    assert "overlaps one on the whole fleet" in str(info.value)


# --- hedged requests ----------------------------------------------------------------------------

def hedged(hedging: dict[str, Any]) -> dict[str, Any]:
    """One attempt per call, with ``hedging`` on the strategy entry."""
    return {"type": "NoBackoff", "max_attempts": 1, "name": "once", "hedging": hedging}


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))


@pytest.mark.parametrize("hosts", [10, None], ids=["fleet", "lone server"])
def test_a_hedge_after_the_95th_percentile_cuts_the_tail(hosts: int | None) -> None:
    # The Tail at Scale (Dean and Barroso): a heavy-tailed service (lognormal, median 10, p99
    # 1000: σ = ln(100) / z99), at a load so low that no request waits (100 workers a host, or
    # 1000 for a lone server), a copy sent after d = the 95th percentile (to another host, or to
    # the one server: an independent service either way): a call takes T = min(X1, d + X2),
    # P(T > x) = S(x) · S(x − d) for x > d, so its p99 solves S(x) S(x − d) = 0.01 (~3x below 1000),
    # and hedges are P(X1 > d) = 5% of the calls. Thresholds: 4 binomial standard deviations of
    # the hedged share; for p99, 4 standard deviations of the sample quantile, sqrt(p(1 − p)/N)
    # over the density f_T(x99) (taken from S by a finite difference). Against the same run
    # without hedging (p99 1000, its 4 standard deviations ~170 at N = 30,000 with the lognormal
    # density 1.35e-5 there), the cut is over 830 / (x99 + 40) > 2.4-fold: "several-fold" is > 2.
    median, p99 = 10.0, 1000.0
    sigma = math.log(p99 / median) / 2.3263478740408408

    def sf(x: float) -> float:
        return 1.0 if x <= 0 else _normal_sf(math.log(x / median) / sigma)

    d = median * math.exp(1.6448536269514722 * sigma)
    lo, hi = d, p99
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sf(mid) * sf(mid - d) > 0.01 else (lo, mid)
    x99 = (lo + hi) / 2
    assert p99 / x99 > 2.5
    density = (sf(x99 - 1) * sf(x99 - 1 - d) - sf(x99 + 1) * sf(x99 + 1 - d)) / 2
    fleet = None if hosts is None else {"hosts": hosts, "balancer": "round_robin"}
    table = fleet_table(fleet, clients=100, think=100.0, horizon=30000.0, workers=1000 // (hosts or 1),
                        service_distribution="lognormal", service_time=median, service_p99=p99,
                        strategy=hedged({"max_attempts": 2, "delay": d}))
    run = run_of(table)
    m, copies = run.metrics(), run._wiring.fleet
    calls = m.successes
    measured = float(np.percentile(m.latencies, 99))
    assert abs(measured - x99) < 4 * math.sqrt(0.01 * 0.99 / calls) / density
    share = sum(copies.hedges) / calls
    assert abs(share - 0.05) < 4 * math.sqrt(0.05 * 0.95 / calls)
    assert sum(copies.requests) == m.work + m.hedges  # every copy reached a server
    assert m.amplification == (m.work + m.hedges) / m.offered  # and amplification counts it
    plain = run_of({**table, "strategies": [{"type": "NoBackoff", "max_attempts": 1, "name": "once"}]}).metrics()
    assert float(np.percentile(plain.latencies, 99)) / measured > 2


def test_a_hedging_budget_caps_the_hedges() -> None:
    # Every attempt deposits budget/100 of a hedge and the bucket holds 10: with a delay of 0
    # every attempt wants a hedge, and at most 10 + 5% of the attempts get one.
    table = fleet_table({"hosts": 4}, horizon=3000.0, strategy=hedged({"max_attempts": 3, "delay": 0.0, "budget": 5.0}))
    run = run_of(table)
    fleet, work = run._wiring.fleet, run.metrics().work
    assert sum(fleet.hedges) <= 10 + 0.05 * work + 1
    # every attempt asks at once (delay 0) and a refused one asks no more: the rest are refused
    assert fleet.hedges_denied + sum(fleet.hedges) >= work - 1


def test_hedging_near_saturation_collapses_without_a_budget() -> None:
    # 10 hosts of one worker, lognormal service (median 8, p99 40: mean 8·e^(σ²/2) = 10.2) at
    # 85% load, a hedge after 30 (where queueing delays often pass). Without a budget nearly
    # every call is hedged: the hosts are offered ~1.7 times what they serve, queues grow
    # without bound and the calls time out (under half succeed). A 10% budget holds the load
    # at 0.85 · 1.1 = 0.94 < 1: stable, nearly every call succeeds (over 95%).
    results = {}
    for name, budget in (("unbounded", None), ("budget", 10.0)):
        hedging = {"max_attempts": 2, "delay": 30.0, **({"budget": budget} if budget else {})}
        table = fleet_table({"hosts": 10, "balancer": "random"}, clients=84, think=100.0, strategy=hedged(hedging),
                            horizon=10000.0, service_distribution="lognormal", service_time=8.0, service_p99=40.0,
                            timeout=1000.0)
        m = run_of(table).metrics()
        results[name] = m.successes / m.offered
    assert results["unbounded"] < 0.5 < 0.95 < results["budget"]




# --- a fleet with tiers below, and maps over its keys ---------------------------------------------

def test_a_fleet_calls_a_tier_below() -> None:
    # The fleet is tier 1: every host's served request calls the tier below (one server shared
    # by the hosts) before its reply; every call the clients offered arrives there once.
    tier = {"control": "PoolServer", "workers": 4, "service_time": 1.0,
            "retry": {"type": "Constant", "constant": 1.0, "max_attempts": 1}}
    run = run_of(fleet_table({"hosts": 3, "balancer": "p2c"}, horizon=1500.0, tiers=[tier]))
    m, fleet = run.metrics(), run._wiring.fleet
    assert all(r > 0 for r in fleet.requests)
    assert m.tiers[1].requests >= m.successes > 0
    assert sum(fleet.successes) == m.successes


def test_a_map_may_vary_the_fleet() -> None:
    # An explore axis reaches the fleet's keys (its dataclass fields) like any other.
    from sim.exploration.paths import resolve

    spec = spec_of(fleet_table({"hosts": 3, "outlier_detection": {}}))
    assert resolve("fleet.hosts", spec).set(spec, 5).fleet.hosts == 5
    changed = resolve("fleet.outlier_detection.consecutive_errors", spec).set(spec, 2)
    assert changed.fleet.outlier_detection.consecutive_errors == 2
    crashed = spec_of(fleet_table({"hosts": 4}, incidents=[{"start": 1.0, "duration": 5.0, "kind": "crash",
                                                            "hosts": [3]}]))
    with pytest.raises(ParamError, match="names host 3"):
        resolve("fleet.hosts", crashed).set(crashed, 2)


def test_the_timeseries_count_hedges_in_a_column_of_their_own(tmp_path: Path) -> None:
    import sim

    table = fleet_table(None, horizon=2000.0, service_distribution="lognormal", service_p99=20.0)
    path = tmp_path / "hedged.toml"
    path.write_text(toml_text({**table, "strategies": [hedged({"max_attempts": 2, "delay": 3.0})]})
                    + section("fleet", {"hosts": 4}))
    result = sim.run(path, workers=1)
    rows = result.rows("timeseries")
    assert "hedges" in rows[0]
    spec = load_config(path).simulations[0]
    run = Run(spec, spec.labels[0], spec.clients[0], 0).run()
    assert sum(r["hedges"] for r in rows if r["repetition"] == 0) == sum(run._wiring.fleet.hedges) > 0
    plain = tmp_path / "plain.toml"
    plain.write_text(toml_text(table) + section("fleet", {"hosts": 4}))
    assert "hedges" not in sim.run(plain, workers=1).rows("timeseries")[0]


def test_a_tier_below_may_be_a_fleet() -> None:
    # [simulation.tiers.fleet]: tier 2 is 3 hosts behind the callers' balancer; every call tier 1
    # makes arrives at one of them, round robin spreading them evenly.
    tier = {"control": "PoolServer", "workers": 2, "service_time": 1.0,
            "retry": {"type": "Constant", "constant": 1.0, "max_attempts": 1},
            "fleet": {"hosts": 3, "balancer": "round_robin"}}
    run = run_of(fleet_table(None, horizon=1500.0, tiers=[tier]))
    below = run._wiring.tiers.wirings[0].fleet
    assert max(below.requests) - min(below.requests) <= 1
    assert sum(below.requests) == run.metrics().tiers[1].requests > 0
    with pytest.raises(ConfigError) as info:
        spec_of(fleet_table(None, tiers=[{**tier, "fleet": {"hosts": 0}}]))
    assert "key 'tiers[0].fleet.hosts'" in str(info.value)


def test_every_tier_may_be_a_fleet() -> None:
    # "A fleet works with tiers (each tier can be a fleet)": the clients' server is 2 hosts, tier
    # 2 is 3 and tier 3 is 2, each behind its callers' balancer; every call a tier makes reaches
    # one host of the tier below, and each host of each tier takes some.
    leaf = {"control": "PoolServer", "workers": 2, "service_time": 1.0,
            "retry": {"type": "Constant", "constant": 1.0, "max_attempts": 1}}
    tiers = [{**leaf, "fleet": {"hosts": 3, "balancer": "round_robin"}}, {**leaf, "fleet": {"hosts": 2}}]
    run = run_of(fleet_table({"hosts": 2, "balancer": "p2c"}, horizon=1500.0, tiers=tiers))
    m, top = run.metrics(), run._wiring.fleet
    below = [w.fleet for w in run._wiring.tiers.wirings]
    assert all(r > 0 for f in (top, *below) for r in f.requests)
    assert sum(top.requests) == m.work
    for number, fleet in enumerate(below, start=2):
        assert sum(fleet.requests) == m.tiers[number - 1].requests > 0
