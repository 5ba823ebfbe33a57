"""Before/after for issue 37's "no wait for what is already known": paired runs, figures printed,
nothing asserted.

Usage: python bench/known_results.py [--base REV] [--runs N] [--config CONFIG] [--only app|events]

``app``: a second launch of the app after ``backoff-sim run`` of the same config, measured
headless as the app's data source gets the first simulation's sweep (what its first table
shows: ``ConfigSource.cached_sweep``, else ``ConfigSource.sweep``), in a fresh process each:
before, the base revision simulates it again; after, this tree reads ``run``'s result from the
cache. ``events``: ``backoff-sim run`` of the pool example as the base revision writes it (its
events file of the example runs) against this tree's ``run --events none`` (no events file):
files written, MB and wall seconds. Both commands of a pair run one after the other, the base
first, each into a fresh folder and (here) a cold cache of its own, ``--no-cache`` on the run
that is timed; the ratio is taken pair by pair and the median printed.

The base revision is checked out with ``git archive`` into a temporary folder (no worktree of
the repository is made). Default base: ``ff71701``, the revision issue 37 was filed at.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = "ff71701"
POOL_EXAMPLE = "examples/service_incident.toml"

# The app's data source, as the launcher builds it (``tui.main._config_source``), getting the
# first simulation's sweep; prints the seconds it took and whether the cache served it. The
# base revision's launcher has no cache: it simulates.
FIRST_TABLE = """
import inspect, sys, time
from pathlib import Path
start = time.perf_counter()
from tui.main import _config_source
kwargs = {"cache": True} if "cache" in inspect.signature(_config_source).parameters else {}
source = _config_source(Path(sys.argv[1]), None, Path(sys.argv[2]), None, False, **kwargs)
title = source.simulations()[0]
hit = source.cached_sweep(title) if hasattr(source, "cached_sweep") else None
result = hit[0] if hit is not None else source.sweep(title, workers=None)
print(f"{time.perf_counter() - start:.3f} {'cached' if hit is not None else 'simulated'}")
"""


def export(rev: str) -> Path:
    """``rev``'s tree in a temporary folder (``git archive``)."""
    folder = Path(tempfile.mkdtemp(prefix="known-results-base-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def environment(tree: Path, cache: Path) -> dict[str, str]:
    env = {**os.environ, "CI": "1", "PYTHONPATH": str(tree), "BACKOFF_SIM_CACHE": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed_run(tree: Path, config: str, out: Path, cache: Path, *extra: str) -> float:
    """Wall seconds of ``backoff-sim run CONFIG`` from ``tree``."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sim", "run", str(ROOT / config), "--out", str(out),
                           "--quiet", *extra], cwd=tree, env=environment(tree, cache),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"run {config} failed in {tree}: {done.stderr.strip()[-300:]}")
    return time.perf_counter() - start


def first_table(tree: Path, config: str, out: Path, cache: Path) -> tuple[float, str]:
    done = subprocess.run([sys.executable, "-c", FIRST_TABLE, str(ROOT / config), str(out)], cwd=tree,
                          env=environment(tree, cache), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the app's data source failed in {tree}: {done.stderr.strip()[-300:]}")
    seconds, how = done.stdout.split()
    return float(seconds), how


def folder_size(out: Path) -> tuple[int, float, int]:
    """(files, MB, events files) of a run's output folder."""
    paths = [p for p in out.iterdir() if p.is_file()]
    return (len(paths), sum(p.stat().st_size for p in paths) / 1e6,
            sum(p.name.endswith("_events.csv") for p in paths))


def bench_app(base: Path, config: str, runs: int, work: Path) -> None:
    print(f"\nthe app's first table after `run {config}` (wall s; a fresh process each)")
    before, after = [], []
    for i in range(runs):
        cache = work / f"app-cache-{i}"
        timed_run(ROOT, config, work / f"app-run-{i}", cache)  # `run`, this tree: fills the cache
        b, how_b = first_table(base, config, work / "app-out", work / f"base-cache-{i}")
        a, how_a = first_table(ROOT, config, work / "app-out", cache)
        before.append(b)
        after.append(a)
        print(f"  pair {i + 1}: before {b:7.2f} s ({how_b})   after {a:7.2f} s ({how_a})", flush=True)
    ratio = statistics.median(b / a for a, b in zip(after, before))
    print(f"  median: before {statistics.median(before):.2f} s, after {statistics.median(after):.2f} s, "
          f"{ratio:.1f}x")


def bench_events(base: Path, config: str, runs: int, work: Path) -> None:
    print(f"\n`run {config}`: before (base, its events file) against after (--events none)")
    before, after = [], []
    for i in range(runs):
        out_b, out_a = work / f"events-before-{i}", work / f"events-after-{i}"
        b = timed_run(base, config, out_b, work / f"events-cache-b-{i}")
        a = timed_run(ROOT, config, out_a, work / f"events-cache-a-{i}", "--events", "none", "--no-cache")
        before.append(b)
        after.append(a)
        fb, mb_b, eb = folder_size(out_b)
        fa, mb_a, ea = folder_size(out_a)
        print(f"  pair {i + 1}: before {b:7.2f} s, {fb} files ({eb} events files), {mb_b:7.1f} MB   "
              f"after {a:7.2f} s, {fa} files ({ea} events files), {mb_a:7.1f} MB", flush=True)
    ratio = statistics.median(b / a for a, b in zip(after, before))
    print(f"  median: before {statistics.median(before):.2f} s, after {statistics.median(after):.2f} s, "
          f"{ratio:.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE, help=f"the git revision to compare with (default {BASE})")
    parser.add_argument("--runs", type=int, default=2, help="paired runs (default 2)")
    parser.add_argument("--config", default=POOL_EXAMPLE, help=f"the config (default {POOL_EXAMPLE})")
    parser.add_argument("--only", choices=("app", "events"), help="only one of the two measures")
    options = parser.parse_args(argv)
    if options.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        base = export(options.base)
    except subprocess.CalledProcessError:
        print(f"known_results.py: cannot export {options.base!r} (give a branch, tag or commit)", file=sys.stderr)
        return 2
    print(f"before: {options.base}; after: the working tree {ROOT}; {options.runs} paired runs; "
          f"python {sys.version.split()[0]}, {len(os.sched_getaffinity(0))} cpus, "
          f"load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="known-results-") as scratch:
        work = Path(scratch)
        try:
            if options.only in (None, "app"):
                bench_app(base, options.config, options.runs, work)
            if options.only in (None, "events"):
                bench_events(base, options.config, options.runs, work)
        finally:
            subprocess.run(["rm", "-rf", str(base)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
