"""Before/after table: whole commands run from a git revision and from the working tree, paired.

Usage: python bench/speedup.py --base REV [--runs N] [--no-warmup]
                               [--explore | --explore-config CONFIG] [--only NAME ...]

Checks REV out into a temporary ``git worktree`` and runs each command there (``before``) and in
this working tree (``after``), alternately, ``--runs`` times each (default 3), every run in a
fresh output folder with ``PYTHONPATH`` pointing at its tree. Alternating keeps the ratio
meaningful on a shared machine whose speed drifts: each ratio is taken pair by pair and the
table prints the median. Per run it reads the finished child's own accounting (``os.wait4``):
wall seconds, CPU seconds (user + system of the command and the workers it waited for) and peak
memory (the largest single process, as ``/usr/bin/time -v``'s "Maximum resident set size").

The commands: ``run sample.toml``, ``run examples/server_outage.toml`` and, with ``--explore``,
the metastability map (``explore examples/metastability.toml --no-cache``, ~3 min a run on an
idle 2-core machine; ``--explore-config`` names a smaller map). Prints figures; asserts nothing.
The goals of issue 24: sample >= 1.4x, server_outage >= 2x, the map >= 3x, peak not higher.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Sample:
    """One finished run of a command: its wall and CPU seconds and its peak memory (MiB)."""

    wall: float
    cpu: float
    peak_mib: float


def unpack(rev: str, into: Path) -> None:
    """REV's files in ``into`` (``git archive``: the repository is not touched)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def run_once(tree: Path, args: list[str]) -> Sample:
    """Run ``python -m sim ARGS`` with ``tree`` first on the path, into a fresh output folder."""
    with tempfile.TemporaryDirectory(prefix="speedup-") as out:
        cmd = [sys.executable, "-m", "sim", *args, "--out", out, "--quiet"]
        env = {**os.environ, "CI": "1", "PYTHONPATH": str(tree)}
        # Byte-compiled modules cached, as a user's Python keeps them (the warm-up writes them):
        # without, every run compiles the project's sources first (~0.07 s a run here).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed in {tree} ({proc.returncode}): {err.strip()[-300:]}")
    # The workers a command waited for are in its children's usage (ru_maxrss: the largest one).
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def median_ratio(after: list[float], before: list[float]) -> float:
    """The median of the pairwise ratios before/after (a speed-up above 1 is faster)."""
    return statistics.median(b / a for a, b in zip(after, before))


def compare(name: str, args: list[str], base: Path, runs: int, warmup: bool) -> str:
    """Run the command alternately in the base tree and here; one row of the table."""
    before: list[Sample] = []
    after: list[Sample] = []
    if warmup:  # file caches, byte-compiled modules: not counted
        run_once(base, args)
        run_once(ROOT, args)
    for _ in range(runs):
        before.append(run_once(base, args))
        after.append(run_once(ROOT, args))
        print(f"  {name}: before {before[-1].wall:6.2f} s  after {after[-1].wall:6.2f} s", file=sys.stderr)
    wall = median_ratio([s.wall for s in after], [s.wall for s in before])
    cpu = median_ratio([s.cpu for s in after], [s.cpu for s in before])
    return (f"{name:<16} {statistics.median(s.wall for s in before):8.2f} "
            f"{statistics.median(s.wall for s in after):8.2f} {wall:6.2f}x "
            f"{statistics.median(s.cpu for s in before):8.2f} {statistics.median(s.cpu for s in after):8.2f} "
            f"{cpu:6.2f}x {max(s.peak_mib for s in before):8.0f} {max(s.peak_mib for s in after):8.0f}")


def commands(explore: str | None) -> list[tuple[str, list[str]]]:
    chosen = [("sample", ["run", "sample.toml"]),
              ("server_outage", ["run", "examples/server_outage.toml"])]
    if explore is not None:
        chosen.append(("explore", ["explore", explore, "--no-cache"]))
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the git revision to compare with (e.g. main)")
    parser.add_argument("--runs", type=int, default=3, help="paired runs per command (default 3)")
    parser.add_argument("--explore", action="store_true", help="also the metastability map (slow)")
    parser.add_argument("--explore-config", help="an explore config to time instead of the metastability map")
    parser.add_argument("--no-warmup", action="store_true",
                        help="count every run (by default one run of each tree first is not counted)")
    parser.add_argument("--only", nargs="+", help="only these commands (sample, server_outage, explore)")
    options = parser.parse_args(argv)
    if options.runs < 1:
        parser.error("--runs must be at least 1")
    explore = options.explore_config or ("examples/metastability.toml" if options.explore else None)
    chosen = [(n, a) for n, a in commands(explore) if not options.only or n in options.only]
    base = Path(tempfile.mkdtemp(prefix="speedup-base-"))
    shutil.rmtree(base)
    try:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(base),
                        options.base], check=True)
    except subprocess.CalledProcessError:
        print(f"speedup.py: cannot check out {options.base!r} (give a branch, tag or commit)", file=sys.stderr)
        return 2
    try:
        rev = subprocess.run(["git", "-C", str(base), "rev-parse", "--short", "HEAD"], check=True,
                             capture_output=True, text=True).stdout.strip()
        print(f"before: {options.base} ({rev}); after: the working tree {ROOT}; "
              f"median of {options.runs} paired runs; python {sys.version.split()[0]}, "
              f"{len(os.sched_getaffinity(0))} cpus")
        print(f"{'command':<16} {'wall s':>8} {'wall s':>8} {'ratio':>7} {'cpu s':>8} {'cpu s':>8} "
              f"{'ratio':>7} {'peak MiB':>8} {'peak MiB':>8}")
        print(f"{'':<16} {'before':>8} {'after':>8} {'':>7} {'before':>8} {'after':>8} {'':>7} "
              f"{'before':>8} {'after':>8}")
        for name, args in chosen:
            print(compare(name, args, base, options.runs, not options.no_warmup), flush=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
