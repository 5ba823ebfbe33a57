"""The server defences under an incident (README, "Server defences under an incident"): the
figures of its table, re-run from ``examples/service_incident.toml`` at any load, incident
length, pool size and seed.

Usage: nice python bench/defences.py [--reps 20] [--load 0.8] [--incident 10] [--pool 4]
           [--seed 0] [--defences FIFO,Cancel_Dequeue,...] [--workers 2]

``--pool W`` sets the example's ``workers`` and scales its clients with it (8 clients a worker
is the example's 80% load: each client offers 1 call / 100 ms, a worker serves 1 / 10 ms);
``--load`` then sets the clients to ``load × 10 × W``. ``--incident`` is the capacity
incident's length in seconds (it starts at 20 s; the horizon stays 60 s). Prints, per defence
and client strategy: repetitions recovered (the recovery verdict), the median recovery time,
goodput (successes/s) averaged over the incident's buckets and over 50–60 s, amplification
(requests over the same defence's requests without retries) and ``server_drops`` per run.
Prints figures; asserts nothing (tests/test_service_incident.py checks the README's claims).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sim  # noqa: E402

EXAMPLE = ROOT / "examples" / "service_incident.toml"
CLIENTS_PER_WORKER_AT_FULL_LOAD = 10  # a worker serves 1 call / 10 ms, a client offers 1 / 100 ms
INCIDENT_START_S = 20.0
LATE_WINDOW_S = (50.0, 60.0)


def study_config(reps: int, load: float, incident_s: float, pool: int, defences: list[str]) -> str:
    """The example's text with the given repetitions, load, incident length, pool size and
    defences (simulation titles without their ``Pool_`` prefix)."""
    head, *blocks = EXAMPLE.read_text(encoding="utf-8").split("[[simulation]]")
    clients = round(load * CLIENTS_PER_WORKER_AT_FULL_LOAD * pool)
    kept = []
    for block in blocks:
        title = re.search(r'title = "Pool_(\w+)"', block).group(1)
        if defences and title not in defences:
            continue
        block = re.sub(r"repeat = \d+", f"repeat = {reps}", block)
        block = re.sub(r"clients = \[\d+\]", f"clients = [{clients}]", block)
        block = re.sub(r"\nworkers = \d+", f"\nworkers = {pool}", block)
        block = re.sub(r"duration = [\d.]+, capacity", f"duration = {incident_s * 1000.0}, capacity", block)
        kept.append("[[simulation]]" + block)
    if not kept:
        sys.exit(f"bench/defences.py: no defence matches {defences}")
    return head + "".join(kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--load", type=float, default=0.8)
    parser.add_argument("--incident", type=float, default=10.0, help="incident length, seconds")
    parser.add_argument("--pool", type=int, default=4, help="workers in the pool")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--defences", default="", help="comma-separated titles without Pool_")
    parser.add_argument("--workers", type=int, default=None, help="processes")
    args = parser.parse_args()
    defences = [d for d in args.defences.split(",") if d]
    text = study_config(args.reps, args.load, args.incident, args.pool, defences)
    results = sim.run(text, seed=args.seed, workers=args.workers)

    incident = (INCIDENT_START_S, INCIDENT_START_S + args.incident)
    goodput: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    drops: dict[tuple[str, str], float] = defaultdict(float)
    for row in results.rows("timeseries"):
        key = (row["simulation"], row["strategy"])
        start_s = float(row["bucket_start"]) / 1000.0
        for name, (lo, hi) in (("incident", incident), ("late", LATE_WINDOW_S)):
            if lo <= start_s < hi:
                goodput[key][name].append(float(row["goodput"]))
        drops[key] += float(row.get("server_drops") or 0)
    width_s = results.config.simulations[0].bucket_width / 1000.0
    latency = results.rows("latency")
    no_retries = {r["simulation"]: float(r["requests"]) for r in latency if r["strategy"] == "no retries"}
    clients = round(args.load * CLIENTS_PER_WORKER_AT_FULL_LOAD * args.pool)
    print(f"{args.pool} workers, {clients} clients ({args.load:.0%} load), {args.incident:g} s at half "
          f"capacity from {INCIDENT_START_S:g} s, {args.reps} repetitions, seed {args.seed}")
    print(f"{'defence':<22} {'clients':<11} {'recovered':>9} {'median':>8} {'gp incident':>11} "
          f"{'gp 50-60s':>10} {'amplif.':>8} {'drops/run':>10}")
    for r in latency:
        key = (r["simulation"], r["strategy"])
        median = r["recovery_time_median"]
        median_s = "—" if median in ("", None) else f"{float(median) / 1000.0:.1f} s"
        gp = {name: statistics.fmean(v) / width_s if v else float("nan") for name, v in goodput[key].items()}
        amplification = float(r["requests"]) / no_retries[r["simulation"]]
        print(f"{r['simulation'].removeprefix('Pool_'):<22} {r['strategy']:<11} "
              f"{r['recovered_runs']:>4}/{r['runs']:<4} {median_s:>8} {gp.get('incident', float('nan')):>11,.0f} "
              f"{gp.get('late', float('nan')):>10,.0f} {amplification:>8.2f} {drops[key] / args.reps:>10,.0f}")


if __name__ == "__main__":
    main()
