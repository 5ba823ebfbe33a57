"""Determinism: the seed and a run's coordinates fix every draw, whatever runs where or when.

Also that the strategy is *not* part of the random key, so strategies are compared on common
random numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support import make_spec, sim_table

from sim.runs import sweep
from sim.runs.sweep import SweepResult, run_sweeps
from sim.settings.config import parse_config
from sim.runs.engine import record_run, run_metrics
from sim.core.streams import PURPOSE_JITTER, PURPOSE_NETWORK, ClientStreams, clipped_normal, generator, uniform01
from sim.settings.spec import SimulationSpec

JITTERED = {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}


def rows(spec: SimulationSpec, label: str, clients: int, repetition: int) -> list[tuple]:
    return record_run(spec, label, clients, repetition).history.rows()


# --- one process, two processes -------------------------------------------------------------

@pytest.mark.parametrize("control", ["LockingServer", "ReadWriteOCCServer", "ThrottlingServer"])
def test_same_seed_same_history(control: str) -> None:
    a = make_spec(control, [JITTERED], seed=11)
    b = make_spec(control, [JITTERED], seed=11)
    first = rows(a, a.labels[0], 8, 1)
    assert len(first) > 8
    assert first == rows(b, b.labels[0], 8, 1)
    assert first == rows(a, a.labels[0], 8, 1)


def test_different_seed_or_coordinates_different_history() -> None:
    base = make_spec("LockingServer", [JITTERED], seed=11)
    history = rows(base, base.labels[0], 8, 0)
    other_seed = make_spec("LockingServer", [JITTERED], seed=12)
    assert rows(other_seed, other_seed.labels[0], 8, 0) != history
    assert rows(base, base.labels[0], 8, 1) != history  # another repetition
    other_title = make_spec("LockingServer", [JITTERED], seed=11, title="u")
    assert rows(other_title, other_title.labels[0], 8, 0) != history


SUBPROCESS_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from support import make_spec
from sim.runs.engine import record_run
spec = make_spec("ReadWriteOCCServer", [{"type": "DecorrelatedJitter", "base": 2.0, "cap": 500.0}], seed=5)
rows = record_run(spec, spec.labels[0], 9, 2).history.rows()
print(json.dumps([(repr(t), c, e, d) for t, c, e, d in rows]))
"""


def test_same_history_in_separate_processes() -> None:
    """Two fresh interpreters with different hash salts print the very same history."""
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", SUBPROCESS_SCRIPT, str(Path(__file__).parent)],
                             capture_output=True, text=True, check=True, env=env)
        outputs.append(json.loads(out.stdout))
    assert outputs[0] == outputs[1]
    spec = make_spec("ReadWriteOCCServer", [{"type": "DecorrelatedJitter", "base": 2.0, "cap": 500.0}], seed=5)
    here = [[repr(t), c, e, d] for t, c, e, d in rows(spec, spec.labels[0], 9, 2)]
    assert outputs[0] == here


# --- common random numbers across strategies ------------------------------------------------

@pytest.mark.parametrize("control", ["LockingServer", "WriteOnlyOCCServer", "ReadWriteOCCServer",
                                     "ThrottlingServer"])
def test_zero_delay_strategies_see_identical_runs(control: str) -> None:
    spec = make_spec(control, [{"type": "NoBackoff"}, {"type": "Constant", "constant": 0.0}], seed=3)
    assert rows(spec, "NoBackoff", 10, 1) == rows(spec, "Constant", 10, 1)


def _first_arrivals(history: list[tuple]) -> dict[int, float]:
    """When each client's first message reached the server (its first server event)."""
    out: dict[int, float] = {}
    for t, c, name, _ in history:
        if name.startswith("server_"):
            out.setdefault(c, t)
    return out


@pytest.mark.parametrize("control", ["LockingServer", "ReadWriteOCCServer"])
def test_strategies_share_network_delays(control: str) -> None:
    strategies = [{"type": "Expo", "base": 5.0, "cap": 2000.0}, JITTERED,
                  {"type": "Constant", "constant": 4.0}]
    spec = make_spec(control, strategies, seed=4)
    arrivals = [_first_arrivals(rows(spec, label, 10, 0)) for label in spec.labels]
    assert len(arrivals[0]) == 10
    assert arrivals[0] == arrivals[1] == arrivals[2]


def test_strategies_share_jitter_uniforms() -> None:
    """Full and equal jitter draw the same uniforms, so a lone client's back-offs are related:
    with one rejection, equal = t/2 + full/2 exactly."""
    table = sim_table("ThrottlingServer", [JITTERED, {"type": "EqualJitteredExpo", "base": 2.0, "cap": 1000.0}],
                      window=1000.0, limit=1, clients=[2], seed=8)
    spec = parse_config({"simulation": [table]}).simulations[0]

    def first_backoff(label: str) -> tuple[float, float]:
        h = rows(spec, label, 2, 0)
        backed = next(t for t, _, name, _ in h if name == "client_backs_off")
        c = next(c for _, c, name, _ in h if name == "client_backs_off")
        retry = next(t for t, cc, name, _ in h if name == "client_requests_write" and cc == c and t > 0)
        return backed, retry - backed

    (t_full, full), (t_equal, equal) = first_backoff("FullJitteredExpo"), first_backoff("EqualJitteredExpo")
    assert t_full == t_equal
    assert equal == pytest.approx(2.0 / 2 + full / 2)


# --- sweeps: workers and order ----------------------------------------------------------------

def _sweep_specs() -> list[SimulationSpec]:
    return [
        make_spec("LockingServer", [{"type": "Constant", "constant": 0.5}, JITTERED],
                  clients=[1, 4, 9], repeat=3, seed=2, title="lock"),
        make_spec("ReadWriteOCCServer", [{"type": "NoBackoff"}, {"type": "Expo", "base": 5.0, "cap": 100.0}],
                  clients=[2, 7], repeat=2, seed=2, title="occ"),
    ]


def _arrays(result: SweepResult) -> tuple[np.ndarray, ...]:
    return result.work, result.duration, result.gave_up, result.events


def _assert_same(a: SweepResult, b: SweepResult) -> None:
    for x, y in zip(_arrays(a), _arrays(b)):
        np.testing.assert_array_equal(x, y)


def test_workers_do_not_change_results() -> None:
    specs = _sweep_specs()
    one = run_sweeps(specs, workers=1)
    two = run_sweeps(specs, workers=2)
    for a, b in zip(one, two):
        _assert_same(a, b)
    assert one[0].work.shape == (2, 3, 3) and one[0].work.min() >= 1


def test_order_of_specs_and_tasks_does_not_change_results() -> None:
    specs = _sweep_specs()
    reference = run_sweeps(specs, workers=1)
    reversed_results = run_sweeps(specs[::-1], workers=1)
    for a, b in zip(reference, reversed_results[::-1]):
        _assert_same(a, b)
    # Tasks done one by one in a shuffled order, stored by coordinates, give the same arrays.
    for i, spec in enumerate(specs):
        result = SweepResult.empty(spec)
        tasks = [sweep._Task(i, s, k, spec) for s in range(len(spec.strategies))
                 for k in range(len(spec.clients))]
        order = np.random.default_rng(99).permutation(len(tasks))
        for j in order:
            _, k, first, by_strategy, _ = sweep._run_task(tasks[j])
            for s, runs in by_strategy:
                result.store(s, k, runs, first)
        _assert_same(result, reference[i])


def test_strategy_order_in_the_config_does_not_change_results() -> None:
    strategies = [{"type": "Constant", "constant": 0.5}, JITTERED, {"type": "Expo", "base": 2.0, "cap": 50.0}]
    forward = make_spec("LockingServer", strategies, clients=[3, 6], repeat=2, seed=1)
    backward = make_spec("LockingServer", strategies[::-1], clients=[3, 6], repeat=2, seed=1)
    a, b = run_sweeps([forward, backward], workers=1)
    for s, label in enumerate(forward.labels):
        s_back = backward.labels.index(label)
        np.testing.assert_array_equal(a.work[s], b.work[s_back])
        np.testing.assert_array_equal(a.duration[s], b.duration[s_back])


def test_sweep_matches_single_runs() -> None:
    spec = _sweep_specs()[0]
    result = run_sweeps([spec], workers=1)[0]
    for s, strategy_spec in enumerate(spec.strategies):
        for k, n in enumerate(spec.clients):
            for r in range(spec.repeat):
                m = run_metrics(spec, strategy_spec.strategy, n, r)
                assert (result.work[s, k, r], result.duration[s, k, r]) == (m.work, m.duration)


# --- per-client streams ---------------------------------------------------------------------

@pytest.mark.parametrize("purpose, draw", [(PURPOSE_NETWORK, clipped_normal(10.0, 2.0)),
                                           (PURPOSE_JITTER, uniform01)])
def test_client_stream_values_do_not_depend_on_draw_order(purpose: int, draw) -> None:
    n, per_client = 6, 300  # enough to cross several block widths

    def streams():
        return ClientStreams(generator(7, "t", n, 0, purpose), n, draw).next_functions()

    # Order A: each client in turn draws all its values.
    a = streams()
    in_turn = [[a[i]() for _ in range(per_client)] for i in range(n)]
    # Order B: a shuffled interleaving; client 5 starts first and client 0 lags far behind.
    b = streams()
    interleaved: list[list[float]] = [[] for _ in range(n)]
    order = np.repeat(np.arange(n), per_client)
    np.random.default_rng(1).shuffle(order)
    for i in sorted(range(len(order)), key=lambda j: (order[j] != 5, j)):
        interleaved[order[i]].append(b[order[i]]())
    assert interleaved == in_turn
    # Each client's stream differs from the others'.
    assert len({tuple(v[:10]) for v in in_turn}) == n


@pytest.mark.parametrize("n", [3, 200])  # 3: four blocks listed (LISTED_LIVE), then arrays
def test_client_streams_are_rows_of_successive_blocks(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Client i's values are row i of block 0, then of block 1, ...: the same numbers whether a
    block is kept as lists of floats (``LISTED_BLOCK``) or as an array."""
    from sim.core import streams as streams_module

    per_client = sum(streams_module.BLOCK_WIDTHS) + 50  # into the second block of the widest
    rng = generator(7, "t", n, 0, PURPOSE_NETWORK)
    expected = np.concatenate([clipped_normal(10.0, 2.0)(rng, (n, width)) for width in
                               (*streams_module.BLOCK_WIDTHS, streams_module.BLOCK_WIDTHS[-1])], axis=1)
    for listed in (streams_module.LISTED_BLOCK, 0):  # as configured, then never listed
        monkeypatch.setattr(streams_module, "LISTED_BLOCK", listed)
        draws = ClientStreams(generator(7, "t", n, 0, PURPOSE_NETWORK), n, clipped_normal(10.0, 2.0)).next_functions()
        got = [[draws[i]() for _ in range(per_client)] for i in (n - 1, 0)]
        assert got == [expected[n - 1, :per_client].tolist(), expected[0, :per_client].tolist()]


def test_client_stream_prefix_is_stable() -> None:
    """Client i's first values are the same whether or not other clients ever draw."""
    lone = ClientStreams(generator(7, "t", 4, 0, PURPOSE_JITTER), 4, uniform01).next_functions()
    busy = ClientStreams(generator(7, "t", 4, 0, PURPOSE_JITTER), 4, uniform01).next_functions()
    for _ in range(500):
        busy[0]()
        busy[3]()
    assert [lone[2]() for _ in range(100)] == [busy[2]() for _ in range(100)]
