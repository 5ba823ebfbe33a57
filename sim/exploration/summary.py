"""What an explore cell keeps: a few numbers per run, and their means, CIs and verdict counts.

A sweep's full results (every latency, every time-series bucket) are far too big to keep for
hundreds of cells; a cell keeps one value per (strategy, repetition) for each metric below,
which is all the explore files, the tuner and the cache need. Values are plain floats, so a
cell read back from the cache gives byte-identical files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.analysis.metrics import RunMetrics, cost
from sim.analysis.open_metrics import OpenRunMetrics
from sim.analysis.recovery import RecoverySummary
from sim.analysis.stats import Estimate, estimate
from sim.exploration.verdict import cell_note, cell_verdict, run_verdict
from sim.settings.spec import SimulationSpec

# Every run: the sweep's metrics.
BASE_METRICS = ("work", "duration", "cost", "gave_up")
# Runs of servers that keep series (``OpenRunMetrics``), in addition, each with the feature of
# ``Capabilities`` it needs.
FEATURE_METRICS = (("successes", "keeps_series"), ("timeouts", "keeps_series"),
                   ("rejections", "keeps_series"), ("unfinished", "keeps_series"),
                   ("goodput", "keeps_series"), ("p50", "latencies"), ("p99", "latencies"),
                   ("amplification", "keeps_series"), ("success_rate", "keeps_series"),
                   ("retries_denied", "keeps_series"), ("calls_refused", "keeps_series"),
                   ("breaker_open_time", "keeps_series"))
OPEN_METRICS = tuple(name for name, _ in FEATURE_METRICS)
# Per-run verdict values, aggregated as counts and medians rather than means.
VERDICT_VALUES = ("recovered", "recovery_time", "undecided")

METRIC_HELP = {
    "work": "requests sent (attempts)", "duration": "time of the last event", "cost":
    "work_to_duration × work + duration", "gave_up": "clients that gave up",
    "successes": "successful requests", "timeouts": "attempts that timed out",
    "rejections": "attempts rejected", "unfinished": "clients not served by the horizon",
    "goodput": "successes per time unit over the horizon", "p50": "median latency",
    "p99": "99th percentile latency", "amplification": "attempts (and hedges) per offered request",
    "success_rate": "successful requests per offered request",
    "retries_denied": "retries a policy refused",
    "calls_refused": "calls an open breaker refused at their first attempt", "breaker_open_time": "mean time a breaker was open",
    "recovered": "fraction of runs that recovered after the outages",
    "recovery_time": "time from the last outage's end to recovery",
}


def metric_names(spec: SimulationSpec) -> tuple[str, ...]:
    """The metrics with a mean and CI for this simulation: those its server kind's features give
    (all but the base ones are read from the metrics of a run that keeps series)."""
    caps = spec.caps
    if not caps.keeps_series:
        return BASE_METRICS
    return BASE_METRICS + tuple(name for name, feature in FEATURE_METRICS if caps.has(feature))


# The verdict's columns of ``<title>_explore.csv`` (sim.exploration.table), where a verdict exists.
VERDICT_COLUMNS = ("recovered_runs", "runs", "recovered_fraction", "recovery_time_median", "recovery_note")


def row_columns(spec: SimulationSpec) -> tuple[str, ...]:
    """The columns of ``<title>_explore.csv`` other than the axes' (which go after
    ``simulation``): an axis's label must not repeat one of them."""
    columns = ["simulation", "strategy", "clients", "repeats"]
    for name in metric_names(spec):
        columns += [f"{name}_mean", f"{name}_ci95"]
    if has_verdict(spec):
        columns += VERDICT_COLUMNS
    return tuple(columns)


def has_verdict(spec: SimulationSpec) -> bool:
    """A recover/collapse verdict exists: a server kind with recovery verdicts and an outage
    or an incident."""
    return spec.caps.recovery and bool(spec.disruptions)


def run_values(spec: SimulationSpec, m: RunMetrics) -> dict[str, float]:
    """One run's numbers: every metric of ``metric_names(spec)`` plus the verdict values."""
    out = {"work": float(m.work), "duration": float(m.duration),
           "cost": float(cost(m.work, m.duration, spec.work_to_duration)), "gave_up": float(m.gave_up)}
    if isinstance(m, OpenRunMetrics):
        pct = m.latency_percentiles()
        out.update(successes=float(m.successes), timeouts=float(m.timeouts),
                   rejections=float(m.rejections), unfinished=float(m.unfinished),
                   goodput=float(m.goodput), p50=pct["p50"], p99=pct["p99"],
                   amplification=float(m.amplification),
                   success_rate=float(m.success_rate),  # calls: the requests offered
                   retries_denied=float(m.retries_denied), calls_refused=float(m.calls_refused),
                   breaker_open_time=float(m.breaker_open_time))
    recovered, when, undecided = run_verdict(m)
    out.update(recovered=recovered, recovery_time=when, undecided=undecided)
    return out


@dataclass
class CellResult:
    """Per-run values of one cell: ``values[name]`` is an array [strategy, repetition]."""

    labels: tuple[str, ...]
    clients: int
    values: dict[str, np.ndarray]

    @classmethod
    def from_rows(cls, spec: SimulationSpec, rows: list[list[dict[str, float]]]) -> CellResult:
        """From ``rows[strategy][repetition]`` of ``run_values`` at the cell's one client count."""
        names = list(rows[0][0])
        values = {name: np.array([[r[name] for r in row] for row in rows], dtype=np.float64)
                  for name in names}
        return cls(spec.labels, spec.clients[0], values)

    def estimate(self, name: str, s: int) -> Estimate:
        """Mean and 95% CI of metric ``name`` for strategy ``s`` (NaN if any run has none)."""
        return estimate(self.values[name][s])

    def verdict(self, s: int) -> RecoverySummary | None:
        """Strategy ``s``'s repetitions' recovery verdict (recovered of runs, median time), as
        the sweep reports it; None when the cell has no verdict."""
        return cell_verdict(self.values["recovered"][s], self.values["recovery_time"][s],
                            self.values["undecided"][s])

    def verdict_note(self, s: int) -> str:
        """Why strategy ``s``'s runs were not judged (as ``_latency.csv``'s ``recovery_note``)."""
        return cell_note(self.values["undecided"][s])

    def to_json(self) -> dict:
        return {"labels": list(self.labels), "clients": self.clients,
                "values": {k: v.tolist() for k, v in self.values.items()}}

    @classmethod
    def from_json(cls, data: dict) -> CellResult:
        return cls(tuple(data["labels"]), int(data["clients"]),
                   {k: np.array(v, dtype=np.float64) for k, v in data["values"].items()})
