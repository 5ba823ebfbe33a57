"""The service of ``backoff-sim check``: a small TOML or three flags, its pace from the config's
own ``load`` key, and its mistakes in one line (issue 36)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.check.service import DEFAULT_CLIENTS, from_file, from_flags, think_time
from sim.vocabulary.errors import ConfigError, UserError

ROOT = Path(__file__).resolve().parent.parent


def test_three_flags_are_a_worker_pool_at_a_load_of_its_capacity():
    service = from_flags(4, 20.0, 0.5)
    assert service.server == {"control": "PoolServer", "workers": 4, "service_time": 20.0,
                              "service_distribution": "exponential"}
    # Open sources share load × capacity = 0.5 × 4 / 20 ms = 0.1 calls/ms: each of 20 starts a
    # call every 20 / 0.1 = 200 ms.
    assert think_time(service) == pytest.approx(DEFAULT_CLIENTS / (0.5 * 4 / 20.0), rel=1e-11)


def test_an_existing_configs_first_simulation_is_a_service():
    service = from_file(ROOT / "examples" / "service_incident.toml")
    assert service.server["workers"] == 4 and service.clients == 32 and service.fleet is None
    assert think_time(service) == pytest.approx(32 / (0.7 * 4 / 10.0), rel=1e-11)
    fleet = from_file(ROOT / "examples" / "fleet.toml")
    assert fleet.fleet["hosts"] == 10


def test_a_services_fleet_is_its_simulation_fleet_or_fleet_table(tmp_path):
    for header in ("[simulation.fleet]", "[fleet]"):
        path = tmp_path / "service.toml"
        path.write_text(f'control = "PoolServer"\nworkers = 2\nservice_time = 20.0\n{header}\nhosts = 3\n')
        assert from_file(path).fleet == {"hosts": 3}


def test_the_example_service_file_reads():
    service = from_file(ROOT / "examples" / "settings" / "service.toml")
    assert (service.load, service.clients, service.server["workers"]) == (0.7, 20, 4)


@pytest.mark.parametrize("text, key", [
    ('control = "PoolServer"\nworkers = 2\nservice_time = 20.0\nspeed = 3\n', "key 'speed'"),
    ('control = "LockingServer"\n', "key 'control'"),
    ('control = "PoolServer"\nworkers = 0\nservice_time = 20.0\n', "workers"),
    ('control = "PoolServer"\nworkers = 2\nservice_time = 20.0\nload = 0\n', "key 'load'"),
])
def test_a_service_mistake_is_one_line_naming_the_file(tmp_path, text, key):
    path = tmp_path / "service.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        from_file(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value) and key in str(caught.value)


def test_a_flag_mistake_names_the_flag():
    with pytest.raises(UserError) as caught:
        from_flags(2, 20.0, 20.0)
    assert str(caught.value).startswith("--load: ")
