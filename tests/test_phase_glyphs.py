"""The phase pane's analysis (``sim.phase.glyphs``): a drift's arrow, a return probability's
band, and a recorded run's path mapped onto the grid's cells (issue 22)."""

from __future__ import annotations

import numpy as np
import pytest

from sim.analysis.phase_path import PhasePath
from sim.phase.glyphs import STILL, arrow, band, grid_cell, trajectory
from sim.phase.grid import PhaseGrid

GRID = PhaseGrid(size=5, work_max=40, orbit_max=20)  # steps: 10 work, 5 orbit per cell


@pytest.mark.parametrize(("d_work", "d_orbit", "glyph"), [
    (1, 0, "→"), (1, 1, "↗"), (0, 1, "↑"), (-1, 1, "↖"), (-1, 0, "←"), (-1, -1, "↙"),
    (0, -1, "↓"), (1, -1, "↘"), (1, 0.3, "→"), (0.3, 1, "↑")])
def test_a_drift_points_to_the_nearest_eighth_of_a_turn(d_work: float, d_orbit: float, glyph: str) -> None:
    assert arrow(d_work, d_orbit, (1.0, 1.0), horizon=1.0) == glyph


def test_the_direction_is_measured_in_cells() -> None:
    # 10 work per cell and 5 orbit per cell: +10 work and +5 orbit is one cell each way.
    assert arrow(10, 5, GRID.steps, horizon=1.0) == "↗"
    assert arrow(10, 0.5, GRID.steps, horizon=1.0) == "→"


def test_a_drift_of_less_than_a_tenth_of_a_cell_is_still() -> None:
    assert arrow(0.5, 0.2, GRID.steps, horizon=1.0) == STILL
    assert arrow(0.5, 0.2, GRID.steps, horizon=10.0) == "↗"  # 0.5 and 0.4 of a cell
    assert arrow(float("nan"), 1.0, GRID.steps, horizon=1.0) == STILL


@pytest.mark.parametrize(("p", "name"), [(1.0, "returns"), (0.9, "returns"), (0.89, "likely"),
                                         (0.5, "likely"), (0.3, "unlikely"), (0.1, "stays"),
                                         (0.0, "stays")])
def test_return_probability_bands(p: float, name: str) -> None:
    assert band(p) == name


def test_a_state_maps_to_its_nearest_cell_rows_from_the_top() -> None:
    assert grid_cell(GRID, 0, 0) == (0, 4)
    assert grid_cell(GRID, 40, 20) == (4, 0)
    assert grid_cell(GRID, 14, 8) == (1, 2)  # 1.4 cells of work, 1.6 of orbit
    assert grid_cell(GRID, 400, -3) == (4, 4)  # beyond the grid: its edge


def path(states: list[tuple[int, int]]) -> PhasePath:
    return PhasePath(np.arange(len(states), dtype=float), np.array([w for w, _ in states]),
                     np.array([o for _, o in states]))


def test_the_trajectory_up_to_the_cursor_is_its_cells_in_order_without_repeats() -> None:
    run = path([(0, 0), (1, 0), (12, 1), (21, 6), (11, 1), (0, 0), (60, 25)])
    at_3 = trajectory(run, 3, GRID)
    assert at_3 is not None
    assert at_3.current == (2, 3) and (at_3.work, at_3.orbit) == (21, 6)
    assert at_3.trail == ((0, 4), (1, 4))
    at_5 = trajectory(run, 5, GRID)
    assert at_5.current == (0, 4) and at_5.trail == ((1, 4), (2, 3)) and not at_5.off_grid
    last = trajectory(run, 6, GRID)
    assert last.current == (4, 0) and last.off_grid
    assert trajectory(run, -1, GRID) is None
