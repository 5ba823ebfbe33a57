"""PoolServer's adaptive admission limit (``concurrency_limit``) and load-dependent slowdown
(``factor``/``k``/``slowdown_above``, ``load_curve_file``): config mistakes in one line, what
the limiter admits and drops, and the slowdown against cases whose answer is known exactly.
The algorithms themselves are checked against the library's tests in test_adaptive_limits.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_pool_server import POOL, codes_of, drop_reasons, error, load

from sim.core import events as ev
from sim.runs.engine import record_run

# Saturated: 20 clients, each a call every 60 (open), a 2-worker pool of 10 per request:
# offered 20/60 = 0.33 per unit against a capacity of 2/10 = 0.2.
BUSY: dict[str, Any] = {"think_time": 60.0, "queue_timeout": 30.0}


def run_of(tmp_path: Path, **changes: Any):
    spec = load(tmp_path, **{**BUSY, **changes}).simulations[0]
    return record_run(spec, spec.labels[0], 20, 0)


def details(run, code: int) -> np.ndarray:
    packed = np.asarray(run.history.packed)
    return (packed[(packed & ev.CODE_MASK) == code] >> ev.DETAIL_SHIFT) - 1


# --- config ----------------------------------------------------------------------------------


def test_a_number_for_concurrency_limit_says_poolserver_takes_a_table(tmp_path: Path) -> None:
    message = error(tmp_path, "concurrency_limit", "adaptive admission limit, a table", concurrency_limit=30)
    assert 'concurrency_limit = { algorithm = "aimd" }' in message and "LatencyServer" in message


@pytest.mark.parametrize("table, key, contains", [
    ({"algorithm": "cubic"}, "concurrency_limit.algorithm", "must be one of 'aimd', 'gradient2', 'vegas'"),
    ({}, "concurrency_limit.algorithm", "is missing"),
    ({"algorithm": "aimd", "smoothing": 0.5}, "concurrency_limit.smoothing", "not a parameter of the aimd limit"),
    ({"algorithm": "aimd", "backof_ratio": 0.5}, "concurrency_limit.backof_ratio", "backoff_ratio"),
    ({"algorithm": "vegas", "probe_multiplier": 2.5}, "concurrency_limit.probe_multiplier", "must be an integer"),
    ({"algorithm": "gradient2", "smoothing": "fast"}, "concurrency_limit.smoothing", "must be a number"),
])
def test_a_bad_limit_table_names_its_key(tmp_path: Path, table: dict, key: str, contains: str) -> None:
    error(tmp_path, key, contains, concurrency_limit=table)


@pytest.mark.parametrize("changes, key, contains", [
    ({"factor": 2.0}, "k", "the slowdown law needs factor, k and slowdown_above"),
    ({"factor": 0.5, "k": 1.0, "slowdown_above": 1}, "factor", ">= 1"),
    ({"factor": 2.0, "k": 0.0, "slowdown_above": 1}, "k", "> 0"),
    ({"factor": 2.0, "k": 1.0, "slowdown_above": 1, "load_curve_file": "c.csv"}, "factor", "keep one"),
])
def test_a_bad_slowdown_law_names_its_key(tmp_path: Path, changes: dict, key: str, contains: str) -> None:
    (tmp_path / "c.csv").write_text("1,1\n", "utf-8")
    error(tmp_path, key, contains, **changes)


@pytest.mark.parametrize("content, contains", [
    (None, "c.csv: no such file"),
    ("", "c.csv: has no rows"),
    ("1,1\n2,x\n", "c.csv line 2: 'x' is not a number"),
    ("1,1\n2\n", "c.csv line 2: 1 cells"),
    ("1,1\n-2,3\n", "c.csv line 2: concurrency -2 is negative"),
    ("1,1\n\n3,0\n", "c.csv line 3: multiplier 0 must be > 0"),
    ("4,1\n2,3\n", "c.csv line 2: concurrency 2 does not increase"),
    ("load,mult\n1,1\n", "c.csv line 1: a CSV header without 'concurrency' and 'multiplier'"),
])
def test_a_bad_load_curve_file_is_one_line_naming_the_file_and_line(tmp_path: Path, content: str | None,
                                                                    contains: str) -> None:
    if content is not None:
        (tmp_path / "c.csv").write_text(content, "utf-8")
    error(tmp_path, "load_curve_file", contains, load_curve_file="c.csv")


# --- the limiter -------------------------------------------------------------------------------


def test_a_fixed_limit_caps_queued_plus_in_service_and_drops_the_rest(tmp_path: Path) -> None:
    # AIMD held at 3 (min = max = initial): at most 3 admitted at once, so with 2 workers at most
    # one waits; the saturated pool (offered 0.33 per unit against 0.2) must refuse the rest.
    run = run_of(tmp_path, concurrency_limit={"algorithm": "aimd", "initial_limit": 3, "min_limit": 3,
                                              "max_limit": 3})
    assert details(run, ev.SERVER_QUEUES).max() == 1
    reasons = drop_reasons(run)
    assert reasons["limiter"] > 0 and reasons["queue_timeout"] == 0  # a wait of at most 10 < 30
    # Each limiter drop is answered: the client hears a rejection, as a queue timeout's.
    assert codes_of(run)["server_drops"] == reasons["limiter"]


def test_a_generous_limit_drops_nothing_at_light_load(tmp_path: Path) -> None:
    # Offered 20/600 = 0.033 per unit against 0.2: rarely more than 2 in the server, far below
    # the default limit of 20, so the limiter refuses nothing and the run is the same as without.
    light = {"think_time": 600.0}
    plain = run_of(tmp_path, **light)
    for algorithm in ("aimd", "gradient2", "vegas"):
        limited = run_of(tmp_path, **light, concurrency_limit={"algorithm": algorithm, "min_limit": 1}
                         if algorithm != "vegas" else {"algorithm": algorithm})
        assert drop_reasons(limited)["limiter"] == 0
        assert np.array_equal(np.asarray(limited.history.packed), np.asarray(plain.history.packed))


@pytest.mark.parametrize("algorithm", ["aimd", "gradient2", "vegas"])
def test_under_overload_each_limiter_sheds_and_aimd_and_vegas_cut_queue_timeouts(
        tmp_path: Path, algorithm: str) -> None:
    # Saturated (see BUSY) with a 30 queue timeout: without a limit the queue grows until requests
    # time out in it. AIMD backs off on each queue-timeout drop (x0.9) and Vegas on its queue
    # estimate (RTT over the no-load RTT), so both refuse at the door most of what would have
    # timed out in the queue. Gradient2 only sheds a little: its gradient tolerates an RTT up to
    # rtt_tolerance = 1.5 times its long-term average, and each sample adds queue_size = 4.
    # Measured over 20 repetitions at think_time 40, 60 and 90 (offered 2.5, 1.7 and 1.1 times
    # capacity), queue-timeout drops without a limit / AIMD / Gradient2 / Vegas (min-max):
    # 4431-5110 / 491-499 / 4295-4965 / 198-414; 2182-2697 / 485-502 / 1928-2582 / 151-352;
    # 507-1005 / 268-391 / 447-1008 / 16-157: AIMD and Vegas below the plain pool in every run,
    # Gradient2 overlapping it (and at think_time 90 some of its runs refuse nothing).
    # min_limit 1, so that the limits can go below the 2 workers + a queue's worth.
    plain = drop_reasons(run_of(tmp_path))
    table = {"algorithm": algorithm, "initial_limit": 4}
    if algorithm != "vegas":
        table["min_limit"] = 1
    limited = drop_reasons(run_of(tmp_path, concurrency_limit=table))
    assert limited["limiter"] > 0
    if algorithm != "gradient2":
        assert limited["queue_timeout"] < plain["queue_timeout"] / 2


def test_vegas_is_deterministic_and_its_jitter_has_a_stream_of_its_own(tmp_path: Path) -> None:
    vegas = {"concurrency_limit": {"algorithm": "vegas", "initial_limit": 4, "probe_multiplier": 1}}
    first, second = run_of(tmp_path, **vegas), run_of(tmp_path, **vegas)
    assert np.array_equal(np.asarray(first.history.packed), np.asarray(second.history.packed))
    assert np.array_equal(np.asarray(first.history.times), np.asarray(second.history.times))


# --- slowdown under load ----------------------------------------------------------------------


def test_a_flat_curve_is_a_longer_service_time_exactly(tmp_path: Path) -> None:
    # A curve of one row (multiplier 3 everywhere) makes every constant service of 10 take
    # 10 * 3 * 1.0 = 30.0 exactly: the same run, event for event, as service_time = 30.
    (tmp_path / "flat.csv").write_text("concurrency,multiplier\n0,3\n", "utf-8")
    curved = run_of(tmp_path, load_curve_file="flat.csv")
    longer = run_of(tmp_path, service_time=30.0)
    assert np.array_equal(np.asarray(curved.history.packed), np.asarray(longer.history.packed))
    assert np.array_equal(np.asarray(curved.history.times), np.asarray(longer.history.times))


def test_a_law_that_starts_above_the_workers_never_slows(tmp_path: Path) -> None:
    # At most ``workers`` (2) are ever in service, so a law from slowdown_above = 2 is never used.
    plain = run_of(tmp_path)
    law = run_of(tmp_path, factor=5.0, k=1.0, slowdown_above=2)
    assert np.array_equal(np.asarray(law.history.packed), np.asarray(plain.history.packed))


def test_the_law_multiplies_service_by_the_concurrency_at_start(tmp_path: Path) -> None:
    # factor 2, k 1, above 1: a service starting alone takes 10, one starting beside another 20.
    # Saturated, nearly every start has the other worker busy, so the two workers complete
    # about 2 * horizon / 20 = 500 requests instead of 2 * 5000 / 10 = 1000 (998 counted: the
    # first service starts after the network delay and the last ones run past the horizon).
    plain = codes_of(run_of(tmp_path))["server_completes"]
    slowed = codes_of(run_of(tmp_path, factor=2.0, k=1.0, slowdown_above=1))["server_completes"]
    assert plain == 998
    assert 490 <= slowed <= 505


def test_the_curve_is_interpolated_between_rows_and_flat_beyond() -> None:
    from sim.models.load_curve import curve_multiplier, law_multiplier
    curve = curve_multiplier((1.0, 3.0, 5.0), (1.0, 2.0, 6.0))
    assert [curve(c) for c in (0, 1, 2, 3, 4, 5, 9)] == [1.0, 1.0, 1.5, 2.0, 4.0, 6.0, 6.0]
    law = law_multiplier(2, 1.05, 15.0)  # study 003's figures: 1.05^((c - limit)/15)
    assert [law(c) for c in (1, 2)] == [1.0, 1.0]
    assert law(32) == pytest.approx(1.05 ** 2)


def test_explore_varies_a_limit_parameter_and_a_defence(tmp_path: Path) -> None:
    import csv

    from support import section, toml_text, write_config

    from sim.commands import cli
    table = {**POOL, **BUSY, "horizon": 2000.0,
             "concurrency_limit": {"algorithm": "aimd", "min_limit": 1, "initial_limit": 4}}
    config = write_config(tmp_path / "map.toml", toml_text(table) + section("explore", {"axes": [
        {"key": "concurrency_limit.backoff_ratio", "values": [0.5, 0.9]},
        {"key": "queue_timeout", "values": [10.0, 30.0]}]}))
    assert cli.main(["explore", str(config), "--out", str(tmp_path / "out"), "-j", "1"]) == 0
    with open(tmp_path / "out" / "Busy_explore.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["concurrency_limit.backoff_ratio"], r["queue_timeout"]) for r in rows] == [
        ("0.5", "10.0"), ("0.5", "30.0"), ("0.9", "10.0"), ("0.9", "30.0")]
    # The cells differ: the backoff ratio and the queue timeout reach the run.
    assert len({r["work_mean"] for r in rows}) == 4
