"""What ``backoff-sim explore`` prints for a map (issue 23, item 9): one number of decimals per
table so the columns line up, and a table for each of ``also``'s metrics beside the main one."""

from __future__ import annotations

import re
from pathlib import Path

from sim.commands import cli
from sim.exploration.report import decimals_for
from support import write_config

ONE_AXIS = """
seed = 1

[[simulation]]
title = "Flaky map"
clients = [5]
repeat = 2
network_mu = 5.0
network_sigma = 1.0
work_to_duration = 0.0
control = "FlakyServer"
failure_rate = 0.1
workload = "poisson"
think_time = 50.0
horizon = 1000.0
strategies = [
  { type = "Constant", constant = 0.0, max_attempts = 1, name = "no retries" },
  { type = "Constant", constant = 0.0, max_attempts = 4, name = "3 retries" },
]

[simulation.explore]
axes = [{ key = "failure_rate", values = [0.0, 0.3] }]
metric = "amplification"
also = ["success_rate"]
"""


def test_decimals_show_three_digits_of_the_largest_mean_and_the_typical_ci() -> None:
    assert decimals_for([1.0, 1.87], [0.017, 0.0043, 0.0]) == 3  # the CI's median 0.017: 0.02
    assert decimals_for([1.0, 1.87], [0.0001]) == 4  # at most two more than the mean's 2
    assert decimals_for([12_345.0, 800.0], [150.0, 90.0]) == 0
    assert decimals_for([float("nan")], [float("nan")]) == 0


def test_a_one_axis_map_prints_its_metric_and_each_also_with_even_decimals(tmp_path: Path, capsys) -> None:
    config = write_config(tmp_path / "map.toml", ONE_AXIS)
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "out"), "--workers", "1", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "Flaky map: amplification, mean ± 95% CI" in out
    assert "Flaky map: success_rate, mean ± 95% CI" in out
    cells = re.findall(r"(\d[\d,]*\.?\d*) ± (\d[\d,]*\.?\d*)", out.split("success_rate")[0])
    assert cells
    places = {len(m.partition(".")[2]) for m, ci in cells} | {len(ci.partition(".")[2]) for m, ci in cells}
    assert len(places) == 1  # every mean and CI of the table with the same decimals
