"""The files a config names, refused in one line (issue 40): a NUL byte in any of their paths
(item 6), a trace whose quote never closes (item 7), and service times or load-curve multipliers
beyond the bound of every time and factor, ``sim.vocabulary.bounds.MAX_TIME`` (item 15)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import one_error_line, sim_process, toml_text, write_config

from sim.vocabulary.bounds import MAX_TIME
from sim.settings.config import load_config
from sim.vocabulary.errors import ConfigError

POOL: dict[str, Any] = {
    "title": "Busy", "clients": [4], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.2,
    "control": "PoolServer", "workers": 2, "service_time": 10.0, "workload": "open",
    "think_time": 200.0, "horizon": 5000.0, "timeout": 100.0,
    "strategies": [{"type": "Constant", "constant": 5.0, "max_attempts": 3}],
}
EMPIRICAL = {"service_distribution": "empirical", "service_file": "times.csv", "service_time": None}
TRACE = {"workload": "trace", "trace_file": "calls.csv", "think_time": None}


def config(tmp_path: Path, tiers: str = "", **changes: Any) -> Path:
    table = {k: v for k, v in {**POOL, **changes}.items() if v is not None}
    return write_config(tmp_path / "pool.toml", toml_text(table) + tiers)


def refused(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    (line,) = info.value.lines()
    assert str(path) in line and "simulation 'Busy'" in line
    return line


TIER = """
[[simulation.tiers]]
control = "PoolServer"
workers = 2
service_distribution = "empirical"
service_file = {name}
timeout = 100.0
retry = {{ type = "Constant", constant = 1.0, max_attempts = 2 }}
"""


@pytest.mark.parametrize("key, changes", [
    ("service_file", {**EMPIRICAL, "service_file": "ti\0mes.csv"}),
    ("trace_file", {**TRACE, "trace_file": "ca\0lls.csv"}),
    ("load_curve_file", {"load_curve_file": "cu\0rve.csv"}),
])
def test_a_nul_byte_in_a_file_name_is_one_line(tmp_path: Path, key: str, changes: dict) -> None:
    line = refused(config(tmp_path, **changes))
    assert f"key {key!r}" in line and "NUL" in line


def test_a_nul_byte_in_a_tier_s_service_file_is_one_line(tmp_path: Path) -> None:
    line = refused(config(tmp_path, TIER.format(name='"ti\\u0000mes.csv"')))
    assert "tiers[0].service_file" in line and "NUL" in line


def test_a_nul_byte_on_the_command_line_is_exit_2_without_traceback(tmp_path: Path) -> None:
    path = config(tmp_path, **{**EMPIRICAL, "service_file": "ti\0mes.csv"})
    result = sim_process("run", str(path), "--out", str(tmp_path / "out"), "--quiet")
    assert result.returncode == 2 and "NUL" in one_error_line(result.stderr)


def test_an_unbalanced_quote_in_a_trace_is_refused_naming_its_line(tmp_path: Path) -> None:
    # 999 calls after the quote opened on line 3 were read as one cell.
    rows = "start,client\n1,a\n2,\"b\n" + "".join(f"{3 + i},c{i}\n" for i in range(999))
    (tmp_path / "calls.csv").write_text(rows, "utf-8")
    line = refused(config(tmp_path, **TRACE))
    assert "key 'trace_file'" in line and "line 3" in line and "quote" in line


def test_a_quoted_cell_on_one_line_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "calls.csv").write_text('start,client\n1,"a,b"\n2,"c"\n', "utf-8")
    spec = load_config(config(tmp_path, **TRACE)).simulations[0]
    assert spec.workload.calls_before(1000.0) == 2


@pytest.mark.parametrize("value", ["1e16", str(MAX_TIME * 2)])
def test_a_service_time_beyond_the_bound_is_refused(tmp_path: Path, value: str) -> None:
    (tmp_path / "times.csv").write_text(f"1.0\n{value}\n", "utf-8")
    line = refused(config(tmp_path, **EMPIRICAL))
    assert "key 'service_file'" in line and "line 2" in line and f"{MAX_TIME:g}" in line


def test_a_service_time_at_the_bound_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "times.csv").write_text(f"1.0\n{MAX_TIME!r}\n", "utf-8")
    assert load_config(config(tmp_path, **EMPIRICAL)).simulations[0].control.samples.max() == MAX_TIME


def test_a_load_curve_multiplier_beyond_the_bound_is_refused(tmp_path: Path) -> None:
    (tmp_path / "curve.csv").write_text("1, 1.0\n10, 1e16\n", "utf-8")
    line = refused(config(tmp_path, load_curve_file="curve.csv"))
    assert "key 'load_curve_file'" in line and "line 2" in line and f"{MAX_TIME:g}" in line


# --- item 5: a lognormal of extreme spread ---------------------------------------------------

LOGNORMAL = {"service_distribution": "lognormal", "service_time": 1e-25, "service_p99": 1e15}


def test_an_extreme_lognormal_has_no_fluid_form_rather_than_a_crash(tmp_path: Path) -> None:
    from sim.fluid.express import fluid_case

    # median 1e-25, p99 1e15: σ = ln(1e40) / 2.326 = 39.6, so the mean median·e^(σ²/2) is
    # e^(-57.6 + 784) = e^726, beyond the largest float (e^709.8); every draw stays finite
    # (the median's e^(8σ) is e^259), so run accepts it.
    spec = load_config(config(tmp_path, **LOGNORMAL)).simulations[0]
    assert spec.control.mean_service == float("inf")
    case = fluid_case(spec, 0)
    assert isinstance(case, str) and "lognormal" in case


@pytest.mark.slow  # two whole maps; the load-time refusal of an overflowing sigma stays
def test_explore_adaptive_and_fluid_simulate_an_extreme_lognormal(tmp_path: Path) -> None:
    table = {k: v for k, v in {**POOL, **LOGNORMAL, "horizon": 500.0, "clients": [2]}.items()
             if v is not None}
    text = toml_text(table) + '\n[simulation.explore]\naxes = [{ key = "think_time", values = [100.0, 200.0] }]\n'
    path = write_config(tmp_path / "pool.toml", text)
    for method in ("adaptive", "fluid"):
        result = sim_process("explore", str(path), "--out", str(tmp_path / method), "-q", "--no-cache",
                             "-j", "1", "--method", method)
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize("median", [5e-324, 1e-300])
def test_a_lognormal_whose_draws_overflow_is_refused_naming_both_keys(tmp_path: Path, median: float) -> None:
    # σ = ln(1e15 / 1e-300) / 2.326 = 312 (5e-324: ln overflows, σ infinite): a draw at z = 8
    # (about 1 in 10^15) is e^(-690.8 + 2496), infinite; below the median most are 0.
    line = refused(config(tmp_path, **{**LOGNORMAL, "service_time": median}))
    assert "service_p99" in line and "service_time" in line and "overflow" in line
