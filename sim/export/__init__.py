"""Export a sweep to files: metrics and scatter PNGs, metrics, runs and events CSVs.

``export_simulation`` is what both the CLI and the terminal app's export key call. It keeps no
global state (no pyplot), so it is safe to call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..engine import Run
from ..palette import Palette, load_palette
from ..sweep import SweepResult
from .atomic import ensure_output_dir
from .csv_files import write_events_csv, write_metrics_csv, write_runs_csv
from .names import check_unique_stems, safe_title
from .runs import representative_runs, scatter_runs

__all__ = ["export_all", "export_simulation", "output_paths"]


def output_paths(title: str, out_dir: str | Path) -> dict[str, Path]:
    """The five files written for a simulation titled ``title``, by kind."""
    stem = safe_title(title)
    out = Path(out_dir)
    return {
        "metrics_png": out / f"{stem}_metrics.png",
        "scatter_png": out / f"{stem}_scatter.png",
        "metrics_csv": out / f"{stem}_metrics.csv",
        "runs_csv": out / f"{stem}_runs.csv",
        "events_csv": out / f"{stem}_events.csv",
    }


def export_simulation(result: SweepResult, out_dir: str | Path, *, palette: Palette | None = None,
                      representative: Mapping[str, Run] | None = None,
                      scatter: Mapping[str, Run] | None = None) -> list[Path]:
    """Write all five files for one simulation; return their paths.

    ``representative`` and ``scatter`` are the recorded runs to use when the caller already has
    them (the CLI prints the representative ones); otherwise they are recorded here.
    """
    from .plots import write_metrics_png, write_scatter_png

    ensure_output_dir(out_dir)
    palette = palette or load_palette()
    spec = result.spec
    paths = output_paths(spec.title, out_dir)
    representative = representative if representative is not None else representative_runs(spec)
    if scatter is None:
        # Often the same client count (e.g. clients = [800]): record each run once, not twice.
        same = spec.representative_clients() == spec.max_clients
        scatter = representative if same else scatter_runs(spec)
    return [
        write_metrics_png(result, paths["metrics_png"], palette),
        write_scatter_png(result, scatter, paths["scatter_png"], palette),
        write_metrics_csv(result, paths["metrics_csv"]),
        write_runs_csv(result, paths["runs_csv"]),
        write_events_csv(representative, paths["events_csv"]),
    ]


def export_all(results: Sequence[SweepResult], out_dir: str | Path, *,
               palette: Palette | None = None) -> list[Path]:
    """Export every simulation; titles that map to the same file names are refused up front."""
    check_unique_stems(r.spec.title for r in results)
    palette = palette or load_palette()
    written: list[Path] = []
    for result in results:
        written += export_simulation(result, out_dir, palette=palette)
    return written
