"""The headless command line: ``backoff-sim run`` sweeps a config, prints tables, writes files.

Never imports Textual. The ``run`` subcommand is built by ``add_run_arguments`` and carried out
by ``run_command``, so the top-level ``backoff-sim`` entry point (which also launches the
terminal app) can dispatch to it without importing the app.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from .errors import UserError

EXIT_OK = 0
EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130

RUN_DESCRIPTION = """\
Run every simulation of a config file: sweep each strategy over the client counts, print a
table of work, duration and cost (mean ± 95% CI, best strategy by cost marked ★, strategies
statistically tied with it marked ≈) and the first events of one example history per
strategy (--events; the whole histories are in the events file), then write for each
simulation:

  <title>_metrics.png   work, duration and cost against clients, with 95% CI bands
  <title>_scatter.png   client write requests over time, largest client count
  <title>_metrics.csv   the table above, one row per strategy and client count
  <title>_runs.csv      every run of the sweep
  <title>_events.csv    the example histories (open with `backoff-sim replay FILE`)

Simulations against servers that reply (QueueServer, LatencyServer) print a latency table
instead (requests, successes, latency percentiles, goodput, recovery after an outage as
"3/3 recovered, median ..." or "✗ never (0/3)"; ★ marks the fewest requests and the lowest
median latency), and also write:

  <title>_timeseries.png  offered, retries, accepted, goodput, rejected, timed out, in service
                          and queued over time, per strategy, outages shaded
  <title>_latency.png     latency and requests per client, sorted by latency, per strategy
  <title>_timeseries.csv  every bucket of every run
  <title>_latency.csv     latency percentiles, counts and recovery (repetitions recovered, median
                          time) per strategy and clients
"""

RUN_EPILOG = """\
examples:
  backoff-sim run                              # the bundled sample, files in the current directory
  backoff-sim run simulations.toml --out results --seed 7
  backoff-sim run my.toml --workers 1 --quiet  # one core, print only the files written

Results depend only on the config and the seed, never on --workers.
"""


def int_at_least(low: int):
    """An argparse type: a whole number >= ``low``, with a one-line message otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, got {value}")
        return value
    return parse


positive_int = int_at_least(1)
seed_value = int_at_least(0)
HISTORY_HEAD = 20  # events printed per example history unless --events says otherwise


def event_count(text: str) -> int | None:
    """An argparse type for ``--events``: a whole number >= 0, or ``all`` (None)."""
    if text.strip().lower() == "all":
        return None
    try:
        return int_at_least(0)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of events or 'all', got {text!r}") from None


def add_run_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``run`` subcommand's arguments to ``parser`` (a subparser, or a parser of its own)."""
    from .palette import DEFAULT_THEME

    parser.add_argument("config", nargs="?", metavar="CONFIG", type=Path,
                        help="TOML config file ([[simulation]] blocks, as for backoff-simulator); "
                             "default: the bundled sample.toml")
    parser.add_argument("--out", "-o", metavar="DIR", type=Path, default=Path("."),
                        help="directory for the PNG and CSV files, created if needed (default: .)")
    parser.add_argument("--seed", metavar="N", type=seed_value, default=None,
                        help="seed for every simulation, overriding the config's seed")
    parser.add_argument("--workers", "-j", metavar="N", type=positive_int, default=None,
                        help="worker processes for the sweep (default: all cores)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar and no tables: print only the files written")
    parser.add_argument("--events", metavar="N|all", type=event_count, default=HISTORY_HEAD,
                        help=f"events printed of each example history (default: {HISTORY_HEAD}); "
                             "all prints every event (the events file always has them all)")
    parser.add_argument("--theme", metavar="NAME", default=DEFAULT_THEME,
                        help=f"colour theme for the PNGs and tables (default: {DEFAULT_THEME}; "
                             "also backoff-light, backoff-contrast)")
    parser.set_defaults(command="run")
    return parser


def add_run_subparser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``run`` on a top-level parser's subparsers."""
    sub = subparsers.add_parser("run", help="run a config headless and write PNG and CSV files",
                                description=RUN_DESCRIPTION, epilog=RUN_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    return add_run_arguments(sub)


def build_parser() -> argparse.ArgumentParser:
    """The ``backoff-sim`` parser with its headless subcommands."""
    parser = argparse.ArgumentParser(
        prog="backoff-sim",
        description="Simulate clients retrying against a contended server with different "
                    "backoff strategies.",
        epilog="example:\n  backoff-sim run sample.toml --out results\n\n"
               "`backoff-sim run --help` describes the files written.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_run_subparser(subparsers)
    from .explore.command import add_explore_subparser

    add_explore_subparser(subparsers, positive_int)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Carry out ``backoff-sim run``; return the exit status (0, 2 for user errors, 130 on Ctrl-C).

    Every user mistake ends as one line on stderr; Ctrl-C stops without a traceback, and since
    files are replaced atomically none is left half-written.
    """
    from rich.console import Console

    from .interrupt import first_interrupt_only

    err = Console(stderr=True, highlight=False)
    try:
        with first_interrupt_only():
            return _run(args, err)
    except UserError as exc:
        err.print(f"error: {exc}", markup=False, soft_wrap=True)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        err.print("interrupted", markup=False)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout was closed early (e.g. piped into `head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


def _stdout_console():
    from rich.console import Console

    # Piped output gets a generous width instead of 80 columns, unless COLUMNS says otherwise.
    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120
    return Console(width=width, highlight=False)


def _run(args: argparse.Namespace, err) -> int:
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    from .config import SAMPLE_CONFIG, load_config
    from .export import export_simulation
    from .export.atomic import ensure_output_dir
    from .export.names import check_unique_stems
    from .export.runs import representative_runs
    from .palette import load_palette
    from .open_report import LatencyReport
    from .report import history_table, metrics_table, more_events_note
    from .sweep import run_sweeps

    palette = load_palette(args.theme)
    config = load_config(args.config if args.config is not None else SAMPLE_CONFIG)
    if args.seed is not None:
        config = config.with_seed(args.seed)
    specs = config.simulations
    check_unique_stems(s.title for s in specs)
    out_dir = ensure_output_dir(args.out)
    out = _stdout_console()

    exported: dict[int, tuple[dict, list[Path]]] = {}
    progress = None  # a rich progress bar on a terminal, unless --quiet

    def progress_cb(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    def phase(text: str) -> None:
        if progress is not None:
            progress.update(task, description=text)

    def export(i: int, result) -> None:
        # Called as each simulation finishes, while the pool works on the next ones. Recording
        # the example runs and writing the files takes seconds for big open simulations: say so.
        phase(f"writing {result.spec.title}")
        representative = representative_runs(result.spec)
        written = export_simulation(result, out_dir, palette=palette, representative=representative)
        exported[i] = (representative, written)
        phase("simulating")

    with ExitStack() as stack:
        if not args.quiet and err.is_terminal:
            progress = stack.enter_context(Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                TimeElapsedColumn(), TimeRemainingColumn(), console=err, transient=True,
                redirect_stdout=False, redirect_stderr=False))
            task = progress.add_task("simulating", total=None)
        results = run_sweeps(specs, workers=args.workers,
                             progress=progress_cb if progress is not None else None, on_complete=export)

    for i, result in enumerate(results):
        spec = result.spec
        representative, written = exported[i]
        if args.quiet:
            for path in written:
                out.print(str(path), markup=False, soft_wrap=True)
            continue
        out.print()
        out.print(LatencyReport(result, palette) if spec.is_open else metrics_table(result, palette))
        # Hundreds of clients make histories of ~10^5 events: a head of each, and where the
        # rest is (printing them all took 30 s for a 300-client sweep).
        events_file = next(p for p in written if p.name.endswith("_events.csv"))
        for label, run in representative.items():
            total = len(run.history)
            shown = total if args.events is None else min(args.events, total)
            head = f"first {shown:,} of {total:,} events" if shown < total else f"{total:,} events"
            out.print()
            # The title on a line of its own: as a table title it would wrap at the table's width.
            out.print(f"{spec.title} · {label} · {run.clients} clients, repetition "
                      f"{run.repetition} · {head}", style="italic", markup=False, soft_wrap=True)
            out.print(history_table(run.history, palette=palette, limit=shown))
            note = more_events_note(total, shown, str(events_file))
            if note:
                out.print(note, markup=False, soft_wrap=True)
        out.print()
        out.print(f"wrote {len(written)} files for {spec.title!r} to {out_dir.resolve()}:",
                  markup=False, soft_wrap=True)
        for path in written:
            out.print(f"  {path.name}", markup=False, soft_wrap=True)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``backoff-sim`` (headless): dispatch ``run`` and ``explore``; print help when no command is given."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "run":
        return run_command(args)
    if args.command == "explore":
        from .explore.command import explore_command

        return explore_command(args)
    parser.print_help()
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
