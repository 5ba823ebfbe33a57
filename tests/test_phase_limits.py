"""``backoff-sim phase`` within bounds: refused before any work when the machine cannot hold or
finish it (the estimate ``run`` uses), every numeric flag bounded, the time limit at most the
simulation's horizon, progress from the first run, and pilot runs that share no random numbers
with any cell's (issue 40, items 1, 2 and 14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.commands import cli
from sim.settings.config import load_config
from sim.phase import portrait
from sim.phase.cost import check_phase_resources, first_runs, portrait_cost
from sim.phase.estimate import Replicate, phase_spec
from sim.phase.portrait import PhaseSettings, compute_portrait, healthy_state, resolve
from sim.vocabulary.errors import ConfigError
from sim.runs.resources import BYTES_PER_CLIENT, EVENTS_LIMIT, expected_events
from support import one_error_line

OUTAGE = Path(__file__).parent / "fixtures" / "tiny_outage.toml"


def spec():
    return load_config(OUTAGE).simulations[0]


def phase_status(args: list[str], tmp_path: Path) -> int:
    try:
        return cli.main(["phase", str(OUTAGE), "--out", str(tmp_path), *args])
    except SystemExit as exc:  # the parser's mistakes end there
        return exc.code


def test_ten_million_clients_are_refused_before_any_work(tmp_path: Path, capsys) -> None:
    # 10^7 clients hold 10^7 x BYTES_PER_CLIENT = 60 GB in one run: more than this machine's
    # memory (the test machines have well under 60 GB), so refused even with --force.
    assert phase_status(["--clients", "10000000", "-s", "constant", "-j", "1", "--force"], tmp_path) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "'Tiny outage'" in line and "memory" in line and "--clients" in line
    assert not list(tmp_path.iterdir())


def test_a_huge_grid_of_many_runs_is_refused_unless_forced() -> None:
    s = spec()
    r = resolve(s, PhaseSettings(size=200, runs=10_000), "constant")
    # The same estimate as run's: each pilot run at least expected_events of the simulation
    # cut at half the time limit, each of the cells' first runs cut at the drift's horizon.
    first = 200 ** 2 * first_runs(r.runs)
    cost = portrait_cost(s, r, workers=2)
    assert cost.runs == r.runs + first
    assert cost.events == pytest.approx(r.runs * expected_events(phase_spec(s, r.limit / 2), r.clients)
                                        + first * expected_events(phase_spec(s, r.horizon), r.clients))
    assert cost.events > EVENTS_LIMIT
    plenty = (10**15, 10**15)
    with pytest.raises(ConfigError) as info:
        check_phase_resources([(s, "constant", r)], workers=2, memory=plenty)
    assert "events" in str(info.value) and "--force" in str(info.value) and "--grid" in str(info.value)
    check_phase_resources([(s, "constant", r)], workers=2, memory=plenty, force=True)


def test_memory_is_each_worker_s_run_of_every_client() -> None:
    s = spec()
    r = resolve(s, PhaseSettings(size=3, runs=2, clients=1000), "constant")
    assert portrait_cost(s, r, workers=2).memory >= 2 * 1000 * BYTES_PER_CLIENT
    need = portrait_cost(s, r, workers=2).memory
    with pytest.raises(ConfigError, match="available now"):  # soft: the memory available now
        check_phase_resources([(s, "constant", r)], workers=2, memory=(int(need * 4), int(need / 2)))
    check_phase_resources([(s, "constant", r)], workers=2, memory=(int(need * 4), int(need / 2)), force=True)
    with pytest.raises(ConfigError, match="this machine"):  # hard: more than the machine has
        check_phase_resources([(s, "constant", r)], workers=2, memory=(int(need / 2), int(need / 2)),
                              force=True)


def test_a_huge_work_axis_counts_its_orphan_requests() -> None:
    # 30 clients and work up to 10^7: a run from the top cell holds 10^7 orphan requests.
    s = spec()
    r = resolve(s, PhaseSettings(size=2, runs=2, clients=30, work_max=10**7), "constant")
    assert portrait_cost(s, r, workers=1).memory >= 10**7 * BYTES_PER_CLIENT
    with pytest.raises(ConfigError, match="--work-max"):
        check_phase_resources([(s, "constant", r)], workers=1, memory=(10**10, 10**10), force=True)


def test_the_limit_is_at_most_the_simulation_s_horizon() -> None:
    s = spec()
    assert resolve(s, PhaseSettings(limit=1e15), "constant").limit == s.horizon


@pytest.mark.parametrize("flag, value", [("--horizon", "1e-300"), ("--horizon", "1e16"),
                                         ("--limit", "1e-300"), ("--limit", "inf")])
def test_times_out_of_bounds_are_one_line(flag: str, value: str, tmp_path: Path, capsys) -> None:
    assert phase_status([flag, value, "-j", "1"], tmp_path) == 2
    assert f"argument {flag}: expected a positive time from 1e-09 to 1e+15" in one_error_line(
        capsys.readouterr().err)


def test_too_many_samples_per_run_are_refused_before_any_work(tmp_path: Path, capsys) -> None:
    # A horizon of 1e-3 against the default limit of 30,000 (15 timeouts of 2000) is 3 x 10^7
    # samples per run, more than MAX_SAMPLES.
    assert 30_000 / 1e-3 > portrait.MAX_SAMPLES
    assert phase_status(["--horizon", "1e-3", "-j", "1"], tmp_path) == 2
    assert "horizons" in one_error_line(capsys.readouterr().err)
    assert not list(tmp_path.iterdir())


def test_the_pilot_runs_report_progress_as_they_finish() -> None:
    from sim.phase.pool import cell_runner

    seen: list[tuple[int, int]] = []
    with cell_runner(1, pilot_progress=lambda done, total: seen.append((done, total))) as run_all:
        compute_portrait(spec(), "constant", PhaseSettings(size=2, runs=3, clients=10), run_all)
    assert seen[-1] == (3, 3) and [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert {total for _, total in seen} == {3}


def test_pilot_runs_never_share_a_cell_s_random_numbers(monkeypatch) -> None:
    numbers: list[int] = []

    def fake(spec, label, clients, state, number, *args, **kw):
        numbers.append(number)
        return Replicate(0, 0, None)
    monkeypatch.setattr(portrait, "replicate", fake)
    for size, runs in [(20, 4), (200, 10_000), (100, 60)]:
        numbers.clear()
        r = resolve(spec(), PhaseSettings(size=size, runs=runs), "constant")
        healthy_state(spec(), "constant", r)
        # A cell's replicates are numbered index x runs + replicate: 0 .. size^2 x runs - 1.
        assert min(numbers) >= size ** 2 * runs


def test_the_command_prints_the_pilot_s_progress_then_the_cells(tmp_path: Path, capsys, monkeypatch) -> None:
    import sim.commands.progress

    monkeypatch.setattr(sim.commands.progress, "PROGRESS_SECONDS", 0.0)  # a line at every update
    assert phase_status(["--grid", "2", "--runs", "2", "--clients", "10", "-s", "constant", "-j", "1"],
                        tmp_path) == 0
    err = capsys.readouterr().err
    pilots = "phase portrait of Tiny outage, 'constant': settling the healthy state: 2 of 2 pilot runs done"
    cells = "phase portrait of Tiny outage, 'constant': 4 of 4 cells done"
    assert pilots in err and cells in err and err.index(pilots) < err.index(cells)
