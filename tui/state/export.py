"""What the export key writes: the run on screen (its whole event history, replayable), the
simulation's sweep files as ``backoff-sim run`` writes them, its HTML report (as ``run
--report`` writes it, ``sim.report.html``) and a screenshot.

Nothing is overwritten: when any file of an export would replace an earlier one, the whole set
gets the first free number (``Title-2_metrics.png``...), so an export's files stay together.
An export is all or nothing: its files appear together, or (a full disk) none does.
Pure file work, no Textual: the screen runs it in a thread worker and shows its progress.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sim.runs.sweep import SweepResult
from sim.core.history import History
from sim.export import spec_output_paths, stale_names, write_simulation
from sim.export.atomic import atomic_write_text, ensure_output_dir
from sim.export.csv_files import run_clock, write_history_csv
from sim.report.html import run_report, write_report
from sim.runs.tiers import TierLayout
from sim.export.names import safe_title
from sim.export.outputs import DEFAULT_EVENTS
from sim.export.outset import output_set
from sim.export.palette import Palette

from .paths import DEFAULT_OUT
from .source import Selection

Progress = Callable[[int, int, Path], None]  # (files done, files in all, the file just written)


def view_names(stem: str, selection: Selection) -> tuple[str, str]:
    """The run's events file and the screenshot, for a file-name stem."""
    s = selection
    run = f"{stem}_{safe_title(s.strategy)}_{s.clients}clients_rep{s.repetition + 1}_events.csv"
    return run, f"{stem}_screenshot.svg"


def planned_names(stem: str, selection: Selection, result: SweepResult | None,
                  events: str = DEFAULT_EVENTS) -> list[str]:
    """Every file an export with ``stem`` writes (``events`` ``none``: no events file, neither
    the run's nor the sweep's)."""
    run, svg = view_names(stem, selection)
    names = [svg] if events == "none" else [run, svg]
    if result is not None:
        spec = result.spec
        names += [p.name for p in spec_output_paths(spec, ".", stem=stem, events=events).values()]
        names.append(report_name(stem))
    return names


def report_name(stem: str) -> str:
    """The simulation's HTML report in an export."""
    return f"{stem}_report.html"


def free_stem(out_dir: Path, selection: Selection, result: SweepResult | None,
              events: str = DEFAULT_EVENTS) -> str:
    """The simulation's title as a file stem, numbered (``-2``, ``-3``...) when any file of
    the export would overwrite one already in ``out_dir``."""
    base = safe_title(selection.simulation)
    stem, n = base, 1
    while any((out_dir / name).exists() for name in planned_names(stem, selection, result, events)):
        n += 1
        stem = f"{base}-{n}"
    return stem


def export_view(out_dir: Path, selection: Selection, history: History,
                result: SweepResult | None, svg: str, palette: Palette,
                progress: Progress | None = None, layout: TierLayout | None = None,
                events: str = DEFAULT_EVENTS) -> list[Path]:
    """Write the export into ``out_dir`` (created if needed) as one output set, as
    ``backoff-sim run`` writes its files: staged, then moved in together, or none of them (a
    full disk left the run's events file behind); return the files, in order. ``events``
    (the app's ``--events``): ``none`` writes no events file, ``all`` every run's in the
    sweep's."""
    out_dir = Path(out_dir)
    if out_dir == DEFAULT_OUT:  # the app's own folder, not one the user named: git ignores it
        ensure_output_dir(out_dir, git_ignored=True)
    with output_set(out_dir) as output:  # the lock first: the free stem stays free
        stem = free_stem(out_dir, selection, result, events)
        run_name, svg_name = view_names(stem, selection)
        total = len(planned_names(stem, selection, result, events))
        staged: list[Path] = []

        def done(path: Path) -> None:
            staged.append(path)
            if progress is not None:
                progress(len(staged), total, out_dir / path.name)

        s = selection
        if events != "none":
            done(write_history_csv(output.dir / run_name, s.simulation, s.strategy, s.clients,
                                   s.repetition, history, layout,
                                   run_clock(result.spec) if result is not None else None))
        stale: list[str] = []
        if result is not None:
            files = write_simulation(result, output.dir, palette=palette, stem=stem,
                                     written_one=done, events=events)
            stale = stale_names(result.spec.title, files, stem=stem)
            name = report_name(stem)
            done(write_report(output.dir / name, run_report([result], out_dir / name)))
        done(atomic_write_text(output.dir / svg_name, svg))
        output.add(staged, remove=stale)
    return output.written
