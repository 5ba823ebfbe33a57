"""A tier number is bounded everywhere (issue 40, item 9): a config has at most ``MAX_TIERS``
tiers, and an events file's ``tier`` column at most ``MAX_TIERS + 1`` (the clients' server is
tier 1), so ``backoff-sim replay`` refuses a huge one in one line instead of building a layout
of every tier up to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import one_error_line, sim_process

from sim.vocabulary.bounds import MAX_TIERS
from sim.settings.config import load_config
from sim.vocabulary.errors import ConfigError, UserError
from sim.export.csv_files import END_MARKER, TIERED_EVENTS_HEADER, read_events_csv


def events_file(tmp_path: Path, tier: int) -> Path:
    rows = [",".join(TIERED_EVENTS_HEADER),
            "T,s,2,0,0,0,client_requests_write,attempt=1,0,1",
            f"T,s,2,0,1,2,client_requests_write,attempt=1,1,{tier}",
            END_MARKER.format(2)]
    path = tmp_path / "T_events.csv"
    path.write_text("\n".join(rows) + "\n", "utf-8")
    return path


@pytest.mark.parametrize("tier", [MAX_TIERS + 2, 10**5, 10**7, 2**62])
def test_a_huge_tier_in_an_events_file_is_refused_naming_the_line(tmp_path: Path, tier: int) -> None:
    with pytest.raises(UserError) as info:
        read_events_csv(events_file(tmp_path, tier), {})
    assert "line 3" in str(info.value) and "tier" in str(info.value) and str(MAX_TIERS + 1) in str(info.value)


def test_the_deepest_tier_reads_back(tmp_path: Path) -> None:
    layouts: dict = {}
    read_events_csv(events_file(tmp_path, MAX_TIERS + 1), layouts)
    (layout,) = layouts.values()
    assert len(layout.starts) == MAX_TIERS


def test_replay_of_a_huge_tier_is_one_line_exit_2(tmp_path: Path) -> None:
    result = sim_process("replay", str(events_file(tmp_path, 10**7)), module="tui.main", timeout=60)
    assert result.returncode == 2 and "tier" in one_error_line(result.stderr)


def test_a_config_with_more_tiers_than_the_bound_is_refused(tmp_path: Path) -> None:
    tier = ('[[simulation.tiers]]\ncontrol = "PoolServer"\nworkers = 1\nservice_time = 1.0\n'
            'retry = { type = "Constant", constant = 1.0, max_attempts = 1 }\n')
    text = ('[[simulation]]\ntitle = "Deep"\nclients = [1]\nrepeat = 1\nnetwork_mu = 1.0\n'
            'network_sigma = 0.0\ncontrol = "PoolServer"\nworkers = 1\nservice_time = 1.0\n'
            'workload = "open"\nthink_time = 10.0\nhorizon = 100.0\ntimeout = 50.0\n'
            'strategies = [{ type = "Constant", constant = 1.0 }]\n' + tier * (MAX_TIERS + 1))
    path = tmp_path / "deep.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert any("key 'tiers'" in line and f"at most {MAX_TIERS:,}" in line for line in info.value.lines())
