"""Service-time distributions of a worker pool, and reading a file of measured service times.

A service's latencies are rarely constant: ``exponential`` is the textbook's M/M/c,
``lognormal`` fits measured request latencies well (given by its median and 99th percentile,
the two figures a dashboard shows), and ``empirical`` resamples times measured on the user's own
service. Every draw comes from the run's server stream (``Wiring.server_stream``), in blocks.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from sim.vocabulary.bounds import MAX_TIME
from sim.core.streams import Draw
from sim.vocabulary.inputs import is_csv_header, read_text

DISTRIBUTIONS = ("constant", "exponential", "lognormal", "empirical")
# The standard normal's 99th percentile, Φ⁻¹(0.99): a lognormal with median m and 99th
# percentile p has σ = ln(p / m) / Z99 (its quantiles are m·exp(σ·z)).
Z99 = 2.3263478740408408
# A measured sample of a few million requests fits; a file larger is no sample of service times
# (and would be held in memory by every run). 10^6 values are 8 MB as float64.
MAX_SERVICE_FILE_BYTES = 32 * 2**20
MAX_SERVICE_TIMES = 2_000_000
COLUMN = "service_time"


class ServiceFileError(ValueError):
    """A service-time file that cannot be used: the message names the file and, where it is a
    line's fault, the line."""


def lognormal_sigma(median: float, p99: float) -> float:
    """σ of the lognormal with this median and 99th percentile."""
    return math.log(p99 / median) / Z99


# The largest float is e^709.78: a draw exp(μ + σz) beyond it is infinite. A lognormal whose
# draws 8 standard deviations above the median (about 1 in 10^15) overflow has a σ that makes
# its service times 0 or infinite: refused at load (``lognormal_problem``).
LOG_MAX_FLOAT = math.log(sys.float_info.max)
OVERFLOW_Z = 8.0


def lognormal_problem(median: float, p99: float) -> str | None:
    """Why the lognormal of this median and 99th percentile cannot be drawn, or None."""
    sigma = lognormal_sigma(median, p99)
    if not math.isfinite(sigma) or math.log(median) + OVERFLOW_Z * sigma > LOG_MAX_FLOAT:
        return (f"with service_time = {median:g}, the lognormal's sigma = ln(service_p99 / service_time) "
                f"/ {Z99:.3f} = {sigma:g} makes its draws overflow (0 or infinite)")
    return None


def lognormal_mean(median: float, p99: float) -> float:
    """The lognormal's mean, median · e^(σ²/2); infinite where that is beyond the largest float."""
    sigma = lognormal_sigma(median, p99)
    half = sigma * sigma / 2
    exponent = math.log(median) + half
    if exponent > LOG_MAX_FLOAT:
        return math.inf
    # As it always was computed (the same bits), unless e^(σ²/2) alone would overflow.
    return median * math.exp(half) if half <= LOG_MAX_FLOAT else math.exp(exponent)


def read_service_file(path: str | Path) -> np.ndarray:
    """The service times in ``path``: one number per line, or a CSV whose header has a
    ``service_time`` column (blank lines and lines starting with ``#`` skipped). Raises
    ``ServiceFileError`` for a missing, unreadable, huge, empty, non-numeric or negative file."""
    name = str(path)
    text = read_text(path, MAX_SERVICE_FILE_BYTES, what="service-time file", error=ServiceFileError)
    column: int | None = None  # the service_time column of a CSV; None: one number per line
    values: list[float] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        cells = [cell.strip().strip('"').strip() for cell in line.split(",")]
        if not values and column is None and is_csv_header(cells):
            if COLUMN not in cells:
                raise ServiceFileError(f"{name} line {number}: a CSV header without a {COLUMN!r} "
                                       f"column (got {', '.join(cells)[:80]})")
            column = cells.index(COLUMN)
            continue
        if column is None and len(cells) > 1:
            raise ServiceFileError(f"{name} line {number}: {len(cells)} cells; give one number per "
                                   f"line, or a CSV with a {COLUMN!r} column in its header")
        cell = cells[column or 0] if column is None or column < len(cells) else ""
        try:
            value = float(cell)
        except ValueError:
            raise ServiceFileError(f"{name} line {number}: {cell[:40]!r} is not a number") from None
        if not math.isfinite(value):
            raise ServiceFileError(f"{name} line {number}: {cell[:40]!r} is not a finite number")
        if value < 0:
            raise ServiceFileError(f"{name} line {number}: {value:g} is negative; service times are >= 0")
        if value > MAX_TIME:
            raise ServiceFileError(f"{name} line {number}: {value:g} is beyond {MAX_TIME:g}, the "
                                   "largest time; give the times in a coarser time_unit")
        values.append(value)
        if len(values) > MAX_SERVICE_TIMES:
            raise ServiceFileError(f"{name} line {number}: more than {MAX_SERVICE_TIMES:,} service "
                                   "times; resample it to fewer")
    if not values:
        raise ServiceFileError(f"{name}: has no service times (one number per line, or a CSV "
                               f"with a {COLUMN!r} column)")
    return np.asarray(values, dtype=np.float64)


def service_draw(distribution: str, service_time: float | None, p99: float | None,
                 samples: np.ndarray | None) -> Draw | None:
    """Draws of service times (None for ``constant``: every request takes ``service_time``)."""
    if distribution == "exponential":
        mean = float(service_time)

        def exponential(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
            return rng.exponential(mean, shape)
        return exponential
    if distribution == "lognormal":
        mu, sigma = math.log(service_time), lognormal_sigma(float(service_time), float(p99))

        def lognormal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
            return rng.lognormal(mu, sigma, shape)
        return lognormal
    if distribution == "empirical":
        data = samples

        def empirical(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
            return data[rng.integers(0, len(data), shape)]
        return empirical
    return None
