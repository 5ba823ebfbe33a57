"""The one pipeline every front end goes through: load → prepare → sweep → stage → commit.

``backoff-sim run``, the ``backoff-simulator`` drop-in, the app and ``sim.run(...).export(d)``
all take these steps, so they check the same mistakes, in the same order, before any work, and
write the same bytes: ``prepare`` (seed, limits, file names, the machine's resources), ``sweep``
(every simulation on all cores), ``stage_simulation`` (one simulation's files, into the output
set's staging directory) and ``commit_staged`` (all of them in place at once).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:  # pragma: no cover
    from sim.export.outset import OutputSet
    from sim.export.palette import Palette
    from sim.runs.engine import Run
    from sim.runs.sweep import EventCount, SweepResult
    from sim.spec import Config, SimulationSpec

__all__ = ["Staged", "commit_staged", "load", "prepare", "sample_path", "stage_simulation", "sweep",
           "unbounded_backlog_warning"]

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
    from sim.config import parse_config, parse_toml, read_document
    from sim.spec import Config

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
    from sim.config import SAMPLE_CONFIG

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
    from sim.runs.sweep import default_workers

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
    check_resources(specs, workers=workers or default_workers(), force=force)
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


def stage_simulation(result: SweepResult, staging: Path, palette: Palette, workers: int = 1) -> Staged:
    """Write one simulation's files (``backoff-sim run``'s) into ``staging``, on ``workers``
    forked processes when it can (``sim.export.write_simulation``)."""
    from sim.export import write_simulation
    from sim.export.runs import representative_runs

    representative = representative_runs(result.spec, result.recorded)
    written = write_simulation(result, staging, palette=palette, representative=representative,
                               workers=workers)
    return Staged(representative, written)


def commit_staged(output: OutputSet, specs: tuple[SimulationSpec, ...] | list[SimulationSpec],
                  staged: Mapping[int, Staged], *, last: bool = False) -> list[Path]:
    """Put the staged files of every simulation in place at once, removing those of an earlier
    set that this one no longer writes (``sim.export.stale_names``)."""
    from sim.export import stale_names

    names = [p.name for i in sorted(staged) for p in staged[i].written]
    stale = [n for i in sorted(staged) for n in stale_names(specs[i].title, staged[i].written)]
    return output.commit(names, remove=stale, last=last)


def unbounded_backlog_warning(config: Config) -> str | None:
    """One line naming the simulations whose server stops (outages) with no bound on its accept
    queue (``backlog = "unbounded"``, or a unit without seconds): every request sent during the
    outage is then served at the resume, which no real server does; None when there are none
    (``backoff-sim run`` prints it once)."""
    from sim.config import DEFAULT_BACKLOG

    titles = [s.title for s in config.simulations
              if s.stops and s.backlog is None and s.control.CAPS.replies]
    if not titles:
        return None
    return (f"{', '.join(map(repr, titles))}: outages with an unbounded accept queue (every request sent in the "
            f"outage is served at the resume; no real server holds that many): set backlog = {DEFAULT_BACKLOG} "
            f"(Go on Linux before 5.4) or 4096 (since)")
