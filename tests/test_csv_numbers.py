"""CSV numbers: the shortest text of the value rounded to 12 significant digits, in every file,
so a mean that floating-point sums leave at 1480.449999999999 is written 1480.45."""

from __future__ import annotations

import csv
import io
import math
import re

import numpy as np
import pytest
from support import make_spec

from sim.runs.sweep import SweepResult, run_sweep
from sim.export.csv_files import events_csv_text, format_float, metrics_csv_text, runs_csv_text
from sim.export.overload_csv import latency_csv_text, timeseries_csv_text
from sim.export.runs import representative_runs


@pytest.mark.parametrize("value, text", [
    (1480.449999999999, "1480.45"), (0.1 + 0.2, "0.3"), (2.0, "2.0"), (1 / 3, "0.333333333333"),
    (123456789012345.0, "123456789012000.0"), (1e-20 / 3, "3.33333333333e-21"), (0.0, "0.0"),
    (float("nan"), ""), (float("inf"), "inf"),
])
def test_format_float(value: float, text: str) -> None:
    assert format_float(value) == text


def _numbers(text: str) -> list[str]:
    """Every float cell of a CSV text (header, labels and whole counts excluded)."""
    out = []
    for row in list(csv.reader(io.StringIO(text)))[1:]:
        for cell in row:
            if re.fullmatch(r"-?\d+", cell):
                continue
            try:
                float(cell)
            except ValueError:
                continue
            out.append(cell)
    return out


def _significant_digits(cell: str) -> int:
    mantissa = re.split("[eE]", cell)[0].replace("-", "").replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) if "." in cell else len(mantissa)


def test_a_noisy_mean_is_written_rounded() -> None:
    """Durations whose float mean is 1480.4499999999998 (a sum's rounding noise)."""
    spec = make_spec(clients=[3], repeat=3)
    result = SweepResult.empty(spec)
    result.work[:] = 10
    result.duration[0, 0] = [1480.3, 1480.6, 1480.45]
    mean = float(result.duration[0, 0].mean())
    assert repr(mean) == "1480.4499999999998"  # the noise this is about
    row = list(csv.reader(io.StringIO(metrics_csv_text(result))))[1]
    assert row[7] == "1480.45"


def test_every_csv_writer_rounds_to_12_significant_digits() -> None:
    contention = make_spec("WriteOnlyOCCServer", clients=[3, 6], repeat=3)
    result = run_sweep(contention, workers=1)
    overload = make_spec("QueueServer", clients=[20], repeat=2, concurrency=2, service_time=3.3,
                         queue_size=3, reject_delay=0.7, overload_threshold=8, horizon=500.0,
                         workload="poisson", think_time=41.3, timeout=37.1)
    open_result = run_sweep(overload, workers=1)
    texts = {"metrics": metrics_csv_text(result), "runs": runs_csv_text(result),
             "events": events_csv_text(representative_runs(contention)),
             "latency": latency_csv_text(open_result), "timeseries": timeseries_csv_text(open_result)}
    for name, text in texts.items():
        cells = _numbers(text)
        assert cells, name
        for cell in cells:
            value = float(cell)
            assert _significant_digits(cell) <= 12, (name, cell)
            assert cell == format_float(value), (name, cell)
    # and something in them really had more digits to drop
    assert any(len(repr(t)) > len(format_float(t)) for run in representative_runs(contention).values()
               for t in run.history.times)
    assert not math.isnan(float(_numbers(texts["latency"])[0]))
