"""Study 003's tipping points, re-run with enough repetitions to quote: how many of N runs
recovered, per outage length, strategy and accept-queue variant (README's study notes).

Usage: nice python bench/study003.py [--seeds 10] [--reps 2] [--outages 5,8,15] [--clients 1000]
           [--variants default,drop] [--strategies constant,expo,go] [--after 180] [--workers 2]

Each cell runs ``examples/server_outage.toml`` (its first two strategies, constant and the
post's backoff, and study 003's Go client, ``ThinkTimeExpo``) with one outage of the given length (seconds) at
30 s and the horizon ``--after`` seconds after its end, for seeds 1..``--seeds`` ×
``--reps`` repetitions, and prints ``k/N`` recovered with the median recovery time (seconds after
the outage's end) and its range over the recovered runs; runs too noisy to tell a return to 80%
from one to 90% are counted apart (undecided). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.settings.config import load_config  # noqa: E402
from sim.models.strategies import STRATEGIES  # noqa: E402
from sim.models.workloads import Outage  # noqa: E402
from sim.runs import fast  # noqa: E402
from sim.runs.engine import run_metrics  # noqa: E402
from sim.settings.spec import SimulationSpec  # noqa: E402

EXAMPLE = ROOT / "examples" / "server_outage.toml"

# Accept-queue variants: (backlog, backlog_overflow, abandoned).
VARIANTS: dict[str, tuple[int | None, str, str]] = {
    "default": (None, "syn-retry", "serve"),
    "drop": (None, "syn-retry", "drop"),
    "b128": (128, "syn-retry", "serve"),
    "b128-drop-overflow": (128, "drop", "serve"),
    "b128-drop-abandoned": (128, "syn-retry", "drop"),
    "b128-old": (128, "drop", "drop"),
    "b1024": (1024, "syn-retry", "serve"),
    "b1024-drop-abandoned": (1024, "syn-retry", "drop"),
    "b4096": (4096, "syn-retry", "serve"),
    "b4096-drop-abandoned": (4096, "syn-retry", "drop"),
}


def strategies() -> dict[str, object]:
    """The strategies compared: the example's two, and study 003's Go client when registered."""
    spec = base_spec()
    out = {"constant": spec.strategies[0].strategy, "expo": spec.strategies[1].strategy}
    for entry in spec.strategies[2:]:
        out["go"] = entry.strategy
    if "go" not in out and "ThinkTimeExpo" in STRATEGIES:
        out["go"] = STRATEGIES["ThinkTimeExpo"]()
    return out


def base_spec() -> SimulationSpec:
    (spec,) = load_config(EXAMPLE).simulations
    return spec


def cell_spec(variant: str, seconds: float, seed: int, after: float) -> SimulationSpec:
    spec = base_spec()
    start = spec.outages[0].start
    backlog, overflow, abandoned = VARIANTS[variant]
    return replace(spec, seed=seed, outages=(Outage(start, seconds * 1000.0),),
                   horizon=start + seconds * 1000.0 + after * 1000.0,
                   backlog=backlog, backlog_overflow=overflow, abandoned=abandoned,
                   timeout=spec.timeout)


def one(job: tuple[str, str, float, int, int, int, float]) -> tuple[tuple, tuple[float, float]]:
    """One run: its recovery time (nan: never; None: not judged, too noisy to tell 80% from 90%)
    and its goodput over the last 30 s of the horizon as a share of the baseline's (the 15 s
    before the outage): collapsed runs read near 0."""
    variant, name, seconds, seed, rep, clients, after = job
    spec = cell_spec(variant, seconds, seed, after)
    m = run_metrics(spec, strategies()[name], clients, rep)
    goodput, width, start = m.series["goodput"], m.bucket, spec.outages[0].start
    before = goodput[int((start - 15000.0) / width):int(start / width)].mean()
    tail = goodput[-int(30000.0 / width):].mean()
    return (variant, name, seconds), (m.recovery_time, float(tail / before) if before else math.nan)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--outages", default="5,6,7,8,10,15,30,60,120")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--variants", default="default")
    parser.add_argument("--strategies", default="constant,expo")
    parser.add_argument("--after", type=float, default=180.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tails", action="store_true",
                        help="add the median goodput of the last 30 s, as a share of the baseline's")
    args = parser.parse_args(argv)
    outages = [float(x) for x in args.outages.split(",")]
    variants, names = args.variants.split(","), args.strategies.split(",")
    jobs = [(v, n, s, seed, rep, args.clients, args.after) for v in variants for n in names
            for s in outages for seed in range(args.first_seed, args.first_seed + args.seeds)
            for rep in range(args.reps)]
    results: dict[tuple, list[float]] = {}
    tails: dict[tuple, list[float]] = {}
    fast.warm_up()  # the compiled kernel (numba), loaded once before the workers fork
    with Pool(args.workers) as pool:
        for key, (value, tail) in pool.imap(one, jobs, chunksize=4):
            results.setdefault(key, []).append(value)
            tails.setdefault(key, []).append(tail)
    runs = args.seeds * args.reps
    print(f"{args.clients} clients; seeds {args.first_seed}-{args.first_seed + args.seeds - 1} x {args.reps} repetitions; "
          f"horizon {args.after:g} s after the outage; recovery time in s after its end")
    for v in variants:
        print(f"\n## {v} {VARIANTS[v]}")
        print("| outage | " + " | ".join(names) + " |")
        for s in outages:
            cells = []
            for n in names:
                judged = [t for t in results[(v, n, s)] if t is not None]
                times = [t / 1000.0 for t in judged if not math.isnan(t)]
                k = len(times)
                text = f"{k}/{len(judged)}" + (f" ({runs - len(judged)} undecided)" if len(judged) < runs else "")
                if times:
                    text += f", {statistics.median(times):.1f} s ({min(times):.1f}–{max(times):.1f})"
                if args.tails:
                    text += f"; tail {statistics.median(tails[(v, n, s)]):.0%}"
                cells.append(text)
            print(f"| {s:g} s | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
