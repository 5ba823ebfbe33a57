"""A stopped server's accept queue (``backlog``, ``backlog_overflow``, ``abandoned``), checked on the
gate alone and then in runs of study 003's example.

- A SYN that finds the queue full is sent again by the client's TCP stack 1, 3, 7, 15, 31 and
  63 s after its first try (Linux: tcp_syn_retries = 6, initial timeout 1 s, doubling); after
  the last, connect() fails at 127 s. It stops as soon as its client stops waiting for the
  attempt. A retransmit that finds room is held; one after the resume is served at once.
- At the resume every held request is served (``abandoned = "serve"``, Go's net/http), or only
  those whose client still waits (``"drop"``).
"""

from __future__ import annotations

from dataclasses import replace
from heapq import heappop
from pathlib import Path

import numpy as np
import pytest
from support import make_spec

from sim.settings.config import load_config
from sim.pipeline import unbounded_backlog_warning
from sim.core.events import NO_EVENT
from sim.core.streams import clipped_normal
from sim.core.wiring import Wiring
from sim.vocabulary.errors import ConfigError
from sim.models.outage import DEFAULT_BACKLOG, SYN_GIVE_UP_GAP_S, SYN_RETRY_GAPS_S, AcceptQueue, OutageGate
from sim.models.workloads import Outage
from sim.runs.engine import _build, _due_first, run_metrics
from sim.settings.spec import Config

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


class Door:
    """One gate in front of a server that logs what reaches it; clients wait until ``patience``."""

    def __init__(self, outages: tuple[Outage, ...], queue: AcceptQueue, patience: float = 1e12) -> None:
        self.wiring = Wiring(lambda purpose: np.random.default_rng(purpose), 4, clipped_normal(0.0, 0.0), None)
        self.gate = OutageGate(self.wiring, outages, queue)
        self.served: list[tuple[float, int, int]] = []
        self.failed: list[tuple[float, int, int]] = []
        self.patience = patience
        self.sent: dict[tuple[int, int], float] = {}
        self.gate.still_waiting = lambda c, a: self.now < self.sent[(c, a)] + self.patience
        self.gate.connect_failed = lambda t, c, a: self.failed.append((t, c, a)) or NO_EVENT
        self.enter = self.gate.wrap(lambda t, c, a: self.served.append((t, c, a)) or NO_EVENT)
        self.now = 0.0

    def arrive(self, t: float, c: int, a: int) -> None:
        self.sent[(c, a)] = t
        self.wiring.heap.append((t, self.wiring.seq(), self.enter, c, a))

    def run(self) -> None:
        heap = self.wiring.heap
        heap.sort()
        while heap:
            t, _, handler, c, a = heappop(heap)
            self.now = t
            handler(t, c, a)


MS = 1000.0  # the configs' time unit is ms: one second
RETRIES_MS = np.cumsum(SYN_RETRY_GAPS_S) * MS  # 1, 3, 7, 15, 31, 63 s after the first try


def test_syn_retransmits_follow_linux_and_connect_fails_at_127_s() -> None:
    # A queue of one, full from the first arrival; the outage outlasts every retransmit.
    door = Door((Outage(0.0, 200 * MS),), AcceptQueue(backlog=1))
    door.arrive(5.0, 0, 1)
    door.arrive(10.0, 1, 1)
    door.run()
    assert door.gate.refused == 1 and door.gate.syn_retries == len(SYN_RETRY_GAPS_S)
    # connect() fails after the last retransmit's doubled wait: 127 s from the first try.
    give_up = 10.0 + (sum(SYN_RETRY_GAPS_S) + SYN_GIVE_UP_GAP_S) * MS
    assert door.failed == [(give_up, 1, 1)] and give_up == 10.0 + 127 * MS
    assert door.served == [(200 * MS, 0, 1)]  # the held one, at the resume


@pytest.mark.parametrize("end_s, served_at_s", [(0.5, 1), (2.0, 3), (5.0, 7), (40.0, 63)])
def test_a_retransmit_after_the_resume_is_served(end_s: float, served_at_s: float) -> None:
    door = Door((Outage(0.0, end_s * MS),), AcceptQueue(backlog=0))
    door.arrive(0.0, 2, 7)
    door.run()
    assert door.served == [(served_at_s * MS, 2, 7)] and door.failed == []
    assert door.gate.syn_retries == list(RETRIES_MS).index(served_at_s * MS) + 1


def test_retransmits_stop_when_the_client_stops_waiting() -> None:
    # A 2 s timeout: the retransmit at 1 s is the only one (the next would come at 3 s).
    door = Door((Outage(0.0, 60 * MS),), AcceptQueue(backlog=0), patience=2 * MS)
    door.arrive(0.0, 0, 1)
    door.run()
    assert door.gate.syn_retries == 1 and door.served == [] and door.failed == []


def test_a_retransmit_that_finds_room_is_held() -> None:
    # Two outages; the queue (one place) is emptied by the first resume, so the retransmit at
    # 1 s, inside the second outage, is held and served at its resume.
    door = Door((Outage(0.0, 500.0), Outage(600.0, 1000.0)), AcceptQueue(backlog=1))
    door.arrive(100.0, 0, 1)
    door.arrive(200.0, 1, 1)
    door.run()
    assert door.served == [(500.0, 0, 1), (1600.0, 1, 1)] and door.gate.syn_retries == 1


def test_overflow_drop_sends_no_retransmits() -> None:
    door = Door((Outage(0.0, 10 * MS),), AcceptQueue(backlog=0, overflow="drop"))
    door.arrive(0.0, 0, 1)
    door.run()
    assert door.gate.refused == 1 and door.gate.syn_retries == 0 and door.served == []


@pytest.mark.parametrize("abandoned", ["serve", "drop"])
def test_abandoned_requests_at_the_resume(abandoned: str) -> None:
    door = Door((Outage(0.0, 5 * MS),), AcceptQueue(abandoned=abandoned), patience=2 * MS)
    for c, t in enumerate([100.0, 3500.0, 4000.0]):  # the first client gave up at 2.1 s
        door.arrive(t, c, 1)
    door.run()
    served = [c for _, c, _ in door.served]
    assert served == ([0, 1, 2] if abandoned == "serve" else [1, 2])
    assert (door.gate.abandoned_served, door.gate.dropped) == ((1, 0) if abandoned == "serve" else (0, 1))


def test_syn_retry_in_ticks_is_refused() -> None:
    with pytest.raises(ValueError):
        AcceptQueue(backlog=1, unit_seconds=None).syn_gaps


# --- in runs -----------------------------------------------------------------------------------

def outage_example(seconds: float, **keys: object):
    (spec,) = load_config(EXAMPLES / "server_outage.toml").simulations
    start = spec.outages[0].start
    return replace(spec, outages=(Outage(start, seconds * MS),), horizon=start + seconds * MS + 30 * MS,
                   **keys)


def test_syn_retries_bring_refused_clients_back_within_their_timeout() -> None:
    """Study 003's example with the study's era accept queue (128 places): with "syn-retry", the
    attempts refused in the outage's last second come back in the second after the resume (their
    one retransmit within the 2 s timeout, 1 s after the first try), so the server accepts about
    that many more then than with "drop", where they are lost and their clients wait for their
    timeouts. Both runs are the same until the resume (retransmits in the outage draw nothing)."""
    accepted, late = {}, {}
    for overflow in ("syn-retry", "drop"):
        spec = outage_example(8, backlog=128, backlog_overflow=overflow, bucket=100.0)
        wiring, side = _build(spec, spec.strategies[0].chain, 1000, 0)
        gate, series = wiring.gate, wiring.series
        end = spec.outages[0].end
        refused_before = None
        while (queue := _due_first(wiring)) is not None:  # the heap and ``near``, as the engine pops them
            t, _, handler, c, a = heappop(queue)
            if refused_before is None and t >= end - MS:
                refused_before = gate.refused
            handler(t, c, a)
            if t < end:
                late[overflow] = gate.refused - refused_before if refused_before is not None else 0
        accepted[overflow] = sum(series.accepted[int(end / 100.0):int((end + MS) / 100.0)])
        assert gate.refused > 1000  # constant retries overflow 128 places many times over
        if overflow == "syn-retry":
            # Each refusal retransmits once (at 1 s) before the 2 s timeout; the next, at 3 s,
            # finds its client gone. Those refused in the first second of a full queue
            # retransmit into the same full queue, so most but not all are served.
            assert gate.refused / 2 < gate.syn_retries <= gate.refused
        else:
            assert gate.syn_retries == 0
        assert gate.abandoned_served > 0 and gate.dropped == 0
    assert late["syn-retry"] == late["drop"] > 100
    gained = accepted["syn-retry"] - accepted["drop"]
    # Every late refusal is served in the second after the resume; without retransmits none of
    # those clients sends again in that second (their 2 s timeout ends after it), so the gain is
    # the late refusals, give or take the new calls of one second (1000 clients / 10 s think
    # time = 100), which the busier server may shift either way.
    assert abs(gained - late["syn-retry"]) <= 100, (gained, late)


def test_abandoned_requests_in_runs() -> None:
    """Without a bound, "drop" counts the held requests whose client gave up and refuses none;
    "serve" drops none and serves them, so the server does more work and the run differs. (That
    "drop" without a bound is the former model byte for byte is checked by bench/csv_hashes.py:
    the metastability map and the app's fixtures set it and keep their hashes.)"""
    spec = outage_example(8, backlog=None, abandoned="drop")
    m = run_metrics(spec, spec.strategies[1].strategy, 1000, 0)
    assert m.dropped > 0 and m.refused == 0
    served = run_metrics(replace(spec, abandoned="serve"), spec.strategies[1].strategy, 1000, 0)
    assert served.dropped == 0 and served.refused == 0 and served.requests != m.requests


# --- config -----------------------------------------------------------------------------------

OPEN = dict(base_latency=100.0, concurrency_limit=30, factor=1.05, k=15.0,
            workload="poisson", think_time=10000.0, horizon=60000.0, timeout=2000.0, clients=[10],
            outages=[{"start": 10000.0, "duration": 5000.0}])


@pytest.mark.parametrize("keys, message", [
    ({"backlog": 8, "backlog_overflow": "syn"}, "key 'backlog_overflow': must be one of 'syn-retry', 'drop', got a string 'syn'"),
    ({"abandoned": "keep"}, "key 'abandoned': must be one of 'serve', 'drop'"),
    ({"backlog_overflow": "drop", "outages": []},
     "key 'backlog_overflow': says what happens beyond backlog, but backlog is not set"),
    ({"backlog_overflow": "drop", "backlog": "unbounded"},
     "key 'backlog_overflow': says what happens beyond backlog, but backlog = \"unbounded\""),
    ({"abandoned": "drop", "outages": []}, "key 'abandoned': says what a resumed server does"),
    ({"backlog": 8, "time_unit": "tick"}, "key 'backlog': beyond backlog a client's SYN is sent again"),
    ({"backlog": 8, "backlog_overflow": "syn-retry", "time_unit": "tick"}, "key 'backlog_overflow': beyond backlog"),
])
def test_accept_queue_mistakes_are_one_line(keys: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        make_spec("LatencyServer", **{**OPEN, **keys})
    text = str(info.value)
    assert message in text and "\n" not in text, text


def test_accept_queue_keys_load() -> None:
    spec = make_spec("LatencyServer", **OPEN, backlog=8, backlog_overflow="drop", abandoned="drop")
    assert (spec.backlog, spec.backlog_overflow, spec.abandoned) == (8, "drop", "drop")
    default = make_spec("LatencyServer", **OPEN)
    assert (default.backlog, default.backlog_overflow, default.abandoned) == (DEFAULT_BACKLOG, "syn-retry", "serve")
    ticks = make_spec("LatencyServer", **OPEN, backlog=8, backlog_overflow="drop", time_unit="tick")
    assert ticks.backlog_overflow == "drop"
    beyond_default = make_spec("LatencyServer", **OPEN, backlog_overflow="drop")  # beyond the default 128
    assert (beyond_default.backlog, beyond_default.backlog_overflow) == (DEFAULT_BACKLOG, "drop")
    assert make_spec("LatencyServer", **{**OPEN, "time_unit": "tick"}, backlog="unbounded").backlog is None


def test_the_default_accept_queue_is_a_go_server_on_linux_before_5_4() -> None:
    """Without ``backlog`` a replying server that stops gets Go's listen backlog on the post's
    Linux (somaxconn 128); ``"unbounded"`` asks for none, which is warned about in one line; a
    unit without seconds (no SYN retransmits) or a server without outages keeps no bound."""
    assert DEFAULT_BACKLOG == 128
    assert make_spec("LatencyServer", **OPEN).backlog == 128
    unbounded = make_spec("LatencyServer", **OPEN, backlog="unbounded")
    assert unbounded.backlog is None
    assert make_spec("LatencyServer", **{**OPEN, "time_unit": "tick"}).backlog is None
    assert make_spec("LatencyServer", **{**OPEN, "outages": []}).backlog is None
    config = Config("x.toml", (unbounded, make_spec("LatencyServer", **OPEN)))
    warning = unbounded_backlog_warning(config)
    assert warning is not None and "\n" not in warning
    assert repr(unbounded.title) in warning and "backlog = 128" in warning
    assert unbounded_backlog_warning(Config("x.toml", (make_spec("LatencyServer", **OPEN),))) is None
    with pytest.raises(ConfigError) as info:
        make_spec("LatencyServer", **OPEN, backlog="lots")
    assert "key 'backlog': must be a count of connections or 'unbounded'" in str(info.value)


def test_run_warns_once_about_an_unbounded_queue(tmp_path: Path, capsys) -> None:
    """``backoff-sim run`` of a config with outages and ``backlog = "unbounded"`` (the fixture's
    two client counts and two strategies) says so once, in one line, and still runs."""
    from sim.commands import cli

    fixture = Path(__file__).resolve().parent / "fixtures" / "tiny_outage.toml"
    assert cli.main(["run", str(fixture), "--out", str(tmp_path / "out"), "--quiet", "--workers", "1"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: 'Tiny outage': outages with an unbounded accept queue")
