"""Every mistake of a config at once (issue 40, item 11): a control's own mistakes are reported
beside those of its ``concurrency_limit`` table, not hidden by them."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import toml_text, write_config

from sim.settings.config import load_config
from sim.vocabulary.errors import ConfigError
from test_pool_server import POOL


def mistakes(tmp_path: Path, tiers: str = "", **changes) -> list[str]:
    table = {k: v for k, v in {**POOL, **changes}.items() if v is not None}
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path / "pool.toml", toml_text(table) + tiers))
    return info.value.lines()


def test_a_control_s_own_mistake_beside_its_limit_table_s(tmp_path: Path) -> None:
    lines = mistakes(tmp_path, workers=0, concurrency_limit={"algorithm": "aimd", "smoothing": 0.5})
    assert len(lines) == 2, lines
    assert "key 'concurrency_limit.smoothing'" in lines[0] or "key 'concurrency_limit.smoothing'" in lines[1]
    assert any("key 'workers'" in line for line in lines)


def test_a_tier_s_own_mistake_beside_its_limit_table_s(tmp_path: Path) -> None:
    tier = """
[[simulation.tiers]]
control = "PoolServer"
workers = 0
service_time = 1.0
concurrency_limit = { algorithm = "cubic" }
retry = { type = "Constant", constant = 1.0, max_attempts = 2 }
"""
    lines = mistakes(tmp_path, tier)
    assert any("key 'tiers[0].concurrency_limit.algorithm'" in line for line in lines), lines
    assert any("key 'tiers[0].workers'" in line for line in lines), lines


def test_a_limit_table_mistake_alone_is_one_line(tmp_path: Path) -> None:
    (line,) = mistakes(tmp_path, concurrency_limit={"algorithm": "aimd", "smoothing": 0.5})
    assert "key 'concurrency_limit.smoothing'" in line


def test_every_mistake_a_control_checks_itself(tmp_path: Path) -> None:
    # PoolServer checks its parameters one after the other: each of these three stopped the
    # checks before, so only the first was reported.
    lines = mistakes(tmp_path, queue_size=-1, queue_timeout=-2.0, codel_target=-1.0, codel_interval=10.0)
    keys = [key for key in ("queue_size", "queue_timeout", "codel_target") if any(f"key '{key}'" in l for l in lines)]
    assert keys == ["queue_size", "queue_timeout", "codel_target"] and len(lines) == 3, lines


def test_a_required_key_s_mistake_hides_none_after_it(tmp_path: Path) -> None:
    # workers is required (no default to fall back on) and checked first; service_time's
    # default (None) would be "missing": each is tried again with 1, so the checks go on.
    lines = mistakes(tmp_path, workers=0, service_time=-1.0, queue_size=-1)
    assert [k for k in ("workers", "service_time", "queue_size") if any(f"key '{k}'" in l for l in lines)] == \
        ["workers", "service_time", "queue_size"] and len(lines) == 3, lines


def test_a_consequence_of_a_mistake_is_not_a_mistake_of_its_own(tmp_path: Path) -> None:
    # service_time -1, tried again as 1: service_p99 = 0.5 is then below that median, but the
    # user's median was not 1, so nothing is said of service_p99.
    (line,) = mistakes(tmp_path, service_distribution="lognormal", service_time=-1.0, service_p99=0.5)
    assert "key 'service_time'" in line
