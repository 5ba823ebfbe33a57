"""Everything a sweep becomes outside the terminal, and the colours it is drawn in.

The files ``backoff-sim run`` and the app's export write are declared once (``outputs``): CSVs
(``csv_files``, ``overload_csv``) and PNGs (``plots``, ``overload_plots``, styled alike by
``figure_style``) of the runs ``runs`` picks, named from titles (``names``), each written atomically
(``atomic``) in a set that appears whole or not at all (``outset``). ``palette`` reads the theme
files that colour the PNGs, the terminal tables and the app.

Below: ``write_simulation`` writes one simulation's files into a directory (the pipeline and the
app's export stage them in an ``OutputSet`` of their own); ``export_simulation`` and
``export_all`` do the same as one set. Nothing keeps global state (no pyplot), so all are safe to
call from a worker thread."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from sim.runs.sweep import SweepResult
from sim.runs.engine import Run
from sim.export.names import check_unique_stems, safe_title
from sim.export.outputs import DEFAULT_EVENTS, OUTPUTS, Job, Output, outputs_for
from sim.export.outset import output_set
from sim.export.runs import representative_runs, scatter_runs
from sim.export.palette import Palette, load_palette
from sim.settings.spec import SimulationSpec

__all__ = ["export_all", "export_simulation", "output_paths", "spec_output_paths", "stale_names",
           "simulation_part", "write_simulation", "write_simulations"]


def output_paths(title: str, out_dir: str | Path, outputs: Iterable[Output] = OUTPUTS, *,
                 stem: str | None = None) -> dict[str, Path]:
    """The paths of ``outputs`` (by default every file there is) for a simulation titled
    ``title``, by kind (``sim.export.outputs``); ``stem`` replaces the file-name stem made from
    the title (the app numbers exports that would overwrite earlier ones)."""
    stem = stem if stem is not None else safe_title(title)
    out = Path(out_dir)
    return {o.kind: out / f"{stem}{o.suffix}" for o in outputs}


def spec_output_paths(spec: SimulationSpec, out_dir: str | Path, stem: str | None = None,
                      events: str = DEFAULT_EVENTS) -> dict[str, Path]:
    """``output_paths`` of the files that apply to ``spec`` (``outputs_for``; ``events``:
    ``none`` has no events file)."""
    return output_paths(spec.title, out_dir, outputs_for(spec, events), stem=stem)


def stale_names(title: str, written: Sequence[Path], stem: str | None = None) -> list[str]:
    """Files of an earlier set for ``title`` that the new set does not replace (those its server
    kind no longer gets, e.g. the overload files): removed with it."""
    names = {p.name for p in written}
    return [name for name in (p.name for p in output_paths(title, ".", stem=stem).values())
            if name not in names]


def export_simulation(result: SweepResult, out_dir: str | Path, *, palette: Palette | None = None,
                      representative: Mapping[str, Run] | None = None,
                      scatter: Mapping[str, Run] | None = None, stem: str | None = None,
                      written_one: Callable[[Path], None] | None = None) -> list[Path]:
    """Write all files for one simulation (``outputs_for`` its spec) as one set:
    either all of them replace the previous ones, or none does. Return their paths.

    ``stem`` names the files instead of the title (see ``output_paths``); ``written_one`` is
    called with each file's final path as it is written (the app's progress).
    """
    out_dir = Path(out_dir)

    def staged_one(path: Path) -> None:
        if written_one is not None:
            written_one(out_dir / path.name)

    with output_set(out_dir) as out:
        staged = write_simulation(result, out.dir, palette=palette, representative=representative,
                                  scatter=scatter, stem=stem, written_one=staged_one)
        out.add(staged, remove=stale_names(result.spec.title, staged, stem=stem))
    return out.written


def write_simulation(result: SweepResult, out_dir: str | Path, *, palette: Palette | None = None,
                     representative: Mapping[str, Run] | None = None,
                     scatter: Mapping[str, Run] | None = None, stem: str | None = None,
                     written_one: Callable[[Path], None] | None = None, workers: int = 1,
                     events: str = DEFAULT_EVENTS) -> list[Path]:
    """Write all files for one simulation into ``out_dir`` (each atomically); return their paths.

    ``representative`` and ``scatter`` are the recorded runs to use when the caller already has
    them (the CLI prints the representative ones); otherwise the sweep's (``SweepResult.recorded``)
    or, without those, recorded here. ``stem`` names the files instead of the title (see
    ``output_paths``); ``written_one`` is called with each file as it is written (the app's
    progress). ``workers`` > 1 writes them on that many forked workers when this process can fork
    safely (``sim.export.parallel``), else here, one after another. ``events``
    (``EVENTS_MODES``): the example runs' events file, none, or every run's.
    """
    part = simulation_part(result, out_dir, palette=palette, representative=representative,
                           scatter=scatter, stem=stem, events=events)
    return write_simulations([part], workers=workers, written_one=written_one)[0]


def simulation_part(result: SweepResult, out_dir: str | Path, *, palette: Palette | None = None,
                    representative: Mapping[str, Run] | None = None,
                    scatter: Mapping[str, Run] | None = None, stem: str | None = None,
                    events: str = DEFAULT_EVENTS) -> tuple[Job, list[Output], dict[str, Path]]:
    """What writing one simulation's files takes: its job, its outputs and their paths."""
    palette = palette or load_palette()
    spec = result.spec
    paths = spec_output_paths(spec, out_dir, stem=stem, events=events)
    if representative is None:
        representative = representative_runs(spec, result.recorded)
    if scatter is None:
        # Often the same client count (e.g. clients = [800]): record each run once, not twice.
        same = spec.representative_clients() == spec.max_clients
        scatter = representative if same else scatter_runs(spec, result.recorded)
    return Job(result, representative, scatter, palette, events), outputs_for(spec, events), paths


def write_simulations(parts: Sequence[tuple[Job, Sequence[Output], dict[str, Path]]], *, workers: int = 1,
                      written_one: Callable[[Path], None] | None = None) -> list[list[Path]]:
    """Write several simulations' files (each ``part`` a job, its outputs and their paths, as
    ``simulation_part`` makes them), on ``workers`` forked workers together when this process
    can fork safely, else here one after another; each part's paths in its order."""
    if workers > 1:
        from sim.export.parallel import write_parts

        in_parallel = write_parts(parts, workers, written_one)
        if in_parallel is not None:
            return in_parallel
    written: list[list[Path]] = []
    for job, outputs, paths in parts:
        written.append([])
        for output in outputs:
            written[-1].append(output.write(job, paths[output.kind]))
            if written_one is not None:
                written_one(written[-1][-1])
    return written


def export_all(results: Sequence[SweepResult], out_dir: str | Path, *,
               palette: Palette | None = None) -> list[Path]:
    """Export every simulation; titles that map to the same file names are refused up front."""
    check_unique_stems(r.spec.title for r in results)
    palette = palette or load_palette()
    with output_set(out_dir) as out:
        for result in results:
            files = write_simulation(result, out.dir, palette=palette)
            out.add(files, remove=stale_names(result.spec.title, files))
    return out.written
