"""``backoff-simulator --config-file FILE``: a drop-in for the reference package's command.

Same argument, same default (``simulations.toml``), same files (``<title>_metrics.png`` and
``<title>_scatter.png`` in the current directory) and the same stdout: for each simulation and
each strategy in sorted order, a title line and a ``tabulate`` table of the representative run.
Differences, on purpose: results are seeded (reproducible), strategies of one type with different
parameters are kept apart, mistakes get one line each and exit status 2 instead of a traceback, the
PNGs appear together once all are written (or none do), and titles that are not plain file names
(a ``/``, a newline or another control character) are made safe as ``backoff-sim`` does.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from sim.vocabulary.errors import UserError
from sim.commands.stdout import GuardedStdout

HEADERS = ["time", "client_id", "event_type", "event_detail"]


PNG_SUFFIXES = ("_metrics.png", "_scatter.png")


def build_parser() -> argparse.ArgumentParser:
    from sim.commands.cli import OneLineParser, add_force

    parser = OneLineParser(
        prog="backoff-simulator",
        description="Run backoff simulations configured via a toml file. (Compatible with the "
                    "backoff-simulator package; see `backoff-sim run --help` for more outputs.)")
    parser.add_argument("--config-file", type=Path, default=Path("simulations.toml"),
                        help="Path to config file.")
    add_force(parser)
    return parser


def compat_stem(title: str) -> str:
    """The reference names files after the raw title; keep that whenever it is a plain file name
    (no path separator, no newline or other control character)."""
    from sim.export.names import safe_title

    if "/" in title or os.sep in title or any(ord(ch) < 32 or ord(ch) == 127 for ch in title):
        return safe_title(title)
    return title


def history_text(rows: Sequence[tuple[float, int, str, str]]) -> str:
    """The reference's table: times as ``format(t, ".02f")`` strings, laid out by ``tabulate``."""
    from tabulate import tabulate

    return tabulate(((format(t, ".02f"), c, name, detail) for t, c, name, detail in rows),
                    headers=HEADERS)


def _run(config_file: Path, force: bool, out: GuardedStdout) -> int:
    from sim.pipeline import load, output_set, prepare, sweep
    from sim.export.atomic import atomic_save_figure
    from sim.export.plots import metrics_figure, scatter_figure
    from sim.export.runs import representative_runs, scatter_runs
    from sim.export.palette import load_palette

    config = load(config_file, plans=False)
    stems = [compat_stem(s.title) for s in config.simulations]
    if len(set(stems)) != len(stems):
        raise UserError(f"{config_file}: two simulations would write the same PNG files; "
                        "give them titles that differ in letters or digits")
    config = prepare(config, force=force, out=".", unique_stems=False, stem=compat_stem,
                     suffixes=PNG_SUFFIXES)
    palette = load_palette()
    with output_set(".", last=True) as output:
        results = sweep(config, record=True)
        tables = []
        for result, stem in zip(results, stems):
            spec = result.spec
            atomic_save_figure(metrics_figure(result, palette), output.dir / f"{stem}_metrics.png")
            atomic_save_figure(scatter_figure(result, scatter_runs(spec, result.recorded), palette),
                               output.dir / f"{stem}_scatter.png")
            tables.append((spec, representative_runs(spec, result.recorded)))
        output.add(Path(stem + suffix) for stem in stems for suffix in PNG_SUFFIXES)
    for spec, runs in tables:
        for label in sorted(runs):
            print(f"\n{spec.title} + {label}\n", file=out)
            print(history_text(runs[label].history.rows()), file=out)
            print(file=out)
    out.flush()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``backoff-simulator``; returns the exit status (as ``backoff-sim run``)."""
    from sim.commands.stdout import command_status
    from sim.runs.fast import use_built_kernels

    args = build_parser().parse_args(argv)
    use_built_kernels()  # headless, as ``backoff-sim run`` (``sim.commands.cli.main``)
    return command_status(lambda: _run(args.config_file, args.force, GuardedStdout(sys.stdout)))


if __name__ == "__main__":  # pragma: no cover - `python -m sim.commands.compat`, as the console script
    from sim.commands.entry import backoff_simulator

    backoff_simulator()
