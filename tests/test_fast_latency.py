"""The compiled fast path of study 003's model (``sim.kernels.latency_closed``: closed-loop
Poisson clients against a LatencyServer, outages with any accept queue, timeouts, the plain
strategies, ThinkTimeExpo, a RetryBudget) against the reference engine: every CSV byte for byte, as the engine runs the kernel (compiled when numba is
installed) and as its plain source (on any machine). Then which runs take it, and the loading
of the kernels a sweep does once (``fast.warm_up``).
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace

import pytest

from sim.settings.config import load_config
from sim.kernels import jit, latency_closed
from sim.models import servers
from sim.models.strategies import ThinkTimeExpo
from sim.models.workloads import Outage
from sim.policies.retry_budget import RetryBudget
from sim.policies.token_bucket import TokenBucket
from sim.runs import engine, fast

# A LatencyServer of 8 requests at 10 ms, latency ×1.3 for every 4 more (23 in progress take
# 27 ms, 40 take 82 ms), checked every 5 or 7 ms, under 30 clients thinking 150 ms on average
# (~1.5 in progress at the base latency). An outage of 200 ms at 800 ms holds ~40 arrivals, let
# in at the resume, and requests time out after 150 ms. Metastable, as study 003's server: the
# first simulation recovers (a few timeouts, replies that come late, held requests of clients
# that gave up dropped at the resume), the second collapses for good (abandoned work still
# occupies the server, retries outrun the latency: every strategy's draws, thousands of
# timeouts, abandoned held requests served, retry budgets denying); a surge besides. Then an
# accept queue of 3 through a 140 s outage of 10 clients: SYNs refused and sent again (1, 3,
# 7, ... s later) until their client times out, or, with a timeout past 127 s, until connect()
# fails; and a run without timeouts. ~500-5,000 events a run.
# The two accept-queue simulations' common part: 10 clients, a queue of 3 through a 140 s outage.
ACCEPT_QUEUE_OF_3 = """\
clients = [10]
repeat = 1
network_mu = 1.0
network_sigma = 0.2
work_to_duration = 0.0
control = "LatencyServer"
base_latency = 10.0
concurrency_limit = 8
factor = 1.3
k = 4.0
workload = "poisson"
think_time = 1000.0
horizon = 160000.0
outages = [{ start = 5000.0, duration = 140000.0 }]
backlog = 3
"""
CONFIG = """
seed = 11

[[simulation]]
title = "Latency drop"
clients = [30]
repeat = 2
network_mu = 1.0
network_sigma = 0.2
work_to_duration = 0.0
control = "LatencyServer"
base_latency = 10.0
concurrency_limit = 8
factor = 1.3
k = 4.0
check_interval = 5.0
workload = "poisson"
think_time = 150.0
horizon = 3000.0
timeout = 150.0
outages = [{ start = 800.0, duration = 200.0 }, { start = 2000.0, duration = 60.0 }]
abandoned = "drop"
strategies = [
  { type = "Constant", constant = 5.0, name = "constant" },
  { type = "NormalJitterExpo", min_delay = 5.0, factor = 2.718, max_delay = 400.0, jitter = 0.1, name = "study 003" },
  { type = "FullJitteredExpo", base = 5.0, cap = 200.0, name = "full jitter" },
]

[[simulation]]
title = "Latency serve"
clients = [30]
repeat = 1
network_mu = 1.0
network_sigma = 0.2
work_to_duration = 0.0
control = "LatencyServer"
base_latency = 10.0
concurrency_limit = 8
factor = 1.3
k = 4.0
check_interval = 7.0
workload = "poisson"
think_time = 150.0
surge_start = 1500.0
surge_duration = 300.0
surge_factor = 3.0
horizon = 3000.0
timeout = 150.0
outages = [{ start = 800.0, duration = 200.0 }]
strategies = [
  { type = "Expo", base = 5.0, cap = 200.0, name = "expo" },
  { type = "EqualJitteredExpo", base = 5.0, cap = 200.0, name = "equal jitter" },
  { type = "NoBackoff", name = "none" },
  { type = "NormalJitterExpo", min_delay = 5.0, factor = 2.0, max_delay = 100.0, jitter = 0.0, name = "no jitter" },
  # Finagle's RetryBudget: one for all clients, a deposit as each request starts (RetryFilter);
  # one per client, a deposit per success and a cap per request (RequeueFilter); none at all
  { type = "Constant", constant = 5.0, name = "shared budget", policies = [
      { type = "RetryBudget", percent = 20, min_retries_per_s = 10, ttl = 1000, scope = "shared" } ] },
  { type = "FullJitteredExpo", base = 5.0, cap = 200.0, name = "own budgets", policies = [
      { type = "RetryBudget", percent = 50, min_retries_per_s = 1, ttl = 2000, deposit = "success", max_retries_per_request = 0.5 } ] },
  { type = "Constant", constant = 5.0, name = "empty budget", policies = [
      { type = "RetryBudget", percent = 0, min_retries_per_s = 0, ttl = 1000 } ] },
]

[[simulation]]
title = "Latency SYN retries"
""" + ACCEPT_QUEUE_OF_3 + """timeout = 20000.0
strategies = [
  { type = "ThinkTimeExpo", factor = 2.0, max_delay = 30000.0, jitter = 100.0, name = "Go client" },
  { type = "Constant", constant = 500.0, name = "constant" },
]

[[simulation]]
title = "Latency connect fails"
""" + ACCEPT_QUEUE_OF_3 + """timeout = 150000.0  # past the SYN's last retransmit (127 s): connect() fails first
strategies = [{ type = "ThinkTimeExpo", factor = 2.0, max_delay = 30000.0, jitter = 100.0, name = "Go client" }]

[[simulation]]
title = "Latency no timeout"
clients = [20]
repeat = 1
network_mu = 1.0
network_sigma = 0.0
work_to_duration = 0.0
control = "LatencyServer"
base_latency = 10.0
concurrency_limit = 3
factor = 1.2
k = 1.0
workload = "poisson"
think_time = 40.0
horizon = 2000.0
strategies = [{ type = "Constant", constant = 5.0, name = "constant" }]
"""


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("fast") / "latency.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return load_config(path).simulations


@pytest.mark.parametrize("kernel", ["as the engine runs it", "plain source"])
@pytest.mark.parametrize("index", [0, 1, 2, 3, 4])
def test_kernel_writes_the_reference_csvs_byte_for_byte(specs, index, kernel, kernel_matches_reference):
    spec = specs[index]
    assert all(fast.kernel_name(spec, s.chain) == fast.LATENCY_CLOSED for s in spec.strategies)
    kernel_matches_reference(spec, latency_closed, kernel == "plain source")


def test_kernel_metrics_equal_the_reference_run_by_run(specs):
    # Every field the CSVs may round (counts, latencies, series, the gate's drops), and that the
    # config reaches what it is meant to: timeouts, late replies, requests dropped at a resume.
    spec = specs[0]
    plain = jit.plain(latency_closed.run)
    dropped = late = 0
    for s in spec.strategies:
        for r in range(spec.repeat):
            ours = engine.kernel_metrics(spec, s.chain, 30, r, kernel=plain)
            run = engine.Run(spec, s.label, 30, r).run()
            reference = run.metrics()
            assert ours.events == reference.events > 1500
            for field in ("offered", "successes", "timeouts", "unfinished", "work", "dropped", "refused"):
                assert getattr(ours, field) == getattr(reference, field), field
            assert ours.latencies.tolist() == reference.latencies.tolist()
            assert ours.latency_times.tolist() == reference.latency_times.tolist()
            assert ours.attempts_per_client.tolist() == reference.attempts_per_client.tolist()
            assert {k: v.tolist() for k, v in ours.series.items()} == \
                   {k: v.tolist() for k, v in reference.series.items()}
            assert reference.timeouts > 0
            dropped += reference.dropped
            late += run._side.counts["late"]
    assert dropped > 0 and late > 0


def test_held_requests_served_and_retry_budgets_as_the_reference_s(specs):
    # Every event of each run, and the policies' counts: retries a budget denied (the shared
    # one), calls it gave up at their request's cap (the clients' own), every retry denied
    # (the empty one); requests abandoned while held are served at the resume.
    spec = specs[1]
    assert spec.abandoned == "serve"
    outcomes = {}
    for s in spec.strategies:
        ours = engine.kernel_record(spec, s.label, 30, 0, kernel=jit.plain(latency_closed.run))
        run = engine.Run(spec, s.label, 30, 0).run()
        assert (ours.history.times, ours.history.clients, ours.history.packed) == \
               (run.history.times, run.history.clients, run.history.packed)
        mine, reference = ours.metrics(), run.metrics()
        assert (mine.retries_denied, mine.gave_up) == (reference.retries_denied, reference.gave_up)
        outcomes[s.label] = (reference.retries_denied, reference.gave_up, reference.timeouts)
        assert run._wiring.gate.abandoned_served > 0  # the case the kernel's branch is for
    denied, gave_up, _ = outcomes["shared budget"]
    assert denied == gave_up > 0
    denied, gave_up, _ = outcomes["own budgets"]
    assert denied == 0 and gave_up > 0
    denied, gave_up, timeouts = outcomes["empty budget"]
    assert denied == gave_up == timeouts > 0


def test_a_full_accept_queue_and_its_syn_retries_as_the_reference_s(specs):
    # A bounded backlog (study 003's server_outage.toml): arrivals beyond it refused, their
    # SYNs sent again 1, 3, 7, ... s later while the client waits, held when there is room or
    # served after the resume; past the last, connect() fails and is heard as a timeout.
    for spec in specs[2:4]:
        assert spec.backlog == 3 and spec.backlog_overflow == "syn-retry"
        for s in spec.strategies:
            ours = engine.kernel_record(spec, s.label, 10, 0, kernel=jit.plain(latency_closed.run))
            run = engine.Run(spec, s.label, 10, 0).run()
            assert (ours.history.times, ours.history.clients, ours.history.packed) == \
                   (run.history.times, run.history.clients, run.history.packed)
            assert ours.metrics().refused == run.metrics().refused == run._wiring.gate.refused > 0
            assert run._wiring.gate.syn_retries > 0
    assert run.metrics().timeouts > 0  # "connect fails": its timeout (150 s) outlasts the SYN's 127 s


def test_the_kernel_saturates_latency_where_the_server_does():
    assert latency_closed._MAX_EXPONENT == servers._MAX_LATENCY_EXPONENT


def test_the_engine_takes_this_kernel_only_for_what_it_expresses(specs):
    spec = specs[0]
    chain = spec.strategies[0].chain
    assert fast.kernel_name(spec, chain) == fast.LATENCY_CLOSED
    at_start = replace(spec.control, latency_rule="at_start")
    assert fast.kernel_name(replace(spec, control=at_start), chain) is None
    assert fast.kernel_name(replace(spec, backlog=10), chain) == fast.LATENCY_CLOSED
    from sim.models.incidents import Incident
    slowed = replace(spec, incidents=(Incident(start=10.0, duration=10.0, slowdown=2.0),))
    assert fast.kernel_name(slowed, chain) is None
    assert fast.kernel_name(spec, replace(chain, policies=(RetryBudget(),))) == fast.LATENCY_CLOSED
    assert fast.kernel_name(spec, replace(chain, policies=(RetryBudget(), RetryBudget()))) is None
    assert fast.kernel_name(spec, replace(chain, policies=(TokenBucket(),))) is None
    assert fast.kernel_name(spec, replace(chain, strategy=replace(chain.strategy, max_attempts=3))) is None
    assert fast.kernel_name(spec, replace(chain, strategy=ThinkTimeExpo())) == fast.LATENCY_CLOSED
    assert fast.kernel_name(spec, replace(chain, strategy=ThinkTimeExpo(max_attempts=2))) is None
    assert fast.kernel_name(replace(spec, outages=(Outage(start=5.0, duration=5.0),)), chain) == fast.LATENCY_CLOSED


def test_a_sweep_worth_it_loads_the_kernels_once_then_every_run_takes_them(specs, monkeypatch):
    monkeypatch.setattr(fast, "_warm", False)
    spec = specs[0]
    chain = spec.strategies[0].chain
    assert not fast.kernel_fits(spec, chain, 30)  # alone, too small to pay for loading a kernel
    assert not fast.worth_warming([spec])
    big = replace(spec, clients=(3000,), horizon=300_000.0)  # ~20 M events expected
    assert fast.worth_warming([big]) == fast.available()
    # Each process that loads them pays: a sweep on 2 workers needs twice the events.
    from sim.runs.resources import expected_events
    total, minimum = len(big.strategies) * big.repeat * expected_events(big, 3000), fast.MIN_EVENTS
    monkeypatch.setattr(fast, "MIN_EVENTS", int(total * 0.75))
    assert fast.worth_warming([big], 1) == fast.available()
    assert not fast.worth_warming([big], 2)
    monkeypatch.setattr(fast, "MIN_EVENTS", minimum)
    fast.warm_up()
    assert fast._warm == fast.available()
    assert fast.kernel_fits(spec, chain, 30) == fast.available()


def test_nothing_is_warmed_where_numba_is_missing(tmp_path):
    path = tmp_path / "latency.toml"
    path.write_text(CONFIG, encoding="utf-8")
    probe = ("import sys; sys.modules['numba'] = None\n"
             "from dataclasses import replace\n"
             "from sim.settings.config import load_config; from sim.runs import fast\n"
             "spec = load_config(sys.argv[1]).simulations[0]\n"
             "big = replace(spec, clients=(3000,), horizon=300_000.0)\n"
             "assert not fast.available() and not fast.worth_warming([big])\n"
             "fast.warm_up(); assert not fast._warm\n"
             "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@pytest.mark.slow
def test_the_metastability_map_s_runs_are_the_reference_s(monkeypatch):
    # Cells of examples/metastability.toml at full size (1,000 clients, 300 s) on each side of
    # its boundary: every strategy recovers after a 1 s outage at a 4 s think time; after 5.7 s
    # at 5 s constant retries and backoff collapse, the retry budget recovers; after 2 min at
    # 4 s constant retries collapse, backoff and the budget recover.
    from pathlib import Path

    from sim.exploration.plan import load_document
    plan = load_document(Path(__file__).resolve().parent.parent / "examples" / "metastability.toml").explores[0]
    cells = {cell.values: cell.spec for cell in plan.cells}
    chosen = [cells[values] for values in cells if values[0] in (1000.0, 120000.0) and values[1] == 4000.0
              or round(values[0]) == 5703 and round(values[1]) == 5034]
    assert len(chosen) == 3
    verdicts = []
    for spec in chosen:
        for s in spec.strategies:
            assert fast.kernel_name(spec, s.chain) == fast.LATENCY_CLOSED
            ours = engine.kernel_metrics(spec, s.chain, 1000, 0)
            reference = engine.Run(spec, s.label, 1000, 0).run().metrics()
            assert ours.events == reference.events
            assert (ours.retries_denied, ours.gave_up) == (reference.retries_denied, reference.gave_up)
            assert ours.latencies.tolist() == reference.latencies.tolist()
            assert {k: v.tolist() for k, v in ours.series.items()} == \
                   {k: v.tolist() for k, v in reference.series.items()}
            verdicts.append(not math.isnan(ours.recovery_time))  # NaN: never recovered
    assert verdicts == [True, True, True, False, False, True, False, True, True]


def test_a_sweep_loads_the_kernels_first_but_not_from_the_app_s_thread(specs, monkeypatch):
    # In the CLI's own thread a sweep worth it loads the kernels before its runs; from another
    # thread (the app's workers) it does not: loading holds the interpreter, the app's screen too.
    import threading

    from sim.runs.sweep import run_sweep
    calls = []
    monkeypatch.setattr(fast, "worth_warming", lambda specs, processes=1: True)
    monkeypatch.setattr(fast, "warm_up", lambda names=None: calls.append(threading.current_thread().name))
    run_sweep(specs[-1], workers=1)
    assert calls == [threading.main_thread().name]
    other = threading.Thread(target=run_sweep, args=(specs[-1],), kwargs={"workers": 1})
    other.start()
    other.join(timeout=120)
    assert not other.is_alive() and len(calls) == 1


def test_a_changed_kernel_source_drops_numba_s_caches_of_every_kernel(tmp_path):
    # numba stamps a cached kernel with its own file only; a helper edited in another file
    # (the heap) must not leave the kernels that compiled it in loading stale code.
    (tmp_path / "heap.py").write_text("A = 1\n", encoding="utf-8")
    (tmp_path / "kernel.py").write_text("B = 2\n", encoding="utf-8")
    cache = tmp_path / "__pycache__"
    jit.forget_stale(tmp_path)
    cached = [cache / "kernel.run-10.py311.nbi", cache / "kernel.run-10.py311.1.nbc"]
    for path in cached:
        path.write_bytes(b"compiled")
    jit.forget_stale(tmp_path)  # nothing changed: the caches stay
    assert all(path.exists() for path in cached)
    (tmp_path / "heap.py").write_text("A = 3\n", encoding="utf-8")
    jit.forget_stale(tmp_path)
    assert not any(path.exists() for path in cached)
    assert (cache / jit.SOURCES_STAMP).exists() and not list(cache.glob("*.tmp"))
