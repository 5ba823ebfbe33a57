"""``extends = "Other_Title"``: a simulation that starts from another one's keys (sim.settings.extends)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support import one_error_line, sim_process, sim_table, toml_text

from sim.settings.config import load_config
from sim.vocabulary.errors import ConfigError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(tmp_path: Path, *tables: dict) -> list:
    path = tmp_path / "sims.toml"
    path.write_text(toml_text(*tables), encoding="utf-8")
    return list(load_config(path).simulations)


def error_of(tmp_path: Path, *tables: dict) -> str:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, *tables)
    return str(info.value)


def test_an_extension_takes_every_key_and_overrides_some(tmp_path: Path) -> None:
    base = sim_table(title="Base", repeat=3)
    child = {"title": "Child", "extends": "Base", "repeat": 5}
    first, second = load(tmp_path, base, child)
    assert second.title == "Child" and second.repeat == 5 and first.repeat == 3
    # Every other field as the base's: the one key given and the title are all that differ.
    differ = {f.name for f in dataclasses.fields(first)
              if getattr(first, f.name) != getattr(second, f.name)}
    assert differ <= {"title", "repeat"}


def test_extensions_chain_and_may_come_before_what_they_extend(tmp_path: Path) -> None:
    grandchild = {"title": "C", "extends": "B", "network_mu": 7.0}
    child = {"title": "B", "extends": "A", "repeat": 4}
    base = sim_table(title="A", repeat=2)
    c, b, a = load(tmp_path, grandchild, child, base)
    assert (c.repeat, c.network_mu) == (4, 7.0)
    assert (b.repeat, b.network_mu) == (4, a.network_mu)


def test_a_list_given_replaces_the_inherited_list_whole(tmp_path: Path) -> None:
    base = sim_table(title="A", strategies=[{"type": "Constant", "constant": 1.0},
                                            {"type": "Constant", "constant": 2.0}])
    child = {"title": "B", "extends": "A", "strategies": [{"type": "Constant", "constant": 3.0}]}
    a, b = load(tmp_path, base, child)
    assert len(a.strategies) == 2 and len(b.strategies) == 1


def test_an_unknown_title_is_one_line_with_the_closest(tmp_path: Path) -> None:
    message = error_of(tmp_path, sim_table(title="Your_Service_FIFO"),
                       {"title": "B", "extends": "Your_Service_FIF0"})
    assert "\n" not in message
    assert "simulation 'B'" in message and "key 'extends'" in message
    assert "no simulation in this file has that title" in message
    assert "did you mean 'Your_Service_FIFO'" in message


def test_a_cycle_is_one_line_that_names_it(tmp_path: Path) -> None:
    message = error_of(tmp_path, sim_table(title="A", extends="B"), {"title": "B", "extends": "A"})
    assert "\n" not in message and "key 'extends'" in message
    assert "cycle: A → B → A" in message or "cycle: B → A → B" in message


def test_a_simulation_that_extends_itself_is_a_cycle(tmp_path: Path) -> None:
    message = error_of(tmp_path, sim_table(title="A", extends="A"))
    assert "cycle: A → A" in message


def test_extends_must_be_a_title(tmp_path: Path) -> None:
    message = error_of(tmp_path, sim_table(title="A"), {"title": "B", "extends": 3})
    assert "key 'extends'" in message and "a string" in message


def test_an_inherited_mistake_is_reported_on_the_extension_too(tmp_path: Path) -> None:
    # The base's bad key is inherited: both simulations name it, each at its own title.
    with pytest.raises(ConfigError) as info:
        load(tmp_path, sim_table(title="A", repeat=0), {"title": "B", "extends": "A"})
    text = str(info.value)
    assert "simulation 'A': key 'repeat'" in text and "simulation 'B': key 'repeat'" in text


def test_the_cli_refuses_a_cycle_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cycle.toml"
    path.write_text(toml_text(sim_table(title="A", extends="B"), {"title": "B", "extends": "A"}),
                    encoding="utf-8")
    done = sim_process("run", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "cycle" in one_error_line(done.stderr)
    assert not (tmp_path / "out").exists()


def test_your_service_queue_timeout_extends_the_fifo_simulation() -> None:
    fifo, queue_timeout = load_config(EXAMPLES / "your_service.toml").simulations
    assert queue_timeout.control.queue_timeout == 200.0 and fifo.control.queue_timeout is None
    assert queue_timeout.strategies == fifo.strategies and queue_timeout.horizon == fifo.horizon
    assert queue_timeout.incidents == fifo.incidents
