"""The recover/collapse map of ``examples/metastability.toml`` (study 003's server, outage length
× base load): the boundary exists and moves the expected way with the load.

- **The boundary exists**: along the outage axis the recovered fraction goes from ≥ 0.9 to ≤ 0.1
  between neighbouring cells (the explore issue's definition of a sharp boundary).
- **It moves with the load**: the longest outage the server rides out (every shorter one too,
  recovered in at least half the runs: the PNG's line) is no longer at a lighter load than at a
  heavier one, and strictly shorter at the heaviest load than at the lightest. More load means
  more clients with a request waiting when the server resumes, so a larger burst to absorb.
- Long outages: constant retries stay collapsed, both exponential backoffs recover (their
  clients sleep long by then, so the resume is quiet): study 003's own finding.

The fast test runs a reduced map. Clients, ``concurrency_limit`` and ``k`` are divided by 5
(1000 → 200, 30 → 6, 15 → 3): the server's latency depends on the concurrency only through
``(c − limit) / k``, so with the think time unchanged every client sees the same dynamics in the
fluid limit (the burst at a resume, the arrival rate and the limit all scale with the client
count), for a fifth of the events. Checked, not assumed: the scaled map at seeds 0, 1 and 3
agrees with the 1000-client map cell for cell except for cells on the edge (README, study
notes). Its grid keeps two loads (think time 4 s and 10 s, values 0 and 4 of the example's
axis) and every other outage value (1.5, 3.7, 8.8, 32.5 s), so each tested cell is at least one
example grid step from the edge in every map we ran. The ``slow`` tests run the example as
shipped (1000 clients, 12 × 8, three strategies) and the scaled full map at two more seeds.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from sim.config import read_document
from sim.explore.backends import LocalBackend
from sim.explore.cache import CellCache
from sim.explore.grid import RECOVERED, COLLAPSED, fraction_grid, sharp_edges, tolerated
from sim.explore.plan import ExplorePlan, parse_document
from sim.explore.runner import ExploreResult, run_explores

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "metastability.toml"
SCALE = 5  # clients, concurrency_limit and k divided by this (see the module docstring)
BACKOFFS = ("expo backoff", "full jitter")


def example_document(scale: int = 1, seed: int | None = None, outages: list[int] | None = None,
                     loads: list[int] | None = None) -> dict:
    """The example's TOML document, scaled down by ``scale``, its axes cut to the given
    positions of the example's own values (None: all)."""
    data = copy.deepcopy(read_document(EXAMPLE))
    (table,) = data["simulation"]
    full = parse_document(copy.deepcopy(data), str(EXAMPLE)).explores[0]
    if scale != 1:
        table["clients"] = [table["clients"][0] // scale]
        table["concurrency_limit"] //= scale
        table["k"] /= scale
    if seed is not None:
        data["seed"] = seed
    for i, positions in enumerate((outages, loads)):
        if positions is not None:
            axis = table["explore"]["axes"][i]
            values = [full.axes[i].values[p] for p in positions]
            table["explore"]["axes"][i] = {"key": axis["key"], "label": axis["label"], "values": values}
    return data


def run_map(data: dict) -> ExploreResult:
    plan: ExplorePlan = parse_document(data, str(EXAMPLE)).explores[0]
    (result,) = run_explores([plan], LocalBackend(), CellCache(None))
    return result


def check_boundary_moves_with_load(result: ExploreResult) -> dict[str, list[int | None]]:
    """The two properties of the module docstring for every strategy; returns the tolerated
    outage index per load (lightest load last) for further checks."""
    plan = result.plan
    assert [a.path.text for a in plan.axes] == ["outages[0].duration", "think_time"]
    assert list(plan.axes[1].values) == sorted(plan.axes[1].values)  # heaviest load first
    out = {}
    for s, label in enumerate(plan.base.labels):
        fractions = fraction_grid(plan, result.cells, s)
        falls = [e for e in sharp_edges(fractions) if e.falls]
        assert falls, (label, fractions)
        assert fractions[falls[0].before, falls[0].row] >= RECOVERED
        assert fractions[falls[0].before + 1, falls[0].row] <= COLLAPSED
        reach = [-1 if t is None else t for t in tolerated(fractions)]
        assert all(a <= b for a, b in zip(reach, reach[1:])), (label, reach)
        assert reach[0] < reach[-1], (label, reach)
        out[label] = reach
    return out


def test_reduced_map_boundary_exists_and_moves_with_load() -> None:
    result = run_map(example_document(SCALE, outages=[1, 3, 5, 8], loads=[0, 4]))
    plan = result.plan
    reach = check_boundary_moves_with_load(result)
    heavy, light = 0, 1
    for s, label in enumerate(plan.base.labels):
        fractions = fraction_grid(plan, result.cells, s)
        # At the heavy load every strategy tips between 1.5 s and 3.7 s of outage: the first
        # retries of all three are far shorter than the 2 s timeout, so the burst at the resume
        # is the same whatever the strategy.
        assert fractions[0, heavy] >= RECOVERED and fractions[1, heavy] <= COLLAPSED, label
        assert reach[label][heavy] == 0 and reach[label][light] >= 1, label
        # After the 32.5 s outage: constant stays collapsed at both loads, backoff recovers.
        expected = (RECOVERED, np.inf) if label in BACKOFFS else (-np.inf, COLLAPSED)
        for load in (heavy, light):
            assert expected[0] <= fractions[3, load] <= expected[1], (label, load, fractions[3])


@pytest.mark.slow
def test_the_example_map_boundary_exists_and_moves_with_load() -> None:
    check_boundary_moves_with_load(run_map(example_document()))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_the_scaled_map_keeps_its_boundary_at_other_seeds(seed: int) -> None:
    check_boundary_moves_with_load(run_map(example_document(SCALE, seed=seed)))
