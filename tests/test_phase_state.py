"""The phase portrait's state as an outage leaves it (issue 34, item 4): seeded requests of every
age, clients at the door reaching the server at their SYN retransmit, the state read at a resume,
and a portrait whose prediction at the resume is how the run ends (``sim.phase.state``,
``sim.phase.resume``). The check over many outages is ``-m slow`` (test_phase_outages.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from sim.models.initial import InitialState
from sim.models.workloads import Outage
from sim.phase.bound import latency_bound
from sim.phase.estimate import phase_spec
from sim.phase.portrait import PhaseSettings, compute_portrait, resolve
from sim.phase.resume import outage_run, predicted_return
from sim.phase.state import outage_age, outage_door
from sim.runs.engine import start_run
from sim.settings.config import load_config
from sim.vocabulary.errors import UserError

TINY_OUTAGE = Path(__file__).parent / "fixtures" / "tiny_outage.toml"
SERVER_OUTAGE = Path(__file__).parent.parent / "examples" / "server_outage.toml"


def tiny():
    return load_config(TINY_OUTAGE).simulations[0]


def scheduled(state: InitialState, name: str) -> list[float]:
    """When the seeded run's items of handler ``name`` fall due (before it runs)."""
    spec = phase_spec(tiny(), 30000.0)
    wiring, _ = start_run(spec, spec.strategy("constant").chain, 300, 1 << 20, state)
    return sorted(item[0] for item in wiring.heap if getattr(item[2], "__name__", "") == name)


def test_seeded_requests_are_of_every_age_up_to_the_given_one() -> None:
    timeout = float(tiny().timeout)
    fresh = scheduled(InitialState(100, 0, 1), "on_timeout")
    aged = scheduled(InitialState(100, 0, 1, age=timeout), "on_timeout")
    assert fresh == [timeout] * 100  # the old state: a full timeout each
    assert len(aged) == 100 and all(0.0 <= t <= timeout for t in aged)
    # Uniform ages: 100 draws all within one half of [0, timeout) has probability 2 * 2^-100,
    # and each quarter is empty with probability (3/4)^100 ~ 3e-13.
    quarters = [sum(q * timeout / 4 <= t < (q + 1) * timeout / 4 for t in aged) for q in range(4)]
    assert all(n > 0 for n in quarters)


def test_clients_at_the_door_reach_the_server_at_their_retransmit_or_never() -> None:
    timeout = float(tiny().timeout)
    state = InitialState(100, 0, 1, age=timeout, held=10, retransmits=(1000.0, 3000.0))
    arrivals = scheduled(state, "deliver")
    assert arrivals.count(0.0) >= 10  # the accept queue's, at once
    # The others arrive when their SYN goes again 1 s after their attempt's send (at 1000 - age),
    # or never: the next retransmit (3 s) is after their 2 s timeout. Ages are uniform over the
    # timeout, so about half never arrive: none missing has probability 2^-90.
    assert all(t <= 1000.0 for t in arrivals)
    assert 10 < len(arrivals) < 100
    with pytest.raises(UserError, match="age"):
        InitialState(1, 0, 1, age=-1.0)


def test_the_state_follows_the_configs_outage() -> None:
    spec = load_config(SERVER_OUTAGE).simulations[0]
    assert outage_age(spec) == min(float(spec.timeout), float(spec.stops[0].duration))
    held, retransmits = outage_door(spec)
    assert held == spec.backlog and retransmits[:3] == (1000.0, 3000.0, 7000.0)  # Linux's, in ms
    r = resolve(spec, PhaseSettings(size=4), "constant 100ms")
    assert r.grid.work_max == max(spec.clients) + spec.backlog  # every resume state on the grid
    assert outage_door(tiny()) == (None, ())  # an unbounded accept queue holds every request
    no_outage = replace(spec, outages=())
    assert outage_age(no_outage) == 0.0 and outage_door(no_outage) == (None, ())


def test_the_latency_bound_is_where_no_request_can_complete_in_time() -> None:
    spec = load_config(SERVER_OUTAGE).simulations[0]
    control, limit = spec.control, 30000.0
    bound = latency_bound(spec, limit)
    # At the bound the latency law gives exactly the time limit; above it, more.
    assert control.latency(int(bound) + 1) > limit >= control.latency(int(bound) - 1)


def test_a_portrait_predicts_how_the_outages_runs_end() -> None:
    spec = tiny()
    portrait = compute_portrait(spec, "constant", PhaseSettings(size=4, runs=2, clients=300))
    s = portrait.settings
    ends = {}
    for duration in (3000.0, 15000.0):  # the fixture's: a short outage recovers, 15 s does not
        run_spec = replace(spec, outages=(Outage(start=15000.0, duration=duration),))
        run = outage_run(run_spec, "constant", 300, 0, portrait.healthy, s.limit, s.step, s.grid.work_max)
        ends[duration] = (predicted_return(portrait, run.work, run.orbit), run.returned, run.work)
    assert ends[3000.0][0] >= 0.5 and ends[3000.0][1]
    assert ends[15000.0][0] < 0.5 and not ends[15000.0][1]  # a predicted collapse collapses
    assert ends[15000.0][2] > ends[3000.0][2]  # a longer outage leaves more work


def test_cells_between_agreeing_coarse_cells_take_their_verdict_and_keep_their_drift() -> None:
    from sim.phase.estimate import run_cell
    from sim.phase.portrait import healthy_state, run_cells, tasks
    from sim.phase.refine import coarse_indices

    spec = tiny()
    r = resolve(spec, PhaseSettings(size=5, runs=2, clients=300), "constant")
    runnable = phase_spec(spec, r.limit)
    _, healthy = healthy_state(runnable, "constant", r)
    todo = tasks(runnable, "constant", r, healthy)
    full = {res.index: res for res in (run_cell(t) for t in todo)}
    refined = {res.index: res for res in run_cells(todo, r.size, None)}
    assert sorted(refined) == sorted(full)
    coarse = set(coarse_indices(5))
    inferred = [i for i, res in refined.items() if res.inferred]
    assert inferred and all(not (i % 5 in coarse and i // 5 in coarse) for i in inferred)
    for i, res in refined.items():
        assert res.d_work == full[i].d_work and res.d_orbit == full[i].d_orbit  # the same runs to the horizon
        if not res.inferred:
            assert res == full[i]
    # Where the corners agree, the cell's own runs agree with them (a monotone return probability).
    agree = sum(sum(refined[i].returned) / len(refined[i].returned)
                == sum(full[i].returned) / len(full[i].returned) for i in inferred)
    assert agree == len(inferred)
