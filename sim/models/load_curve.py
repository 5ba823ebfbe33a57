"""A pool's load-dependent slowdown: how much longer service takes with more requests in service.

Two ways to say it, both giving a multiplier of a request's service time as a function of the
requests in service when it starts (itself included):

- study 003's law, as ``LatencyServer`` has it: 1 up to ``slowdown_above`` in service, then
  ``factor^((c − slowdown_above) / k)`` (``factor`` and ``k`` mean what they mean there; the
  threshold is LatencyServer's ``concurrency_limit``, a name PoolServer gives its admission limit);
- a measured curve, ``load_curve_file``: rows of ``concurrency, multiplier`` (or a CSV with those
  two columns in its header), interpolated linearly between rows and flat beyond the ends.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from pathlib import Path
from typing import Callable

from sim.vocabulary.bounds import MAX_TIME
from sim.vocabulary.inputs import is_csv_header, read_text

# A curve is a handful of measured points; a file larger is not one.
MAX_LOAD_CURVE_BYTES = 2**20
MAX_LOAD_CURVE_ROWS = 10_000
COLUMNS = ("concurrency", "multiplier")
MAX_EXPONENT = 700.0  # exp(700) ~ 1e304: the law saturates instead of overflowing (as LatencyServer)


class LoadCurveError(ValueError):
    """A load-curve file that cannot be used: the message names the file and, where it is a
    line's fault, the line."""


def read_load_curve(path: str | Path) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The (concurrencies, multipliers) of ``path``: two numbers a line, or a CSV whose header
    has ``concurrency`` and ``multiplier`` columns; concurrencies increasing and >= 0,
    multipliers > 0 (blank lines and ``#`` lines skipped). Raises ``LoadCurveError``."""
    name = str(path)
    text = read_text(path, MAX_LOAD_CURVE_BYTES, what="load-curve file", error=LoadCurveError)
    columns: tuple[int, int] | None = None
    xs: list[float] = []
    ys: list[float] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        cells = [cell.strip().strip('"').strip() for cell in line.split(",")]
        if not xs and columns is None and is_csv_header(cells):
            if not all(c in cells for c in COLUMNS):
                raise LoadCurveError(f"{name} line {number}: a CSV header without 'concurrency' and "
                                     f"'multiplier' columns (got {', '.join(cells)[:80]})")
            columns = (cells.index(COLUMNS[0]), cells.index(COLUMNS[1]))
            continue
        if columns is None and len(cells) != 2:
            raise LoadCurveError(f"{name} line {number}: {len(cells)} cells; give 'concurrency, "
                                 "multiplier' on each line")
        picked = [cells[i] if i < len(cells) else "" for i in (columns or (0, 1))]
        try:
            x, y = float(picked[0]), float(picked[1])
        except ValueError:
            bad = next(c for c in picked if not _number(c))
            raise LoadCurveError(f"{name} line {number}: {bad[:40]!r} is not a number") from None
        if not (math.isfinite(x) and math.isfinite(y)):
            raise LoadCurveError(f"{name} line {number}: not a finite number")
        if x < 0:
            raise LoadCurveError(f"{name} line {number}: concurrency {x:g} is negative")
        if not y > 0:
            raise LoadCurveError(f"{name} line {number}: multiplier {y:g} must be > 0")
        if y > MAX_TIME:  # the bound of every time and factor
            raise LoadCurveError(f"{name} line {number}: multiplier {y:g} is beyond {MAX_TIME:g}")
        if xs and not x > xs[-1]:
            raise LoadCurveError(f"{name} line {number}: concurrency {x:g} does not increase "
                                 f"(the line before has {xs[-1]:g})")
        xs.append(x)
        ys.append(y)
        if len(xs) > MAX_LOAD_CURVE_ROWS:
            raise LoadCurveError(f"{name} line {number}: more than {MAX_LOAD_CURVE_ROWS:,} rows")
    if not xs:
        raise LoadCurveError(f"{name}: has no rows (give 'concurrency, multiplier' on each line)")
    return tuple(xs), tuple(ys)


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def curve_multiplier(xs: tuple[float, ...], ys: tuple[float, ...]) -> Callable[[int], float]:
    """The multiplier at ``c`` in service: linear between the rows, flat beyond the ends."""
    def multiplier(c: int) -> float:
        i = bisect_right(xs, c)
        if i == 0:
            return ys[0]
        if i == len(xs):
            return ys[-1]
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (c - x0) / (x1 - x0)
    return multiplier


def law_multiplier(above: int, factor: float, k: float) -> Callable[[int], float]:
    """Study 003's law: 1 up to ``above`` in service, ``factor^((c − above) / k)`` beyond."""
    log_factor = math.log(factor)

    def multiplier(c: int) -> float:
        if c <= above:
            return 1.0
        return math.exp(min((c - above) / k * log_factor, MAX_EXPONENT))
    return multiplier


def cached(multiplier: Callable[[int], float]) -> Callable[[int], float]:
    """``multiplier`` remembered per concurrency (a run asks for a few values many times)."""
    table: dict[int, float] = {}

    def get(c: int) -> float:
        value = table.get(c)
        if value is None:
            value = table[c] = multiplier(c)
        return value
    return get
