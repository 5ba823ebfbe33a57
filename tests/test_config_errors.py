"""Config validation: one test per kind of mistake, each a single line that names the file, the
simulation and the key; plus the configs that must load (sample, reference format, additions).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support import one_error_line, sim_process, sim_table, toml_text

from sim.settings.config import SAMPLE_CONFIG, default_client_counts, load_config
from sim.vocabulary.errors import ConfigError


def write(tmp_path: Path, text: str, name: str = "sims.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def table(control: str = "LockingServer", **kw: Any) -> dict[str, Any]:
    """A simulation table titled "Busy" (so messages name it); a key given as ``None`` is dropped."""
    t = sim_table(control, title="Busy")
    t.update(kw)
    return {k: v for k, v in t.items() if v is not None}


def config_error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message
    assert str(path) in message
    return message


def assert_located(tmp_path: Path, *tables: dict[str, Any], key: str, title: str | None = "Busy",
                   top: dict[str, Any] | None = None, contains: str = "") -> str:
    """Load the tables; the error must name the file, the simulation (if any) and the key."""
    message = config_error(write(tmp_path, toml_text(*tables, top=top)))
    if title is not None:
        assert f"simulation {title!r}" in message
    assert f"key {key!r}" in message
    assert contains in message
    return message


# --- unknown names --------------------------------------------------------------------------

def test_unknown_top_level_key(tmp_path: Path) -> None:
    assert_located(tmp_path, table(), top={"sead": 3}, key="sead", title=None, contains="'seed'")


def test_unknown_simulation_key_suggests_the_closest(tmp_path: Path) -> None:
    assert_located(tmp_path, table(netwrk_mu=3.0), key="netwrk_mu", contains="did you mean 'network_mu'")


def test_control_parameter_of_another_control(tmp_path: Path) -> None:
    assert_located(tmp_path, table(window=10.0), key="window", contains="LockingServer")


def test_unknown_control_suggests_the_closest(tmp_path: Path) -> None:
    assert_located(tmp_path, table(control="ReadWriteOCC"), key="control",
                   contains="did you mean 'ReadWriteOCCServer'")


def test_unknown_strategy_suggests_the_closest(tmp_path: Path) -> None:
    assert_located(tmp_path, table(strategies=[{"type": "FullJitterExpo", "base": 2.0, "cap": 9.0}]),
                   key="strategies[0].type", contains="did you mean 'FullJitteredExpo'")


def test_unknown_strategy_without_a_close_match_lists_the_choices(tmp_path: Path) -> None:
    assert_located(tmp_path, table(strategies=[{"type": "Zzz"}]), key="strategies[0].type",
                   contains="DecorrelatedJitter")


def test_unknown_strategy_parameter(tmp_path: Path) -> None:
    strategies = [{"type": "Constant", "constant": 1.0}, {"type": "Expo", "base": 2.0, "cap": 9.0, "bsae": 1.0}]
    assert_located(tmp_path, table(strategies=strategies), key="strategies[1].bsae",
                   contains="did you mean 'base'")


def test_parameter_given_to_a_strategy_that_takes_none(tmp_path: Path) -> None:
    assert_located(tmp_path, table(strategies=[{"type": "NoBackoff", "base": 1.0}]),
                   key="strategies[0].base", contains="NoBackoff")


def test_strategy_without_type(tmp_path: Path) -> None:
    assert_located(tmp_path, table(strategies=[{"base": 1.0}]), key="strategies[0]", contains="type")


# --- missing keys ---------------------------------------------------------------------------

def test_missing_title_names_the_block_by_position(tmp_path: Path) -> None:
    message = assert_located(tmp_path, table(), table(title=None), key="title", title="#2",
                             contains="missing")
    assert "Busy" not in message


@pytest.mark.parametrize("key", ["repeat", "control", "strategies", "network_mu", "network_sigma",
                                 "write_mu", "write_sigma"])
def test_missing_simulation_key(tmp_path: Path, key: str) -> None:
    assert_located(tmp_path, table(**{key: None}), key=key, contains="missing")


def test_missing_max_clients_and_clients(tmp_path: Path) -> None:
    assert_located(tmp_path, table(clients=None), key="max_clients", contains="missing")


@pytest.mark.parametrize("key", ["window", "limit"])
def test_missing_throttling_parameter(tmp_path: Path, key: str) -> None:
    assert_located(tmp_path, table("ThrottlingServer", **{key: None}), key=key,
                   contains="ThrottlingServer")


@pytest.mark.parametrize("strategy, key", [
    ({"type": "Expo", "base": 2.0}, "cap"),
    ({"type": "FullJitteredExpo", "cap": 2.0}, "base"),
    ({"type": "Constant"}, "constant"),
    ({"type": "CsmaBinaryExponential"}, "slot"),
])
def test_missing_strategy_parameter(tmp_path: Path, strategy: dict, key: str) -> None:
    assert_located(tmp_path, table(strategies=[strategy]), key=f"strategies[0].{key}",
                   contains="missing")


# --- wrong types and values -----------------------------------------------------------------

@pytest.mark.parametrize("key, value, expected", [
    ("network_mu", "10", "number"),
    ("network_sigma", True, "number"),
    ("write_mu", [1.0], "number"),
    ("repeat", 2.5, "integer"),
    ("repeat", True, "integer"),
    ("max_clients", 10.0, "integer"),
    ("seed", "7", "integer"),
    ("title", 5, "string"),
])
def test_wrong_type(tmp_path: Path, key: str, value: Any, expected: str) -> None:
    overrides = {key: value}
    if key == "max_clients":
        overrides["clients"] = None
    title = "#1" if key == "title" else "Busy"
    assert_located(tmp_path, table(**overrides), key=key, title=title, contains=expected)


def test_wrong_type_of_control_parameter(tmp_path: Path) -> None:
    assert_located(tmp_path, table("ThrottlingServer", limit=2.5), key="limit", contains="integer")


@pytest.mark.parametrize("strategy, key, expected", [
    ({"type": "Expo", "base": "2", "cap": 9.0}, "base", "number"),
    ({"type": "Expo", "base": 2.0, "cap": False}, "cap", "number"),
    ({"type": "GoogleDrive", "max_attempts": 2.5}, "max_attempts", "integer"),
    ({"type": "CsmaBinaryExponential", "slot": 1.0, "truncate": 3.0}, "truncate", "integer"),
])
def test_wrong_type_of_strategy_parameter(tmp_path: Path, strategy: dict, key: str, expected: str) -> None:
    assert_located(tmp_path, table(strategies=[strategy]), key=f"strategies[0].{key}", contains=expected)


@pytest.mark.parametrize("key", ["network_sigma", "write_sigma", "network_mu", "write_mu",
                                 "work_to_duration"])
def test_negative_value(tmp_path: Path, key: str) -> None:
    assert_located(tmp_path, table(**{key: -1.0}), key=key, contains=">= 0")


@pytest.mark.parametrize("key, value", [("repeat", 0), ("max_clients", 0)])
def test_integer_below_its_minimum(tmp_path: Path, key: str, value: int) -> None:
    overrides: dict[str, Any] = {key: value}
    if key == "max_clients":
        overrides["clients"] = None
    assert_located(tmp_path, table(**overrides), key=key, contains=">=")


@pytest.mark.parametrize("key, value", [("window", 0.0), ("limit", 0)])
def test_non_positive_throttling_parameter(tmp_path: Path, key: str, value: float) -> None:
    assert_located(tmp_path, table("ThrottlingServer", **{key: value}), key=key)


@pytest.mark.parametrize("cap", [0.0, -5.0])
def test_non_positive_cap(tmp_path: Path, cap: float) -> None:
    assert_located(tmp_path, table(strategies=[{"type": "FullJitteredExpo", "base": 2.0, "cap": cap}]),
                   key="strategies[0].cap", contains="> 0")


@pytest.mark.parametrize("kind", ["Expo", "FullJitteredExpo", "EqualJitteredExpo", "DecorrelatedJitter"])
def test_a_cap_below_the_base_is_refused(tmp_path: Path, kind: str) -> None:
    # Every delay would be the cap; README calls it a broken rule (a tune's failed trial).
    assert_located(tmp_path, table(strategies=[{"type": kind, "base": 10.0, "cap": 5.0}]),
                   key="strategies[0].cap", contains="must be >= base (10.0), got 5.0")


def test_a_deadline_of_zero_is_refused_as_max_elapsed_zero_is(tmp_path: Path) -> None:
    for policy, key in (({"type": "Deadline", "total": 0.0}, "policies[0].total"),
                        ({"type": "MaxElapsed", "max_elapsed": 0.0}, "policies[0].max_elapsed")):
        assert_located(tmp_path, table(strategies=[{"type": "Constant", "constant": 1.0, "policies": [policy]}]),
                       key=f"strategies[0].{key}", contains="must be > 0")


def test_negative_constant(tmp_path: Path) -> None:
    assert_located(tmp_path, table(strategies=[{"type": "Constant", "constant": -0.5}]),
                   key="strategies[0].constant", contains=">= 0")


def test_negative_retry_limit(tmp_path: Path) -> None:
    assert_located(tmp_path, table(strategies=[{"type": "NoBackoff", "max_attempts": 0}]),
                   key="strategies[0].max_attempts")


def test_empty_strategy_name(tmp_path: Path) -> None:
    assert_located(tmp_path, table(strategies=[{"type": "NoBackoff", "name": " "}]),
                   key="strategies[0].name")


def test_strategies_not_a_list_of_tables(tmp_path: Path) -> None:
    assert_located(tmp_path, table(strategies=["Expo"]), key="strategies")


# --- cross-key mistakes ---------------------------------------------------------------------

def test_duplicate_titles(tmp_path: Path) -> None:
    assert_located(tmp_path, table(), table(), key="title", contains="more than one")


def test_both_clients_and_max_clients(tmp_path: Path) -> None:
    assert_located(tmp_path, table(max_clients=10), key="clients", contains="max_clients")


@pytest.mark.parametrize("clients", [[], [0, 5], [3, 3], [1.0, 2.0], "5", [True]])
def test_bad_clients_list(tmp_path: Path, clients: Any) -> None:
    assert_located(tmp_path, table(clients=clients), key="clients")


def test_duplicate_identical_strategies(tmp_path: Path) -> None:
    same = {"type": "Expo", "base": 2.0, "cap": 9.0}
    assert_located(tmp_path, table(strategies=[same, {"type": "NoBackoff"}, same]),
                   key="strategies[2]", contains="duplicates")


def test_duplicate_names(tmp_path: Path) -> None:
    strategies = [{"type": "Expo", "base": 2.0, "cap": 9.0, "name": "mine"},
                  {"type": "NoBackoff", "name": "mine"}]
    assert_located(tmp_path, table(strategies=strategies), key="strategies[1]", contains="'mine'")


# --- file-level mistakes --------------------------------------------------------------------

def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    text = toml_text(table()) + "oops = = 3\n"
    line = text.count("\n")
    message = config_error(write(tmp_path, text))
    assert "invalid TOML" in message and f"line {line}" in message


def test_missing_file(tmp_path: Path) -> None:
    message = config_error(tmp_path / "nowhere.toml")
    assert "no such file" in message


def test_directory_instead_of_file(tmp_path: Path) -> None:
    message = config_error(tmp_path)
    assert "directory" in message


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(toml_text(table()).replace("Busy", "Caf\u00e9").encode("latin-1"))
    assert "UTF-8" in config_error(path)


@pytest.mark.parametrize("text", ["seed = 1\n", "", "simulation = 3\n", "simulation = [1, 2]\n"])
def test_no_simulation_blocks(tmp_path: Path, text: str) -> None:
    message = config_error(write(tmp_path, text))
    assert "key 'simulation'" in message and "[[simulation]]" in message


# --- configs that must load -----------------------------------------------------------------

def test_sample_config_loads() -> None:
    config = load_config(SAMPLE_CONFIG)
    assert [s.title for s in config.simulations] == ["Locking_Example", "Read_Write_OCC_Example"]
    locking, occ = config.simulations
    assert locking.labels == ("Constant", "FullJitteredExpo", "EqualJitteredExpo")
    assert occ.labels == ("Constant", "FullJitteredExpo")
    assert locking.repeat == 20 and occ.repeat == 30 and locking.max_clients == 100
    assert locking.control.type_name == "LockingServer" and occ.control.READS_VERSION


REFERENCE_FORMAT = """\
[[simulation]]
title = "Locking_Example"  # anything you like, but must be unique across [[simulation]] blocks
max_clients = 100  # simulate various numbers of clients, up to this maximum
repeat = 20  # simulate each (num_clients, strategy) combination this many times
network_mu = 10.0  # network latency is modeled as max(0, N(mu, sigma))
network_sigma = 2.0
work_to_duration = 1.0
control = "LockingServer"
write_mu = 2.0  # write duration is modeled as max(0, N(mu, sigma))
write_sigma = 1.0
strategies = [  # one or more
  { type = "Constant", constant = 0.5 },
  { type = "FullJitteredExpo", base = 2.0, cap = 1000.0 },
  { type = "EqualJitteredExpo", base = 2.0, cap = 1000.0 },
]

[[simulation]]
title = "Throttling"
max_clients = 12
repeat = 3
network_mu = 10
network_sigma = 2
work_to_duration = 0
control = "ThrottlingServer"
window = 100
limit = 5
strategies = [
  { type = "Expo", base = 1, cap = 64 },
]

[[simulation]]
title = "WriteOnly"
max_clients = 50
repeat = 2
network_mu = 5.0
network_sigma = 1.0
work_to_duration = 2.5
control = "WriteOnlyOCCServer"
write_mu = 1.0
write_sigma = 0.5
strategies = [{ type = "Constant", constant = 0.0 }]
"""


def test_reference_format_loads_unchanged(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, REFERENCE_FORMAT))
    locking, throttling, write_only = config.simulations
    assert locking.clients == tuple(default_client_counts(100))
    assert throttling.clients == tuple(range(1, 13))
    assert throttling.control.window == 100.0 and throttling.control.limit == 5
    assert throttling.strategies[0].strategy.cap == 64.0 and throttling.network_mu == 10.0
    assert write_only.work_to_duration == 2.5
    assert all(s.seed == 0 for s in config.simulations)


def test_same_type_with_different_params_gets_distinct_labels(tmp_path: Path) -> None:
    strategies = [{"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0},
                  {"type": "FullJitteredExpo", "base": 5.0, "cap": 2000.0},
                  {"type": "Constant", "constant": 1.0}]
    spec = load_config(write(tmp_path, toml_text(table(strategies=strategies)))).simulations[0]
    assert spec.labels == ("FullJitteredExpo(base=2, cap=1000)", "FullJitteredExpo(base=5, cap=2000)",
                           "Constant")
    assert spec.strategy("FullJitteredExpo(base=5, cap=2000)").strategy.base == 5.0


def test_optional_name_is_the_label(tmp_path: Path) -> None:
    strategies = [{"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0, "name": "aws full"},
                  {"type": "FullJitteredExpo", "base": 5.0, "cap": 2000.0}]
    spec = load_config(write(tmp_path, toml_text(table(strategies=strategies)))).simulations[0]
    assert spec.labels == ("aws full", "FullJitteredExpo")


def test_explicit_client_list(tmp_path: Path) -> None:
    spec = load_config(write(tmp_path, toml_text(table(clients=[50, 1, 10])))).simulations[0]
    assert spec.clients == (1, 10, 50) and spec.max_clients == 50
    assert spec.representative_clients() == 10


def test_seeds_top_level_and_per_simulation(tmp_path: Path) -> None:
    other = table(title="Other", seed=9)
    config = load_config(write(tmp_path, toml_text(table(), other, top={"seed": 4})))
    assert [s.seed for s in config.simulations] == [4, 9]
    assert [s.seed for s in config.with_seed(1).simulations] == [1, 1]


def test_default_client_spacing_matches_the_reference() -> None:
    assert default_client_counts(100) == (1, 6, 11, 17, 22, 27, 32, 37, 43, 48, 53, 58, 64, 69,
                                          74, 79, 84, 90, 95, 100)
    for n in (1, 2, 7, 20):
        assert default_client_counts(n) == tuple(range(1, n + 1))
    for n in (21, 50, 1000):
        counts = default_client_counts(n)
        assert len(counts) == 20 and counts[0] == 1 and counts[-1] == n
        assert list(counts) == sorted(set(counts))


# --- the command line turns a ConfigError into one line and status 2 ------------------------

def test_cli_reports_a_bad_config_in_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, toml_text(table(netwrk_mu=3.0)))
    out = sim_process("run", str(path), "--out", str(tmp_path), "--workers", "1", "--quiet",
                      module="sim.commands.cli", cwd=tmp_path)
    assert out.returncode == 2
    line = one_error_line(out.stderr)
    assert str(path) in line and "'Busy'" in line and "netwrk_mu" in line
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("*.csv"))


def test_cli_reports_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sim.commands.cli import main

    missing = tmp_path / "absent.toml"
    assert main(["run", str(missing), "--out", str(tmp_path), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("error: ")
    assert str(missing) in captured.err and "no such file" in captured.err


@pytest.mark.parametrize("command", ["run", "explore"])
def test_a_toml_nested_fifty_thousand_levels_is_one_line(tmp_path: Path, command: str) -> None:
    # tomllib parses nested arrays and inline tables recursively: a RecursionError, caught where
    # the file is parsed, for every command that reads a config.
    path = write(tmp_path, "x = " + "[" * 50_000 + "\n")
    assert "is too deeply nested to read" in config_error(path)
    out = sim_process(command, str(path), "--out", str(tmp_path / "out"), "--quiet", cwd=tmp_path)
    assert out.returncode == 2
    line = one_error_line(out.stderr)
    assert str(path) in line and "too deeply nested" in line
    assert not (tmp_path / "out").exists()


def test_a_config_with_a_utf8_byte_order_mark_loads(tmp_path: Path) -> None:
    # Some Windows editors save UTF-8 with a BOM first; it is no TOML, and no mistake either.
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + toml_text(table()).encode("utf-8"))
    assert load_config(path).simulations[0].title == "Busy"


# --- every mistake at once, defaults, finite arithmetic ----------------------------------------

def test_every_mistake_is_reported_at_once_one_line_each(tmp_path: Path) -> None:
    bad = table(netwrk_mu=3.0, repeat=0, strategies=[{"type": "Expo", "base": "2"},
                                                     {"type": "Nope"}])
    second = table(title="Other", control="LockServer")
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, toml_text(bad, second)))
    lines = info.value.lines()
    assert str(info.value).splitlines() == lines
    keys = [("Busy", "netwrk_mu"), ("Busy", "repeat"), ("Busy", "strategies[0].base"),
            ("Busy", "strategies[0].cap"), ("Busy", "strategies[1].type"), ("Other", "control")]
    assert len(lines) == len(keys), lines
    for line, (title, key) in zip(lines, keys):
        assert f"simulation {title!r}: key {key!r}" in line


def test_an_unknown_control_does_not_flag_its_parameters(tmp_path: Path) -> None:
    # write_mu and write_sigma belong to the intended control: one mistake, one line.
    message = assert_located(tmp_path, table(control="LockServer"), key="control")
    assert "write_mu" not in message


def test_cli_prints_every_mistake_on_its_own_line(tmp_path: Path) -> None:
    path = write(tmp_path, toml_text(table(netwrk_mu=3.0, repeat=0)))
    out = sim_process("run", str(path), "--out", str(tmp_path), "--quiet", module="sim.commands.cli", cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("error: ") for line in lines)
    assert "'netwrk_mu'" in lines[0] and "'repeat'" in lines[1]


def test_work_to_duration_defaults_to_one(tmp_path: Path) -> None:
    spec = load_config(write(tmp_path, toml_text(table(work_to_duration=None)))).simulations[0]
    assert spec.work_to_duration == 1.0


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_seed_outside_its_range_names_the_range(tmp_path: Path, seed: int) -> None:
    assert_located(tmp_path, table(seed=seed), key="seed", contains=f"from 0 to {2**64 - 1}")


@pytest.mark.parametrize("key, overrides", [
    ("network_mu", {"network_mu": 1e308}),
    ("work_to_duration", {"work_to_duration": 1e308}),
    ("write_mu", {"write_mu": 1e308}),
    ("network_sigma", {"network_sigma": 10**400}),  # an integer too big for a float
    ("strategies[0].constant", {"strategies": [{"type": "Constant", "constant": 1e308}]}),
])
def test_values_whose_use_overflows_are_refused(tmp_path: Path, key: str, overrides: dict) -> None:
    # 1e15 is the bound (sim.vocabulary.bounds.MAX_TIME): beyond it a delay of 1 no longer moves the clock.
    assert_located(tmp_path, table(**overrides), key=key, contains="at most 1e+15")


def test_huge_throttling_window_is_refused(tmp_path: Path) -> None:
    assert_located(tmp_path, table("ThrottlingServer", window=1e308), key="window", contains="at most")


# --- special files ------------------------------------------------------------------------------

def test_a_fifo_config_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "sims.toml"
    os.mkfifo(fifo)  # reading it would block for ever
    assert "FIFO" in config_error(fifo)


def test_a_character_device_config_is_refused() -> None:
    with pytest.raises(ConfigError, match="/dev/zero: is a character device"):
        load_config(Path("/dev/zero"))  # reading it grew to a MemoryError at 7.4 GB


def test_an_oversized_config_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sim.settings.config

    monkeypatch.setattr(sim.settings.config, "MAX_CONFIG_BYTES", 2**20)
    path = write(tmp_path, "# padding\n" * 200_000)  # 2 MB of comments
    assert "larger than 1 MiB" in config_error(path)
