"""``backoff-sim``: open the terminal app on a config or an events file, or run headless.

``backoff-sim run ...`` and ``backoff-sim explore ...`` are handed to ``sim.commands.cli`` before anything
imports Textual, so the headless commands stay as light as ``python -m sim``. Every mistake in the
arguments, the config or the events file is reported in one line (exit status 2) before the app
starts; so is starting the app without a terminal (under CI or ``nohup``), which suggests
``backoff-sim run``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from sim.commands.cli import (OneLineParser, add_force, add_version, int_at_least, output_dir, positive_int,
                     seed_value)
from sim.vocabulary.errors import EXIT_USER_ERROR
from tui.state.paths import DEFAULT_OUT

DESCRIPTION = """\
Simulate clients retrying against a contended server with different backoff strategies, and
inspect the runs event by event in a terminal app.

  backoff-sim [CONFIG]         open the app on a TOML config (default: the bundled sample)
  backoff-sim replay FILE      open the app on an exported <title>_events.csv (no simulation)
  backoff-sim run [CONFIG]     run headless: print tables, write PNG and CSV files
                               (see `backoff-sim run --help`)
  backoff-sim explore CONFIG   map metrics over one or two keys, tune a strategy
                               (see `backoff-sim explore --help`)
  backoff-sim phase CONFIG     phase portrait: from which states runs return to healthy
                               (see `backoff-sim phase --help`)
  backoff-sim check SETTINGS   check retry settings (app, SDK, sidecar) against a service
                               (see `backoff-sim check --help`)
  backoff-sim serve [CONFIG]   the app in a web browser, on 127.0.0.1:8000 by default
                               (needs the serve extra; see `backoff-sim serve --help`)
"""

EPILOG = """\
In the app, press ? for every key (space plays, ←/→ step, s/c/r switch strategy, clients and
repetition, e exports), or ctrl+p for the command palette.
"""


def _add_view_options(parser: argparse.ArgumentParser) -> None:
    from sim.export.palette import DEFAULT_THEME

    parser.add_argument("--theme", metavar="NAME", default=DEFAULT_THEME,
                        help=f"colour theme (default: {DEFAULT_THEME}; also backoff-light, "
                             "backoff-contrast); t cycles themes in the app")
    parser.add_argument("--no-animation", action="store_true",
                        help="show each run whole instead of playing it (slow links, screen readers)")
    parser.add_argument("--out", "-o", metavar="DIR", type=output_dir, default=DEFAULT_OUT,
                        help="directory the export key (e) writes to, created when first "
                             f"needed (default: ./{DEFAULT_OUT})")


def _time_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a time ≥ 0, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a time ≥ 0, got {text!r}")
    return value


def add_start_options(parser: argparse.ArgumentParser) -> None:
    """The options that open the app on a run and a time (what ``y`` copies)."""
    group = parser.add_argument_group("where the app opens (y in the app copies them)")
    group.add_argument("--simulation", metavar="TITLE", help="the simulation shown first")
    group.add_argument("--strategy", metavar="LABEL", help="its strategy shown first")
    group.add_argument("--clients", metavar="N", type=int_at_least(1, None),
                       help="its client count shown first")
    group.add_argument("--repetition", metavar="N", type=int_at_least(1, None),
                       help="its repetition shown first (counted from 1, as the app shows it)")
    place = group.add_mutually_exclusive_group()
    place.add_argument("--at", metavar="TIME", type=_time_value,
                       help="the cursor on the last event at or before TIME (the run's unit)")
    place.add_argument("--event", metavar="N", type=int_at_least(1, None),
                       help="the cursor on the run's event N (counted from 1)")


def build_app_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="backoff-sim", description=DESCRIPTION, epilog=EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("config", nargs="?", metavar="CONFIG", type=Path,
                        help="TOML config file ([[simulation]] blocks, as for backoff-simulator)")
    _add_view_options(parser)
    parser.add_argument("--seed", metavar="N", type=seed_value, default=None,
                        help="seed for every simulation, overriding the config's seed")
    parser.add_argument("--workers", "-j", metavar="N", type=positive_int, default=None,
                        help="worker processes for sweeps (default: all cores)")
    add_force(parser)
    from sim.export.outputs import DEFAULT_EVENTS, EVENTS_MODES

    parser.add_argument("--events", metavar="none|sample|all", choices=EVENTS_MODES, default=DEFAULT_EVENTS,
                        help="what the export key's events files hold: sample (the default) the run on "
                             "screen and the example runs, one per strategy; none no events file; all "
                             "every run's every event (each run simulated again as the file is written)")
    parser.add_argument("--no-cache", action="store_true",
                        help="simulate every sweep: read none from the cache of `backoff-sim run` and "
                             "earlier launches, write none")
    add_start_options(parser)
    return parser


def build_replay_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="backoff-sim replay",
        description="Open the app on runs exported as <title>_events.csv (by `backoff-sim run` "
                    "or the app's export key): play and step them without simulating.")
    parser.add_argument("file", metavar="FILE", type=Path, help="an exported *_events.csv file")
    parser.add_argument("--time-unit", metavar="UNIT", default="ms",
                        help="what the file's times are in, for the labels (an events file does "
                             "not say; default: ms, e.g. tick for examples/spike_queue.toml)")
    _add_view_options(parser)
    add_start_options(parser)
    return parser


def _fail(*lines: str) -> int:
    from sim.commands.stdout import stderr_line

    for line in lines:
        stderr_line(f"error: {line}")
    return EXIT_USER_ERROR


def has_terminal() -> bool:
    """The app reads keys from stdin and draws on stderr; stdout too must not be redirected."""
    streams = (sys.stdin, sys.stdout, sys.stderr)
    try:
        return all(s is not None and s.isatty() for s in streams)
    except (AttributeError, ValueError):
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``backoff-sim``; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["explore"] and "--app" in args_list[1:]:
        return _explore_app(args_list[1:])
    if args_list[:1] == ["check"] and "--app" in args_list[1:]:
        return _check_app(args_list[1:])
    if args_list[:1] in (["run"], ["explore"], ["phase"], ["check"]):
        from sim.commands.cli import main as cli_main

        return cli_main(args_list)
    if args_list[:1] == ["serve"]:
        from .serve import serve_main

        return serve_main(args_list[1:])

    typo = _command_typo(args_list[0]) if args_list else None
    if typo:
        return _fail(typo)
    from sim.export.provenance import set_command

    set_command(["backoff-sim", *args_list])  # the app's exports say what made them

    from sim.vocabulary.errors import UserError
    from sim.export.palette import available_themes

    replay = args_list[:1] == ["replay"]
    parser = build_replay_parser() if replay else build_app_parser()
    args = parser.parse_args(args_list[1:] if replay else args_list)
    if args.theme not in available_themes():
        return _fail(f"unknown theme {args.theme!r}: choose one of {', '.join(available_themes())}")
    if replay:
        from sim.vocabulary.units import time_unit_problem

        problem = time_unit_problem(args.time_unit)
        if problem:
            return _fail(f"--time-unit {problem}")
    try:
        source = (_replay_source(args.file, args.time_unit) if replay else
                  _config_source(args.config, args.seed, args.out, args.workers, args.force,
                                 cache=not args.no_cache))
        from tui.state.start import resolve_start

        start = resolve_start(source, args)
    except UserError as exc:
        return _fail(*exc.lines())
    from .serve import served

    if not has_terminal() and not served():
        command = "backoff-sim run" + (f" {args.config}" if not replay and args.config else "")
        return _fail(f"the app needs a terminal (standard input, output and error are not all one "
                     f"here); to run the simulations headless and write their files, use: {command}")

    from .app import BackoffApp

    app = BackoffApp(source, theme=args.theme, animated=not args.no_animation,
                     sweep_workers=getattr(args, "workers", None), out_dir=args.out,
                     freeze_gc=True, explore_cache=None if replay else args.out / CACHE_DIR,
                     start=start, export_events=getattr(args, "events", "sample"))
    _run_app(app)
    return _finish(app)


COMMANDS = ("run", "explore", "phase", "check", "replay", "serve")


def _command_typo(word: str) -> str | None:
    """``runn: no such command or config file; did you mean `backoff-sim run`?`` for a first
    argument that is no file, looks like no path, and is close to a command; else None."""
    import difflib

    if (word in COMMANDS or word.startswith("-") or "." in word or "/" in word or os.sep in word
            or os.path.exists(word)):
        return None
    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    if not close:
        return None
    return (f"{word}: no such command or config file; did you mean `backoff-sim {close[0]}`? "
            "(commands: run, explore, phase, check, replay, serve; or give a TOML config to open the app on)")


CACHE_DIR = ".backoff-sim-cache"  # explore cells, under the output directory (as the command)


def _check_app(argv: list[str]) -> int:
    """``backoff-sim check SETTINGS... --app``: the check's comparison config (the battery under
    each arrangement, written into --out as check_config.toml), opened as any config is."""
    from sim.commands.check import app_config
    from sim.commands.cli import build_parser
    from sim.vocabulary.errors import UserError

    args = build_parser().parse_args(["check", *argv])
    try:
        config = app_config(args)
    except UserError as exc:
        return _fail(*exc.lines())
    return main([str(config), "--out", str(args.out)])


def _explore_app(argv: list[str]) -> int:
    """``backoff-sim explore CONFIG --app``: the app, opened on the first explore map, with the
    explore command's options (its cache, workers, output directory for exports, theme, force)."""
    from sim.commands.cli import build_parser
    from sim.vocabulary.errors import UserError
    from sim.export.palette import available_themes

    args = build_parser().parse_args(["explore", *argv])
    if args.theme not in available_themes():
        return _fail(f"unknown theme {args.theme!r}: choose one of {', '.join(available_themes())}")
    if args.method not in (None, "simulate"):
        return _fail(f"--method {args.method} writes the map's files; the app shows simulated maps "
                     f"(drop --app, or drop --method {args.method})")
    if getattr(args, "report", None) is not None:
        return _fail("--report writes the map's report headless; --app shows the map in the app "
                     "(drop one of them)")
    try:
        source = _config_source(args.config, None, args.out, args.workers, args.force,
                                cache=not args.no_cache)
    except UserError as exc:
        return _fail(*exc.lines())
    if not source.explores:
        return _fail(f"{args.config}: no simulation has a [simulation.explore] table for --app to "
                     "show (add one under a [[simulation]]; see README, \"Explore\")")
    from sim.exploration.checks import check_cells
    from sim.runs.procpool import worker_count

    try:  # every cell within the limits, as the headless command checks before any work
        check_cells(list(source.explores.values()), workers=worker_count(args.workers),
                    force=args.force)
    except UserError as exc:
        return _fail(*exc.lines())
    from .serve import served

    if not has_terminal() and not served():
        return _fail("the app needs a terminal (standard input, output and error are not all one "
                     f"here); to draw the map headless, use: backoff-sim explore {args.config}")

    from contextlib import ExitStack

    from sim.exploration.backends import make_backend

    from .app import BackoffApp

    cache = None if args.no_cache else (args.cache or args.out / CACHE_DIR)
    # With --dask the map's cells and the tune's trials run on the cluster, as the headless
    # command runs them; it is reached (or started) before the app, so a mistake is one line.
    with ExitStack() as stack:
        try:
            backend = stack.enter_context(make_backend(args.dask, args.workers))
        except UserError as exc:
            return _fail(*exc.lines())
        app = BackoffApp(source, theme=args.theme, sweep_workers=args.workers, out_dir=args.out,
                         freeze_gc=True, explore_cache=cache, open_map=True,
                         explore_backend=backend if args.dask else None)
        _run_app(app)
    return _finish(app)


def _finish(app) -> int:
    """The app's exit status; after a stop signal or a hang-up, the process ends here at once
    (what it started killed, clean-ups run: ``sim.commands.teardown.emergency_exit``), so that no exit
    hook of a library waits on a terminal or a cluster that is gone."""
    from sim.commands.teardown import emergency_exit, is_armed

    status = app.return_code or 0
    if is_armed():
        emergency_exit(status)
    return status


def _run_app(app) -> None:
    """Run the app until it exits: on ``q``, on SIGTERM or SIGHUP, or when its terminal goes away
    (``hangup``)."""
    from sim.runs.procpool import reusing_workers

    from .hangup import exit_on_stop_signals, watch_terminal
    from .serve import served

    exit_on_stop_signals(app)
    # Served to a browser, the app's streams are pipes: the server ends it (``tui.web``).
    watching = watch_terminal() if not served() else None
    try:
        # A sweep's workers are kept for the next one (the app sweeps every seed and simulation
        # it shows): they load the compiled kernels once. A stop signal kills them with the rest.
        with reusing_workers():
            app.run()
    finally:
        if watching is not None:
            watching.set()


def _config_source(path: Path | None, seed: int | None, out: Path, workers: int | None, force: bool,
                   cache: bool = False):
    """The config's runs, its explore maps and tunes, checked as ``backoff-sim run`` and
    ``backoff-sim explore`` check them (``sim.api.prepare``); ``cache``: its sweeps read from
    and written to the cache ``backoff-sim run`` shares (``SweepCache.default``)."""
    from sim.exploration.cache import SweepCache
    from sim.pipeline import prepare

    from .state.source import ConfigSource

    config = prepare(path, seed=seed, force=force, workers=workers, out=out, plans=True,
                     unique_stems=False)
    return ConfigSource(config, {plan.title: plan for plan in config.explores},
                        tunes={plan.title: plan for plan in config.tunes},
                        cache=SweepCache.default(enabled=cache))


def _replay_source(path: Path, time_unit: str = "ms"):
    from sim.export.csv_files import read_events_csv

    from .state.source import ReplaySource

    layouts: dict = {}
    runs = read_events_csv(path, layouts)
    return ReplaySource(runs, path, time_unit, layouts)


if __name__ == "__main__":  # pragma: no cover - as the console script runs it (``tui.entry``)
    from sim.commands.entry import run_entry

    sys.exit(run_entry("tui.main"))
