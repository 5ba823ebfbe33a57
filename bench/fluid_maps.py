"""Time the fluid and adaptive maps of an explore config against its full simulation, and
compare their recover/collapse boundaries (issue 22's goals: the fluid map of
examples/metastability.toml in <= 2 s, the adaptive one >= 5x faster than the full simulation
with the same boundary).

Usage: python bench/fluid_maps.py [CONFIG] [--workers N] [--cache DIR] [--skip-full]

The full simulation and the adaptive map run without a cache (so their times are honest) unless
--cache DIR is given, in which case the full map is read from (or written to) that cache and its
time is not reported. Prints one line per measurement and, per strategy, each row's first
collapse (grid step along the first axis) for the full, fluid and adaptive maps.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim.exploration.backends import LocalBackend  # noqa: E402
from sim.exploration.cache import CellCache  # noqa: E402
from sim.exploration.methods import recovered_state, run_explores_by  # noqa: E402
from sim.exploration.plan import load_document  # noqa: E402
from sim.exploration.runner import run_explores  # noqa: E402
from sim.fluid.cells import fluid_runs  # noqa: E402


def states(result) -> np.ndarray:
    """[cell, strategy]: 1 recovered (most runs), 0 collapsed, nan no verdict."""
    return np.array([[recovered_state(cr.verdict(s)) for s in range(len(cr.labels))] for cr in result.cells])


def first_collapse(state: np.ndarray, shape: tuple[int, ...]) -> list[list[int]]:
    """Per strategy, per row of the second axis: the first step along the first axis that
    collapsed (the axis's length when none did)."""
    out = []
    for s in range(state.shape[1]):
        grid = state[:, s].reshape(shape[0], -1)
        out.append([int(np.argmax(col == 0)) if (col == 0).any() else shape[0] for col in grid.T])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default=str(ROOT / "examples" / "metastability.toml"))
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--cache", type=Path, default=None, help="read/write the full map's cells here")
    parser.add_argument("--skip-full", action="store_true", help="no full simulation (fluid and adaptive only)")
    args = parser.parse_args()
    plan = load_document(args.config).explores[0]
    pairs = [(c.spec, s) for c in plan.cells for s in range(len(c.spec.strategies))]
    best = []
    for _ in range(3):
        start = time.perf_counter()
        runs = fluid_runs(pairs)
        best.append(time.perf_counter() - start)
    print(f"fluid map: {len(pairs)} (cell, strategy) pairs in {min(best):.2f} s (best of 3; "
          f"{', '.join(f'{t:.2f}' for t in best)})")
    fluid = np.array([[r.values["recovered"] if r.values else np.nan for r in runs[i:i + len(plan.base.strategies)]]
                      for i in range(0, len(runs), len(plan.base.strategies))])
    backend = LocalBackend(args.workers)
    start = time.perf_counter()
    (adaptive,), notes = run_explores_by("adaptive", [plan], backend, CellCache(None))
    adaptive_seconds = time.perf_counter() - start
    for note in notes:
        print(note)
    simulated = sum(m != "fluid" for tags in adaptive.methods for m in tags)
    print(f"adaptive map: {adaptive_seconds:.1f} s, {simulated} of {len(pairs)} pairs simulated")
    shape = plan.shape
    rows = {"fluid": first_collapse(fluid, shape), "adaptive": first_collapse(states(adaptive), shape)}
    if not args.skip_full:
        start = time.perf_counter()
        (full,) = run_explores([plan], backend, CellCache(args.cache))
        full_seconds = time.perf_counter() - start
        full_state = states(full)
        if args.cache is None:
            print(f"full simulation: {full_seconds:.1f} s; adaptive is {full_seconds / adaptive_seconds:.1f}x faster")
        agree = float(np.mean(fluid == full_state))
        print(f"fluid vs simulation: the same verdict in {agree:.1%} of the pairs "
              f"({int(np.sum(fluid != full_state))} differ)")
        adaptive_agree = float(np.mean(states(adaptive) == full_state))
        print(f"adaptive vs simulation: the same verdict in {adaptive_agree:.1%} of the pairs")
        rows = {"simulation": first_collapse(full_state, shape), **rows}
    for s, label in enumerate(plan.base.labels):
        print(f"{label}: first collapse along {plan.axes[0].name} per {plan.axes[1].name if len(shape) > 1 else 'map'}")
        for name, table in rows.items():
            print(f"  {name:>10}: {table[s]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
