"""The headless command line: ``backoff-sim run`` sweeps a config, prints tables, writes files.

Never imports Textual. The ``run`` subcommand is built by ``add_run_arguments`` and carried out
by ``run_command``, so the top-level ``backoff-sim`` entry point (which also launches the
terminal app) can dispatch to it without importing the app.
"""

from __future__ import annotations

import argparse
import gc
import sys
import textwrap
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

from sim.commands import collector
from sim.analysis.best import star_rule
from sim.commands import progress as progress_lines
from sim.vocabulary.errors import EXIT_OK, EXIT_USER_ERROR
from sim.vocabulary.repetitions import repetition_text
from sim.export.outputs import help_lines

# Without a progress bar (stderr not a terminal), a line of progress this often; none at all for
# a run shorter than that.
PROGRESS_SECONDS = progress_lines.PROGRESS_SECONDS

RUN_DESCRIPTION = f"""\
Run every simulation of a config file: sweep each strategy over the client counts, print a
table of work, duration and cost (mean ± 95% CI; best strategy by cost marked ★, the others'
paired cost difference from it with its CI and percentage, ≈ when not significant, n/a with one
repetition) and the first events of one example history per strategy (--show-events; the
whole histories are in the events file, --events), then write for each simulation:

{help_lines(None)}

Simulations against servers that reply (QueueServer, LatencyServer, FlakyServer, PoolServer)
print a latency table instead (requests, successes, clients left waiting, latency percentiles
and mean, goodput, recovery
after an outage as "3/3 recovered, median ...", "✗ never (0/3)" or "—" when too noisy to tell a
return to 80% from one to 90% of the level before it; ★ the best cells), and also write:

{help_lines("keeps_series")}

{textwrap.fill(f"The latency table's marks, as its caption gives them: {star_rule(None)}.", 96)}

Times are labelled in the config's time_unit (default ms).

A sweep already done with the same settings, seed and code (by run or the app) is read from
the cache, not simulated again, and run says so ("results from the cache of <date>"); the
files are the same bytes. The cache is $BACKOFF_SIM_CACHE (off: none), else
$XDG_CACHE_HOME/backoff-sim (~/.cache/backoff-sim); --no-cache simulates every sweep.
"""

RUN_EPILOG = """\
examples:
  backoff-sim run                              # the bundled sample, files in the current directory
  backoff-sim run simulations.toml --out results --seed 7
  backoff-sim run my.toml --workers 1 --quiet  # one core, print only the files written

Results depend only on the config and the seed, never on --workers.
"""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose mistakes are one line on stderr (exit status 2), not usage + error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def version_text() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"backoff-sim {version('backoff-sim')}"
    except PackageNotFoundError:  # pragma: no cover - run from a source tree without installing
        return "backoff-sim (version unknown: not installed)"


def add_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=version_text(),
                        help="print the version and exit")


def int_at_least(low: int, high: int | None = None):
    """An argparse type: a whole number >= ``low`` (and <= ``high``), with a one-line message
    that states the accepted range otherwise."""
    accepted = f"a whole number from {low} to {high}" if high is not None else f"a whole number, {low} or more"

    def parse(text: str) -> int:
        digits = text.strip().lstrip("+-")
        if not digits.isdigit() or not digits.isascii():
            raise argparse.ArgumentTypeError(f"expected {accepted}, got {text!r}")
        if high is not None and len(digits) > len(str(high)) + 1:  # don't convert 10**5000 digits
            raise argparse.ArgumentTypeError(f"expected {accepted}, got a number of {len(digits)} digits")
        value = int(text)
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {accepted}, got {value}")
        return value
    return parse


def output_dir(text: str) -> Path:
    """An argparse type for --out: a directory path, never the empty string (which is not one)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a directory, got an empty string "
                                         "(use --out . for the current directory)")
    if "\0" in text:
        raise argparse.ArgumentTypeError("must not contain a NUL character")
    from sim.export.names import out_dir_problem

    problem = out_dir_problem(text)  # ENAMETOOLONG, before any work rather than a traceback
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return Path(text)


def _max_seed() -> int:
    from sim.vocabulary.bounds import MAX_SEED

    return MAX_SEED


positive_int = int_at_least(1, 4096)
seed_value = int_at_least(0, _max_seed())
HISTORY_HEAD = 20  # events printed per example history unless --show-events says otherwise


def event_count(text: str) -> int | None:
    """An argparse type for ``--show-events``: a whole number >= 0, or ``all`` (None)."""
    if text.strip().lower() == "all":
        return None
    try:
        return int_at_least(0)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of events or 'all', got {text!r}") from None


def events_mode(text: str) -> str | int:
    """An argparse type for ``--events``: ``none``, ``sample`` or ``all`` (what the events file
    holds, ``sim.export.outputs.EVENTS_MODES``); a whole number is what ``--events N`` meant
    before (``--show-events N``: events printed), still accepted."""
    from sim.export.outputs import EVENTS_MODES

    word = text.strip().lower()
    if word in EVENTS_MODES:
        return word
    try:
        return int_at_least(0)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(EVENTS_MODES)} (or a number of events to print), got {text!r}") from None


def events_options(args: argparse.Namespace) -> tuple[str, int | None]:
    """(what the events file holds, events printed of each example history) from ``--events``
    and ``--show-events``."""
    from sim.export.outputs import DEFAULT_EVENTS

    mode, shown = getattr(args, "events", DEFAULT_EVENTS), getattr(args, "show_events", HISTORY_HEAD)
    if isinstance(mode, int):  # ``--events N``, as before: a number printed
        return DEFAULT_EVENTS, mode
    return mode, shown


def add_run_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``run`` subcommand's arguments to ``parser`` (a subparser, or a parser of its own)."""
    from sim.export.palette import DEFAULT_THEME

    parser.add_argument("config", nargs="?", metavar="CONFIG", type=Path,
                        help="TOML config file ([[simulation]] blocks, as for backoff-simulator); "
                             "default: the bundled sample.toml")
    parser.add_argument("--out", "-o", metavar="DIR", type=output_dir, default=Path("."),
                        help="directory for the PNG and CSV files, created if needed (default: .)")
    parser.add_argument("--seed", metavar="N", type=seed_value, default=None,
                        help="seed for every simulation, overriding the config's seed")
    parser.add_argument("--workers", "-j", metavar="N", type=positive_int, default=None,
                        help="worker processes for the sweep (default: all cores)")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar and no tables: print only the files written")
    parser.add_argument("--events", metavar="none|sample|all", type=events_mode, default="sample",
                        help="what <title>_events.csv holds: sample (the default) the example runs, one "
                             "per strategy (those the app replays and the tables show); none writes no "
                             "events file (the fastest); all every run's every event (each run simulated "
                             "again as the file is written: slow, and large)")
    parser.add_argument("--show-events", metavar="N|all", type=event_count, default=HISTORY_HEAD,
                        help=f"events printed of each example history (default: {HISTORY_HEAD}); "
                             "all prints every event (--events N, as before, does the same)")
    parser.add_argument("--no-cache", action="store_true",
                        help="simulate every sweep again: read no result from the cache and write "
                             "none (sweeps are cached by config, seed and version, the app's too)")
    parser.add_argument("--theme", metavar="NAME", default=DEFAULT_THEME,
                        help=f"colour theme for the PNGs and tables (default: {DEFAULT_THEME}; "
                             "also backoff-light, backoff-contrast)")
    add_force(parser)
    from sim.report.html.option import add_report_argument

    add_report_argument(parser)
    parser.set_defaults(command="run")
    return parser


def add_force(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true",
                        help="run sweeps beyond the soft limits (an hour of events, the memory "
                             "available now) and let runs go far beyond their estimate")


def add_run_subparser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``run`` on a top-level parser's subparsers."""
    sub = subparsers.add_parser("run", help="run a config headless and write PNG and CSV files",
                                description=RUN_DESCRIPTION, epilog=RUN_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    return add_run_arguments(sub)


def build_parser() -> argparse.ArgumentParser:
    """The ``backoff-sim`` parser with its headless subcommands."""
    parser = OneLineParser(
        prog="backoff-sim",
        description="Simulate clients retrying against a contended server with different "
                    "backoff strategies.",
        epilog="example:\n  backoff-sim run sample.toml --out results\n\n"
               "`backoff-sim run --help` describes the files written.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_run_subparser(subparsers)
    from sim.commands.explore import add_explore_subparser

    add_explore_subparser(subparsers, positive_int, add_force, output_dir)
    from sim.commands.phase import add_phase_subparser

    add_phase_subparser(subparsers, int_at_least, seed_value, add_force, output_dir)
    from sim.commands.check import add_check_subparser

    add_check_subparser(subparsers, int_at_least, seed_value, add_force, output_dir)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Carry out ``backoff-sim run``; return the exit status (0; 2 for user errors; 1 when stdout
    cannot be written; 130, 143 or 129 on SIGINT, SIGTERM or SIGHUP).

    Every user mistake ends as one line on stderr (one per mistake of a config); a stop signal
    kills the workers and removes the temporary files, printing one line; the files of a
    run appear all together at the end or not at all.
    """
    from sim.commands.stdout import command_status

    return command_status(lambda: _run(args))


def out_of_collection() -> None:
    """Take what is loaded by now (modules, matplotlib, the sweep's results), which lives until
    the files are written, out of the garbage collector's passes: writing the charts makes many
    objects, and the collector's passes over the rest were ~8% of writing the files. Called
    between runs (the last one's cycles, if any, collected first), never inside one; ``_run``
    unfreezes when its files are in place (a test or a script may call it in its own process)."""
    gc.collect(0)
    collector.freeze()


def _run(args: argparse.Namespace) -> int:
    from sim.pipeline import (add_staged, output_set, prepare, stage_simulation, stage_simulations, sweep,
                              unbounded_backlog_warning)
    from sim.export.palette import load_palette
    from sim.export.plots import preload as preload_figures
    from sim.report import result_table
    from sim.report.load import load_lines
    from sim.report.policies import policy_table
    from sim.report.tiers import tier_table
    from sim.report.tables import history_table, more_events_note
    from sim.runs.procpool import default_workers, worker_count
    from sim.runs.sweep import EventCount
    from sim.commands.stdout import print_plain, print_table, stderr_console, stderr_line, stdout_console
    from sim.exploration.cache import SweepCache, cached_note

    err = stderr_console()
    palette = load_palette(args.theme)
    workers = worker_count(args.workers)  # never more than cores (40.3)
    config = prepare(args.config, seed=args.seed, force=getattr(args, "force", False),
                     workers=workers, out=args.out)
    from sim.report.html.option import check_report_path

    check_report_path(getattr(args, "report", None))
    specs = config.simulations
    warning = unbounded_backlog_warning(config)
    if warning is not None:
        stderr_line(f"warning: {warning}")
    out = stdout_console()

    staged = {}
    events = EventCount()
    events_file, shown_events = events_options(args)
    # Sweeps already done with this spec, seed and code (by ``run`` or the app) are read back,
    # not simulated again (``sim.exploration.cache.SweepCache``); the others are swept.
    cache = SweepCache.default(enabled=not getattr(args, "no_cache", False))
    results: list = [None] * len(specs)
    cached_on: dict[int, object] = {}
    for i, spec in enumerate(specs):
        hit = cache.get(spec)
        if hit is not None:
            results[i], cached_on[i] = hit
    missing = [i for i in range(len(specs)) if results[i] is None]

    with ExitStack() as stack:
        output = stack.enter_context(output_set(args.out, last=True))
        stack.callback(collector.unfreeze)  # ``out_of_collection``'s, undone for a caller's process
        # A bar on a terminal, else plain lines; nothing with --quiet. Its share done is by
        # events (``EventCount.fraction``), so it moves within long runs and has an ETA before
        # the first run ends ("0/30 runs -:--:--" for 77 s).
        display = stack.enter_context(progress_lines.Display(err, quiet=args.quiet, unit="runs",
                                                             fraction=events.fraction,
                                                             events=lambda: events.value,
                                                             interval=PROGRESS_SECONDS))
        reporter, phase, tick = display.reporter("simulating"), display.phase, display.tick

        # Written once the pool is gone, on every core: the last simulation swept, those read
        # from the cache, and, when the pool has every core, all of them. While the pool works,
        # this process writes a finished simulation's files only on a core the pool leaves free:
        # on a core the workers need, it only delayed them (the sample on 2 cores: its first
        # simulation's PNGs, drawn here beside both workers, ended 0.65 s after the sweep, one
        # core idle, before the last one's were begun).
        last: list[int] = sorted(cached_on)
        spare_core = workers < default_workers()

        def export(j: int, result) -> None:
            # Called as each simulation finishes, while the pool works on the next ones: with a
            # spare core its files are written here meanwhile (seconds for big open simulations:
            # say so). The last one's wait until the pool is gone, to be written on every core.
            i = missing[j]
            results[i] = result
            cache.put(result)
            if not spare_core or sum(r is not None for r in results) == len(specs):
                last.append(i)
                return
            phase(f"writing {result.spec.title}")
            out_of_collection()
            staged[i] = stage_simulation(result, output.dir, palette, events=events_file)
            phase("simulating")

        preloaded = False

        def tick_and_preload() -> None:
            # First thing while the workers sweep: matplotlib's import, this process's idle time.
            nonlocal preloaded
            if not preloaded:
                preloaded = True
                preload_figures()
            if tick is not None:
                tick()

        if missing:
            sweep(replace(config, simulations=tuple(specs[i] for i in missing)), workers=workers,
                  progress=reporter, on_complete=export, events=events, tick=tick_and_preload, record=True)
        titles = [results[i].spec.title for i in last]
        writing = "writing " + (", ".join(titles) if len(titles) <= 3 else f"{len(titles)} simulations' files")
        if display.bar is not None:
            # Its refresh thread would keep the files' workers from being forked (``sim.export.parallel``).
            display.stop()
            err.print(f"{writing}…", markup=False, highlight=False)
        out_of_collection()
        if last:
            phase(writing)
            for i, done in zip(last, stage_simulations([results[i] for i in last], output.dir, palette,
                                                       workers=workers, events=events_file)):
                staged[i] = done
        report, page = getattr(args, "report", None), None
        if report is not None:  # built before the commit: a stop while it draws leaves no file
            from sim.report.html import run_report

            phase(f"writing {report}")
            page = run_report(results, report)
        # Every simulation is done and staged: only now, as the block ends, do the files
        # replace the previous ones.
        add_staged(output, specs, staged)
    if page is not None:  # after the commit, written atomically on its own
        from sim.report.html import write_report

        write_report(report, page)

    out_dir = Path(args.out)
    for i, result in enumerate(results):
        spec = result.spec
        representative = staged[i].representative
        written = [out_dir / p.name for p in staged[i].written]
        if args.quiet:
            for path in written:
                print_plain(out, str(path))
            continue
        out.print()
        if i in cached_on:
            out.print(f"{spec.title} · {cached_note(cached_on[i])}", markup=False, soft_wrap=True)
        for line in load_lines(spec):  # what clients and think_time come to (sim.analysis.load)
            out.print(f"{spec.title} · {line}", markup=False, soft_wrap=True)
        print_table(out, result_table(result, palette))
        policies = policy_table(result)
        if policies is not None:
            out.print()
            print_table(out, policies)
        tiers = tier_table(result)
        if tiers is not None:
            out.print()
            print_table(out, tiers)
        # Hundreds of clients make histories of ~10^5 events: a head of each, and where the
        # rest is (printing them all took 30 s for a 300-client sweep).
        events_path = next((p for p in written if p.name.endswith("_events.csv")), None)
        for label, run in representative.items():
            total = len(run.history)
            shown = total if shown_events is None else min(shown_events, total)
            head = f"first {shown:,} of {total:,} events" if shown < total else f"{total:,} events"
            out.print()
            # The title on a line of its own: as a table title it would wrap at the table's width.
            out.print(f"{spec.title} · {label} · {run.clients} clients, "
                      f"{repetition_text(run.repetition, spec.repeat)} · {head}", style="italic",
                      markup=False, soft_wrap=True)
            if shown:  # --show-events 0: the title and where the events are, no empty table
                print_table(out, history_table(run.history, palette=palette, limit=shown,
                                               time_unit=spec.time_unit))
            note = more_events_note(total, shown, None if events_path is None else str(events_path),
                                    spec.time_unit)
            if note:
                out.print(note, markup=False, soft_wrap=True)
        out.print()
        out.print(f"wrote {len(written)} files for {spec.title!r} to {out_dir.resolve()}:",
                  markup=False, soft_wrap=True)
        for path in written:
            out.print(f"  {path.name}", markup=False, soft_wrap=True)
    if report is not None:
        print_plain(out, str(report) if args.quiet else f"wrote the report to {report.resolve()}")
    out.file.flush()
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``backoff-sim`` (headless): dispatch ``run``, ``explore``, ``phase`` and ``check``; print help when no command is given."""
    from sim.export.provenance import set_command

    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    if given and given[0].endswith(".toml"):  # `python -m sim my.toml`: the app's way in
        parser.exit(EXIT_USER_ERROR, f"error: {parser.prog}: {given[0]!r} is not a command: "
                    f"`{parser.prog} run {given[0]}` runs it here, without the app; "
                    f"`backoff-sim {given[0]}` opens it in the app\n")
    args = parser.parse_args(argv)
    set_command(["backoff-sim", *given])
    if not getattr(args, "app", False):
        # The kernels built ahead of time (numba's import and first dispatch saved in every
        # process that runs one); not in the app, whose threads run kernels beside its screen.
        from sim.runs.fast import use_built_kernels

        use_built_kernels()
    if args.command == "run":
        return run_command(args)
    if args.command == "explore":
        from sim.commands.explore import explore_command

        return explore_command(args)
    if args.command == "phase":
        from sim.commands.phase import phase_command

        return phase_command(args)
    if args.command == "check":
        from sim.commands.check import check_command

        return check_command(args)
    parser.print_help()
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover - `python -m sim.commands.cli`, as `python -m sim`
    from sim.commands.entry import backoff_sim_headless

    backoff_sim_headless()
