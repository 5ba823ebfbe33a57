"""How often the recovery verdict calls an undisturbed queue "never recovered" (issue 34): an
M/M/c queue (a ``PoolServer`` of ``c`` workers, exponential service of 10 ms) under open Poisson
arrivals at load ρ, no retries, with an incident that changes nothing (``slowdown = 1.0``, 20 s
to 30 s of a 60 s horizon). Every verdict but "recovered" is a false alarm; "never" is the one
the rule bounds (≤ 1%).

Usage: nice python bench/calm_verdict.py [--runs 100] [--loads 0.8,0.9,0.95] [--pools 1,4,16]
           [--workers 1]

Prints, per load and pool size: runs recovered, never and undecided of ``--runs`` (seed 1,
repetitions 0 .. runs − 1). Prints figures; asserts nothing (tests/test_recovery_calm.py checks).
"""

from __future__ import annotations

import argparse
import math
import sys
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.settings.config import parse_config  # noqa: E402
from sim.runs import fast  # noqa: E402
from sim.runs.engine import run_metrics  # noqa: E402
from sim.settings.spec import SimulationSpec  # noqa: E402

SERVICE_MS = 10.0
CLIENTS_PER_WORKER = 20


def calm_spec(load: float, pool: int, seed: int = 1, horizon: float = 60000.0) -> SimulationSpec:
    """M/M/``pool`` at ``load``: 20 clients a worker, each an open Poisson source of mean gap
    ``20 × 10 ms / load`` (so ``load × pool / 10 ms`` calls per ms in all)."""
    clients = CLIENTS_PER_WORKER * pool
    block = {
        "title": f"calm_{load:g}_{pool}", "clients": [clients], "repeat": 1, "seed": seed,
        "network_mu": 0.0, "network_sigma": 0.0, "work_to_duration": 0.0,
        "control": "PoolServer", "workers": pool, "service_time": SERVICE_MS,
        "service_distribution": "exponential", "workload": "open",
        "think_time": CLIENTS_PER_WORKER * SERVICE_MS / load, "horizon": horizon, "timeout": 10000.0,
        "incidents": [{"start": 20000.0, "duration": 10000.0, "slowdown": 1.0}],
        "strategies": [{"type": "Constant", "constant": 0.0, "max_attempts": 1, "name": "no retries"}],
    }
    (spec,) = parse_config({"simulation": [block]}).simulations
    return spec


def verdict(job: tuple[float, int, int]) -> str:
    load, pool, repetition = job
    spec = calm_spec(load, pool)
    t = run_metrics(spec, spec.strategies[0].chain, spec.clients[0], repetition).recovery_time
    return "undecided" if t is None else "never" if math.isnan(t) else "recovered"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--loads", default="0.8,0.9,0.95")
    parser.add_argument("--pools", default="1,4,16")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    loads = [float(x) for x in args.loads.split(",")]
    pools = [int(x) for x in args.pools.split(",")]
    jobs = [(load, pool, r) for load in loads for pool in pools for r in range(args.runs)]
    fast.warm_up()
    with Pool(args.workers) as pool:
        out = pool.map(verdict, jobs, chunksize=8)
    print(f"| load | pool | recovered | never | undecided |  ({args.runs} runs a cell)")
    for i, (load, c) in enumerate((load, c) for load in loads for c in pools):
        cell = out[i * args.runs:(i + 1) * args.runs]
        print(f"| {load:g} | {c} | {cell.count('recovered')} | {cell.count('never')} | {cell.count('undecided')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
