"""Events per second of a fleet run (issue 35): a 20-host fleet against the same server alone.

Usage: nice python bench/fleet_speed.py [--hosts 20] [--balancer least_request] [--horizon 20000]
           [--runs 3]

Runs ``run_metrics`` (the sweep's path; a fleet never takes a compiled kernel) on open arrivals
at 60% load against PoolServer hosts (one worker each, exponential service of mean 10 ms; the
offered load grows with the hosts, so each host sees the same), for each balancer asked and for
one server of as many workers at the same load (no fleet; ``BACKOFF_SIM_PURE`` set so it takes
the reference engine too), and prints the best of ``--runs`` events per second for each. The
figures depend on the machine: prints them, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ["BACKOFF_SIM_PURE"] = "1"  # the reference engine for the server alone as well
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.settings.config import parse_config  # noqa: E402
from sim.runs.engine import run_metrics  # noqa: E402


def spec_for(hosts: int, balancer: str | None, horizon: float, outlier: bool):
    """The fleet of ``hosts`` behind ``balancer``, or (None) one server of as many workers."""
    clients = 6 * hosts  # a call every 100 ms each: 0.06/ms per host, 60% of its 0.1/ms
    table = {
        "title": "fleet_speed", "clients": [clients], "repeat": 1, "network_mu": 1.0, "network_sigma": 0.2,
        "control": "PoolServer", "workers": 1 if balancer is not None else hosts, "service_time": 10.0, "service_distribution": "exponential",
        "workload": "open", "think_time": 100.0, "horizon": horizon, "timeout": 1000.0,
        "strategies": [{"type": "FullJitteredExpo", "base": 10.0, "cap": 100.0, "max_attempts": 3}],
    }
    if balancer is not None:
        table["fleet"] = {"hosts": hosts, "balancer": balancer, "retry_other_host": True}
        if outlier:
            table["fleet"]["outlier_detection"] = {}
    return parse_config({"simulation": [table]}).simulations[0], clients


def rate(spec, clients: int, runs: int) -> tuple[float, int]:
    best = 0.0
    events = 0
    chain = spec.strategies[0].chain
    for r in range(runs):
        start = time.perf_counter()
        m = run_metrics(spec, chain, clients, r)
        elapsed = time.perf_counter() - start
        events = m.events
        best = max(best, m.events / elapsed)
    return best, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--balancer", default="round_robin,random,least_request,p2c,ring_hash")
    parser.add_argument("--horizon", type=float, default=20000.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--outlier", action="store_true", help="with outlier detection (Envoy's defaults)")
    args = parser.parse_args()
    alone, clients = spec_for(args.hosts, None, args.horizon, False)
    r, n = rate(alone, clients, args.runs)
    print(f"one server of {args.hosts} workers, the same load: {r:,.0f} events/s ({n:,} events a run)")
    for balancer in args.balancer.split(","):
        spec, clients = spec_for(args.hosts, balancer, args.horizon, args.outlier)
        r, n = rate(spec, clients, args.runs)
        print(f"{args.hosts} hosts, {balancer}: {r:,.0f} events/s ({n:,} events a run)")


if __name__ == "__main__":
    main()
