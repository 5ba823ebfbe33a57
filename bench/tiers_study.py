"""Retries at every layer, with enough repetitions to quote (README "Retries at every layer").

Usage: nice python bench/tiers_study.py [--reps 20] [--clients 64,96,128] [--seed 0]
           [--simulations Every_Layer,Top_Only,Retry_Budget,Deadlines] [--workers 1]

Runs each simulation of ``examples/three_tiers.toml`` (its titles, so its random streams: the
first repetitions are the example's own) at each client count for ``--reps`` repetitions and
prints, per simulation and load: how many runs never recovered from the bottom's incident, how
many recovered, how many could not be judged (a baseline too noisy), the share of client calls
that succeeded, and the mean amplification at each tier. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.settings.config import load_config  # noqa: E402
from sim.runs.engine import run_metrics  # noqa: E402

EXAMPLE = ROOT / "examples" / "three_tiers.toml"


def cell(args: tuple[str, int, int, int]) -> tuple[str, int, list[tuple[float | None, int, int, list[int]]]]:
    """One simulation at one client count: per repetition (recovery time, successes, offered,
    arrivals per tier)."""
    title, clients, reps, seed = args
    spec = replace(load_config(EXAMPLE).simulation(title), clients=(clients,), repeat=reps, seed=seed)
    chain = spec.strategies[0].chain
    runs = []
    for r in range(reps):
        m = run_metrics(spec, chain, clients, r)
        runs.append((m.recovery_time, m.successes, m.offered, [t.requests for t in m.tiers]))
    return title, clients, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--clients", default="64,96,128")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--simulations", default="Every_Layer,Top_Only,Retry_Budget,Deadlines")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    jobs = [(title, int(n), args.reps, args.seed) for title in args.simulations.split(",")
            for n in args.clients.split(",")]
    with Pool(args.workers) as pool:
        results = pool.map(cell, jobs, chunksize=1)
    print("simulation    clients  never  recovered  undecided  calls ok  amplification (tiers 1, 2, 3)")
    for title, clients, runs in results:
        never = sum(1 for rec, *_ in runs if rec is not None and math.isnan(rec))
        undecided = sum(1 for rec, *_ in runs if rec is None)
        recovered = len(runs) - never - undecided
        offered = sum(o for _, _, o, _ in runs)
        ok = sum(s for _, s, _, _ in runs) / offered
        amps = [sum(a[i] for *_, a in runs) / offered for i in range(len(runs[0][3]))]
        print(f"{title:<13} {clients:>7}  {never:>5}  {recovered:>9}  {undecided:>9}  {ok:>8.1%}  "
              + ", ".join(f"{a:.2f}" for a in amps), flush=True)


if __name__ == "__main__":
    main()
