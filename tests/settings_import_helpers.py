"""Shared by the tests/test_settings_import_*.py files: write a settings file, read it, and build
a backoff-sim config from a layer (the proof that its entry and fleet keys are valid)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sim.settings.config import Config, parse_config
from sim.settings.imported import Layer, read_settings
from sim.vocabulary.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "settings"
BASE = {"title": "settings", "clients": [4], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.2,
        "work_to_duration": 0.0, "control": "PoolServer", "workers": 4, "service_time": 10.0,
        "workload": "open", "think_time": 100.0, "horizon": 1000.0, "timeout": 1000.0}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def one(tmp_path: Path, name: str, text: str, **options) -> Layer:
    layers = read_settings(write(tmp_path, name, text), **options)
    assert len(layers) == 1
    return layers[0]


def config_of(layer: Layer) -> Config:
    """A one-simulation config whose strategy is the layer's entry (and fleet its keys)."""
    sim = dict(BASE, strategies=[layer.entry])
    if layer.fleet:
        sim["fleet"] = {"hosts": 4, **layer.fleet}
    return parse_config({"simulation": [sim]}, "<settings>")


def error_of(tmp_path: Path, name: str, text: str, **options) -> str:
    with pytest.raises(ConfigError) as info:
        read_settings(write(tmp_path, name, text), **options)
    message = str(info.value)
    assert "\n" not in message  # one line
    return message


def max_attempts(config: Config) -> int | None:
    """The MaxAttempts limit of the config's one strategy (None: unlimited)."""
    from sim.policies.limits import MaxAttempts
    spec = config.simulations[0].strategies[0]
    chain = spec.chain
    limits = [p.max_attempts for p in chain.policies if isinstance(p, MaxAttempts)]
    if chain.strategy is not None and chain.strategy.max_attempts is not None:
        limits.append(chain.strategy.max_attempts)
    return min(limits) if limits else None
