"""The one pipeline every front end goes through: load → prepare → sweep → stage → commit.

``backoff-sim run``, the ``backoff-simulator`` drop-in, the app and ``sim.run(...).export(d)``
all take these steps, so they check the same mistakes, in the same order, before any work, and
write the same bytes: ``prepare`` (seed, limits, file names, the machine's resources), ``sweep``
(every simulation on all cores), ``output_set`` (the one place an output set is locked,
staged and committed: every front end's files go through it), ``stage_simulation`` (one
simulation's files, into the set's staging directory) and ``add_staged`` (name them, and the
earlier set's files this one no longer writes, for the commit).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:  # pragma: no cover
    from sim.exploration.cache import CellCache
    from sim.exploration.plan import ExplorePlan
    from sim.exploration.runner import ExploreResult
    from sim.exploration.tune import TuneResult
    from sim.exploration.tune_plan import TunePlan
    from sim.export.outset import Staging
    from sim.export.palette import Palette
    from sim.runs.engine import Run
    from sim.runs.sweep import EventCount, SweepResult
    from sim.settings.spec import Config, SimulationSpec

__all__ = ["Staged", "add_staged", "check_plans", "explore_maps", "load", "output_set", "prepare",
           "record", "sample_path", "stage_simulation", "sweep", "tune", "unbounded_backlog_warning"]

Source = Union[str, "os.PathLike[str]", "Config"]  # a path, TOML text, or a loaded config
Progress = Callable[[int, int], None]  # (done, total) runs


def load(source: Source, *, plans: bool = True) -> Config:
    """The validated config of ``source``: a path (``str`` or ``Path``), TOML text (a string with
    a newline or starting with ``[``), or a ``Config`` already loaded (returned as it is).

    Every mistake is reported at once, as the command line does: ``sim.ConfigError``, whose
    ``lines()`` are the messages, one per mistake. ``plans=False`` skips the ``[simulation.explore]``
    and ``[simulation.tune]`` tables (``backoff-sim run`` ignores them).

    >>> config = load('''
    ... [[simulation]]
    ... title = "demo"
    ... max_clients = 4
    ... repeat = 3
    ... network_mu = 1.0
    ... network_sigma = 0.5
    ... control = "LockingServer"
    ... write_mu = 2.0
    ... write_sigma = 1.0
    ... strategies = [{ type = "Constant", constant = 10 }]
    ... ''')
    >>> [(s.title, s.clients, s.labels) for s in config.simulations]
    [('demo', (1, 2, 3, 4), ('Constant',))]
    """
    from sim.settings.config import parse_config, parse_toml, read_document
    from sim.settings.spec import Config

    if isinstance(source, Config):
        return source
    if isinstance(source, str) and ("\n" in source or source.lstrip().startswith("[")):
        name, data = "<toml text>", parse_toml(source, "<toml text>")
    elif isinstance(source, (str, os.PathLike)):
        name, data = os.fspath(source), read_document(source)
    else:
        raise TypeError(f"expected a path, TOML text or a sim.Config, got {type(source).__name__}")
    if not plans:
        return parse_config(data, name)
    from sim.exploration.plan import parse_document

    return parse_document(data, name)


def sample_path() -> Path:
    """The bundled ``sample.toml`` (what ``backoff-sim`` opens without a config)."""
    from sim.settings.config import SAMPLE_CONFIG

    return SAMPLE_CONFIG


def prepare(source: Source | None, *, seed: int | None = None, force: bool = False,
            workers: int | None = None, out: str | Path | None = None, plans: bool = False,
            unique_stems: bool = True, stem: Callable[[str], str] | None = None,
            suffixes: tuple[str, ...] | None = None) -> Config:
    """Load (the bundled sample for ``None``), seed and check a config before any work: its files'
    names fit ``out`` (skipped for ``None``), and every sweep fits the machine and the soft limits
    (``force`` lifts those). ``unique_stems``, ``stem`` and ``suffixes`` say how its files are
    named (the drop-in names them its own way and checks that itself)."""
    from sim.export.names import check_name_lengths, check_unique_stems, safe_title
    from sim.runs.resources import check_resources
    from sim.runs.procpool import worker_count

    config = load(sample_path() if source is None else source, plans=plans)
    if seed is not None:
        config = config.with_seed(seed)
    if force:
        config = config.with_soft_limits(False)
    specs = config.simulations
    if unique_stems:
        check_unique_stems(s.title for s in specs)
    if out is not None:
        check_name_lengths(specs, out, stem=stem or safe_title, suffixes=suffixes)
    check_resources(specs, workers=worker_count(workers), force=force)
    return config


def sweep(config: Config, *, workers: int | None = None, progress: Progress | None = None,
          on_complete: Callable[[int, SweepResult], None] | None = None,
          events: EventCount | None = None, tick: Callable[[], None] | None = None,
          record: bool = False) -> list[SweepResult]:
    """Every simulation's sweep on all cores (``sim.runs.sweep.run_sweeps``); ``record``: with
    the example runs the files show (``SweepResult.recorded``), when they will be written."""
    from sim.runs.sweep import run_sweeps

    return run_sweeps(config.simulations, workers=workers, progress=progress,
                      on_complete=on_complete, events=events, tick=tick, record=record)


@dataclass(frozen=True)
class Staged:
    """One simulation's files, written into a staging directory, and the example runs they show."""

    representative: Mapping[str, Run]
    written: list[Path]


def stage_simulation(result: SweepResult, staging: Path, palette: Palette, workers: int = 1,
                     events: str = "sample") -> Staged:
    """Write one simulation's files (``backoff-sim run``'s) into ``staging``, on ``workers``
    forked processes when it can (``sim.export.write_simulation``); ``events``: what the
    events file holds (``sim.export.outputs.EVENTS_MODES``)."""
    return stage_simulations([result], staging, palette, workers=workers, events=events)[0]


def stage_simulations(results: Sequence[SweepResult], staging: Path, palette: Palette, workers: int = 1,
                      events: str = "sample") -> list[Staged]:
    """``stage_simulation`` of several simulations at once, their files spread over the same
    ``workers`` (``sim.export.write_simulations``), each simulation's in order."""
    from sim.export import simulation_part, write_simulations
    from sim.export.runs import representative_runs

    chosen = [representative_runs(r.spec, r.recorded) for r in results]
    parts = [simulation_part(r, staging, palette=palette, representative=rep, events=events)
             for r, rep in zip(results, chosen)]
    written = write_simulations(parts, workers=workers)
    return [Staged(rep, paths) for rep, paths in zip(chosen, written)]


def output_set(out_dir: str | Path, *, last: bool = False):
    """The one place an output set is locked, staged and committed (``sim.export.outset``):
    ``with output_set(d) as staging:`` write into ``staging.dir``, ``staging.add(paths)``; the
    files are in place, ``staging.written``, once the block has ended without an error."""
    from sim.export.outset import output_set as the_output_set

    return the_output_set(out_dir, last=last)


def add_staged(output: Staging, specs: tuple[SimulationSpec, ...] | list[SimulationSpec],
               staged: Mapping[int, Staged]) -> None:
    """Name the staged files of every simulation for the set's commit, and those of an earlier
    set that this one no longer writes (``sim.export.stale_names``)."""
    from sim.export import stale_names

    for i in sorted(staged):
        output.add(staged[i].written, remove=stale_names(specs[i].title, staged[i].written))


def record(source: Source | None, *, simulation: str, strategy: str, clients: int,
           repetition: int = 0, seed: int | None = None, force: bool = False) -> Run:
    """Every event of one run (simulation title, strategy label, client count, repetition): the
    run the app plays, held to the limits a sweep is (``force`` lifts the soft ones)."""
    from dataclasses import replace

    from sim.vocabulary.bounds import MAX_CLIENT_ID
    from sim.vocabulary.errors import UserError
    from sim.runs.engine import record_run
    from sim.runs.resources import check_resources

    config = load(sample_path() if source is None else source, plans=False)
    if seed is not None:
        config = config.with_seed(seed)
    titles = [s.title for s in config.simulations]
    if simulation not in titles:
        raise UserError(f"no simulation titled {simulation!r}: choose one of {_listed(titles)}")
    spec = config.simulation(simulation)
    if strategy not in spec.labels:
        raise UserError(f"{simulation}: no strategy labelled {strategy!r}: choose one of "
                        f"{_listed(spec.labels)}")
    if isinstance(clients, bool) or not isinstance(clients, int) or not 1 <= clients <= MAX_CLIENT_ID:
        raise UserError(f"clients must be a whole number from 1 to {MAX_CLIENT_ID}, got {clients!r}")
    if isinstance(repetition, bool) or not isinstance(repetition, int) or repetition < 0:
        raise UserError(f"repetition must be a whole number, 0 or more, got {repetition!r}")
    if force:
        spec = replace(spec, soft_limits=False)
    check_resources([replace(spec, clients=(clients,), repeat=1, strategies=(spec.strategy(strategy),))],
                    workers=1, force=force)
    return record_run(spec, strategy, clients, repetition)


def _listed(names) -> str:
    return ", ".join(repr(n) for n in names)


def check_plans(explores: Sequence[ExplorePlan], tunes: Sequence[TunePlan], *, workers: int | None = None,
                force: bool = False, progress: Progress | None = None) -> None:
    """Refuse, before any work, maps and tunes the machine cannot hold or finish (``force``
    lifts the soft limits), and tunes without Optuna; ``progress(done, total)`` cells checked."""
    from sim.exploration.checks import check_cells
    from sim.exploration.tune import require_optuna
    from sim.exploration.tune_checks import check_tunes
    from sim.runs.procpool import worker_count

    check_cells(explores, workers=worker_count(workers), force=force, progress=progress)
    check_tunes(tunes, workers=worker_count(workers), force=force)  # the costliest trial and the evaluation
    for plan in tunes:
        require_optuna(plan)  # before any work, not after the maps


def explore_maps(plans: Sequence[ExplorePlan], backend, cache: CellCache, *, method: str | None = None,
                 progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
                 ) -> tuple[list[ExploreResult], list[str]]:
    """Every plan's map on ``backend`` by ``method`` (``simulate``, ``fluid`` or ``adaptive``; by
    default adaptive for maps with a recover/collapse verdict, else simulate), and the lines to
    print about how it was computed."""
    from sim.vocabulary.errors import UserError
    from sim.exploration.methods import METHODS, default_method, run_explores_by
    from sim.exploration.runner import run_explores

    method = default_method(plans) if method is None else method
    if method not in METHODS:
        raise UserError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    if method == "simulate":
        return run_explores(plans, backend, cache, progress=progress, should_stop=should_stop), []
    return run_explores_by(method, plans, backend, cache, progress=progress, should_stop=should_stop)


def tune(plan: TunePlan, backend, cache: CellCache, *, progress: Progress | None = None,
         should_stop: Callable[[], bool] | None = None) -> TuneResult:
    """One ``[simulation.tune]``'s search on ``backend``, then its evaluation."""
    from sim.exploration.tune import run_tune

    return run_tune(plan, backend, cache, progress=progress, should_stop=should_stop)


def unbounded_backlog_warning(config: Config) -> str | None:
    """One line naming the simulations whose server stops (outages) with no bound on its accept
    queue (``backlog = "unbounded"``, or a unit without seconds): every request sent during the
    outage is then served at the resume, which no real server does; None when there are none
    (``backoff-sim run`` prints it once)."""
    from sim.settings.config import DEFAULT_BACKLOG

    titles = [s.title for s in config.simulations
              if s.stops and s.backlog is None and s.control.CAPS.replies]
    if not titles:
        return None
    return (f"{', '.join(map(repr, titles))}: outages with an unbounded accept queue (every request sent in the "
            f"outage is served at the resume; no real server holds that many): set backlog = {DEFAULT_BACKLOG} "
            f"(Go on Linux before 5.4) or 4096 (since)")
