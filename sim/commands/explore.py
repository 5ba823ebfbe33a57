"""``backoff-sim explore CONFIG``: draw each simulation's map and run its tune, headless.

Registered on the ``backoff-sim`` parser by ``sim.commands.cli`` (which this module does not import, so
the dependency goes one way); never imports Textual. Mistakes are one
line with exit status 2; Ctrl-C stops the pool or the Dask tasks and exits 130, and since every
finished cell is cached, running the same command again resumes.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from sim.vocabulary.errors import EXIT_OK
from sim.exploration.methods import METHODS, default_method

if TYPE_CHECKING:  # pragma: no cover
    from sim.exploration.painter import Painter

EXPLORE_DESCRIPTION = """\
Explore the simulations of a config that carry a [simulation.explore] or [simulation.tune]
table. An explore varies one or two keys (axes) over a grid; every cell is a full sweep of
the simulation's strategies and repetitions. A tune minimises a metric over one strategy's
parameters with Optuna. For each such simulation it writes:

  <title>_explore.csv   one row per cell and strategy: the axes' values, every metric's mean
                        and 95% CI, and (with an outage and a replying server) the recovered
                        runs, the recovered fraction and the median recovery time
  <title>_explore.png   one axis: the metric against the value, one line per strategy;
                        two axes: a heatmap per strategy with the recover/collapse boundary
  <title>_tune.csv      every trial of a tune: parameters, metrics, feasible or not
  <title>_pareto.csv    original strategies and tuned variants on fresh random numbers: the
  <title>_pareto.png    two Pareto metrics and the objective, mean and 95% CI

The CSVs are in place as soon as the maps are computed; the PNGs, drawn meanwhile in a
process of their own, follow (a stop before they are done leaves the new CSVs and no PNG).

Finished cells are cached (in DIR/.backoff-sim-cache unless --cache says otherwise), so a map
with one more value computes only the new cells, and an interrupted run resumes.

A map with an outage or incident is drawn adaptively by default (--method adaptive): from the
fluid (mean-field) estimate, simulating only the cells on its recover/collapse boundary, where
the estimate is known to be weak (variable service, near saturation, a late recovery) and a 5%
sample of the others (README, "Explore methods"); --method simulate simulates every cell,
--method fluid uses the estimate alone, in about a second. Fluid and adaptive add a `method`
column to _explore.csv; maps without a verdict and tunes are always simulated.
"""

EXPLORE_EPILOG = """\
examples:
  backoff-sim explore examples/metastability.toml --out maps
  backoff-sim explore my.toml --workers 1 --no-cache
  backoff-sim explore my.toml --dask local                # a Dask LocalCluster on this machine
  backoff-sim explore my.toml --dask tcp://10.0.0.5:8786  # an existing Dask scheduler
  backoff-sim explore examples/metastability.toml --app   # the map in the terminal app
  backoff-sim explore examples/metastability.toml --method adaptive

Results depend only on the config, never on --workers or --dask.
"""


def dask_scheduler(text: str) -> str:
    """An argparse type for --dask: ``local`` or a scheduler address, never an empty string
    (which read as no --dask and ran on the local pool without a word)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a scheduler, got an empty string "
                                         "(use --dask local, or --dask tcp://HOST:8786)")
    return text


def add_explore_subparser(subparsers, positive_int: Callable[[str], int],
                          add_force: Callable[[argparse.ArgumentParser], None] | None = None,
                          directory: Callable[[str], Path] = Path) -> argparse.ArgumentParser:
    """Register ``explore`` on the top-level parser's subparsers (``positive_int``: the CLI's
    argparse type for --workers, so both commands word the same mistake the same way;
    ``add_force``: the CLI's --force option, so both describe it alike; ``directory``: its type
    for --out, which refuses a path too long for the files before any work)."""
    from sim.export.palette import DEFAULT_THEME

    sub = subparsers.add_parser("explore", help="map metrics over one or two keys, and tune a strategy",
                                description=EXPLORE_DESCRIPTION, epilog=EXPLORE_EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub.add_argument("config", metavar="CONFIG", type=Path,
                     help="TOML config with [simulation.explore] or [simulation.tune] tables")
    sub.add_argument("--out", "-o", metavar="DIR", type=directory, default=Path("."),
                     help="directory for the CSV and PNG files, created if needed (default: .)")
    sub.add_argument("--workers", "-j", metavar="N", type=positive_int, default=None,
                     help="worker processes (default: all cores; with --dask local, its workers)")
    sub.add_argument("--dask", metavar="SCHEDULER", type=dask_scheduler, default=None,
                     help="run the tasks on Dask: a scheduler address (tcp://host:8786) or 'local' "
                          "for a LocalCluster (needs the dask extra)")
    caching = sub.add_mutually_exclusive_group()  # a cache directory, or none: not both
    caching.add_argument("--cache", metavar="DIR", type=directory, default=None,
                         help="cell cache directory (default: DIR/.backoff-sim-cache of --out)")
    caching.add_argument("--no-cache", action="store_true", help="compute every cell, read and write no cache")
    sub.add_argument("--quiet", "-q", action="store_true", help="no progress bar: print only the files written")
    sub.add_argument("--theme", metavar="NAME", default=DEFAULT_THEME,
                     help=f"colour theme for the PNGs (default: {DEFAULT_THEME})")
    sub.add_argument("--app", action="store_true",
                     help="open the map in the terminal app instead of writing files: a cell grid "
                          "per strategy, Enter opens a cell's runs (with --dask its cells run there)")
    sub.add_argument("--method", choices=METHODS, default=None,
                     help="how each cell is computed: simulate (every cell), fluid (the mean-field "
                          "estimate, simulating only what it cannot express), adaptive (fluid, then "
                          "simulation of its boundary, of where the fluid is weak and of a 5%% sample "
                          "elsewhere). Default: adaptive for maps "
                          "with a recover/collapse verdict (an outage or incident), else simulate; "
                          "the app (--app) always simulates")
    if add_force is not None:
        add_force(sub)  # each cell is held to the limits a simulation of `backoff-sim run` is
    from sim.report.html.option import add_report_argument

    add_report_argument(sub)
    sub.set_defaults(command="explore")
    return sub


def explore_command(args: argparse.Namespace) -> int:
    """Carry out ``backoff-sim explore``; return the exit status (0, 2, or 130, 143, 129 on
    SIGINT, SIGTERM, SIGHUP)."""
    from sim.vocabulary.errors import UserError
    from sim.commands.stdout import command_status, stderr_console, stderr_line

    if getattr(args, "app", False):  # `backoff-sim explore --app` opens the app before this
        stderr_line("error: --app opens the terminal app: run `backoff-sim explore CONFIG --app` "
                    "(python -m sim is headless)")
        return UserError.exit_status
    return command_status(lambda: _explore(args, stderr_console()),
                          interrupted_note=": finished cells are cached; run the same command to resume")


def _explore(args: argparse.Namespace, err) -> int:
    from sim.vocabulary.errors import UserError
    from sim.exploration.painter import Painter
    from sim.exploration.plan import load_document
    from sim.export.names import check_unique_stems
    from sim.export.palette import load_palette

    palette = load_palette(args.theme)
    force = getattr(args, "force", False)
    doc = load_document(args.config)
    if force:
        doc = doc.with_soft_limits(False)
    method = default_method(doc.explores) if getattr(args, "method", None) is None else args.method
    if not doc.explores and not doc.tunes:
        raise UserError(f"{args.config}: no simulation has a [simulation.explore] or [simulation.tune] "
                        "table (add one under a [[simulation]]; see README, \"Explore\")")
    check_unique_stems(s.title for s in doc.simulations)
    # The PNGs are drawn in a child forked now, importing matplotlib while the maps compute, and
    # committed after the CSVs, which they never delay (sim.exploration.painter).
    painter = Painter() if doc.explores else None
    try:
        return _explore_doc(args, err, doc, method, palette, force, painter)
    finally:
        if painter is not None:
            painter.close()


def _explore_doc(args: argparse.Namespace, err, doc, method: str, palette, force: bool,
                 painter: Painter | None) -> int:
    """The command once its config is read: the maps and tunes, their CSVs, then the PNGs."""
    import time

    from sim.exploration.backends import make_backend
    from sim.exploration.cache import CellCache
    from sim.exploration.figure import explore_png_path
    from sim.exploration.pareto import stale_tune_names, write_tune_files
    from sim.exploration.report import explore_summary, tune_summary
    from sim.exploration.table import write_explore_csv
    from sim.export.atomic import atomic_write_bytes, ensure_output_dir
    from sim.pipeline import check_plans, explore_maps, output_set
    from sim.pipeline import tune as run_one_tune
    from sim.commands.progress import Display
    from sim.commands.stdout import print_plain, print_tables, stdout_console
    from sim.runs.procpool import worker_count

    workers = worker_count(args.workers)
    # No bar on a stderr that is not a terminal: a plain line every few seconds instead, from the
    # check of a huge map's cells on.
    display = Display(err, quiet=args.quiet)  # the bar starts once the output directory is ours
    lines = display.lines
    check_plans(doc.explores, doc.tunes, workers=workers, force=force,  # before any work, as `run` does
                progress=lines.reporter("checking the maps", "cells") if lines else None)
    out_dir = ensure_output_dir(args.out)
    from sim.report.html.option import check_report_path

    report = getattr(args, "report", None)
    check_report_path(report)
    out = stdout_console()
    start = time.perf_counter()
    with ExitStack() as stack:
        # All of the command's files appear together when everything has run, or none does (an
        # error or Ctrl-C leaves the previous set untouched), as with `backoff-sim run`.
        # (the CSVs' set is the last step only without a map: then no PNG follows)
        output = stack.enter_context(output_set(out_dir, last=not doc.explores))
        # The cache only once the directory is ours: a command refused by the lock creates nothing.
        cache_dir = None if args.no_cache else ensure_output_dir(args.cache or out_dir / ".backoff-sim-cache",
                                                                 what="cache directory")
        cache = CellCache(cache_dir)
        stack.enter_context(display)
        # A task is one (cell, strategy); a tune's trials are not counted in advance.
        tasks = None if doc.tunes else sum(len(c.spec.strategies) for p in doc.explores for c in p.cells)
        # The backend (a Dask cluster) is closed before the files are committed: a stop while
        # it closes leaves the previous files, and once they are committed the command is done.
        with make_backend(args.dask, args.workers, tasks) as backend:

            def tracker(description: str):
                return display.reporter(description) if display.bar is not None or lines else None

            tick = lines.keep_going if lines else None  # polled by the backends while they wait

            staged: list[Path] = []
            stale: list[str] = []
            results = []
            if doc.explores:
                cells = sum(len(p.cells) for p in doc.explores)
                what = f"exploring {cells} cells" if method == "simulate" else f"simulating cells ({method})"
                results, notes = explore_maps(doc.explores, backend, cache, method=method,
                                              progress=tracker(what), should_stop=tick)
                for note in notes:  # above a live bar, not into it
                    display.note(note)
                staged += [write_explore_csv(result, output.dir) for result in results]
                painter.submit(results, palette)  # the child draws while the CSVs are committed
                # an earlier map's PNG goes with the CSVs it drew: never beside the new ones
                stale += [explore_png_path(r.plan.title, out_dir).name for r in results]
            tunes = []
            for plan in doc.tunes:
                tune = run_one_tune(plan, backend, cache,
                                    progress=tracker(f"tuning {plan.label!r} of {plan.title}"), should_stop=tick)
                files = write_tune_files(tune, output.dir, palette)
                staged += files
                stale += stale_tune_names(plan.title, files)
                tunes.append(tune)
        page = None
        if report is not None:  # built before the commit: a stop while it draws leaves no file
            from sim.exploration.html_report import explore_report

            page = explore_report(results, tunes)
        output.add(staged, remove=stale)
    written = list(output.written)
    if results:  # the PNGs, once drawn: their own set, after the CSVs
        with output_set(out_dir, last=True) as pngs:
            for result in results:
                png = explore_png_path(result.plan.title, pngs.dir)
                pngs.add([atomic_write_bytes(png, painter.take())])
        written += pngs.written
    if page is not None:  # after the commit, written atomically on its own
        from sim.report.html import write_report

        write_report(report, page)
    seconds = time.perf_counter() - start
    if not args.quiet:
        for result in results:
            print_tables(out, explore_summary(result))
        for tune in tunes:
            out.print(tune_summary(tune))
        note = f"{cache.hits} cells from the cache" if cache_dir is not None else "no cache"
        out.print(f"done in {seconds:.1f} s ({note}); wrote {len(written)} files to {out_dir.resolve()}:",
                  markup=False, soft_wrap=True)
    for path in written:
        print_plain(out, f"  {path.name}" if not args.quiet else str(path))
    if report is not None:
        print_plain(out, str(report) if args.quiet else f"wrote the report to {report.resolve()}")
    return EXIT_OK
