"""The phase portrait of open workloads (issue 34, item 4): a state of an open pool is calls with a
request at the server and calls waiting to retry, seeded as a closed state is (``OpenClients``)."""

from __future__ import annotations

from pathlib import Path

from sim.models.initial import InitialState
from sim.phase.estimate import phase_spec, replicate
from sim.phase.portrait import PhaseSettings, compute_portrait, open_top, replying_problem, resolve
from sim.runs.engine import start_run
from sim.settings.config import load_config

TINY_POOL = Path(__file__).parent / "fixtures" / "tiny_pool.toml"
SERVICE_INCIDENT = Path(__file__).parent.parent / "examples" / "service_incident.toml"


def pool():
    return load_config(TINY_POOL).simulations[0]


def test_the_worker_pool_examples_have_portraits() -> None:
    for spec in load_config(SERVICE_INCIDENT).simulations:
        assert replying_problem(spec) is None, spec.title


def test_an_open_state_starts_with_its_calls_at_the_server_and_in_backoff() -> None:
    spec = phase_spec(pool(), 1000.0)
    # More calls than clients: an open client may have many in flight.
    wiring, side = start_run(spec, spec.strategy("3 attempts").chain, 12, 1 << 20, InitialState(40, 25, 2))
    assert side.in_backoff == 25 and len(side._waiting) == 40
    heap = wiring.heap
    assert sum(getattr(item[2], "__name__", "") == "deliver" and item[0] == 0.0 for item in heap) == 40


def test_an_open_portrait_finds_the_empty_state_healthy_and_a_full_queue_draining() -> None:
    spec = pool()
    r = resolve(spec, PhaseSettings(size=3, runs=2), "no retries")
    # The axes reach twice one timeout's arrivals: 12 clients every 40 ms for 100 ms, 60 calls.
    assert r.grid.work_max == r.grid.orbit_max == open_top(spec, 12) == 60
    portrait = compute_portrait(spec, "3 attempts", PhaseSettings(size=3, runs=2))
    assert portrait.probabilities[0, 0] == 1.0  # the empty state is healthy
    runnable = phase_spec(spec, portrait.settings.limit)
    # Work is removed only by service (4 workers) and the queue's own drops: from 400 requests
    # the drift over the first horizon is downward, at most the pool's 0.4/ms plus its drops.
    out = replicate(runnable, "3 attempts", 12, InitialState(400, 0, 1), 7, portrait.settings.horizon,
                    portrait.settings.limit, portrait.settings.step, None)
    assert out.work < 400
