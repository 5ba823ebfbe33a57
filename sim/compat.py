"""``backoff-simulator --config-file FILE``: a drop-in for the reference package's command.

Same argument, same default (``simulations.toml``), same files (``<title>_metrics.png`` and
``<title>_scatter.png`` in the current directory) and the same stdout: for each simulation and
each strategy in sorted order, a title line and a ``tabulate`` table of the representative run.
Differences, on purpose: results are seeded (reproducible), strategies of one type with different
parameters are kept apart, and mistakes get one line and exit status 2 instead of a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import UserError

HEADERS = ["time", "client_id", "event_type", "event_detail"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="backoff-simulator",
        description="Run backoff simulations configured via a toml file. (Compatible with the "
                    "backoff-simulator package; see `backoff-sim run --help` for more outputs.)")
    parser.add_argument("--config-file", type=Path, default=Path("simulations.toml"),
                        help="Path to config file.")
    return parser


def compat_stem(title: str) -> str:
    """The reference names files after the raw title; keep that whenever it is a plain file name."""
    from .export.names import safe_title

    if "/" in title or os.sep in title or "\0" in title:
        return safe_title(title)
    return title


def history_text(rows: Sequence[tuple[float, int, str, str]]) -> str:
    """The reference's table: times as ``format(t, ".02f")`` strings, laid out by ``tabulate``."""
    from tabulate import tabulate

    return tabulate(((format(t, ".02f"), c, name, detail) for t, c, name, detail in rows),
                    headers=HEADERS)


def _run(config_file: Path) -> None:
    from .config import load_config
    from .export.atomic import atomic_save_figure
    from .export.plots import metrics_figure, scatter_figure
    from .export.runs import representative_runs, scatter_runs
    from .palette import load_palette
    from .sweep import run_sweeps

    specs = load_config(config_file).simulations
    stems = [compat_stem(s.title) for s in specs]
    if len(set(stems)) != len(stems):
        raise UserError(f"{config_file}: two simulations would write the same PNG files; "
                        "give them titles that differ in letters or digits")
    palette = load_palette()
    results = run_sweeps(specs)
    for result, stem in zip(results, stems):
        spec = result.spec
        atomic_save_figure(metrics_figure(result, palette), Path(f"{stem}_metrics.png"))
        atomic_save_figure(scatter_figure(result, scatter_runs(spec), palette), Path(f"{stem}_scatter.png"))
        runs = representative_runs(spec)
        for label in sorted(runs):
            print(f"\n{spec.title} + {label}\n")
            print(history_text(runs[label].history.rows()))
            print()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``backoff-simulator``; returns the exit status."""
    from .interrupt import first_interrupt_only

    args = build_parser().parse_args(argv)
    try:
        with first_interrupt_only():
            _run(args.config_file)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout closed early (e.g. piped into `head`): stop quietly, as rich does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
