"""``backoff-sim phase CONFIG``: the phase portrait of each simulation with a replying server.

Registered on the ``backoff-sim`` parser by ``sim.commands.cli``; never imports Textual. Mistakes are one
line with exit status 2; Ctrl-C stops the workers and leaves no file (the files of a command
appear together at the end, as with ``run`` and ``explore``).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from sim.vocabulary.errors import EXIT_OK, UserError

PHASE_DESCRIPTION = """\
Draw the phase portrait of each simulation of a config whose server replies: the state
(work at the server: queued + in service, calls in backoff waiting to retry) on a grid;
in each cell many short runs start in that state (without the config's outages) and
give the drift (the mean change of work and orbit per time unit over --horizon, with its
95% CI) and the return probability (the fraction of runs back in the healthy state within
--limit). The healthy state is where runs from an empty server settle. For each
simulation it writes:

  <title>_phase.csv              one row per strategy and cell: work, orbit, drift of
                                 each with its CI, return probability, runs, median
                                 return time, whether the cell is healthy, whether its
                                 return probability is the coarse cells' around it
  <title>_phase.png              a panel per strategy: drift arrows, return probability
                                 as shading, the boundary (half the runs return), the
                                 healthy equilibrium and a collapsed one when it lies
                                 on the grid
  <title>_phase_provenance.json  the seed, the config's hash and this command

The calls in backoff (and the requests of the work) are each on their --attempt-th
attempt: a backoff strategy remembers how many failed before, and its portrait depends
on it. By default, the attempt a call that began with the config's first outage is on
when the outage ends (README, "Phase portrait"). After an outage the state is as the
outage leaves it: work counts the clients at the door (their SYN refused by the full
accept queue) as well as the requests at the server, and the seeded requests are of
every age up to the timeout, the accept queue's at the server and the others arriving at
their SYN retransmit. Open workloads (calls that overlap) have portraits too: work is
the calls with a request at the server, orbit the calls waiting to retry. A coarse grid
runs first; cells whose coarse neighbours all agree run only to the drift's horizon.
"""

PHASE_EPILOG = """\
examples:
  backoff-sim phase examples/server_outage.toml --out portraits
  backoff-sim phase examples/server_outage.toml --strategy "constant 100ms" --grid 10
  backoff-sim phase my.toml --runs 16 --limit 60000 --attempt 3

Results depend only on the config, the seed and the flags, never on --workers.
"""


def positive_time(text: str) -> float:
    """An argparse type: a positive time in the config's unit, within the bounds of every time
    (``sim.vocabulary.bounds``: a 1e-300 horizon would be sampled 10^300 times)."""
    from sim.vocabulary.bounds import MAX_TIME, MIN_SPAN

    accepted = f"expected a positive time from {MIN_SPAN:g} to {MAX_TIME:g}"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{accepted}, got {text!r}") from None
    if not math.isfinite(value) or not MIN_SPAN <= value <= MAX_TIME:
        raise argparse.ArgumentTypeError(f"{accepted}, got {text!r}")
    return value


def add_phase_subparser(subparsers, int_at_least: Callable, seed_value: Callable[[str], int],
                        add_force: Callable[[argparse.ArgumentParser], None],
                        directory: Callable[[str], Path] = Path) -> argparse.ArgumentParser:
    """Register ``phase`` on the top-level parser's subparsers (the CLI's argparse types, so
    every command words a mistake alike)."""
    from sim.export.palette import DEFAULT_THEME

    sub = subparsers.add_parser("phase", help="phase portrait: drift and return probability over "
                                "(work at the server, calls in backoff)",
                                description=PHASE_DESCRIPTION, epilog=PHASE_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_argument("config", metavar="CONFIG", type=Path, help="TOML config with a replying server")
    sub.add_argument("--out", "-o", metavar="DIR", type=directory, default=Path("."),
                     help="directory for the CSV and PNG files, created if needed (default: .)")
    sub.add_argument("--strategy", "-s", metavar="NAME", action="append", default=None,
                     help="a strategy's name (repeatable; default: every strategy)")
    sub.add_argument("--grid", metavar="N", type=int_at_least(2, 200), default=20,
                     help="cells per axis (default: 20, a 20x20 grid)")
    sub.add_argument("--runs", metavar="N", type=int_at_least(1, 10_000), default=4,
                     help="runs per cell: half of them first, the rest only where those disagree "
                          "on returning (default: 4)")
    sub.add_argument("--horizon", metavar="T", type=positive_time, default=None,
                     help="time over which the drift is measured (default: half the timeout)")
    sub.add_argument("--limit", metavar="T", type=positive_time, default=None,
                     help="time within which a run must return to the healthy state "
                          "(default: 15 timeouts, or 4 times the backoff after --attempt if "
                          "longer; at most the simulation's horizon)")
    sub.add_argument("--attempt", metavar="K", type=int_at_least(1, 1000), default=None,
                     help="the attempt every call of the state is on (default: the one a call "
                          "that began with the config's first outage is on when it ends; 1 "
                          "without an outage)")
    sub.add_argument("--clients", metavar="N", type=int_at_least(1, 10_000_000), default=None,
                     help="client count (default: the simulation's largest)")
    sub.add_argument("--work-max", metavar="N", type=int_at_least(1, 10_000_000), default=None,
                     help="top of the work axis (default: the client count)")
    sub.add_argument("--orbit-max", metavar="N", type=int_at_least(1, 10_000_000), default=None,
                     help="top of the orbit axis (default: the client count)")
    sub.add_argument("--seed", metavar="N", type=seed_value, default=None,
                     help="seed, overriding the config's")
    sub.add_argument("--workers", "-j", metavar="N", type=int_at_least(1, 4096), default=None,
                     help="worker processes (default: all cores)")
    sub.add_argument("--quiet", "-q", action="store_true", help="no progress: print only the files written")
    sub.add_argument("--theme", metavar="NAME", default=DEFAULT_THEME,
                     help=f"colour theme for the PNG (default: {DEFAULT_THEME})")
    add_force(sub)
    from sim.report.html.option import add_report_argument

    add_report_argument(sub)
    sub.set_defaults(command="phase")
    return sub


def phase_command(args: argparse.Namespace) -> int:
    """Carry out ``backoff-sim phase``; return the exit status (0, 2, or 130, 143, 129)."""
    from sim.commands.stdout import command_status

    return command_status(lambda: _phase(args))


def _settings(args: argparse.Namespace):
    from sim.phase.portrait import PhaseSettings

    return PhaseSettings(size=args.grid, runs=args.runs, horizon=args.horizon, limit=args.limit,
                         attempt=args.attempt, clients=args.clients, work_max=args.work_max,
                         orbit_max=args.orbit_max)


def _labels(spec, wanted: list[str] | None) -> list[str]:
    labels = [s.label for s in spec.strategies]
    if not wanted:
        return labels
    for name in wanted:
        if name not in labels:
            raise UserError(f"--strategy {name!r}: simulation {spec.title!r} has no such strategy "
                            f"(its strategies: {', '.join(map(repr, labels))})")
    return [label for label in labels if label in wanted]


def _phase(args: argparse.Namespace) -> int:
    from sim.settings.config import load_config
    from sim.export.atomic import atomic_write_text
    from sim.export.names import check_unique_stems, safe_title
    from sim.export.palette import load_palette
    from sim.phase.csv import write_phase_csv
    from sim.phase.figure import write_phase_png
    from sim.phase.cost import check_phase_resources
    from sim.phase.portrait import compute_portrait, replying_problem, resolve
    from sim.phase.provenance import phase_provenance_text
    from sim.phase.pool import cell_runner
    from sim.pipeline import output_set
    from sim.commands.progress import Display
    from sim.runs.procpool import worker_count
    from sim.commands.stdout import print_plain, stderr_console, stdout_console

    palette = load_palette(args.theme)
    config = load_config(args.config)
    if args.seed is not None:
        config = config.with_seed(args.seed)
    if getattr(args, "force", False):
        config = config.with_soft_limits(False)
    specs = [s for s in config.simulations if replying_problem(s) is None]
    if not specs:
        problems = "; ".join(replying_problem(s) for s in config.simulations) or "it has no simulation"
        raise UserError(f"{args.config}: nothing to draw: {problems}")
    check_unique_stems(s.title for s in specs)
    settings = _settings(args)
    chosen = [(spec, _labels(spec, args.strategy)) for spec in specs]
    from sim.report.html.option import check_report_path

    report = getattr(args, "report", None)
    check_report_path(report)
    shown_portraits = []  # (spec, portraits, their summary lines): the report's
    workers = worker_count(args.workers)
    # Before any work, as ``run`` does: every portrait's settings, and what they will cost.
    check_phase_resources([(spec, label, resolve(spec, settings, label)) for spec, labels in chosen
                           for label in labels], workers=workers, force=getattr(args, "force", False))
    err = stderr_console()
    out = stdout_console()
    start = time.perf_counter()
    notes: list[str] = []
    with ExitStack() as stack:
        output = stack.enter_context(output_set(args.out, last=True))
        # A bar on a terminal; else a plain line every few seconds; nothing with --quiet.
        display = stack.enter_context(Display(err, quiet=args.quiet, unit="cells"))
        reporters: dict[str, object] = {}  # by what is being computed, a bar task each

        def show(text: str, unit: str, done: int, total: int) -> None:
            if text not in reporters:
                reporters[text] = display.reporter(text, unit)
            reporters[text](done, total)

        current = [""]  # the portrait being computed

        def on_progress(done: int, total: int) -> None:
            show(current[0], "cells", done, total)

        def on_pilots(done: int, total: int) -> None:  # the runs that find the healthy state
            show(current[0] + ": settling the healthy state", "pilot runs", done, total)

        # On worker processes even with one: a stop kills them by pid at once (40.4).
        run_all = stack.enter_context(cell_runner(workers, on_progress, in_process=False,
                                                  tick=display.tick, pilot_progress=on_pilots))
        staged: list[Path] = []
        for spec, labels in chosen:
            portraits = []
            for label in labels:
                what = f"phase portrait of {spec.title}, {label!r}"
                current[0] = what
                portrait = compute_portrait(spec, label, settings, run_all)
                portraits.append(portrait)
                notes.append(_summary(portrait))
            stem = safe_title(spec.title)
            files = [write_phase_csv(stem, portraits, output.dir),
                     write_phase_png(stem, portraits, output.dir, palette)]
            files.append(atomic_write_text(output.dir / f"{stem}_phase_provenance.json",
                                           phase_provenance_text(spec, [p.name for p in files])))
            staged += files
            shown_portraits.append((spec, portraits, notes[-len(portraits):]))
        page = None
        if report is not None:  # built before the commit: a stop while it draws leaves no file
            from sim.phase.html_report import phase_report

            page = phase_report(shown_portraits)
        output.add(staged)
    written = output.written
    if page is not None:  # after the commit, written atomically on its own
        from sim.report.html import write_report

        write_report(report, page)
    seconds = time.perf_counter() - start
    if not args.quiet:
        for note in notes:
            print_plain(out, note)
        print_plain(out, f"done in {seconds:.1f} s; wrote {len(written)} files to {Path(args.out).resolve()}:")
    for path in written:
        print_plain(out, f"  {path.name}" if not args.quiet else str(path))
    if report is not None:
        print_plain(out, str(report) if args.quiet else f"wrote the report to {report.resolve()}")
    return EXIT_OK


def _summary(p) -> str:
    """One line per portrait: the basins, the healthy state, the returning share of the grid."""
    prob = p.probabilities
    share = float((prob >= 0.5).mean())
    collapsed = p.collapsed_state()
    where = (f"collapsed equilibrium near {collapsed}" if collapsed is not None
             else "the collapse lies beyond the grid" if (prob < 0.5).any() else "no collapse on the grid")
    return (f"{p.title}, {p.label!r}: {p.basins} basin{'s' if p.basins > 1 else ''}; healthy near "
            f"({p.healthy_state[0]:.0f}, {p.healthy_state[1]:.0f}); {share:.0%} of cells return "
            f"within {p.settings.limit:,.0f} {p.time_unit}; {where}")  # as the PNG titles it
