"""The terminal app's non-visual parts: switching runs, playback arithmetic, timeline binning."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim.settings.config import load_config
from sim.core import events as ev
from sim.core.history import History
from tui.view.rundata import RunData
from tui.state.playback import SPEEDS, advance, change_speed, clamp, initial_speed
from tui.state.source import ConfigSource, ReplaySource, Selection
from tui.view.timeline_grid import build_grid, lane_labels

TINY = Path(__file__).parent / "fixtures" / "tiny.toml"


def test_cycling_wraps_and_keeps_the_finer_axes_when_they_exist() -> None:
    source = ConfigSource(load_config(TINY))
    start = source.initial()
    assert start == Selection("Tiny_Locking", "Constant", 3, 0, 3)
    assert source.cycle(start, "clients", -1).clients == 1
    assert source.cycle(start, "clients", 2).clients == 1  # 3 → 5 → 1
    later = source.cycle(source.cycle(start, "repetition", 1), "strategy", 1)
    assert later == Selection("Tiny_Locking", "FullJitteredExpo", 3, 1, 3)
    # Tiny_OCC has client counts 2 and 4: the nearest to 3 is kept (ties go to the smaller).
    other = source.cycle(later, "simulation", 1)
    assert other == Selection("Tiny_OCC", "FullJitteredExpo", 2, 1, 3)
    assert source.cycle(other, "simulation", 1).simulation == "Tiny_Locking"


def test_reseeding_changes_every_simulation() -> None:
    source = ConfigSource(load_config(TINY)).with_seed(11)
    assert [source.seed(t) for t in source.simulations()] == [11, 11]
    assert source.initial().seed == 11


def test_replay_axes_come_from_the_runs_in_the_file() -> None:
    h = History()
    h.append(0.0, 0, ev.pack(ev.CLIENT_REQUESTS_WRITE))
    runs = {("a", "x", 6, 0): h, ("a", "x", 6, 1): h, ("a", "y", 6, 0): h, ("b", "x", 2, 0): h}
    source = ReplaySource(runs, Path("e.csv"))
    assert source.simulations() == ["a", "b"]
    assert source.strategies("a") == ["x", "y"]
    start = source.initial()
    assert start == Selection("a", "x", 6, 0, None)
    assert source.cycle(start, "repetition", 1).repetition == 1
    # Strategy y has only repetition 0: switching to it from repetition 1 lands on 0.
    assert source.cycle(source.cycle(start, "repetition", 1), "strategy", 1) == \
        Selection("a", "y", 6, 0, None)
    assert source.cycle(start, "simulation", 1) == Selection("b", "x", 2, 0, None)


def test_speeds() -> None:
    assert initial_speed(79.0) == 2  # the run plays in about 20 s or more
    assert initial_speed(0.01) == SPEEDS[0]
    assert change_speed(2, 1) == 5 and change_speed(2, -1) == 1
    assert change_speed(SPEEDS[-1], 1) == SPEEDS[-1] and change_speed(SPEEDS[0], -3) == SPEEDS[0]


def test_advance_puts_the_cursor_on_the_last_event_at_or_before_the_clock() -> None:
    times = np.array([0.0, 0.0, 1.0, 2.5, 4.0])
    assert advance(times, 0.0, 0.5, 2.0) == (2, 1.0, False)
    assert advance(times, 1.0, 0.5, 2.0) == (2, 2.0, False)
    assert advance(times, 3.0, 10.0, 2.0) == (4, 4.0, True)
    assert clamp(-3, 5) == 0 and clamp(9, 5) == 4 and clamp(0, 0) == 0


def test_grid_keeps_the_highest_ranked_event_of_each_cell() -> None:
    rng = np.random.default_rng(1)
    n = 5000
    h = History()
    h.times = np.sort(rng.uniform(0, 100, n))
    h.clients = rng.integers(-1, 37, n)  # -1: events of the server alone
    h.packed = rng.integers(0, len(ev.EVENT_NAMES), n)
    data = RunData.from_history(h, 37)
    grid = build_grid(data, 10, 30)
    clients = np.zeros((10, 30), np.int8)
    server = np.zeros(30, np.int8)
    for lane, column, rank, is_server, client in zip(grid.lane_of_event, grid.column_of_event,
                                                     data.ranks, data.server_mask, data.clients):
        if client >= 0:
            assert lane == client // 4  # 37 clients in 10 lanes: 4 per lane (the last 1)
            clients[lane, column] = max(clients[lane, column], rank)
        if is_server:
            server[column] = max(server[column], rank)
    assert (grid.clients == clients).all() and (grid.server == server).all()
    assert grid.column_start[-1] == n


def test_lane_labels() -> None:
    assert lane_labels(3, 3) == ("c0", "c1", "c2")
    assert lane_labels(10, 3) == ("c0-3", "c4-7", "c8-9")
