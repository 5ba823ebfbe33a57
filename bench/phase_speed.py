"""Time the phase portrait of one strategy of examples/server_outage.toml, before and after (issue
37: the 20x20 portrait of one strategy in <= 60 s on 2 cores).

Usage: python bench/phase_speed.py [--base REV] [--grid N] [--strategy NAME ...] [--runs N]
                                   [--workers N] [--after-only]

Runs ``backoff-sim phase CONFIG --strategy NAME --grid N --workers W --quiet`` from this working
tree (after) and, unless --after-only, from REV (before: ``git archive`` of it into a temporary
folder, nothing added to the repository's worktrees), alternately, --runs times each, and prints
per strategy the median wall and CPU seconds of each and the pairwise before/after ratios
(``bench/speedup.py``'s accounting: the child's own, its workers included). The full 20x20
'before' is long: time it once, and compare a smaller grid for the ratio. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from speedup import Sample, median_ratio, run_once, unpack  # noqa: E402

CONFIG = "examples/server_outage.toml"
STRATEGIES = ("constant 100ms", "expo backoff", "Go client")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="the revision to compare with (default main)")
    parser.add_argument("--grid", type=int, default=20)
    parser.add_argument("--strategy", action="append", default=None, help=f"default: each of {STRATEGIES}")
    parser.add_argument("--runs", type=int, default=1, help="paired runs per strategy (default 1)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--after-only", action="store_true", help="time this tree only")
    options = parser.parse_args(argv)
    strategies = options.strategy or list(STRATEGIES)
    print(f"phase portrait of {CONFIG}, {options.grid}x{options.grid}, --workers {options.workers}; "
          f"{len(os.sched_getaffinity(0))} cpus; median of {options.runs} run(s)")
    print(f"{'strategy':<16} {'wall s':>8} {'wall s':>8} {'ratio':>7} {'cpu s':>8} {'cpu s':>8} {'ratio':>7}")
    print(f"{'':<16} {'before':>8} {'after':>8} {'':>7} {'before':>8} {'after':>8}")
    with tempfile.TemporaryDirectory(prefix="phase-base-") as base_dir:
        base = Path(base_dir)
        if not options.after_only:
            unpack(options.base, base)
        for name in strategies:
            args = ["phase", CONFIG, "--strategy", name, "--grid", str(options.grid),
                    "--workers", str(options.workers)]
            before: list[Sample] = []
            after: list[Sample] = []
            for _ in range(options.runs):
                if not options.after_only:
                    before.append(run_once(base, args))
                after.append(run_once(ROOT, args))
            med = lambda xs, key: statistics.median(getattr(s, key) for s in xs) if xs else float("nan")  # noqa: E731
            ratio = (lambda key: median_ratio([getattr(s, key) for s in after], [getattr(s, key) for s in before])
                     if before else float("nan"))
            print(f"{name:<16} {med(before, 'wall'):8.1f} {med(after, 'wall'):8.1f} {ratio('wall'):6.2f}x "
                  f"{med(before, 'cpu'):8.1f} {med(after, 'cpu'):8.1f} {ratio('cpu'):6.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
