"""Before/after of ``explore --method fluid`` on the 80-cell held-out LatencyServer map (issue
37: the map in <= 1 s of fluid compute and <= 2.5 s wall all-in, >= 10x faster than simulating it).

Usage: python bench/fluid_speed.py [CONFIG] [--before REV] [--repeat N] [--no-simulate]

For this tree and for revision REV (default: ff71701, the main this work branched from; its
``sim`` package extracted with ``git archive`` into a temporary directory), in processes of
their own: the fluid computation of every (cell, strategy) pair (best of 3 after a first call,
wall and CPU seconds; the first call apart, as it loads the compiled step loop when a batch
takes it, ``sim.fluid.compiled``), the whole command's wall time (median of N) and when its CSV
appeared in --out (the PNG is drawn after it, issue 37); the same for this tree with the numpy
loop only (the command with ``BACKOFF_SIM_PURE=1``); then the map simulated by this tree
(``--method simulate --no-cache``, every core; a first run apart, as it may compile the
kernels, then the median of N) and the ratios; then, for both trees, the map fluid and
simulated in a process that has computed one already (``sim.explore``, as a notebook does:
numba's jit; the workers kept; the median of N after a first of each) and their ratio.
Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = ROOT / "bench" / "fluid_latency_map.toml"
BASE_REVISION = "ff71701"  # main when issue 37 was taken up

_COMPUTE = """
import sys, time
try:  # as the command takes it: the kernel built ahead of time (a tree that has them)
    from sim.kernels import ahead
    ahead.enable()
except ImportError:
    pass
from sim.exploration.plan import load_document
from sim.fluid.cells import fluid_runs
if sys.argv[2] == "numpy":  # this tree's numpy loop only (a tree without the kernel has no other)
    try:
        from sim.fluid import compiled
        compiled.worth_compiling = lambda cases: False
    except ImportError:
        pass
plan = load_document(sys.argv[1]).explores[0]
pairs = [(c.spec, s) for c in plan.cells for s in range(len(c.spec.strategies))]
times = []
for _ in range(4):
    wall, cpu = time.perf_counter(), time.process_time()
    fluid_runs(pairs)
    times.append((time.perf_counter() - wall, time.process_time() - cpu))
best = times[1:]
import sim
assert sim.__file__.startswith(sys.argv[3]), (sim.__file__, sys.argv[3])  # the tree asked for
print(len(plan.cells), len(pairs), times[0][0], min(w for w, _ in best), min(c for _, c in best),
      int("numba" in sys.modules))
"""


# The map in a process that has computed one already, as a notebook computes it (``sim.explore``:
# numba's jit, not the modules built ahead of time), the workers kept between maps (which only
# favours the simulated map): fluid then simulated, each a first call apart, then N timed.
_IN_PROCESS = """
import statistics, sys, time
import sim
from sim.runs.procpool import reusing_workers
repeat = int(sys.argv[2])
times = {}
with reusing_workers():
    for method in ("fluid", "simulate"):
        sim.explore(sys.argv[1], method=method)
        runs = []
        for _ in range(repeat):
            start = time.perf_counter()
            sim.explore(sys.argv[1], method=method)
            runs.append(time.perf_counter() - start)
        times[method] = statistics.median(runs)
assert sim.__file__.startswith(sys.argv[3]), (sim.__file__, sys.argv[3])
print(times["fluid"], times["simulate"])
"""


def in_process(tree: Path, config: Path, repeat: int) -> tuple[float, float]:
    """(fluid s, simulated s): medians of ``repeat`` maps in one process (``_IN_PROCESS``)."""
    done = subprocess.run([sys.executable, "-c", _IN_PROCESS, str(config), str(repeat), str(tree)], env=_env(tree),
                          cwd=tree, check=True, capture_output=True, text=True)
    fluid, simulated = done.stdout.split()
    return float(fluid), float(simulated)


def _env(tree: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(tree))


# Each process runs in its tree: ``python -c`` and ``-m`` put the working directory first on
# sys.path, ahead of PYTHONPATH, so run from this checkout both trees would import its ``sim``.


def _extract(revision: str, into: Path) -> Path:
    """``sim`` of ``revision`` under ``into`` (git archive), for PYTHONPATH."""
    into.mkdir(parents=True, exist_ok=True)
    archive = into / "sim.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", revision, "sim"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


def compute(tree: Path, config: Path, mode: str = "auto") -> tuple[int, int, float, float, float, bool]:
    """(cells, pairs, first call's wall s, wall s, CPU s, numba loaded) of the fluid computation
    alone (best of 3 after the first call); ``mode`` "numpy": the numpy loop only."""
    done = subprocess.run([sys.executable, "-c", _COMPUTE, str(config), mode, str(tree)], env=_env(tree), cwd=tree,
                          check=True, capture_output=True, text=True)
    cells, pairs, first, wall, cpu, numba = done.stdout.split()
    return int(cells), int(pairs), float(first), float(wall), float(cpu), numba == "1"


def command(tree: Path, config: Path, method: str, out: Path, extra: tuple[str, ...] = (),
            env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall s of the whole command, s until its CSV appeared) of ``explore --method`` (``env``:
    added to the environment)."""
    csv = out / f"{_title(config)}_explore.csv"
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "sim", "explore", str(config), "--method", method,
                             "--no-cache", "-q", "--out", str(out), *extra], env={**_env(tree), **(env or {})}, cwd=tree,
                            stdout=subprocess.DEVNULL)
    seen = None
    while proc.poll() is None:
        if seen is None and csv.exists():
            seen = time.perf_counter() - start
        time.sleep(0.005)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"explore --method {method} failed ({proc.returncode}) with {tree}")
    return wall, wall if seen is None else seen


def _title(config: Path) -> str:
    import tomllib

    return tomllib.loads(config.read_text(encoding="utf-8"))["simulation"][0]["title"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--before", default=BASE_REVISION, help="the revision to compare with")
    parser.add_argument("--repeat", type=int, default=3, help="whole commands per tree (median)")
    parser.add_argument("--no-simulate", action="store_true", help="skip the simulated map")
    args = parser.parse_args()
    args.config = args.config.resolve()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {f"before ({args.before})": _extract(args.before, Path(tmp) / "before"), "after (this tree)": ROOT}
        for name, tree in trees.items():
            cells, pairs, first, wall, cpu, _ = compute(tree, args.config)
            runs = [command(tree, args.config, "fluid", Path(tmp) / f"{len(rows)}-out{i}") for i in range(args.repeat)]
            rows[name] = (first, wall, cpu, statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        _, _, first, wall, cpu, numba = compute(ROOT, args.config, "numpy")
        pure = [command(ROOT, args.config, "fluid", Path(tmp) / f"pure-out{i}", env={"BACKOFF_SIM_PURE": "1"})
                for i in range(args.repeat)]
        numpy_only = (first, wall, cpu, numba, statistics.median(r[0] for r in pure),
                      statistics.median(r[1] for r in pure))
        warm = {} if args.no_simulate else {name: in_process(tree, args.config, args.repeat)
                                             for name, tree in trees.items()}
        simulated = None
        if not args.no_simulate:
            # A first run apart: it may compile this tree's kernels (numba's cache or their
            # modules built ahead of time), which a user's later maps do not pay.
            command(ROOT, args.config, "simulate", Path(tmp) / "simulated-first")
            simulated = statistics.median(command(ROOT, args.config, "simulate", Path(tmp) / f"simulated{i}")[0]
                                          for i in range(args.repeat))
    print(f"{args.config.name}: {cells} cells, {pairs} (cell, strategy) pairs; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'':>20} {'fluid compute s':>16} {'(CPU s)':>8} {'1st call s':>11} {'wall s':>7} {'CSV at s':>9} "
          f"{'simulate s':>11} {'ratio':>6} {'to CSV':>6}")
    for name, (first, wall, cpu, whole, csv_at) in rows.items():
        sim = f"{simulated:11.1f}" if simulated else f"{'—':>11}"
        ratio = f"{simulated / whole:5.1f}x" if simulated else f"{'—':>6}"
        to_csv = f"{simulated / csv_at:5.1f}x" if simulated else f"{'—':>6}"
        print(f"{name:>20} {wall:16.2f} {cpu:8.2f} {first:11.2f} {whole:7.2f} {csv_at:9.2f} {sim} {ratio} {to_csv}")
    first, wall, cpu, numba, whole, csv_at = numpy_only
    print(f"{'this tree, numpy':>20} {wall:16.2f} {cpu:8.2f} {first:11.2f} {whole:7.2f} {csv_at:9.2f}   (the numpy "
          f"loop only; the command with BACKOFF_SIM_PURE=1; numba {'loaded' if numba else 'not loaded'})")
    if warm:
        print(f"In a process that has computed a map already (a notebook's sim.explore: numba's jit, workers kept), "
              f"median of {args.repeat}:")
        print(f"{'':>20} {'fluid s':>8} {'simulate s':>11} {'ratio':>6}")
        for name, (fluid, simulated_warm) in warm.items():
            print(f"{name:>20} {fluid:8.2f} {simulated_warm:11.2f} {simulated_warm / fluid:5.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
