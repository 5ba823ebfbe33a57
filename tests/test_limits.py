"""Resource bounds: configs the machine cannot hold or finish are refused before any work, in one
line naming the key; runs that creep, run away or overflow the clock stop with one line; and a
long metrics-only run keeps its memory bounded, with progress on stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import sim_process, sim_table, toml_text

import sim.runs.engine as engine
import sim.runs.resources as limits
from sim.kernels.jit import PURE_ENV
from sim.commands import cli
from sim.settings.config import parse_config
from sim.runs.resources import check_resources
from sim.core.streams import ClientStreams, uniform01
from sim.vocabulary.errors import ConfigError, UserError

GB = 10**9
MACHINE = (8 * GB, 4 * GB)  # (total, available): a small machine, the same on every test host
QUEUE = {"concurrency": 2, "service_time": 1.0, "horizon": 1000.0}


def spec(control: str = "LockingServer", **overrides: Any):
    return parse_config({"simulation": [sim_table(control, title="Big", **overrides)]},
                        "big.toml").simulations[0]


def refusal(s, **kwargs: Any) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        check_resources([s], workers=2, memory=MACHINE, **kwargs)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("big.toml: simulation 'Big': ")
    return info.value


@pytest.mark.parametrize("overrides, key", [
    ({"repeat": 10**12}, "repeat"),
    ({"clients": [2**62]}, "clients"),
    ({"clients": None, "max_clients": 10**7}, "max_clients"),
    ({"control": "QueueServer", **QUEUE, "bucket": 1e-6}, "bucket"),
    ({"control": "QueueServer", **QUEUE, "horizon": 1e12, "workload": "poisson", "think_time": 100.0,
      "clients": [10], "repeat": 1}, "horizon"),
], ids=["repeat", "clients", "max_clients", "bucket", "poisson-horizon"])
def test_what_the_machine_cannot_hold_is_refused_even_with_force(overrides: dict, key: str) -> None:
    """The issue's inputs, which ran 50-60 s, reached 15 GB and died with MemoryError."""
    overrides = {k: v for k, v in overrides.items() if v is not None}
    control = overrides.pop("control", "LockingServer")
    table = sim_table(control, title="Big", **overrides)
    if "max_clients" in overrides:
        del table["clients"]
    s = parse_config({"simulation": [table]}, "big.toml").simulations[0]
    error = refusal(s, force=True)
    assert error.key == key
    assert "more than this machine's 8.0 GB" in str(error)


def test_a_sweep_beyond_an_hour_is_refused_unless_forced() -> None:
    # 6 client counts x 200,000 repeats x 40,000 clients x 5 events: 2.4e11 events, > 1e10.
    s = spec(clients=[1, 2, 3, 4, 5, 40_000], repeat=200_000)
    error = refusal(s)
    assert "--force" in str(error) and "events" in str(error)
    check_resources([s], workers=2, memory=(10**16, 10**16), force=True)  # soft: forced through


def test_more_than_the_available_memory_is_soft() -> None:
    # 250,000 clients x 6 KB, in 2 workers and again in the recorded example run, plus 300 B for
    # each of its 1.25 M recorded events: about 4.9 GB, between the 4 GB free and the 8 GB total.
    s = spec(clients=[250_000], repeat=1)
    assert "available now" in str(refusal(s))
    check_resources([s], workers=2, memory=MACHINE, force=True)


def test_ordinary_configs_pass() -> None:
    from sim.settings.config import SAMPLE_CONFIG, load_config

    examples = Path(__file__).resolve().parent.parent / "examples"
    for path in [SAMPLE_CONFIG, *examples.glob("*.toml")]:
        check_resources(load_config(path).simulations, workers=2, memory=MACHINE)


def test_the_cli_refuses_before_any_work(tmp_path: Path) -> None:
    config = tmp_path / "big.toml"
    config.write_text(toml_text(sim_table(title="Big", repeat=10**12)))
    done = sim_process("run", str(config), "--out", "out", cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "key 'repeat'" in lines[0] and "memory" in lines[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


LATENCY = {"base_latency": 100.0, "concurrency_limit": 30, "factor": 1.05, "k": 15.0, "horizon": 3000.0,
           "timeout": 2000.0, "workload": "poisson", "think_time": 1000.0, "network_mu": 1.0,
           "network_sigma": 0.2, "clients": [50], "repeat": 1, "strategies": [{"type": "Constant", "constant": 100.0}]}


def engine_steps(monkeypatch: pytest.MonkeyPatch, s, clients: int) -> int:
    """Every event the engine scheduled in one run, recorded or not (the server's checks too),
    by the reference engine (a compiled kernel keeps no ``Wiring``)."""
    monkeypatch.setenv(PURE_ENV, "1")
    wirings = []
    real = engine.build_wiring
    monkeypatch.setattr(engine, "build_wiring", lambda *a: wirings.append(real(*a)) or wirings[-1])
    engine.run_metrics(s, s.strategies[0].strategy, clients, 0)
    return wirings[-1].seq()


def test_a_latency_servers_checks_count_in_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every check_interval while a request is in service the server checks (an unrecorded event):
    # at 0.1 against a base latency of 100, ~30,000 checks beside ~800 recorded events. The
    # estimate counts them (it was 30 times short); latency_rule = "at_start" makes none.
    s = spec("LatencyServer", **LATENCY, check_interval=0.1)
    steps = engine_steps(monkeypatch, s, 50)
    assert limits.recorded_events(s, 50) < steps / 30
    assert 0.8 < limits.expected_events(s, 50) / steps < 1.2
    assert limits.timer_events(spec("LatencyServer", **LATENCY, latency_rule="at_start"), 50) == 0


def test_a_tiny_check_interval_is_refused_naming_it_unless_forced() -> None:
    s = spec("LatencyServer", **{**LATENCY, "horizon": 30000.0}, check_interval=1e-9)
    error = refusal(s)
    # ~3e13 checks in each of the sweep's run and the two recorded example histories
    assert error.key == "check_interval" and "at least 8.9e+13 events" in str(error)
    assert "(raise check_interval, or pass --force to run it anyway)" in str(error)
    check_resources([s], workers=2, memory=MACHINE, force=True)  # the checks take no memory


def test_a_run_that_many_checks_make_long_is_not_called_a_runaway(monkeypatch: pytest.MonkeyPatch) -> None:
    # 10^6 checks in a run of ~400 recorded events: past 1000 times the old estimate, which
    # stopped it blaming "retries with little or no backoff"; within the estimate now.
    monkeypatch.setattr(limits, "RUNAWAY_FLOOR", 10_000)
    s = spec("LatencyServer", **{**LATENCY, "horizon": 1000.0}, check_interval=0.001)
    assert engine_steps(monkeypatch, s, 50) > 1000 * limits.recorded_events(s, 50)


# --- runs that cannot end ------------------------------------------------------------------------

@pytest.fixture
def quick_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "STALL_EVENTS", 2000)


CREEP = {"clients": [5], "repeat": 1, "network_mu": 1e-300, "network_sigma": 0.0,
         "strategies": [{"type": "NoBackoff"}]}


def test_time_creeping_in_sub_resolution_steps_is_a_stall(quick_checks: None) -> None:
    """Throttling with latencies of 1e-300 against a window of 20 ran for ever: the clock moved,
    by 1e-300 per event, so the exact-stall check never fired."""
    s = spec("ThrottlingServer", **CREEP)
    with pytest.raises(UserError, match="creeps forward in sub-resolution steps") as info:
        engine.run_metrics(s, s.strategies[0].strategy, 5, 0)
    assert str(info.value).startswith("big.toml: simulation 'Big': ")


def test_a_run_far_beyond_its_estimate_stops(quick_checks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # NoBackoff against a lock held 5000 times longer than a round trip: each client spins
    # thousands of times, far beyond 1000 x its 5 events of estimate (the floor lowered for speed).
    monkeypatch.setattr(limits, "RUNAWAY_FLOOR", 10_000)
    table = sim_table(title="Big", clients=[5], repeat=1, network_mu=0.01, network_sigma=0.0,
                      write_mu=50.0, write_sigma=0.0, strategies=[{"type": "NoBackoff"}])
    config = parse_config({"simulation": [table]}, "big.toml")
    s = config.simulations[0]
    with pytest.raises(UserError, match="times its estimate") as info:
        engine.run_metrics(s, s.strategies[0].strategy, 5, 0)
    assert "--force" in str(info.value)
    # --force lifts the budget: the same run completes.
    forced = config.with_soft_limits(False).simulations[0]
    assert engine.run_metrics(forced, s.strategies[0].strategy, 5, 0).events > limits.RUNAWAY_FLOOR


def test_a_clock_past_max_time_stops_the_run() -> None:
    # Each backoff is 1e15 (allowed); a few of them put the clock past 1e15, where a delay of
    # one time unit no longer moves it.
    s = spec(clients=[3], repeat=1, strategies=[{"type": "Constant", "constant": 1e15}])
    with pytest.raises(UserError, match="past 1e\\+15"):
        engine.run_metrics(s, s.strategies[0].strategy, 3, 0)


# --- bounded memory --------------------------------------------------------------------------------

def test_random_number_blocks_are_freed_once_every_client_took_its_row() -> None:
    streams = ClientStreams(np.random.Generator(np.random.PCG64(1)), 10, uniform01)
    draws = streams.next_functions()
    for _ in range(5000):  # every client advances together, as in a Poisson run
        for d in draws:
            d()
    # 5000 draws each span about 80 blocks; only the one in progress is held (two at a boundary).
    assert streams.live_blocks <= 2


def test_blocks_kept_by_clients_that_stopped_drawing_stay_arrays() -> None:
    """Rows nobody takes keep a block alive; kept as lists of floats they would take four times
    the memory, so at most ``LISTED_LIVE`` live blocks are lists."""
    from sim.core import streams as streams_module

    streams = ClientStreams(np.random.Generator(np.random.PCG64(1)), 128, uniform01)
    draws = streams.next_functions()
    for _ in range(20_000):  # one client draws; the other 127 never take a row
        draws[0]()
    blocks = streams._blocks.values()
    assert streams.live_blocks > 300
    assert sum(isinstance(b, list) for b in blocks) <= streams_module.LISTED_LIVE
    assert sum(b.nbytes for b in blocks if isinstance(b, np.ndarray)) < 25e6  # 8 bytes a value


def test_the_blocks_are_the_same_numbers_as_before() -> None:
    """Freeing blocks does not change a single draw (the golden traces check whole runs)."""
    rng = np.random.Generator(np.random.PCG64(7))
    draws = ClientStreams(rng, 3, uniform01).next_functions()
    got = [[draws[i]() for _ in range(30)] for i in range(3)]
    reference = np.random.Generator(np.random.PCG64(7))
    blocks = [reference.random((3, w)) for w in (8, 16, 32)]
    expected = [list(np.concatenate([b[i] for b in blocks]))[:30] for i in range(3)]
    assert got == expected


def test_a_long_poisson_run_keeps_a_bounded_sample_of_latencies(monkeypatch: pytest.MonkeyPatch) -> None:
    import sim.core.latency_sample as latency_sample

    monkeypatch.setattr(latency_sample, "LATENCY_SAMPLE", 256)
    s = spec("QueueServer", **{**QUEUE, "horizon": 20_000.0, "workload": "poisson", "think_time": 10.0},
             clients=[4], repeat=1, network_mu=1.0, network_sigma=0.0)
    m = engine.run_metrics(s, s.strategies[0].strategy, 4, 0)
    assert m.successes > 4 * 256  # the run succeeded far more often than it keeps
    assert 128 <= m.latencies.size <= 256 and m.latency_clients.size == m.latencies.size
    # Thinning keeps every 2^k-th latency: the sample spans the whole run, not its start.
    assert set(m.latency_clients.tolist()) == {0, 1, 2, 3}


def test_progress_lines_on_stderr_when_it_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch, capsys,
                                                          tmp_path: Path) -> None:
    monkeypatch.setattr(cli, "PROGRESS_SECONDS", 0.0)
    config = tmp_path / "small.toml"
    config.write_text(toml_text(sim_table(title="small", clients=[2, 3], repeat=3)))
    assert cli.main(["run", str(config), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith(("simulating: ", "writing small: ")) for line in err)
    assert "6 of 6 runs done" in err[-1] and "events simulated" in err[-1]
