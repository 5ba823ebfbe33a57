"""A check's answers, from its sweep: the layers' amplification (computed and simulated), each
(settings, incident)'s recovery and figures, the knob's range, and the verdict in words.

Every number comes from ``sim.analysis``: the recovery verdict is the sweep's own
(``SweepResult.recovery``, what ``run``'s tables print), the incident figures
``sim.analysis.check``'s, the simulated amplification ``sim.analysis.tiers``'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sim.analysis.check import IncidentFigures
from sim.analysis.recovery import RecoverySummary
from sim.check.amplification import simulated, worst_case
from sim.check.battery import BATTERY, Incident
from sim.settings.imported.layer import Layer, attempts_text
from sim.check.plan import Plan


@dataclass(frozen=True)
class LayerRow:
    layer: str
    source: str
    attempts: int
    retries: int
    amplification: int  # the product of the attempts of this layer and those above it
    amplification_simulated: float


@dataclass(frozen=True)
class IncidentRow:
    settings: str
    incident: Incident
    recovery: RecoverySummary | None  # None: no run could be judged
    figures: IncidentFigures

    @property
    def recovered_every_run(self) -> bool | None:
        return None if self.recovery is None else self.recovery.all_recovered


@dataclass(frozen=True)
class RangeRow:
    value: Any
    recovered: int  # incidents every judged run of which recovered
    incidents: int

    @property
    def every(self) -> bool:
        return self.recovered == self.incidents


@dataclass(frozen=True)
class CheckResult:
    layers: tuple[LayerRow, ...]
    incidents: tuple[IncidentRow, ...]
    changes: dict[str, str]  # settings name -> what differs ("" for the settings as given)
    skipped: tuple[tuple[str, str], ...]
    knob: tuple[str, str] | None  # (layer name, knob label)
    range: tuple[RangeRow, ...]
    repetitions: int
    runs: int
    range_repetitions: int = 0
    sources: tuple[Layer, ...] = ()  # the layers as read (their notes: what was assumed)

    def rows_of(self, settings: str) -> list[IncidentRow]:
        return [row for row in self.incidents if row.settings == settings]

    @property
    def recovering_values(self) -> list[Any]:
        return [row.value for row in self.range if row.every]


def runs_of(result) -> list:
    """The repetitions of a check's simulation (one strategy, one client count), in order."""
    return [result.open_runs[(0, 0, r)] for r in range(result.spec.repeat) if (0, 0, r) in result.open_runs]


def _cell(result) -> tuple[RecoverySummary | None, IncidentFigures]:
    return result.recovery(0, 0), IncidentFigures.of(runs_of(result))


def layer_rows(layers: Sequence[Layer], failure) -> tuple[LayerRow, ...]:
    attempts = [layer.attempts for layer in layers]
    sim = simulated(failure).per_layer
    return tuple(LayerRow(layer.name, layer.source, layer.attempts, layer.retries, product, measured)
                 for layer, product, measured in zip(layers, worst_case(attempts), sim))


def assemble(plan: Plan, layers: Sequence[Layer], results: Sequence, repetitions: int,
             battery: Sequence[Incident] = BATTERY, range_repetitions: int = 0) -> CheckResult:
    """The answers, from the sweep of ``plan.config_data`` (``results`` in its block order)."""
    by_title = {r.spec.title: r for r in results}
    cells = {title: _cell(r) for title, r in by_title.items() if title != plan.failure}
    rows = tuple(IncidentRow(s.name, incident, *cells[plan.cells[(s.name, incident.name)]])
                 for s in plan.settings for incident in battery)
    ranges: list[RangeRow] = []
    knob = None
    if plan.swept is not None:
        knob = (plan.swept.layer.name, plan.swept.knob.label)
        for v, value in enumerate(plan.swept.knob.values):
            verdicts = [cells[plan.range_cells[(v, incident.name)]][0] for incident in battery]
            ranges.append(RangeRow(value, sum(1 for r in verdicts if r is not None and r.all_recovered),
                                   len(battery)))
    runs = sum(r.spec.repeat for r in results)
    return CheckResult(layer_rows(layers, by_title[plan.failure]), rows,
                       {s.name: s.change for s in plan.settings}, tuple(plan.skipped), knob,
                       tuple(ranges), repetitions, runs, range_repetitions, tuple(layers))


def counts_text(row: LayerRow) -> str:
    return attempts_text(row.attempts)


def recovery_text(recovery: RecoverySummary | None) -> str:
    """``3/3 recovered, median 1.2 s`` / ``never (0/3)`` / ``—`` (the run tables' words, in s)."""
    if recovery is None:
        return "— (not judged)"
    return recovery.text(number=lambda v: f"{v / 1000:,.1f}", unit="s")


def _values(values: Sequence[Any]) -> str:
    return ", ".join(str(v) for v in values)


def verdict(result: CheckResult) -> str:
    """The one line at the end: does the service survive the battery under these settings, and
    what would help."""
    given = result.rows_of("as_given")
    failed = [row.incident.words for row in given if row.recovered_every_run is not True]
    total = result.layers[-1].amplification
    runs = result.repetitions
    each = f"{runs} run{'s' if runs != 1 else ''} each"
    if not failed:
        head = f"Your settings survive every incident of the battery ({each})"
    else:
        shown = ", ".join(failed[:3]) + (f" and {len(failed) - 3} more" if len(failed) > 3 else "")
        head = f"Your settings do not survive {len(failed)} of {len(given)} incidents ({shown}; {each})"
    def survived(name: str) -> int:
        return sum(r.recovered_every_run is True for r in result.rows_of(name))

    better = sorted((name for name in result.changes if name != "as_given" and survived(name) > survived("as_given")),
                    key=lambda name: -survived(name))  # the best first; ties in the alternatives' order
    tail = f"; worst case {total} attempts per call at the service"
    if failed and better:
        tail += (f"; with {result.changes[better[0]]} it survives {survived(better[0])} of {len(given)}")
    if result.knob is not None:
        good = result.recovering_values
        label = result.knob[1]
        tail += (f"; {label} recovers from every incident at {_values(good)}" if good
                 else f"; no {label} tried ({_values([r.value for r in result.range])}) recovers from every incident")
    return head + tail + "."


def run_check(plan: Plan, layers: Sequence[Layer], repetitions: int, *, workers: int | None = None,
              progress: Callable[[int, int], None] | None = None, force: bool = False,
              battery: Sequence[Incident] = BATTERY, range_repetitions: int = 0) -> CheckResult:
    """Sweep the plan's config (checked as ``run`` checks one) and assemble the answers."""
    from sim.pipeline import prepare, sweep
    from sim.settings.config import parse_config

    config = prepare(parse_config(plan.config_data, "<check>"), workers=workers, force=force)
    results = sweep(config, workers=workers, progress=progress)
    return assemble(plan, layers, results, repetitions, battery, range_repetitions)

