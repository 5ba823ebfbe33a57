"""Hash every CSV that the shipped configs produce, to prove a refactoring changed no output.

Usage: python bench/csv_hashes.py [--record FILE | --check FILE] [--skip-metastability]

Runs ``python -m sim run`` headless on the bundled sample, every ``examples/*.toml`` and the
test fixtures, each
into its own folder, plus ``backoff-simulator --config-file`` on the sample (its printed tables and histories,
hashed as ``compat/stdout.csv``), then prints one line
``sha256  config/file.csv`` per CSV. ``--record`` writes those lines to FILE; ``--check`` compares
with FILE and exits 1 on any difference (a changed, missing or extra file). PNGs are not hashed
(matplotlib embeds nothing random, but their bytes depend on the installed fonts).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def configs(skip_metastability: bool) -> list[Path]:
    found = [ROOT / "sim" / "sample.toml", *sorted((ROOT / "examples").glob("*.toml")),
             *sorted((ROOT / "tests" / "fixtures").glob("*.toml"))]
    return [p for p in found if not (skip_metastability and p.stem == "metastability")]


def produce(out: Path, skip_metastability: bool) -> dict[str, str]:
    env = {**os.environ, "CI": "1"}
    jobs = [(p.stem, [sys.executable, "-m", "sim", "run", str(p), "--out", str(out / p.stem), "--quiet"])
            for p in configs(skip_metastability)]
    compat = out / "compat"
    compat.mkdir(parents=True)
    jobs.append(("compat", [sys.executable, "-c", "import sys; from sim.commands.compat import main; sys.exit(main())",
                            "--config-file", str(ROOT / "sim" / "sample.toml")]))
    for name, cmd in jobs:
        cwd = compat if name == "compat" else ROOT
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"{name}: exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
        if name == "compat":  # it writes only PNGs: its printed tables and histories are the text
            (compat / "stdout.csv").write_text(proc.stdout, encoding="utf-8")
    hashes = {}
    for path in sorted(out.rglob("*.csv")):
        hashes[str(path.relative_to(out))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


# The prefix of the hashed files --skip-metastability leaves out (neither produced nor compared).
SKIPPED = "metastability/"


def read_hashes(path: Path) -> dict[str, str]:
    """``{file: sha256}`` from a file of ``sha256  file`` lines."""
    return {name: h for h, name in (line.split("  ", 1) for line in path.read_text().splitlines() if line)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", type=Path)
    parser.add_argument("--check", type=Path)
    parser.add_argument("--skip-metastability", action="store_true",
                        help="leave out examples/metastability.toml (its run takes minutes)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        hashes = produce(Path(tmp), args.skip_metastability)
    lines = [f"{h}  {name}" for name, h in hashes.items()]
    print("\n".join(lines))
    if args.record:
        if args.skip_metastability and args.record.exists():
            # Not re-run, so its recorded hashes stay as they were.
            kept = {n: h for n, h in read_hashes(args.record).items() if n.startswith(SKIPPED)}
            lines = [f"{h}  {n}" for n, h in sorted({**hashes, **kept}.items())]
        args.record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.check:
        expected = read_hashes(args.check)
        if args.skip_metastability:
            expected = {n: h for n, h in expected.items() if not n.startswith(SKIPPED)}
        bad = sorted(n for n in expected.keys() | hashes.keys() if expected.get(n) != hashes.get(n))
        for name in bad:
            print(f"DIFFERS: {name} (expected {expected.get(name, 'absent')[:12]}, got "
                  f"{hashes.get(name, 'absent')[:12]})", file=sys.stderr)
        print(f"{len(hashes)} CSVs, {len(bad)} differ", file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
