"""``backoff-sim check SETTINGS...``: the retry settings of a call path, checked against a service.

Registered on the ``backoff-sim`` parser by ``sim.commands.cli``; never imports Textual
(``--app`` is opened by ``tui.main`` before this runs). Mistakes are one line with exit status
2; Ctrl-C stops the pool and exits 130, leaving no file half written.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from sim.vocabulary.errors import EXIT_OK, UserError

CHECK_DESCRIPTION = """\
Check the retry settings of a call path. SETTINGS are the files in the order the calls pass
through them (app, SDK, sidecar); each becomes one or more layers. The first layer is the
clients' strategy; each layer below it is a pass-through proxy that retries with its own settings
in front of the service (--service FILE, or --workers/--service-time/--load).

It prints each layer's attempts and retries and the worst-case amplification at the service (the
product of the attempts), checked by a run under total failure; runs the incident battery
(capacity halved 10 s and 60 s, outage 10 s and 60 s, 2x and 5x slowdown 60 s, 20% errors 60 s,
2x load spike 30 s) against the settings and against alternatives differing in one setting; sweeps
the main knob; ends with a verdict. Files written into --out:

  check_layers.csv     layer,source,attempts,retries,amplification,amplification_simulated
                       (one row per layer, then total)
  check_incidents.csv  settings,incident,recovered_runs,runs,recovery_time_median,extra_load,
                       p99,goodput_lost (times in ms; extra_load and goodput_lost as fractions)
  check_range.csv      the knob's values and whether each recovered from every incident
  check_config.toml    the battery as a config: `backoff-sim run` it to see every run's files
"""

CHECK_EPILOG = """\
examples:
  backoff-sim check app.toml sidecar.toml                       # the default service
  backoff-sim check app.toml --workers 16 --service-time 5 --load 0.8
  backoff-sim check app.toml sidecar.toml --service my_service.toml --out checked
  backoff-sim check app.toml sidecar.toml --explain             # the TOML the settings became

Results depend only on the settings, the service and --seed, never on --processes.
"""

SERVICE_FLAGS = ("workers", "service_time", "load")


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def incident_names(text: str) -> tuple[str, ...]:
    """An argparse type for --incidents: names of the battery, comma separated."""
    from sim.check.battery import BATTERY

    known = [i.name for i in BATTERY]
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for name in names:
        if name not in known:
            raise argparse.ArgumentTypeError(f"unknown incident {name!r}: choose among {', '.join(known)}")
    if not names:
        raise argparse.ArgumentTypeError("names no incident")
    return names


def add_check_subparser(subparsers, int_at_least: Callable, seed_value: Callable,
                        add_force: Callable[[argparse.ArgumentParser], None],
                        directory: Callable[[str], Path] = Path) -> argparse.ArgumentParser:
    """Register ``check`` on the top-level parser's subparsers (the CLI's argparse types, so
    every command words a mistake alike)."""
    from sim.check.plan import DEFAULT_RANGE_REPETITIONS, DEFAULT_REPETITIONS
    from sim.check.service import DEFAULT_LOAD, DEFAULT_SERVICE_TIME, DEFAULT_WORKERS

    sub = subparsers.add_parser("check", help="check retry settings (app, SDK, sidecar) against a service",
                                description=CHECK_DESCRIPTION, epilog=CHECK_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_argument("settings", nargs="+", metavar="SETTINGS", type=Path,
                     help="settings files, in the order the calls pass through them")
    sub.add_argument("--service", metavar="FILE", type=Path, default=None,
                     help="the service: a TOML of a server as in [[simulation]] (control, workers, "
                          "service_time, queue..., load, clients, [simulation.fleet])")
    sub.add_argument("--workers", metavar="N", type=int_at_least(1, 100_000), default=None,
                     help=f"the service's workers (default: {DEFAULT_WORKERS}; not with --service)")
    sub.add_argument("--service-time", metavar="MS", type=positive_float, default=None,
                     help=f"the mean service time, exponential (default: {DEFAULT_SERVICE_TIME:g} ms)")
    sub.add_argument("--load", metavar="F", type=positive_float, default=None,
                     help=f"open load as a fraction of the capacity (default: {DEFAULT_LOAD:g})")
    sub.add_argument("--out", "-o", metavar="DIR", type=directory, default=Path("."),
                     help="directory for the CSV files, created if needed (default: .)")
    sub.add_argument("--explain", action="store_true", help="print the TOML the settings became and exit")
    sub.add_argument("--app", action="store_true",
                     help="open the comparison (the battery under each arrangement) in the terminal app")
    sub.add_argument("--repetitions", metavar="N", type=int_at_least(1, 1000), default=DEFAULT_REPETITIONS,
                     help=f"runs per incident and arrangement (default: {DEFAULT_REPETITIONS})")
    sub.add_argument("--range-repetitions", metavar="N", type=int_at_least(1, 1000),
                     default=DEFAULT_RANGE_REPETITIONS,
                     help=f"runs per incident at each value of the knob (default: {DEFAULT_RANGE_REPETITIONS})")
    sub.add_argument("--seed", metavar="S", type=seed_value, default=0, help="seed of every run (default: 0)")
    sub.add_argument("--processes", "-j", metavar="N", type=int_at_least(1, 4096), default=None,
                     help="worker processes for the runs (default: all cores); --workers is the service's")
    sub.add_argument("--incidents", metavar="NAMES", type=incident_names, default=None,
                     help="only these incidents of the battery, comma separated (default: all)")
    sub.add_argument("--quiet", "-q", action="store_true", help="no progress: print only the files written")
    add_force(sub)
    from sim.report.html.option import add_report_argument

    add_report_argument(sub)
    sub.set_defaults(command="check")
    return sub


def service_of(args: argparse.Namespace):
    """The service of the arguments: --service FILE, or the three flags (not both)."""
    from sim.check.service import from_file, from_flags

    flags = [f"--{name.replace('_', '-')}" for name in SERVICE_FLAGS if getattr(args, name) is not None]
    if args.service is not None:
        if flags:
            raise UserError(f"--service gives the service: drop {', '.join(flags)} (or drop --service)")
        return from_file(args.service)
    return from_flags(args.workers, args.service_time, args.load)


def battery_of(args: argparse.Namespace):
    from sim.check.battery import BATTERY

    return BATTERY if args.incidents is None else tuple(i for i in BATTERY if i.name in args.incidents)


def prepared(args: argparse.Namespace):
    """Layers, service and plan: every input checked before any run."""
    from sim.check.layers import read_layers
    from sim.check.plan import make_plan

    layers = read_layers(args.settings)
    service = service_of(args)
    plan = make_plan(layers, service, repetitions=args.repetitions, seed=args.seed, battery=battery_of(args),
                     range_repetitions=args.range_repetitions)
    return layers, service, plan


def check_command(args: argparse.Namespace) -> int:
    """Carry out ``backoff-sim check``; the exit status (0, 2, or 130, 143, 129 on a stop signal)."""
    from sim.commands.stdout import command_status, stderr_line

    if args.app:  # `backoff-sim check --app` opens the app before this
        stderr_line("error: --app opens the terminal app: run `backoff-sim check SETTINGS... --app` "
                    "(python -m sim is headless)")
        return UserError.exit_status
    return command_status(lambda: _check(args))


def _check(args: argparse.Namespace) -> int:
    from sim.check.files import write_files
    from sim.check.layers import explain, read_layers
    from sim.check.outcome import run_check
    from sim.check.words import report_lines
    from sim.commands import progress as progress_lines
    from sim.commands.stdout import print_plain, stderr_console, stdout_console
    from sim.runs.procpool import worker_count

    out = stdout_console()
    if args.explain:
        text = explain(read_layers(args.settings))
        out.file.write(text)
        return EXIT_OK
    layers, service, plan = prepared(args)
    from sim.export.atomic import ensure_output_dir
    from sim.report.html.option import check_report_path

    ensure_output_dir(args.out)  # an unusable --out fails now, not after the runs
    check_report_path(args.report)
    err = stderr_console()
    workers = worker_count(args.processes)
    with progress_lines.Display(err, quiet=args.quiet, unit="runs",
                                interval=progress_lines.PROGRESS_SECONDS) as display:
        result = run_check(plan, layers, args.repetitions, workers=workers,
                           progress=display.reporter("checking"), force=args.force, battery=battery_of(args),
                           range_repetitions=args.range_repetitions)
    lines = report_lines(result, service)
    page = None
    if args.report is not None:  # built before the files: a stop while it is made leaves none
        from sim.check.report import check_report

        page = check_report(result, plan, lines, args.seed, args.report)
    written = write_files(result, plan, args.out)
    if page is not None:
        from sim.report.html import write_report

        write_report(args.report, page)
    if args.quiet:
        for path in written + ([args.report] if page is not None else []):
            print_plain(out, str(path))
        return EXIT_OK
    for line in lines:
        print_plain(out, line)
    print_plain(out, f"\nwrote {len(written)} files to {args.out.resolve()}: "
                     f"{', '.join(p.name for p in written)}")
    if page is not None:
        print_plain(out, f"wrote the report to {args.report.resolve()}")
    return EXIT_OK


def app_config(args: argparse.Namespace) -> Path:
    """For ``backoff-sim check ... --app`` (``args`` parsed by the CLI's parser): the comparison
    config written into --out (the battery under every arrangement, ``check_config.toml``), for
    the app to open as it opens any config. Raises UserError (one line) for a mistake."""
    from sim.check.files import write_config

    if args.explain:
        raise UserError("--explain prints the settings' TOML; --app opens the comparison: give one")
    _, _, plan = prepared(args)
    return write_config(plan, args.out)
