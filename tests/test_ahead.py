"""Steps a contention control's clients take ahead of time in runs that keep no history
(``Wiring.ahead``): the metrics of ``run_metrics`` (which takes them so) must be those of the
recorded run (which takes every step as an item of its own), event for event, for every
contention control and every kind of strategy, and the shortcut must be taken only where
``ahead_is_exact`` says the order of events cannot change."""

from __future__ import annotations

from heapq import heappop

import pytest

from sim.settings.config import parse_config
from sim.runs.engine import AHEAD_SIGMAS, _build, _due_first, ahead_is_exact, record_run, run_metrics

NETWORK = {"network_mu": 10.0, "network_sigma": 2.0}  # 5 sigmas: the sample's, ahead allowed
CONTROLS = {
    "locking": {"control": "LockingServer", "write_mu": 2.0, "write_sigma": 1.0},
    "locking_instant": {"control": "LockingServer", "write_mu": 0.0, "write_sigma": 0.0},
    "write_only_occ": {"control": "WriteOnlyOCCServer", "write_mu": 3.0, "write_sigma": 1.0},
    "read_write_occ": {"control": "ReadWriteOCCServer", "write_mu": 1.0, "write_sigma": 0.5},
    "read_write_occ_instant": {"control": "ReadWriteOCCServer", "write_mu": 0.0, "write_sigma": 0.0},
    "throttling": {"control": "ThrottlingServer", "window": 30.0, "limit": 2},
}
STRATEGIES = {
    "no_backoff": {"type": "Constant", "constant": 0.0},
    "constant": {"type": "Constant", "constant": 0.5},
    "full_jitter": {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0},
    "expo": {"type": "Expo", "base": 2.0, "cap": 100.0},
    "decorrelated": {"type": "DecorrelatedJitter", "base": 2.0, "cap": 500.0},
}


def _spec(control: str, strategy: str, **overrides):
    table = {"title": f"{control}_{strategy}", "clients": [1, 6, 25], "repeat": 3,
             "work_to_duration": 1.0, **NETWORK, **CONTROLS[control],
             "strategies": [STRATEGIES[strategy]], **overrides}
    return parse_config({"seed": 11, "simulation": [table]}).simulations[0]


def _drain(spec, clients: int, repetition: int):
    """A run built as ``run_metrics`` builds it, driven here: its wiring once drained."""
    wiring, _ = _build(spec, spec.strategies[0].chain, clients, repetition, ahead=True)
    while (queue := _due_first(wiring)) is not None:
        t, _, handler, c, a = heappop(queue)
        handler(t, c, a)
    return wiring


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("control", sorted(CONTROLS))
def test_metrics_taken_ahead_are_the_recorded_runs(control: str, strategy: str) -> None:
    spec = _spec(control, strategy)
    assert ahead_is_exact(spec)
    for clients in spec.clients:
        for repetition in range(spec.repeat):
            recorded = record_run(spec, spec.strategies[0].label, clients, repetition)
            assert run_metrics(spec, spec.strategies[0].chain, clients, repetition) == recorded.metrics()
            # every recorded event counted: the history's length is the metrics' count
            assert recorded.metrics().events == len(recorded.history)


@pytest.mark.parametrize("control", sorted(set(CONTROLS) - {"locking_instant"}))
def test_contended_runs_take_steps_ahead(control: str) -> None:
    """The shortcut is really taken (else the test above would compare a run with itself). A lock
    held for no time is never refused, so its clients have no failure to hear ahead."""
    wiring = _drain(_spec(control, "constant"), 25, 0)
    assert wiring.client_rejected_at is not None
    assert wiring.taken_ahead[0] > 0


def test_an_instant_write_is_done_in_the_step_that_asks_for_it() -> None:
    """OCC with writes of no duration: the commit or abort is done by the write's own step when
    nothing else is due at that instant, so fewer items than events are scheduled."""
    spec = _spec("read_write_occ_instant", "no_backoff")
    wiring = _drain(spec, 25, 1)
    recorded = record_run(spec, spec.strategies[0].label, 25, 1)
    items = wiring.seq()  # the next seq: how many items were scheduled
    assert items < len(recorded.history)
    assert items + wiring.taken_ahead[0] == len(recorded.history)


@pytest.mark.parametrize("overrides, why", [
    ({"network_sigma": 0.0}, "deterministic delays tie exactly"),
    ({"network_mu": 10.0, "network_sigma": 10.0 / (AHEAD_SIGMAS - 0.5)}, "delays clipped to 0 too often"),
    ({"outages": [{"start": 20.0, "duration": 30.0}]}, "an outage holds steps"),
])
def test_no_step_is_taken_ahead_where_the_order_could_change(overrides: dict, why: str) -> None:
    spec = _spec("locking", "constant", **overrides)
    assert not ahead_is_exact(spec), why
    wiring = _drain(spec, 25, 0)
    assert wiring.client_rejected_at is None and wiring.taken_ahead[0] == 0
    recorded = record_run(spec, spec.strategies[0].label, 25, 0)
    assert run_metrics(spec, spec.strategies[0].chain, 25, 0) == recorded.metrics()


def test_clients_with_a_policy_chain_take_nothing_ahead() -> None:
    """A chain's decisions may share state across clients (a retry budget), so each is taken at
    its own time: here a limit on attempts, which makes the strategy a chain."""
    spec = _spec("locking", "expo", strategies=[{**STRATEGIES["expo"], "max_attempts": 3}])
    assert not spec.strategies[0].chain.plain
    wiring = _drain(spec, 25, 0)
    assert wiring.client_rejected_at is None and wiring.taken_ahead[0] == 0
    recorded = record_run(spec, spec.strategies[0].label, 25, 0)
    assert run_metrics(spec, spec.strategies[0].chain, 25, 0) == recorded.metrics()


def test_recorded_and_replayed_runs_take_every_step_as_an_item() -> None:
    """Only ``run_metrics`` takes steps ahead: a recorded run keeps each event at its own time."""
    spec = _spec("locking", "constant")
    wiring, _ = _build(spec, spec.strategies[0].chain, 25, 0)
    assert not wiring.ahead and wiring.client_rejected_at is None
