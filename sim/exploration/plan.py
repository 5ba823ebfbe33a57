"""``[simulation.explore]``: the axes of a simulation's map, parsed and every cell checked.

```toml
[[simulation]]
title = "Server_Outage"
...
[simulation.explore]
axes = [
  { key = "outages[0].duration", from = 1000, to = 120000, steps = 12, scale = "log" },
  { key = "think_time", values = [8000, 10000, 12000] },
]
metric = "recovered"   # drawn in the PNG (default: recovered with an outage, else goodput or cost)
```

Every cell's spec is built and re-validated here, before anything runs, so a value that makes a
cell invalid is one line naming the file, the simulation and the axis.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from sim.settings.config import parse_config, read_document
from sim.vocabulary.errors import ConfigError, ParamError
from sim.exploration.axes import CELLS_HINT, MAX_CELLS, Axis, format_value, parse_axis, too_many_cells
from sim.exploration.checks import check_spec
from sim.exploration.summary import has_verdict, metric_names, row_columns
from sim.settings.spec import Config, SimulationSpec

EXPLORE_KEYS = {"axes", "metric", "also"}
MAX_AXES = 2


@dataclass(frozen=True)
class Cell:
    """One point of the grid: its position on each axis, the values there, and its spec."""

    index: tuple[int, ...]
    values: tuple[float | int, ...]
    spec: SimulationSpec


@dataclass(frozen=True)
class ExplorePlan:
    """A simulation's explore: the base spec, one or two axes, the metric the PNG shows."""

    file: str
    base: SimulationSpec
    axes: tuple[Axis, ...]
    metric: str
    cells: tuple[Cell, ...]
    also: tuple[str, ...] = ()  # more metrics, a panel each beside ``metric`` (one axis only)

    @property
    def title(self) -> str:
        return self.base.title

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(a.values) for a in self.axes)

    def with_seed(self, seed: int) -> ExplorePlan:
        """The same map with the simulation's seed replaced (as ``Config.with_seed``: the app's
        seed dialog); cells of a ``seed`` axis keep their own."""
        if seed == self.base.seed:
            return self
        seed_axis = any(a.path.steps == ("seed",) for a in self.axes)
        cells = tuple(c if seed_axis else replace(c, spec=replace(c.spec, seed=seed)) for c in self.cells)
        return replace(self, base=replace(self.base, seed=seed), cells=cells)

    def with_soft_limits(self, on: bool) -> ExplorePlan:
        """The same map with the engine's run-time budget on or off (``--force`` turns it off)."""
        cells = tuple(replace(c, spec=replace(c.spec, soft_limits=on)) for c in self.cells)
        return replace(self, base=replace(self.base, soft_limits=on), cells=cells)

    def cell_label(self, position: int) -> str:
        """``outage 5,703, think time 4,000``: where a cell is on the axes (names without a
        trailing unit in parentheses), short enough for a status line."""
        cell = self.cells[position]
        return ", ".join(f"{_short_name(a.name)} {format_value(v)}" for a, v in zip(self.axes, cell.values))


def _short_name(name: str) -> str:
    """An axis name without a trailing ``(unit)``: ``outage (ms)`` → ``outage``."""
    head, sep, tail = name.rpartition(" (")
    return head if sep and tail.endswith(")") and head else name


def default_metric(spec: SimulationSpec) -> str:
    """What a map shows unless told: recovery where there is a verdict, else goodput or cost."""
    if has_verdict(spec):
        return "recovered"
    return "goodput" if "goodput" in metric_names(spec) else "cost"


def plot_metrics(spec: SimulationSpec) -> tuple[str, ...]:
    """Metrics a map can show: every metric with a mean, and ``recovered`` with a verdict."""
    return metric_names(spec) + (("recovered",) if has_verdict(spec) else ())


def cell_spec(base: SimulationSpec, axes: tuple[Axis, ...], values: tuple[Any, ...]) -> SimulationSpec:
    """``base`` with each axis key set to its value, re-validated (ParamError names the key)."""
    spec = base
    for axis, value in zip(axes, values):
        spec = axis.path.set(spec, value)
    check_spec(spec)
    return spec


def own_column(axis: Axis) -> bool:
    """Whether ``<title>_explore.csv`` gives the axis a column of its own: not a ``clients`` axis
    named ``clients``, whose values are the ``clients`` column's."""
    return not (axis.path.steps == ("clients",) and axis.name == "clients")


def _check_column_names(axes: list[Axis], base: SimulationSpec, fail: Callable[..., NoReturn]) -> None:
    """Each axis's column name (its label, else its key) must be new in ``<title>_explore.csv``:
    not another column's, not another axis's; the mistake names both."""
    columns = set(row_columns(base)) | {"method"}  # and the column of --method fluid or adaptive
    for i, axis in enumerate(axes):
        key = f"explore.axes[{i}].{'label' if axis.label else 'key'}"
        if not own_column(axis):
            continue
        if axis.name in columns:
            fail(key, f"explore.axes[{i}] ({axis.path.text}) is named {axis.name!r}, which is already a "
                 "column of _explore.csv: the file would have two columns of that name",
                 "give the axis another label")
        for j, other in enumerate(axes[:i]):
            if other.name == axis.name and own_column(other):
                fail(key, f"{axis.name!r} names both explore.axes[{j}] ({other.path.text}) and "
                     f"explore.axes[{i}] ({axis.path.text}): two columns of that name",
                     "give each axis its own label")


def parse_explore(table: Any, base: SimulationSpec, file: str) -> ExplorePlan:
    """An ExplorePlan from a simulation's ``explore`` table; ConfigError (one line) otherwise."""
    def fail(key: str, message: str, hint: str | None = None):
        raise ConfigError(message, file=file, simulation=base.title, key=key, hint=hint)

    if not isinstance(table, dict):
        fail("explore", "must be a table: [simulation.explore] with axes = [...]")
    for key in table:
        if key not in EXPLORE_KEYS:
            fail(f"explore.{key}", "is not an explore key", "explore takes axes and metric")
    raw_axes = table.get("axes")
    if not isinstance(raw_axes, list) or not 1 <= len(raw_axes) <= MAX_AXES:
        fail("explore.axes", f"must be a list of one or two axes, got {raw_axes!r}",
             'e.g. axes = [{ key = "think_time", values = [5000, 10000] }]')
    axes: list[Axis] = []
    for i, raw in enumerate(raw_axes):
        where = f"explore.axes[{i}]"
        try:
            axes.append(parse_axis(raw, base))
        except ParamError as exc:
            fail(f"{where}.{exc.key}" if exc.key else where, exc.message, exc.hint)
        if any(a.path.steps == axes[-1].path.steps for a in axes[:-1]):
            fail(f"{where}.key", f"{axes[-1].path.text!r} is already an axis")
    _check_column_names(axes, base, fail)
    count = math.prod(len(a.values) for a in axes)
    if count > MAX_CELLS:  # before the grid is built
        sizes = " × ".join(f"{len(a.values):,}" for a in axes)
        fail("explore.axes", f"the axes' {sizes} values {too_many_cells(count)}", CELLS_HINT)
    if len(base.clients) > 1 and not any(a.path.steps == ("clients",) for a in axes):
        fail("clients", f"explore runs one client count per cell, got {list(base.clients)}",
             "give clients = [N], or make clients an axis")
    metric = table.get("metric", default_metric(base))
    if metric not in plot_metrics(base):
        fail("explore.metric", f"unknown metric {metric!r}", f"choose one of {', '.join(plot_metrics(base))}")
    also = table.get("also", [])
    if not isinstance(also, list) or not all(isinstance(m, str) for m in also):
        fail("explore.also", f"must be a list of metric names, got {also!r}", 'e.g. also = ["success_rate"]')
    for name in also:
        if name not in plot_metrics(base):
            fail("explore.also", f"unknown metric {name!r}", f"choose from {', '.join(plot_metrics(base))}")
    if also and len(axes) != 1:
        fail("explore.also", "adds panels beside the line chart of one axis; a two-axis map shows one metric")
    cells: list[Cell] = []
    for index in itertools.product(*(range(len(a.values)) for a in axes)):
        values = tuple(a.values[i] for a, i in zip(axes, index))
        try:
            spec = cell_spec(base, tuple(axes), values)
        except ParamError as exc:
            at = ", ".join(f"{a.path.text} = {v:g}" for a, v in zip(axes, values))
            fail("explore.axes", f"the cell {at} is invalid: {exc.key}: {exc.message}", exc.hint)
        cells.append(Cell(index, values, spec))
    return ExplorePlan(file, base, tuple(axes), metric, tuple(cells), tuple(also))


def parse_document(data: dict[str, Any], file: str = "<config>") -> Config:
    """Validate a TOML document: the simulations, then their explore and tune tables (every
    mistake of the simulations is reported before any of the tables')."""
    from sim.exploration.tune_plan import parse_tune

    config = parse_config(data, file)
    explores, tunes = [], []
    for block, spec in zip(data.get("simulation", []), config.simulations):
        if "explore" in block:
            explores.append(parse_explore(block["explore"], spec, file))
        if "tune" in block:
            tunes.append(parse_tune(block["tune"], spec, file))
    return replace(config, explores=tuple(explores), tunes=tuple(tunes))


def load_document(path: str | Path) -> Config:
    """Read a config file with its explore and tune tables; ConfigError (one line) for a mistake."""
    return parse_document(read_document(path), str(path))
