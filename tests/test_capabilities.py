"""Every server kind declares what it offers once (``Control.CAPS``), and the declaration is true:
the events it records, the series counters it fills and its state sample are those it declares.

A new server that forgets its ``CAPS`` is refused at registration; one that forgets an event or a
counter fails here (add its sample config to ``SAMPLES`` too: a missing sample fails as well).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pytest

from sim.core import events as ev
from sim.runs.engine import build_wiring, record_run
from sim.runs.resources import estimate
from sim.core.series import SERIES_NAMES, SERVER_SERIES
from sim.exploration.plan import default_metric
from sim.exploration.summary import FEATURE_METRICS, has_verdict, metric_names
from sim.export.outputs import OUTPUTS, outputs_for
from sim.models import CONTROLS
from sim.models.clients import Clients, client_events
from sim.models.controls import FEATURES, Capabilities, Control, ServerHandlers, register
from sim.models.outage import OutageGate
from sim.models.policy_events import PolicyEvents
from sim.models.workloads import Outage
from support import CONTROL_PARAMS, make_spec
from test_overload_model import LATENCY, QUEUE
from tui.view.compare_columns import summary_headers

STATE = ("in_service", "queued")  # the counters the bucket-end sample of ``server_state`` fills

# A config per registered control that drives it through every event it can record: contention
# heavy enough for rejections and aborts, an overloaded queue that queues and rejects.
SAMPLES: dict[str, list[dict[str, Any]]] = {
    "LockingServer": [{"clients": [12]}],
    "WriteOnlyOCCServer": [{"clients": [12]}],
    "ReadWriteOCCServer": [{"clients": [12]}],
    "ThrottlingServer": [{"clients": [12]}],
    "QueueServer": [{**QUEUE, "clients": [40]}],
    "LatencyServer": [{**LATENCY, "clients": [40]},
                      {**LATENCY, "clients": [40], "latency_rule": "at_start"}],
    # Open arrivals at 1.5x capacity: queued, rejected beyond the waiting room, dropped by the
    # queue timeout, by CoDel (FIFO: under LIFO it never acts), by the controlled delay and
    # (immediate cancel) when the client times out.
    "PoolServer": [{"workers": 2, "service_time": 4.0, "service_distribution": "exponential",
                    "queue_size": 6, "queue_timeout": 6.0, "codel_target": 1.0, "codel_interval": 10.0,
                    "workload": "open", "think_time": 80.0,
                    "horizon": 1500.0, "timeout": 12.0, "clients": [60], "network_mu": 1.0, "network_sigma": 0.5},
                   {"workers": 2, "service_time": 4.0, "discipline": "adaptive_lifo", "codel_interval": 10.0,
                    "controlled_delay": {"short": 1.0, "long": 6.0, "interval": 10.0}, "cancel": "immediate",
                    "workload": "open", "think_time": 80.0, "horizon": 1500.0, "timeout": 15.0, "network_mu": 1.0,
                    "clients": [60], "strategies": [
                        {"type": "Constant", "constant": 1.0, "max_attempts": 3, "name": "capped",
                         "policies": [{"type": "TokenBucket", "capacity": 3.0, "refill": 0.1,
                                       "cost": 1.0, "refill_on": "attempt"}]}]}],
    # With policies too, so that their events (denied retries, breakers) show up on the way.
    "FlakyServer": [{"failure_rate": 0.4, "latency": 5.0, "workload": "poisson", "think_time": 50.0,
                     "horizon": 2000.0, "network_mu": 1.0, "network_sigma": 0.5, "clients": [30],
                     "strategies": [
                         {"type": "Constant", "constant": 1.0, "max_attempts": 4, "name": "breaker",
                          "policies": [{"type": "CircuitBreaker", "kind": "count", "failure_ratio": 0.3,
                                        "minimum_throughput": 5, "window": 10,
                                        "break_duration": 0.05, "half_open_calls": 2}]},
                         {"type": "Constant", "constant": 1.0, "name": "bucket", "policies": [
                             {"type": "TokenBucket", "capacity": 2.0, "refill": 0.05, "cost": 1.0,
                              "refill_on": "attempt"}]}]}],
}


def sample_specs(name: str) -> list:
    tables = ({key: v for key, v in {**CONTROL_PARAMS.get(name, {}), **table}.items() if key != "control"}
              for table in SAMPLES[name])
    return [make_spec(name, **table, repeat=1) for table in tables]


def test_every_registered_control_has_a_sample() -> None:
    assert set(SAMPLES) == set(CONTROLS), "add the new control's config to SAMPLES"


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_every_registered_control_declares_a_complete_capability_set(name: str) -> None:
    cls = CONTROLS[name]
    caps = cls.__dict__.get("CAPS")
    assert isinstance(caps, Capabilities), f"{name} declares no CAPS of its own"
    assert caps.events and all(ev.is_server_event(code) for code in caps.events)
    assert not caps.events & OutageGate.EVENTS  # the gate's own, whatever the server
    assert set(caps.series) <= set(SERIES_NAMES + SERVER_SERIES)
    if caps.keeps_series:
        # The server's counters are its own: none the clients or the bucket-end sample fill.
        assert not set(caps.series) & (set(Clients.SERIES) | set(STATE))
    else:
        assert caps.series == () and not caps.state_sample


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_every_event_a_server_records_is_declared(name: str) -> None:
    """The events recorded in sample runs are exactly the declared ones: none undeclared, and
    none declared that the server never records (its sample drives every branch)."""
    caps = CONTROLS[name].CAPS
    clients = client_events(caps)
    server_seen: set[int] = set()
    policy_seen: set[int] = set()
    for spec in sample_specs(name):
        for label in spec.labels:
            run = record_run(spec, label, spec.max_clients, 0)
            codes = set(np.unique(np.asarray(run.history.packed) & ev.CODE_MASK).tolist())
            undeclared = codes - caps.events - clients - OutageGate.EVENTS
            assert not undeclared, f"{name} records undeclared {[ev.EVENT_NAMES[c] for c in undeclared]}"
            server_seen |= {c for c in codes if ev.is_server_event(c)}
            policy_seen |= codes & PolicyEvents.EVENTS
    assert server_seen == set(caps.events), (
        f"{name} declares {sorted(ev.EVENT_NAMES[c] for c in caps.events - server_seen)} never recorded")
    if name == "FlakyServer":  # the sample with policies did exercise their events
        assert {ev.CLIENT_RETRY_DENIED, ev.BREAKER_OPENS, ev.BREAKER_HALF_OPENS} <= policy_seen


class _Touched:
    """A ``Series`` stand-in that notes which counters a control's build takes."""

    def __init__(self, series: Any) -> None:
        self._series = series
        self.touched: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        if name in SERIES_NAMES + SERVER_SERIES:
            self.touched.add(name)
        return getattr(self._series, name)


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_series_counters_and_state_sample_are_the_declared_ones(name: str) -> None:
    caps = CONTROLS[name].CAPS
    spec = sample_specs(name)[0]
    wiring = build_wiring(spec, spec.max_clients, 0)
    assert (wiring.series is not None) == caps.keeps_series
    if wiring.series is not None:
        wiring.series = touched = _Touched(wiring.series)
    default_state = wiring.server_state
    wiring.client_rejected = wiring.client_version_reply = wiring.client_succeeded = lambda t, c, a: 0
    wiring.client_server_error = wiring.client_rejected
    spec.control.build(wiring)
    if caps.keeps_series:
        assert touched.touched == set(caps.series)
    assert (wiring.server_state is not default_state) == caps.state_sample


def test_a_control_without_its_own_capabilities_is_refused() -> None:
    """Forgetting ``CAPS`` fails at registration, not as a silent gap (an inherited one too)."""

    @dataclass(frozen=True, kw_only=True)
    class Forgetful(Control):
        def build(self, wiring: Any) -> ServerHandlers:
            raise NotImplementedError

    with pytest.raises(TypeError, match="declares no CAPS"):
        register(Forgetful)

    @dataclass(frozen=True, kw_only=True)
    class Inheriting(CONTROLS["LockingServer"]):  # type: ignore[misc, valid-type]
        """Claims the base's events without saying so."""

    with pytest.raises(TypeError, match="declares no CAPS"):
        register(Inheriting)
    assert "Forgetful" not in CONTROLS and "Inheriting" not in CONTROLS


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_declared_features_are_delivered(name: str) -> None:
    """Each feature a kind declares is one its sample run delivers, and none it does not declare:
    success replies reach the clients, series are kept, latencies measured."""
    caps = CONTROLS[name].CAPS
    spec = sample_specs(name)[0]
    run = record_run(spec, spec.labels[0], spec.max_clients, 0)
    codes = set(np.unique(np.asarray(run.history.packed) & ev.CODE_MASK).tolist())
    assert (ev.CLIENT_SUCCEEDS in codes) == caps.replies, f"{name}: replies={caps.replies}"
    assert (run.open_metrics is not None) == caps.keeps_series, f"{name}: keeps_series={caps.keeps_series}"
    latencies = run.open_metrics.latencies if run.open_metrics is not None else ()
    assert (len(latencies) > 0) == caps.latencies, f"{name}: latencies={caps.latencies}"


def test_a_capability_set_must_be_whole_and_consistent() -> None:
    """Leaving a feature out fails where the kind is declared; so do features that need another."""
    events = frozenset({ev.SERVER_ACCEPTS})
    with pytest.raises(TypeError, match="keeps_series"):
        Capabilities(replies=True, events=events, latencies=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="success reply"):
        Capabilities(replies=False, events=events, keeps_series=True, latencies=True)
    with pytest.raises(TypeError, match="keeps_series=True"):
        Capabilities(replies=True, events=events, keeps_series=False, latencies=True, series=("accepted",))
    with pytest.raises(ValueError, match="unknown feature"):
        CONTROLS["QueueServer"].CAPS.has("timeouts")


def test_every_feature_a_table_needs_is_one_a_kind_declares() -> None:
    needed = {feature for _, feature in FEATURE_METRICS} | {o.needs for o in OUTPUTS if o.needs}
    assert needed <= set(FEATURES)


# Kinds with a mix of features no shipped server has (not registered: only their declarations
# are read): everything that follows from the features must follow without an edit.
class _SeriesLocking(CONTROLS["LockingServer"]):  # type: ignore[misc, valid-type]
    """Keeps series but sends no replies (so no timeouts, latencies or recovery)."""

    CAPS = Capabilities(replies=False, keeps_series=True, latencies=False,
                        events=CONTROLS["LockingServer"].CAPS.events, series=("accepted",))


class _ReplyingLocking(CONTROLS["LockingServer"]):  # type: ignore[misc, valid-type]
    """Replies with latencies but keeps no series."""

    CAPS = Capabilities(replies=True, keeps_series=False, latencies=True,
                        events=CONTROLS["LockingServer"].CAPS.events)


def _as(kind: type, **changes: Any):
    base = make_spec("LockingServer")
    return replace(base, control=kind(**CONTROL_PARAMS["LockingServer"]), **changes)


def test_a_kind_with_series_but_no_replies_is_served_by_its_declaration() -> None:
    spec = _as(_SeriesLocking, horizon=1000.0)
    plain = _as(CONTROLS["LockingServer"], horizon=1000.0)
    # the overload files (those of [[simulation.tiers]] only with tiers, of [simulation.fleet] with a fleet)
    assert [o.suffix for o in outputs_for(spec)] == [o.suffix for o in OUTPUTS if not o.tiered and not o.fleet]
    names = metric_names(spec)
    assert "goodput" in names and "p50" not in names and "p99" not in names
    assert default_metric(spec) == "goodput" and not spec.caps.recovery
    assert not has_verdict(replace(spec, outages=(Outage(start=10.0, duration=5.0),)))
    assert summary_headers(spec.caps) == ["Requests"]  # no latency, no recovery columns
    # Its series buckets count in the memory estimate; a plain contention kind keeps none.
    assert estimate(spec, 1).memory > estimate(plain, 1).memory


def test_a_kind_that_replies_without_series_is_served_by_its_declaration() -> None:
    spec = _as(_ReplyingLocking)
    assert outputs_for(spec) == tuple(o for o in OUTPUTS if o.needs is None)
    assert metric_names(spec) == metric_names(make_spec("LockingServer"))  # no series metrics
    assert default_metric(spec) == "cost" and not spec.caps.recovery
    assert summary_headers(spec.caps) == ["Work", "Duration", "Gave up", "p50", "p99"]
