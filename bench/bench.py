"""Benchmark: engine events/second (one core, metrics only), the sample sweep's wall time, the
overload workload's events/second, open arrivals against a worker pool's events/second and an
explore map's wall time.

Usage: python bench/bench.py [--quick] [--explore CONFIG | --no-explore]

Events are recorded events (what a history would hold), not internal bookkeeping items (bucket
samples, stale timeouts, server checks), so the figure is comparable across models. Prints
figures; asserts nothing. The targets: >= 1.5 M events/s per core in metrics mode, the
bundled sample (both simulations, with PNG/CSV export) under 5 s of wall time on 2 cores, and
the metastability map (12 × 8 cells, 3 strategies × 3 repetitions of 1000 clients over 300 s)
under 3 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sim.runs.sweep import default_workers, run_sweeps
from sim.settings.config import SAMPLE_CONFIG, load_config
from sim.runs.engine import record_run, run_metrics


def engine_rate(quick: bool) -> None:
    """Events per second of the metrics-only loop, one process, per simulation of the sample."""
    config = load_config(SAMPLE_CONFIG)
    total_events, total_seconds = 0, 0.0
    for spec in config.simulations:
        repeats = 3 if quick else spec.repeat
        events = 0
        start = time.perf_counter()
        for s in spec.strategies:
            for n in spec.clients:
                for r in range(repeats):
                    events += run_metrics(spec, s.strategy, n, r).events
        seconds = time.perf_counter() - start
        total_events += events
        total_seconds += seconds
        print(f"engine  {spec.title:<24} {events:>10,} events  {seconds:6.2f} s  "
              f"{events / seconds / 1e6:5.2f} M recorded events/s (1 core, metrics only)")
    print(f"engine  {'all':<24} {total_events:>10,} events  {total_seconds:6.2f} s  "
          f"{total_events / total_seconds / 1e6:5.2f} M recorded events/s (1 core, metrics only)")

    spec = config.simulations[0]
    start = time.perf_counter()
    run = record_run(spec, spec.labels[0], spec.max_clients, 0)
    seconds = time.perf_counter() - start
    print(f"record  {spec.title} {spec.labels[0]} @ {spec.max_clients} clients: "
          f"{len(run.history):,} events  {len(run.history) / seconds / 1e6:5.2f} M events/s (history kept)")


def sweep_time() -> None:
    """Wall time of the sample's sweeps in-process, and of the whole CLI run with export."""
    config = load_config(SAMPLE_CONFIG)
    workers = default_workers()
    start = time.perf_counter()
    results = run_sweeps(config.simulations, workers=workers)
    seconds = time.perf_counter() - start
    events = sum(r.total_events for r in results)
    print(f"sweep   sample.toml  {events:,} events  {seconds:5.2f} s with {workers} workers "
          f"({events / seconds / 1e6:4.2f} M events/s overall)")
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "sim", "run", str(SAMPLE_CONFIG), "--out", out, "--quiet"]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "CI": "1"})
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            print(f"cli     failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
            return
        files = sorted(os.listdir(out))
        print(f"cli     backoff-sim run sample.toml (sweep + {len(files)} files): {seconds:5.2f} s wall")


ROOT = Path(__file__).resolve().parent.parent
OPEN_CONFIG = ROOT / "examples" / "server_outage.toml"
EXPLORE_CONFIG = ROOT / "examples" / "metastability.toml"


def open_rate(quick: bool) -> None:
    """Events per second of the Poisson/LatencyServer workload (study 003, 1000 clients), one
    core: server_outage's (a bounded accept queue: the reference engine's) and the metastability
    map's base simulation (an unbounded one: also by the compiled fast path, with the ratio)."""
    spec = load_config(OPEN_CONFIG).simulations[0]
    paired_rates("open", spec, 1 if quick else spec.repeat, "Poisson + LatencyServer")
    spec = load_config(EXPLORE_CONFIG).simulations[0]
    paired_rates("map", spec, 1 if quick else spec.repeat, "Poisson + LatencyServer")


# A service like yours (issue 20): 64 workers, lognormal service (median 50 ms, p99 250 ms: mean
# 63.5 ms), open arrivals at 80% of capacity (1000 clients, 0.806 calls/ms), a 1 s timeout, a
# 500 ms queue timeout and a 5 s outage; one strategy alone, one with a retry limit (a chain).
POOL_CONFIG = """
[[simulation]]
title = "pool bench"
control = "PoolServer"
workers = 64
service_time = 50.0
service_distribution = "lognormal"
service_p99 = 250.0
queue_timeout = 500.0
workload = "open"
think_time = 1240.0
clients = [1000]
repeat = 2
network_mu = 1.0
network_sigma = 0.2
timeout = 1000.0
horizon = 300000.0
outages = [{ start = 100000.0, duration = 5000.0 }]
strategies = [{ type = "FullJitteredExpo", base = 50.0, cap = 2000.0, name = "jitter" },
              { type = "FullJitteredExpo", base = 50.0, cap = 2000.0, max_attempts = 4, name = "jitter, 4 attempts" }]
"""


def pool_rate(quick: bool) -> None:
    """Events per second of open arrivals against a PoolServer with timeouts and an outage, one
    core, by the compiled fast path and by the reference (``paired_rates``)."""
    from sim.settings.config import parse_config, parse_toml

    spec = parse_config(parse_toml(POOL_CONFIG)).simulations[0]
    paired_rates("pool", spec, 1 if quick else spec.repeat, "open + PoolServer")


def paired_rates(name: str, spec, repeats: int, what: str) -> None:
    """Each strategy's recorded events per second on one core: by the compiled fast path where a
    kernel expresses the run (``sim.runs.fast``; numba installed) and by the reference engine
    (``BACKOFF_SIM_PURE=1``), one after the other, and their ratio."""
    from sim.kernels.jit import PURE_ENV
    from sim.runs import fast
    from sim.runs.engine import kernel_metrics

    before = os.environ.get(PURE_ENV)
    for s in spec.strategies:
        os.environ[PURE_ENV] = "0"
        fits = fast.available() and fast.kernel_expresses(spec, s.chain)
        if fits:
            kernel_metrics(spec, s.chain, 10, 0)  # load (or compile) the kernel outside the timing
        rates = {}
        for path in ("fast path", "reference") if fits else ("reference",):
            os.environ[PURE_ENV] = "1" if path == "reference" else "0"
            events = 0
            start = time.perf_counter()
            for r in range(repeats):
                if path == "fast path":
                    events += kernel_metrics(spec, s.chain, spec.max_clients, r).events
                else:
                    events += run_metrics(spec, s.chain, spec.max_clients, r).events
            seconds = time.perf_counter() - start
            rates[path] = events / seconds
            print(f"{name:<7} {s.label:<24} {events:>10,} events  {seconds:6.2f} s  "
                  f"{events / seconds / 1e6:5.2f} M recorded events/s (1 core, {what}, {path})")
        if fits:
            print(f"{name:<7} {s.label:<24} fast path / reference: {rates['fast path'] / rates['reference']:.1f}x")
    if before is None:
        os.environ.pop(PURE_ENV, None)
    else:
        os.environ[PURE_ENV] = before


def explore_time(path: Path) -> None:
    """Wall and CPU time of `backoff-sim explore PATH` on every core, no cache (all cells
    computed). The CPU seconds (the command and its pool) over the cores is what the wall time
    would be on an otherwise idle machine; on a shared one the wall time is longer."""
    import resource

    from sim.exploration.plan import load_document

    doc = load_document(path)
    cells = sum(len(p.cells) for p in doc.explores)
    runs = sum(len(c.spec.strategies) * c.spec.repeat for p in doc.explores for c in p.cells)
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "sim", "explore", str(path), "--out", out, "--quiet", "--no-cache"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "CI": "1"})
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        print(f"explore failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
        return
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    workers = default_workers()
    print(f"explore {path.name}: {cells} cells, {runs} runs  {seconds:6.1f} s wall with "
          f"{workers} workers ({runs / seconds:.1f} runs/s), {cpu:6.1f} s CPU "
          f"({cpu / workers:.1f} s per worker: the wall time on an idle machine)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions for the engine figures")
    parser.add_argument("--explore", metavar="CONFIG", type=Path, default=EXPLORE_CONFIG,
                        help="config whose explore map to time (default: examples/metastability.toml)")
    parser.add_argument("--no-explore", action="store_true", help="skip the explore map (minutes)")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    engine_rate(args.quick)
    sweep_time()
    open_rate(args.quick)
    pool_rate(args.quick)
    if not args.no_explore:
        explore_time(args.explore)


if __name__ == "__main__":
    main()
