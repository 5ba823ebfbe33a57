"""The sample against the reference package (issue 37's goal: ``backoff-sim run sample.toml`` at
least 20x faster in wall time than ``backoff-simulator`` on the same config), whole processes.

Usage: python bench/reference_speed.py [--reference-python PY] [--pairs N] [--config FILE] [--no-pure]
                                      [--before REV]

Runs, alternately, ``--pairs`` times each (default 3): ``python -m sim run CONFIG`` from this
working tree (``ours``, into a fresh folder, its tables printed, with an empty sweep cache of its
own: a first run, simulated), the reference package's ``backoff-simulator
--config-file CONFIG`` under ``PY`` (``reference``, in a fresh folder: it writes its PNGs into
the current one and prints its tables) and, unless ``--no-pure``, ours again with
``BACKOFF_SIM_PURE=1`` (the reference engine without the compiled kernels: what the kernels
add) and, with ``--before REV``, ours as REV had it (``git archive`` of REV in a temporary
folder: issue 37 was filed at ff71701). Per run it reads the finished child's own accounting (``os.wait4``): wall seconds and CPU
seconds (user + system of the command and the workers it waited for). Prints each run, the
medians, and the ratios of medians and pair by pair (a shared machine's speed drifts: a pair
runs back to back). Asserts nothing.

The reference package: ``backoff-simulator`` 0.2.1 on PyPI (the config-file version; 0.1.x takes
only command-line flags) declares Python >= 3.14, and its modules use 3.14's deferred annotations
(PEP 649). Where only an older Python is at hand, make a venv of it (``python3.13 -m venv
/work/refvenv``), ``pip install --ignore-requires-python backoff-simulator==0.2.1`` there, and
this script runs it with its modules compiled under ``from __future__ import annotations`` (PEP
563: annotations kept as strings, never evaluated, as 3.14 leaves them unevaluated until asked),
its code otherwise unchanged; it says so when it does. ``PY`` defaults to
``$BACKOFF_REFERENCE_PYTHON`` or ``/work/refvenv/bin/python``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = os.environ.get("BACKOFF_REFERENCE_PYTHON", "/work/refvenv/bin/python")

# Runs the reference package's command. Before Python 3.14 its modules are compiled with the
# ``annotations`` future flag (see the module docstring); its own .pyc files are not used.
REFERENCE_RUNNER = r'''
import sys
if sys.version_info < (3, 14):
    import __future__, importlib.machinery

    class _Loader(importlib.machinery.SourceFileLoader):
        def get_code(self, fullname):
            return compile(self.get_data(self.path), self.path, "exec",
                           flags=__future__.annotations.compiler_flag, dont_inherit=True)

    class _Finder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name != "backoff_simulator" and not name.startswith("backoff_simulator."):
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is not None and (spec.origin or "").endswith(".py"):
                spec.loader = _Loader(name, spec.origin)
            return spec

    sys.meta_path.insert(0, _Finder)
from backoff_simulator.cli import app
sys.argv[0] = "backoff-simulator"
app()
'''


@dataclass(frozen=True)
class Sample:
    """One finished run: its wall and CPU seconds."""

    wall: float
    cpu: float


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> Sample:
    """Run ``cmd`` to its end, its output discarded; its wall and CPU seconds."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({code}): {err.strip()[-400:]}")
    return Sample(wall, usage.ru_utime + usage.ru_stime)


def ours(config: Path, pure: bool, tree: Path = ROOT) -> Sample:
    """``backoff-sim run CONFIG`` as a user's first run of it: its tables printed (as the
    reference prints its own), every file written, and an empty sweep cache of its own (so the
    sweep is simulated and cached, never read back from an earlier run's: that is
    ``bench/known_results.py``'s figure)."""
    env = {**os.environ, "CI": "1", "PYTHONPATH": str(tree)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # byte-compiled modules kept, as a user's Python does
    env.pop("BACKOFF_SIM_PURE", None)
    if pure:
        env["BACKOFF_SIM_PURE"] = "1"
    with tempfile.TemporaryDirectory(prefix="refspeed-ours-") as out:
        env["BACKOFF_SIM_CACHE"] = str(Path(out) / "cache")
        return timed([sys.executable, "-m", "sim", "run", str(config), "--out", str(Path(out) / "files")],
                     tree, env)


def reference(python: str, config: Path) -> Sample:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BACKOFF_SIM_PURE")}
    with tempfile.TemporaryDirectory(prefix="refspeed-ref-") as out:
        return timed([python, "-c", REFERENCE_RUNNER, "--config-file", str(config)], Path(out), env)


def reference_version(python: str) -> tuple[str, str]:
    """The reference package's version and its Python's."""
    probe = ("import sys, importlib.metadata as m; "
             "print(m.version('backoff-simulator'), '%d.%d.%d' % sys.version_info[:3])")
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{python}: no backoff-simulator there ({done.stderr.strip()[-200:]}); see this "
                         "script's docstring for how to install it")
    package, version = done.stdout.split()
    return package, version


def median(samples: list[Sample], what: str) -> float:
    return statistics.median(getattr(s, what) for s in samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference-python", default=DEFAULT_REFERENCE)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--config", type=Path, default=ROOT / "sim" / "sample.toml")
    parser.add_argument("--no-pure", action="store_true", help="skip ours with BACKOFF_SIM_PURE=1")
    parser.add_argument("--before", metavar="REV", help="also time ours at revision REV (e.g. ff71701)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="refspeed-before-") as before:
        if args.before:
            sys.path.insert(0, str(ROOT / "bench"))
            from speedup import unpack

            unpack(args.before, Path(before))
        compare(args, Path(before) if args.before else None)


def compare(args: argparse.Namespace, before: Path | None) -> None:
    """Time the kinds alternately, pair by pair, and print each run, the medians and the ratios."""
    config = args.config.resolve()
    package, python = reference_version(args.reference_python)
    print(f"reference: backoff-simulator {package} on Python {python} ({args.reference_python})")
    if tuple(int(x) for x in python.split(".")[:2]) < (3, 14):
        print("  (before 3.14: its modules compiled with `from __future__ import annotations`, "
              "its code unchanged; see the docstring)")
    print(f"config: {config}; load average {os.getloadavg()[0]:.1f} at the start")
    ours(config, False)  # a warm-up: byte-compiled modules and numba's caches written, as after install
    before_kind = f"ours at {args.before}"
    if before is not None:
        ours(config, False, before)
    kinds = (["ours", "reference"] + ([] if args.no_pure else ["ours, BACKOFF_SIM_PURE=1"])
             + ([before_kind] if before is not None else []))
    runs: dict[str, list[Sample]] = {kind: [] for kind in kinds}
    for i in range(args.pairs):
        order = kinds if i % 2 == 0 else kinds[::-1]
        for kind in order:
            if kind == "reference":
                sample = reference(args.reference_python, config)
            elif kind == before_kind:
                sample = ours(config, False, before)
            else:
                sample = ours(config, kind != "ours")
            runs[kind].append(sample)
            print(f"  pair {i + 1}: {kind:26} wall {sample.wall:7.2f} s  cpu {sample.cpu:7.2f} s", flush=True)
    print(f"\nmedians of {args.pairs} (load average {os.getloadavg()[0]:.1f} at the end)")
    for kind in kinds:
        print(f"  {kind:26} wall {median(runs[kind], 'wall'):7.2f} s  cpu {median(runs[kind], 'cpu'):7.2f} s")
    for what in ("wall", "cpu"):
        pairs = [r.__getattribute__(what) / o.__getattribute__(what) for r, o in zip(runs["reference"], runs["ours"])]
        print(f"  reference / ours, {what}: {median(runs['reference'], what) / median(runs['ours'], what):5.1f}x "
              f"(pair by pair {', '.join(f'{p:.1f}x' for p in pairs)})")
    if not args.no_pure:
        pure = runs["ours, BACKOFF_SIM_PURE=1"]
        print(f"  pure / ours (the kernels' share), wall: {median(pure, 'wall') / median(runs['ours'], 'wall'):5.2f}x, "
              f"cpu: {median(pure, 'cpu') / median(runs['ours'], 'cpu'):5.2f}x")
    if before is not None:
        old = runs[before_kind]
        print(f"  {before_kind} / ours, wall: {median(old, 'wall') / median(runs['ours'], 'wall'):5.2f}x, "
              f"cpu: {median(old, 'cpu') / median(runs['ours'], 'cpu'):5.2f}x; reference / {before_kind}, "
              f"wall: {median(runs['reference'], 'wall') / median(old, 'wall'):5.1f}x")


if __name__ == "__main__":
    main()
