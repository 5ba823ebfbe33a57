"""Phase portraits: runs that start from a state, drift and return estimates, the CSV and PNG,
and ``backoff-sim phase`` end to end (its one-line mistakes too)."""

from __future__ import annotations

import csv
from heapq import heappop
from pathlib import Path

import pytest

from sim.commands import cli
from sim.settings.config import load_config, parse_config, parse_toml
from sim.vocabulary.errors import UserError
from sim.models.initial import InitialState
from sim.phase.attempt import outage_attempt
from sim.phase.csv import COLUMNS
from sim.phase.estimate import CellTask, Healthy, phase_spec, replicate, run_cell
from sim.phase.portrait import PhaseSettings, compute_portrait
from sim.runs.engine import Run, _due_first, run_metrics, start_run
from support import PNG_MAGIC, one_error_line

FIXTURES = Path(__file__).parent / "fixtures"
OUTAGE = FIXTURES / "tiny_outage.toml"

# An M/D/1-like server: one slot, service time 1, a queue with room for everyone, no timeout
# (so no retries unless a test starts clients in backoff), 100 clients thinking 200 on average.
MD1 = """
seed = 5
[[simulation]]
title = "MD1"
clients = [100]
repeat = 1
network_mu = 0.0
network_sigma = 0.0
work_to_duration = 0.0
control = "QueueServer"
concurrency = 1
service_time = 1.0
queue_size = 1000
workload = "poisson"
think_time = 200.0
horizon = 1000.0
strategies = [{ type = "Constant", constant = 2.0, name = "constant" }]
"""


def md1():
    return parse_config(parse_toml(MD1), "md1.toml").simulations[0]


def state_at_zero(spec, state: InitialState) -> tuple[int, int]:
    """The server's work and the clients in backoff once every item due at t = 0 has run."""
    wiring, side = start_run(spec, spec.strategies[0].chain, max(spec.clients), 0, state)
    while (queue := _due_first(wiring)) is not None and queue[0][0] == 0.0:  # heap and ``near``
        _, _, handler, c, a = heappop(queue)
        handler(0.0, c, a)
    return sum(wiring.server_state()), side.in_backoff


@pytest.mark.parametrize("work, orbit", [(0, 0), (7, 0), (0, 12), (30, 40), (150, 10)])
def test_a_run_starts_with_the_work_and_orbit_asked(work: int, orbit: int) -> None:
    # 150 + 10 > 100 clients: the work beyond the clients left is orphan requests.
    assert state_at_zero(md1(), InitialState(work, orbit)) == (work, orbit)


def test_a_latency_server_starts_with_the_work_and_orbit_asked() -> None:
    spec = phase_spec(load_config(OUTAGE).simulations[0], 30000.0)
    assert state_at_zero(spec, InitialState(120, 80, 3)) == (120, 80)


def test_the_empty_state_is_the_run_it_always_was() -> None:
    # Started from (0, 0), every client begins at its usual first start and no stream but the
    # state's own moves: the same run as without a state (bench/csv_hashes.py checks that every
    # shipped CSV is unchanged without one).
    spec = load_config(OUTAGE).simulations[0]
    chain = spec.strategy("expo").chain
    wiring, side = start_run(spec, chain, 30, 0, InitialState(0, 0))
    heap, near = wiring.heap, wiring.near
    while heap or near:
        t, _, handler, c, a = heappop(near if near and (not heap or near[0] < heap[0]) else heap)
        handler(t, c, a)
    m = run_metrics(spec, chain, 30, 0)
    assert (side.work, side.counts["successes"], side.counts["timeouts"]) == (m.work, m.successes, m.timeouts)


def test_a_bad_state_is_one_clear_mistake() -> None:
    with pytest.raises(UserError, match="orbit must be a whole number, 0 or more"):
        InitialState(1, -1)
    with pytest.raises(UserError, match="attempt must be a whole number, 1 or more"):
        InitialState(1, 1, 0)


def test_drift_of_work_is_negative_above_capacity_and_the_orbit_drains() -> None:
    # Work w = 40 queued at a server serving 1 per time unit: over h = 10 it serves 10
    # (departures mu*h). Arrivals come from the 60 clients not waiting, each every 200 on
    # average: 60/200 * 10 = 3. So E[dw]/h ~ (3 - 10)/10 = -0.7 < 0, and no call fails (no
    # timeout), so the orbit stays 0. Clients in backoff (constant 2 < h) all send again
    # within the horizon: the orbit's drift is -orbit/h.
    spec = phase_spec(md1(), 1000.0)
    r = replicate(spec, "constant", 100, InitialState(40, 0), 0, 10.0, 10.0, 5.0, None)
    assert (r.work - 40) / 10 < -0.3 and r.orbit == 0
    r = replicate(spec, "constant", 100, InitialState(0, 30), 1, 10.0, 10.0, 5.0, None)
    assert r.orbit == 0


def test_a_cell_stops_at_half_its_runs_when_they_agree() -> None:
    spec = phase_spec(md1(), 1000.0)
    task = CellTask(spec, "constant", 100, 0, 5, 0, 1, 8, 10.0, 200.0, 5.0, Healthy(10, 5), 2000)
    result = run_cell(task)
    assert len(result.returned) == 4 and all(result.returned)


def test_the_outage_attempt_follows_the_strategy() -> None:
    spec = load_config(OUTAGE).simulations[0]
    # 15 s outage, 2 s timeouts: constant 100 ms starts an attempt every 2.1 s (8 by 15 s);
    # exponential backoff fewer.
    assert outage_attempt(spec, "constant") == 8
    assert 1 < outage_attempt(spec, "expo") < 8
    assert outage_attempt(md1(), "constant") == 1  # no outage


def test_the_portrait_estimates_every_cell(tmp_path: Path) -> None:
    spec = load_config(OUTAGE).simulations[0]
    p = compute_portrait(spec, "constant", PhaseSettings(size=3, runs=2, clients=30))
    assert [(c.work, c.orbit) for c in p.cells] == [(w, o) for o in (0, 15, 30) for w in (0, 15, 30)]
    assert all(0 <= c.return_probability <= 1 and c.runs in (1, 2) for c in p.cells)
    assert p.cells[0].return_probability == 1.0  # the empty state is healthy


def test_phase_writes_the_csv_png_and_provenance(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert cli.main(["phase", str(OUTAGE), "--out", str(out), "--grid", "3", "--runs", "2",
                     "--clients", "30", "-j", "1", "-s", "expo"]) == 0
    names = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert names == ["Tiny_outage_phase.csv", "Tiny_outage_phase.png", "Tiny_outage_phase_provenance.json"]
    rows = list(csv.DictReader((out / "Tiny_outage_phase.csv").open()))
    assert tuple(rows[0]) == COLUMNS and len(rows) == 9 and {r["strategy"] for r in rows} == {"expo"}
    assert (out / "Tiny_outage_phase.png").read_bytes()[:8] == PNG_MAGIC
    assert "'expo': " in capsys.readouterr().out


@pytest.mark.parametrize("config, strategy, clients, name", [
    (OUTAGE, "constant", "30", "Tiny_outage_phase.csv"),
    (OUTAGE.parent / "tiny_pool.toml", "3 attempts", "12", "Tiny_pool_phase.csv"),  # open traffic
])
def test_phase_is_the_same_on_one_worker_and_two(tmp_path: Path, config: Path, strategy: str,
                                                  clients: str, name: str) -> None:
    # A 5x5 grid: its coarse cells first, then the others, some inferred (``sim.phase.refine``).
    args = [str(config), "--grid", "5", "--runs", "2", "--clients", clients, "-s", strategy, "-q"]
    assert cli.main(["phase", *args, "--out", str(tmp_path / "a"), "-j", "1"]) == 0
    assert cli.main(["phase", *args, "--out", str(tmp_path / "b"), "-j", "2"]) == 0
    assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize("args, message", [
    (["--grid", "1"], "argument --grid: expected a whole number from 2 to 200"),
    (["--horizon", "0"], "argument --horizon: expected a positive time"),
    (["-s", "nope"], "--strategy 'nope': simulation 'Tiny outage' has no such strategy"),
    (["--horizon", "5000", "--limit", "100"], "the time limit (100) is shorter than the horizon (5000)"),
])
def test_phase_mistakes_are_one_line_exit_2(args: list[str], message: str, tmp_path: Path, capsys) -> None:
    try:
        status = cli.main(["phase", str(OUTAGE), "--out", str(tmp_path), "-j", "1", *args])
    except SystemExit as exc:  # the parser's mistakes end there, one line and status 2
        status = exc.code
    assert status == 2
    assert message in one_error_line(capsys.readouterr().err)
    assert not list(tmp_path.glob("*_phase.*"))


def test_phase_of_a_config_without_a_replying_server_is_one_line(tmp_path: Path, capsys) -> None:
    assert cli.main(["phase", str(FIXTURES / "tiny.toml"), "--out", str(tmp_path)]) == 2
    assert "a phase portrait needs a server that replies" in one_error_line(capsys.readouterr().err)


@pytest.mark.slow
def test_server_outage_constant_retries_have_two_basins_and_backoff_a_larger_healthy_one() -> None:
    spec = load_config(Path(__file__).parent.parent / "examples" / "server_outage.toml").simulations[0]
    settings = PhaseSettings(size=6, runs=4)
    constant = compute_portrait(spec, "constant 100ms", settings)
    expo = compute_portrait(spec, "expo backoff", settings)
    assert constant.basins == 2
    assert constant.probabilities[0, 0] == 1.0 and constant.probabilities[-1, -1] == 0.0
    assert (expo.probabilities >= 0.5).mean() > (constant.probabilities >= 0.5).mean() + 0.3


def test_the_path_of_a_run_is_the_engines_own_state_at_every_event() -> None:
    # Stepping a run with an outage: after each event, the counted work is the server's and
    # the counted orbit the clients in backoff (but at a timeout, whose backoff is the next
    # event at the same instant: the engine counts the client as not waiting already).
    from sim.analysis.phase_path import phase_path
    from sim.core import events as ev

    spec = load_config(OUTAGE).simulations[0]
    run = Run(spec, "constant", 30, 0)
    seen = []
    while len(run.history) < 3000 and (step := run.step()) is not None:
        seen.append((step[2], sum(run._wiring.server_state()), run._side.in_backoff))
    path = phase_path(run.history)
    for i, (code, work, orbit) in enumerate(seen):
        assert path.work[i] == work
        if code != ev.CLIENT_TIMES_OUT:
            assert path.orbit[i] == orbit
    assert path.upto(len(seen) - 1, 10)[-1][1:] == (seen[-1][1], seen[-1][2])


def test_the_summary_line_gives_the_limit_as_the_png_titles_it() -> None:
    # The walk-through of issue 39 read "within 76056 ms" on the line and "76,056 ms" in the PNG.
    from sim.commands.phase import _summary
    from sim.export.palette import load_palette
    from sim.phase.figure import phase_figure

    spec = load_config(OUTAGE).simulations[0]
    p = compute_portrait(spec, "constant", PhaseSettings(size=3, runs=2, clients=30, limit=12_345.0))
    title = phase_figure([p], load_palette()).axes[0].get_title()
    assert "within 12,345 ms" in title
    assert "within 12,345 ms;" in _summary(p)
