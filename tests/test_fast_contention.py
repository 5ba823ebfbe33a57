"""The compiled fast path of the contention models (``sim.kernels.contention``: clients that make
one call each, a burst or a spike, against a LockingServer, an OCC server write-only or
read-then-write, or a ThrottlingServer, a plain strategy) against the reference engine: every
CSV byte for byte and every run's history, as the engine runs the kernel (compiled when numba is
installed), as its plain source, and in a process without numba; then which runs take it.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from sim.kernels import contention, jit
from sim.models.workloads import Outage
from sim.policies.token_bucket import TokenBucket
from sim.runs import engine, fast
from sim.settings.config import load_config

ROOT = Path(__file__).resolve().parent.parent

# The sample's two simulations (sim/sample.toml) at other seeds and fewer clients, then the
# other contention controls and a spike: every plain strategy, a strategy that retries at once
# (OCC's Constant 0), writes of no duration (OCC) and of |N(2, 1)| (the lock), a throttle whose
# window rejects most attempts, strategies with their own limits (calls given up); a few hundred
# to a few thousand events a run.
STRATEGIES = """strategies = [
  { type = "Constant", constant = 0.5 },
  { type = "FullJitteredExpo", base = 2.0, cap = 1000.0 },
  { type = "EqualJitteredExpo", base = 2.0, cap = 1000.0 },
  { type = "Expo", base = 1.0, cap = 64.0 },
  { type = "NoBackoff" },
]
"""
CONFIG = """
seed = 7

[[simulation]]
title = "Locking"
max_clients = 30
repeat = 3
network_mu = 10.0
network_sigma = 2.0
work_to_duration = 1.0
control = "LockingServer"
write_mu = 2.0
write_sigma = 1.0
""" + STRATEGIES + """
[[simulation]]
title = "Read write OCC"
max_clients = 30
repeat = 3
network_mu = 5.0
network_sigma = 1.0
write_mu = 0.0
write_sigma = 0.0
work_to_duration = 1.0
control = "ReadWriteOCCServer"
strategies = [
  { type = "Constant", constant = 0.0 },
  { type = "FullJitteredExpo", base = 5.0, cap = 2000.0 },
]

[[simulation]]
title = "Write only OCC"
clients = [1, 5, 20]
repeat = 2
network_mu = 5.0
network_sigma = 1.0
write_mu = 1.0
write_sigma = 0.5
work_to_duration = 0.5
control = "WriteOnlyOCCServer"
""" + STRATEGIES + """
[[simulation]]
title = "Throttling spike"
clients = [4, 25]
repeat = 2
network_mu = 3.0
network_sigma = 1.0
work_to_duration = 1.0
control = "ThrottlingServer"
window = 20.0
limit = 3
workload = "spike"
spike_fraction = 0.6
spike_width = 2.0
arrival_window = 50.0
""" + STRATEGIES + """
[[simulation]]
title = "Limits"
clients = [3, 40]
repeat = 2
network_mu = 4.0
network_sigma = 1.0
work_to_duration = 1.0
control = "ReadWriteOCCServer"
write_mu = 1.0
write_sigma = 0.5
strategies = [
  { type = "Constant", constant = 0.5, max_attempts = 3 },
  { type = "FullJitteredExpo", base = 2.0, cap = 100.0, max_elapsed = 60.0 },
  { type = "EqualJitteredExpo", base = 2.0, cap = 100.0, max_attempts = 5, max_elapsed = 80.0 },
  { type = "NoBackoff", max_attempts = 1 },
]

[[simulation]]
title = "Locking without network noise"
clients = [12]
repeat = 1
network_mu = 1.0
network_sigma = 0.0
work_to_duration = 1.0
control = "LockingServer"
write_mu = 1.0
write_sigma = 0.0
strategies = [{ type = "Constant", constant = 1.0 }, { type = "Expo", base = 0.5, cap = 8.0 }]
"""


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("contention") / "contention.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return load_config(path).simulations


@pytest.mark.parametrize("kernel", ["as the engine runs it", "plain source"])
@pytest.mark.parametrize("index", [0, 1, 2, 3, 4, 5])
def test_kernel_writes_the_reference_csvs_byte_for_byte(specs, index, kernel, kernel_matches_reference):
    spec = specs[index]
    assert all(fast.kernel_name(spec, s.chain) == fast.CONTENTION for s in spec.strategies)
    kernel_matches_reference(spec, contention, kernel == "plain source")


def _same_history(ours: engine.Run, reference: engine.Run) -> None:
    a, b = ours.history, reference.history
    assert (a.times, a.clients, a.packed, a.calls) == (b.times, b.clients, b.packed, b.calls)
    assert ours.metrics() == reference.metrics()


@pytest.mark.parametrize("kernel", ["as the engine runs it", "plain source"])
def test_every_run_s_history_and_metrics_are_the_reference_s(specs, kernel):
    # Each event (time, client, code, call) of runs of every size and repetition, and the
    # metrics of the same runs kept without history, against the reference engine's, whose
    # clients of a contention control then take their steps ahead of time (``Wiring.ahead``):
    # the same events in the same order.
    chosen = None if kernel == "as the engine runs it" else jit.plain(contention.run)
    events = 0
    for spec in specs:
        for s in spec.strategies:
            for n in sorted({1, 2, *spec.clients[::7], spec.max_clients}):
                for r in range(2):
                    ours = engine.kernel_record(spec, s.label, n, r, kernel=chosen)
                    reference = engine.Run(spec, s.label, n, r).run()
                    _same_history(ours, reference)
                    assert engine.kernel_metrics(spec, s.chain, n, r, kernel=chosen) == reference.metrics()
                    events += len(reference.history)
    assert events > 10_000  # about 25,000: the comparison saw real contention


def test_a_run_of_metrics_only_is_the_reference_s_taken_ahead(specs, monkeypatch):
    # ``run_metrics`` by the reference (its clients' steps taken ahead) and by the kernel.
    monkeypatch.setattr(fast, "kernel_fits", lambda spec, chain, clients: False)
    for spec in specs[:2]:
        assert engine.ahead_is_exact(spec)
        for s in spec.strategies:
            for n in (3, 17, 30):
                assert engine.kernel_metrics(spec, s.chain, n, 1) == engine.run_metrics(spec, s.chain, n, 1)


def test_the_sample_s_runs_take_the_kernel(specs):
    sample = load_config(ROOT / "sim" / "sample.toml").simulations
    for spec in [*sample, *specs]:
        for s in spec.strategies:
            assert fast.kernel_name(spec, s.chain) == fast.CONTENTION
    spec, chain = specs[0], specs[0].strategies[0].chain
    assert fast.kernel_name(replace(spec, outages=(Outage(start=5.0, duration=5.0),)), chain) is None
    assert fast.kernel_name(spec, replace(chain, policies=(TokenBucket(),))) is None
    assert fast.kernel_name(spec, replace(chain, strategy=replace(chain.strategy, retry_probability=0.5))) is None
    assert fast.kernel_name(spec, replace(chain, strategy=replace(chain.strategy, max_attempts=3))) == fast.CONTENTION


def test_pure_switches_the_kernel_off(specs, monkeypatch):
    # BACKOFF_SIM_PURE=1: every run by the reference models, numba or not; the CSVs are the
    # reference's (the comparison above), so both settings write the same files.
    spec, chain = specs[0], specs[0].strategies[0].chain
    monkeypatch.setattr(fast, "_warm", True)
    monkeypatch.setenv(jit.PURE_ENV, "1")
    assert not fast.kernel_fits(spec, chain, 30)
    monkeypatch.setenv(jit.PURE_ENV, "0")
    assert fast.kernel_fits(spec, chain, 30) == jit.COMPILED


def test_the_kernel_runs_as_plain_python_without_numba(tmp_path):
    # Where numba is missing the kernel's one source is plain Python (``maybe_njit``): it still
    # gives the reference's histories, though the engine sends no run to it there.
    path = tmp_path / "contention.toml"
    path.write_text(CONFIG, encoding="utf-8")
    probe = ("import sys; sys.modules['numba'] = None\n"
             "from sim.kernels import jit, contention; assert not jit.COMPILED\n"
             "assert jit.plain(contention.run) is contention.run\n"
             "from sim.settings.config import load_config; from sim.runs import engine, fast\n"
             "checked = 0\n"
             "for spec in load_config(sys.argv[1]).simulations:\n"
             "    for s in spec.strategies:\n"
             "        assert not fast.kernel_fits(spec, s.chain, 10**6)\n"
             "        ours = engine.kernel_record(spec, s.label, spec.max_clients, 0)\n"
             "        ref = engine.Run(spec, s.label, spec.max_clients, 0).run()\n"
             "        a, b = ours.history, ref.history\n"
             "        assert (a.times, a.clients, a.packed, a.calls) == (b.times, b.clients, b.packed, b.calls)\n"
             "        assert ours.metrics() == ref.metrics()\n"
             "        checked += len(b)\n"
             "print(checked)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 5_000  # about 8,700 events compared


@pytest.mark.slow
@pytest.mark.parametrize("index", [0, 1])
def test_the_sample_writes_the_reference_csvs_at_full_size(index, kernel_matches_reference):
    # sim/sample.toml as shipped (100 clients, 20 and 30 repetitions): minutes by the reference.
    spec = load_config(ROOT / "sim" / "sample.toml").simulations[index]
    kernel_matches_reference(spec, contention, False)


def test_a_small_sweep_loads_the_kernels_once_before_its_workers_start(specs, monkeypatch):
    # The sample's sweep takes a second or two by the kernels: this process loads the one its
    # runs take before it forks the workers (which inherit it), rather than each worker loading
    # it; a larger sweep leaves it to the workers. The same results either way.
    from sim.runs import sweep
    loaded = []
    monkeypatch.setattr(fast, "worth_warming", lambda specs, processes=1: True)
    monkeypatch.setattr(fast, "warm_up", lambda names=None: loaded.append(tuple(names)))
    monkeypatch.setattr(fast, "kernels_loaded_by_fork", lambda: True)
    small = sweep.run_sweep(specs[2], workers=2)
    assert loaded == [(fast.CONTENTION,)]
    monkeypatch.setattr(sweep, "PARENT_WARM_EVENTS", 0)
    loaded.clear()
    large = sweep.run_sweep(specs[2], workers=2)
    assert loaded == []
    assert small.cost.tolist() == large.cost.tolist()


def test_a_strategy_s_own_limits_end_calls_as_the_reference_s(specs):
    # max_attempts and max_elapsed: the calls given up and their events, run by run.
    spec = specs[4]
    assert spec.title == "Limits"
    plain = jit.plain(contention.run)
    gave_up = 0
    for s in spec.strategies:
        ours = engine.kernel_record(spec, s.label, 40, 1, kernel=plain)
        reference = engine.Run(spec, s.label, 40, 1).run()
        _same_history(ours, reference)
        gave_up += reference.metrics().gave_up
    assert gave_up > 0
