"""``<title>_phase.csv``: one row per strategy and cell of the portrait."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from sim.export.atomic import atomic_write_text
from sim.phase.portrait import Portrait

PHASE_CSV_SUFFIX = "_phase.csv"
COLUMNS = ("strategy", "cell", "work", "orbit", "drift_work", "drift_work_ci95", "drift_orbit",
           "drift_orbit_ci95", "return_probability", "returned", "runs", "median_return_time",
           "healthy", "inferred")


def _number(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.6g}"


def phase_csv_text(portraits: list[Portrait]) -> str:
    """The CSV's text: drift per time unit (mean and 95% CI half-width over the cell's runs),
    the fraction of runs back in the healthy region within the time limit, whether the
    cell's state is itself in that region, and whether its return probability is the coarse
    cells' around it (its runs then went to the drift's horizon only: ``sim.phase.refine``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for p in portraits:
        for i, c in enumerate(p.cells):
            writer.writerow([p.label, i, c.work, c.orbit, _number(c.drift_work.mean), _number(c.drift_work.ci95),
                             _number(c.drift_orbit.mean), _number(c.drift_orbit.ci95),
                             _number(c.return_probability), c.returned, c.runs, _number(c.median_return),
                             int(p.healthy.holds(c.work, c.orbit)), int(c.inferred)])
    return buffer.getvalue()


def write_phase_csv(title_stem: str, portraits: list[Portrait], directory: Path) -> Path:
    return atomic_write_text(directory / f"{title_stem}{PHASE_CSV_SUFFIX}", phase_csv_text(portraits))
