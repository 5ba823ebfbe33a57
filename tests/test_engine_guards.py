"""Guards against runs that cannot end, and against strategies that could stall at zero delay."""

from __future__ import annotations

import itertools

import pytest
from support import toml_text

import sim.runs.engine as engine
from sim.commands.cli import main as cli_main
from sim.settings.config import parse_config
from sim.vocabulary.errors import UserError
from sim.models.strategies import NormalJitterExpo

ZERO_TIME_LOOP = {
    "title": "stall", "clients": [5], "repeat": 1, "network_mu": 0.0, "network_sigma": 0.0,
    "work_to_duration": 1.0, "control": "QueueServer", "concurrency": 1, "service_time": 5.0,
    "horizon": 100.0, "strategies": [{"type": "NoBackoff"}],
}


@pytest.fixture
def quick_stall(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "STALL_EVENTS", 2000)


def test_a_zero_time_retry_loop_is_reported_not_run_forever(quick_stall: None) -> None:
    spec = parse_config({"simulation": [ZERO_TIME_LOOP]}).simulations[0]
    with pytest.raises(UserError, match="time stopped advancing at t=0"):
        engine.run_metrics(spec, spec.strategies[0].strategy, 5, 0)
    with pytest.raises(UserError, match="add network latency"):
        engine.record_run(spec, "NoBackoff", 5, 0)


def test_the_cli_reports_it_as_one_line(quick_stall: None, tmp_path, capsys) -> None:
    config = tmp_path / "stall.toml"
    config.write_text(toml_text(ZERO_TIME_LOOP))
    status = cli_main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet", "--workers", "1"])
    err = capsys.readouterr().err.strip()
    assert status == 2
    # The stall error names the config file, then the simulation.
    assert err.startswith(f"error: {config}: simulation 'stall': time stopped advancing") and "\n" not in err
    out = tmp_path / "out"
    assert not out.exists() or not any(out.iterdir())  # nothing half-written


def test_a_slow_but_moving_clock_is_not_a_stall(quick_stall: None) -> None:
    """Thousands of events at one instant are fine as long as time then moves on."""
    table = {**ZERO_TIME_LOOP, "clients": [200], "network_mu": 1.0, "reject_delay": 0.0,
             "strategies": [{"type": "Constant", "constant": 1.0}]}
    spec = parse_config({"simulation": [table]}).simulations[0]
    metrics = engine.run_metrics(spec, spec.strategies[0].strategy, 200, 0)
    assert metrics.events > 2000 and metrics.duration == 100.0


def test_normal_jitter_expo_never_sticks_at_zero() -> None:
    """With a huge jitter some delays clip to 0, but the next one grows from min_delay again."""
    strategy = NormalJitterExpo(min_delay=100.0, factor=2.0, max_delay=1e6, jitter=5.0)
    values = iter([0.999999, 0.5] * 3 + [0.5, 0.0] * 50)  # one big negative draw, then z = 0
    delays = list(itertools.islice(strategy.delays(lambda: next(values)), 8))
    assert delays[0] == 100.0
    assert delays[1] == 0.0  # clipped by the big negative jitter
    assert all(d >= 100.0 for d in delays[4:])  # growth resumed from min_delay
