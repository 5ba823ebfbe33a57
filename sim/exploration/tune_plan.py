"""``[simulation.tune]``: which strategy to tune, over which parameters, for which metric.

```toml
[simulation.tune]
strategy = "expo backoff"        # a strategy's label, or its index from 0
params = { min_delay = [10, 1000], factor = { low = 1.2, high = 4.0 } }   # bounds, both included
objective = "cost"               # or p99, amplification, recovery_time, any metric
constraints = ["p99 <= 500", "gave_up == 0"]   # on means over the repetitions
trials = 30
sampler = "tpe"                  # or "cmaes"
batch = 4                        # trials evaluated in parallel; results do not depend on --workers
seed = 0                         # default: the simulation's seed
pareto = ["work", "duration"]    # the two metrics of <title>_pareto.csv/png
```
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sim.vocabulary.bounds import MAX_SEED
from sim.vocabulary.errors import ConfigError, ParamError
from sim.exploration.checks import check_spec
from sim.exploration.paths import KeyPath, PathError, resolve
from sim.exploration.summary import has_verdict, metric_names
from sim.settings.spec import SimulationSpec

TUNE_KEYS = {"strategy", "params", "objective", "constraints", "trials", "sampler", "batch", "seed",
             "pareto"}
SAMPLERS = ("tpe", "cmaes")
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt, "==": operator.eq}
_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|==|<|>)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Param:
    """A tuned parameter: its path in the spec and its bounds (integers for integer keys)."""

    name: str
    path: KeyPath
    low: float
    high: float
    log: bool = False


@dataclass(frozen=True)
class Constraint:
    """``metric op bound`` on the mean over repetitions."""

    metric: str
    op: str
    bound: float

    def holds(self, value: float) -> bool:
        return not math.isnan(value) and _OPS[self.op](value, self.bound)

    def violation(self, value: float) -> float:
        """How far a mean is from satisfying the constraint (0 when it holds): Optuna's form."""
        if math.isnan(value):
            return math.inf
        if self.holds(value):
            return 0.0
        return max(abs(value - self.bound), 1e-12)

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.bound:g}"


@dataclass(frozen=True)
class TunePlan:
    file: str
    base: SimulationSpec
    strategy: int
    params: tuple[Param, ...]
    objective: str
    constraints: tuple[Constraint, ...]
    trials: int
    sampler: str
    batch: int
    seed: int
    pareto: tuple[str, str]

    @property
    def title(self) -> str:
        return self.base.title

    @property
    def label(self) -> str:
        return self.base.strategies[self.strategy].label


def tune_metrics(spec: SimulationSpec) -> tuple[str, ...]:
    """Metrics a tune can minimise or constrain."""
    extra = ("recovery_time", "recovered") if has_verdict(spec) else ()
    return metric_names(spec) + extra


def _bounds(raw: Any) -> tuple[float, float, bool]:
    if isinstance(raw, list) and len(raw) == 2:
        low, high, log = raw[0], raw[1], False
    elif isinstance(raw, dict) and set(raw) <= {"low", "high", "log"} and {"low", "high"} <= set(raw):
        low, high, log = raw["low"], raw["high"], raw.get("log", False)
    else:
        raise ParamError("", f"must be [low, high] or {{ low = ..., high = ..., log = true }}, got {raw!r}")
    for v in (low, high):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ParamError("", f"bounds must be finite numbers, got {raw!r}")
    if not low < high:
        raise ParamError("", f"needs low < high, got {raw!r}")
    if not isinstance(log, bool):
        raise ParamError("log", f"must be true or false, got {log!r}")
    if log and low <= 0:
        raise ParamError("", "a log range needs low > 0")
    return float(low), float(high), log


def parse_tune(table: Any, base: SimulationSpec, file: str) -> TunePlan:
    """A TunePlan from a simulation's ``tune`` table; ConfigError (one line) for any mistake."""
    def fail(key: str, message: str, hint: str | None = None):
        raise ConfigError(message, file=file, simulation=base.title, key=f"tune.{key}" if key else "tune",
                          hint=hint)

    if not isinstance(table, dict):
        fail("", "must be a table: [simulation.tune] with strategy and params")
    for key in table:
        if key not in TUNE_KEYS:
            fail(key, "is not a tune key", f"tune takes: {', '.join(sorted(TUNE_KEYS))}")
    if len(base.clients) > 1:
        fail("", f"tunes at one client count, got clients = {list(base.clients)}", "give clients = [N]")
    raw = table.get("strategy", 0)
    labels = base.labels
    if isinstance(raw, str) and raw in labels:
        strategy = labels.index(raw)
    elif isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < len(labels):
        strategy = raw
    else:
        fail("strategy", f"no strategy {raw!r}", f"give a label ({', '.join(map(repr, labels))}) or an index from 0")
    params_raw = table.get("params")
    if not isinstance(params_raw, dict) or not params_raw:
        fail("params", "must name at least one parameter with its bounds", "e.g. params = { base = [1, 1000] }")
    params: list[Param] = []
    for name, bounds in params_raw.items():
        try:
            path = resolve(f"strategies[{strategy}].{name}", base)
        except PathError as exc:
            fail(f"params.{name}", exc.message, exc.hint)
        try:
            low, high, log = _bounds(bounds)
        except ParamError as exc:
            fail(f"params.{name}", exc.message, exc.hint)
        if path.integer and (low != int(low) or high != int(high)):
            fail(f"params.{name}", f"is a whole number: give whole bounds, got {bounds!r}")
        for edge in (low, high):
            try:
                check_spec(path.set(base, edge))
            except ParamError as exc:
                fail(f"params.{name}", f"bound {edge:g} is invalid: {exc.message}", exc.hint)
        params.append(Param(name, path, low, high, log))
    metrics = tune_metrics(base)
    objective = table.get("objective", "cost")
    if objective not in metrics:
        fail("objective", f"unknown metric {objective!r}", f"choose one of {', '.join(metrics)}")
    constraints: list[Constraint] = []
    raw_constraints = table.get("constraints", [])
    if not isinstance(raw_constraints, list):
        fail("constraints", f"must be a list of strings like \"p99 <= 500\", got {raw_constraints!r}")
    for i, text in enumerate(raw_constraints):
        match = _CONSTRAINT.match(text) if isinstance(text, str) else None
        if not match:
            fail(f"constraints[{i}]", f"cannot read {text!r}", 'write METRIC OP NUMBER, e.g. "p99 <= 500"')
        metric, op, number = match.groups()
        if metric not in metrics:
            fail(f"constraints[{i}]", f"unknown metric {metric!r}", f"choose one of {', '.join(metrics)}")
        try:
            bound = float(number)
        except ValueError:
            fail(f"constraints[{i}]", f"{number!r} is not a number")
        if not math.isfinite(bound):  # nan compares false with everything, inf (1e999) is no bound
            fail(f"constraints[{i}]", f"{text.strip()!r}: the bound must be a finite number, got {number!r}",
                 'e.g. "p99 <= 500"')
        constraints.append(Constraint(metric, op, bound))

    def whole(key: str, default: int, low: int) -> int:
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            fail(key, f"must be a whole number >= {low}, got {value!r}")
        return value

    trials, batch = whole("trials", 30, 1), whole("batch", 4, 1)
    seed = whole("seed", base.seed, 0)
    if seed > MAX_SEED:  # as a simulation's seed; Optuna's own is derived from it (tune.optuna_seed)
        fail("seed", f"must be a whole number from 0 to {MAX_SEED}, got {seed!r}")
    sampler = table.get("sampler", "tpe")
    if sampler not in SAMPLERS:
        fail("sampler", f"unknown sampler {sampler!r}", "choose tpe or cmaes")
    if sampler == "cmaes" and len(params) < 2:
        fail("sampler", "CMA-ES needs at least two parameters", 'use sampler = "tpe" for one')
    # Attempts against tail latency where the kind reports both, else work against duration.
    default_pareto = next(pair for pair in (["amplification", "p99"], ["work", "duration"])
                          if set(pair) <= set(metrics))
    pareto = table.get("pareto", default_pareto)
    if (not isinstance(pareto, list) or len(pareto) != 2 or pareto[0] == pareto[1]
            or any(p not in metrics for p in pareto)):
        fail("pareto", f"must be two different metrics, got {pareto!r}", f"choose from {', '.join(metrics)}")
    return TunePlan(file, base, strategy, tuple(params), objective, tuple(constraints), trials,
                    sampler, batch, seed, (pareto[0], pareto[1]))
