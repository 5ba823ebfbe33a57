"""One client model for every control and workload (issue 10): a burst is a workload like spike
and Poisson, every client hears the outcome of each attempt, any control runs a burst or a spike,
and the one combination that cannot mean anything (a workload that repeats until a horizon, on a
control that keeps no series and has no horizon) is refused in one line.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support import CONSTANT, CONTROL_PARAMS, make_spec, one_error_line, sim_table, toml_text, write_config

from sim.commands.cli import main
from sim.runs.engine import record_run, run_metrics
from sim.core.streams import PURPOSE_WORKLOAD, generator
from sim.vocabulary.errors import ParamError
from sim.models import CONTROLS
from sim.models.workloads import Poisson
from sim.vocabulary.outcomes import ABORTED, REJECTED, SERVER_ERROR, TIMED_OUT
from sim.policies.chain import ChainSpec

# Every registered control with parameters that drive it through failures: contention controls
# with 20 clients on a short write; the replying servers with a horizon long enough for a burst
# or a spike of 20 clients to be served (one call each), and a timeout.
REPLYING: dict[str, dict[str, Any]] = {
    "QueueServer": {"concurrency": 3, "service_time": 4.0, "queue_size": 4, "reject_delay": 1.0,
                    "overload_threshold": 10, "horizon": 2000.0, "timeout": 12.0},
    "LatencyServer": {"base_latency": 10.0, "concurrency_limit": 6, "factor": 1.2, "k": 4.0,
                      "check_interval": 2.0, "horizon": 2000.0, "timeout": 30.0},
    "FlakyServer": {"failure_rate": 0.3, "latency": 2.0, "horizon": 2000.0},
    "PoolServer": {"workers": 3, "service_time": 4.0, "service_distribution": "exponential",
                   "queue_size": 4, "queue_timeout": 6.0, "horizon": 2000.0, "timeout": 12.0},
}
PARAMS: dict[str, dict[str, Any]] = {**CONTROL_PARAMS, **REPLYING}
WORKLOADS: dict[str, dict[str, Any]] = {
    "burst": {"workload": "burst"},
    "spike": {"workload": "spike", "spike_fraction": 0.5, "spike_width": 5.0, "arrival_window": 100.0},
}
CLIENTS = 20


def spec_for(control: str, workload: str, **changes: Any):
    return make_spec(control, **{**PARAMS[control], **WORKLOADS[workload], "clients": [CLIENTS],
                                 "repeat": 1, "network_mu": 1.0, "network_sigma": 0.5, **changes})


def test_every_control_has_parameters_here() -> None:
    assert set(PARAMS) == set(CONTROLS), "add the new control's parameters to PARAMS"


class _Heard:
    """A client's chain that notes every question and outcome, and always retries after 3."""

    links = ()

    def __init__(self, client: int, log: list[tuple]) -> None:
        self.client, self.log = client, log

    def on_attempt(self, t: float, attempt: int, start: float) -> float:
        self.log.append(("attempt", self.client, attempt, start))
        return 0.0

    def on_failure(self, t: float, kind: int, attempt: int, start: float) -> float:
        self.log.append(("failure", self.client, attempt, start, kind))
        return 3.0

    def on_success(self, t: float, attempt: int, start: float) -> None:
        self.log.append(("success", self.client, attempt, start))


@dataclass(frozen=True)
class _Listening(ChainSpec):
    """A strategy entry whose chains are ``_Heard`` (the slow path: not plain)."""

    log: list = field(default_factory=list, compare=False, hash=False)

    @property
    def plain(self) -> bool:
        return False

    def build(self, uniforms):
        return [_Heard(c, self.log) for c in range(len(uniforms))]


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
@pytest.mark.parametrize("control", sorted(CONTROLS))
def test_every_client_hears_the_outcome_of_each_attempt(control: str, workload: str) -> None:
    """Each attempt is followed by exactly one outcome before the next attempt, with the call's
    start time as the workload drew it; a contention control's success is heard too (without a
    reply), so each of its clients ends with one success."""
    spec = spec_for(control, workload)
    chain = _Listening(spec.strategies[0].strategy)
    metrics = run_metrics(spec, chain, CLIENTS, 0)
    starts = spec.workload.start_times(generator(spec.seed, spec.title, CLIENTS, 0, PURPOSE_WORKLOAD), CLIENTS)
    kinds = {"LockingServer": {REJECTED}, "ThrottlingServer": {REJECTED}, "WriteOnlyOCCServer": {ABORTED},
             "ReadWriteOCCServer": {ABORTED}, "FlakyServer": {SERVER_ERROR}}.get(control, {REJECTED, TIMED_OUT})
    sent = successes = pending = 0
    for c in range(CLIENTS):
        mine = [entry for entry in chain.log if entry[1] == c]
        assert mine and all(entry[3] == starts[c] for entry in mine)
        # attempt 1, its outcome, attempt 2, its outcome, ... (the last attempt may be still out)
        assert [entry[0] == "attempt" for entry in mine] == [i % 2 == 0 for i in range(len(mine))]
        asked = [entry for entry in mine if entry[0] == "attempt"]
        outcomes = [entry for entry in mine if entry[0] != "attempt"]
        assert [entry[2] for entry in asked] == list(range(1, len(asked) + 1))
        assert [entry[2] for entry in outcomes] == list(range(1, len(outcomes) + 1))
        assert all(entry[4] in kinds for entry in outcomes if entry[0] == "failure")
        assert [entry[0] for entry in outcomes].count("success") <= 1
        if outcomes and outcomes[-1][0] == "success":
            successes += 1
        pending += len(asked) - len(outcomes)  # an attempt still out when the horizon came
        sent += len(asked)
    assert metrics.work == sent and metrics.calls == CLIENTS and metrics.gave_up == 0
    if spec.runs_to_horizon:
        assert pending == metrics.unfinished and successes == metrics.successes
    else:
        assert pending == 0 and successes == CLIENTS  # no horizon: every call ends in a success


@pytest.mark.parametrize("control", sorted(CONTROLS))
def test_a_burst_is_a_spike_with_everyone_at_zero(control: str) -> None:
    """The burst is only a workload: a spike of every client within a width of 0 records the
    same history, for every control."""
    burst = spec_for(control, "burst")
    spike = spec_for(control, "spike", spike_fraction=1.0, spike_width=0.0)
    a = record_run(burst, burst.labels[0], CLIENTS, 0).history
    b = record_run(spike, spike.labels[0], CLIENTS, 0).history
    assert len(a) > CLIENTS
    assert a.times == b.times and a.clients == b.clients and a.packed == b.packed


@pytest.mark.parametrize("control", sorted(CONTROL_PARAMS))
def test_a_spread_spike_contends_less_than_a_burst(control: str) -> None:
    """A contention control under a spike: clients arriving over a window ten times the longest a
    write holds the server (network + write, both a few units) find it busy less often than all at
    once, so fewer attempts per client; every call still ends (no give-ups with plain retries)."""
    work = {}
    for name, changes in (("burst", {}), ("spread", {"spike_fraction": 0.0, "arrival_window": 40.0 * CLIENTS})):
        total = 0
        for seed in range(4):
            spec = spec_for(control, "spike" if changes else "burst", seed=seed, **changes)
            m = run_metrics(spec, spec.strategies[0].chain, CLIENTS, 0)
            assert m.gave_up == 0 and m.calls == CLIENTS and m.work >= CLIENTS
            total += m.work
        work[name] = total
    assert work["spread"] < work["burst"]


@pytest.mark.parametrize("control", sorted(CONTROL_PARAMS))
def test_a_repeating_workload_on_a_contention_control_is_refused_by_the_config(
        tmp_path: Path, control: str, capsys: pytest.CaptureFixture[str]) -> None:
    table = sim_table(control, [CONSTANT], title="Busy", clients=[5], repeat=1, workload="poisson",
                      think_time=10.0)
    path = write_config(tmp_path / "c.toml", toml_text(table))
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = one_error_line(capsys.readouterr().err)
    assert str(path) in err and "key 'workload'" in err and "'poisson'" in err
    assert "servers that reply" in err and 'workload = "burst" or "spike"' in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_repeating_workload_on_a_contention_control_is_refused_by_the_engine() -> None:
    """A spec assembled without the config (a library user) meets the same one-line refusal."""
    spec = dataclasses.replace(spec_for("LockingServer", "burst"), workload=Poisson(think_time=10.0))
    with pytest.raises(ParamError, match="'poisson' repeats calls until a horizon") as info:
        run_metrics(spec, spec.strategies[0].chain, CLIENTS, 0)
    assert "\n" not in str(info.value) and "LockingServer" in str(info.value)
