"""Adding a strategy or a control is one small class plus one registry entry (``@register``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from heapq import heappush

import pytest

from sim.settings.config import parse_config
from sim.core import events
from sim.runs.engine import record_run, run_metrics
from sim.core.wiring import Wiring
from sim.vocabulary.errors import ConfigError, ParamError
from sim.models import controls, strategies


@pytest.fixture
def extensions() -> Iterator[tuple[type, type, type]]:
    """Register a new strategy and two new controls, exactly as a contributor would; unregister after."""

    @strategies.register
    @dataclass(frozen=True, kw_only=True)
    class Fibonacci(strategies.Strategy):
        """unit·1, 1, 2, 3, 5, ... (no jitter)."""

        unit: float = 1.0

        def validate(self) -> None:
            if not self.unit > 0:
                raise ParamError("unit", f"must be > 0, got {self.unit!r}")

        def delays(self, uniform: strategies.Uniform) -> Iterator[float]:
            a, b = 1.0, 1.0
            while True:
                yield self.unit * a
                a, b = b, a + b

    @controls.register
    @dataclass(frozen=True, kw_only=True)
    class AcceptAllServer(controls.Control):
        """Accepts every write at once."""

        CAPS = controls.Capabilities(replies=False, keeps_series=False, latencies=False,
                                     events=frozenset({events.SERVER_ACCEPTS}))

        def build(self, wiring: Wiring) -> controls.ServerHandlers:
            accepts = events.pack(events.SERVER_ACCEPTS)
            return controls.ServerHandlers(lambda t, c, a: accepts)

    @controls.register
    @dataclass(frozen=True, kw_only=True)
    class RejectFirstServer(controls.Control):
        """Rejects the first ``rejections`` writes it receives, then accepts everything."""

        CAPS = controls.Capabilities(replies=False, keeps_series=False, latencies=False,
                                     events=frozenset({events.SERVER_REJECTS, events.SERVER_ACCEPTS}))

        rejections: int

        def build(self, wiring: Wiring) -> controls.ServerHandlers:
            heap, seq, net, rejected = wiring.heap, wiring.seq, wiring.net, wiring.client_rejected
            left = self.rejections

            def receive_write(t: float, c: int, a: int) -> int:
                nonlocal left
                if left > 0:
                    left -= 1
                    heappush(heap, (t + net[c](), seq(), rejected, c, 0))
                    return events.pack(events.SERVER_REJECTS)
                return events.pack(events.SERVER_ACCEPTS)

            return controls.ServerHandlers(receive_write)

    try:
        yield Fibonacci, AcceptAllServer, RejectFirstServer
    finally:
        del strategies.STRATEGIES["Fibonacci"]
        del controls.CONTROLS["AcceptAllServer"]
        del controls.CONTROLS["RejectFirstServer"]


def _config(control: dict, strategy: dict, clients: int = 3) -> dict:
    return {"simulation": [{
        "title": "ext", "clients": [clients], "repeat": 2, "network_mu": 10.0, "network_sigma": 0.0,
        "work_to_duration": 1.0, **control, "strategies": [strategy],
    }]}


def test_new_control_runs_through_the_config(extensions: tuple[type, type, type]) -> None:
    spec = parse_config(_config({"control": "AcceptAllServer"}, {"type": "Fibonacci"}, 4)).simulations[0]
    m = run_metrics(spec, spec.strategies[0].strategy, 4, 0)
    assert (m.work, m.duration, m.gave_up, m.events) == (4, 10.0, 0, 8)


def test_new_strategy_delays_are_used(extensions: tuple[type, type, type]) -> None:
    spec = parse_config(_config({"control": "RejectFirstServer", "rejections": 4},
                                {"type": "Fibonacci", "unit": 3.0}, 1)).simulations[0]
    assert spec.labels == ("Fibonacci",)
    m = run_metrics(spec, spec.strategies[0].strategy, 1, 0)
    assert m.work == 5 and m.gave_up == 0
    run = record_run(spec, "Fibonacci", 1, 0)
    rows = run.history.rows()
    backoffs = [t for t, _, name, _ in rows if name == "client_backs_off"]
    requests = [t for t, _, name, _ in rows if name == "client_requests_write"]
    # Each retry follows its back-off by unit·Fibonacci(n): 3, 3, 6, 9.
    assert [r - b for b, r in zip(backoffs, requests[1:])] == [3.0, 3.0, 6.0, 9.0]
    # Network is N(10, 0): every round trip is exactly 20 ms.
    assert m.duration == 4 * 20.0 + 3 + 3 + 6 + 9 + 10.0
    assert run.metrics() == m


def test_new_classes_are_validated_like_builtins(extensions: tuple[type, type, type]) -> None:
    with pytest.raises(ConfigError, match="unit"):
        parse_config(_config({"control": "AcceptAllServer"}, {"type": "Fibonacci", "unit": 0.0}))
    with pytest.raises(ConfigError, match="rejections"):
        parse_config(_config({"control": "RejectFirstServer"}, {"type": "Fibonacci"}))
    with pytest.raises(ConfigError, match="Fibonacci"):
        parse_config(_config({"control": "AcceptAllServer"}, {"type": "Fibonaci"}))


def test_teardown_left_the_registries_clean() -> None:
    assert "Fibonacci" not in strategies.STRATEGIES
    assert "AcceptAllServer" not in controls.CONTROLS
    assert "RejectFirstServer" not in controls.CONTROLS
