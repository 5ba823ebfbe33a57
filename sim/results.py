"""What ``sim.run``, ``sim.explore`` and ``sim.tune`` return: every table as rows, and the files.

A table's rows are read from the very text its CSV file holds (``Output.text``), so a notebook
sees the same columns and the same numbers as ``backoff-sim run`` writes; cells are typed back:
whole numbers as ``int``, other numbers as ``float``, an empty cell or ``n/a`` as ``None``, and
the text columns (titles, labels, verdicts, event names) always as ``str``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.vocabulary.errors import UserError
from sim.recording import require_pandas

if TYPE_CHECKING:  # pragma: no cover
    from sim.export.csv_files import EventsKey
    from sim.export.replay import ReplayedRuns
    from sim.exploration.runner import ExploreResult
    from sim.exploration.tune import TuneResult
    from sim.runs.engine import Run
    from sim.runs.sweep import SweepResult
    from sim.settings.spec import Config

__all__ = ["ExploreResults", "ReplayResults", "Results", "TuneResults", "parse_rows"]

Row = dict[str, Any]
# Columns whose cells are text even when they look like numbers (a title "2024", a detail "3").
TEXT_COLUMNS = frozenset({"simulation", "control", "strategy", "vs_best", "event_type",
                          "event_detail", "kind", "pareto", "feasible", "best", "error"})
_INTEGER = re.compile(r"-?\d+")
_MISSING = frozenset({"", "n/a"})


def _cell(column: str, text: str) -> Any:
    if column in TEXT_COLUMNS:
        return text
    if text in _MISSING:
        return None
    if _INTEGER.fullmatch(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def parse_rows(text: str) -> list[Row]:
    """A CSV's rows as dicts with typed cells (the events file's end marker is no row)."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    return [{c: _cell(c, v) for c, v in zip(header, row)}
            for row in reader if row and not row[0].startswith("# end:")]


def _to_pandas(rows: list[Row], what: str) -> Any:
    return require_pandas(what).DataFrame(rows)


def _kind_error(kind: str, kinds: Sequence[str]) -> UserError:
    return UserError(f"no table {kind!r}: choose one of {', '.join(repr(k) for k in kinds)}")


@dataclass(frozen=True, eq=False)
class Results:
    """Every simulation's sweep of a config (``sim.run``), in the config's order.

    ``results["title"]`` or ``results[0]`` is one simulation's ``SweepResult`` (its arrays:
    ``work``, ``duration``, ``cost``... indexed ``[strategy, clients, repetition]``).
    """

    config: Config
    simulations: tuple[SweepResult, ...]
    _recorded: dict[int, dict[str, Run]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.simulations)

    def __iter__(self) -> Iterator[SweepResult]:
        return iter(self.simulations)

    def __getitem__(self, key: int | str) -> SweepResult:
        if isinstance(key, str):
            for result in self.simulations:
                if result.spec.title == key:
                    return result
            raise KeyError(f"no simulation titled {key!r}: the titles are "
                           f"{', '.join(repr(r.spec.title) for r in self.simulations)}")
        return self.simulations[key]

    @property
    def kinds(self) -> tuple[str, ...]:
        """The tables there are: ``metrics``, ``runs``, ``events``, for simulations against
        servers that reply ``timeseries`` and ``latency``, and for those with
        ``[[simulation.tiers]]`` ``tiers`` (the CSV files' suffixes)."""
        from sim.export.outputs import outputs_for

        seen: dict[str, None] = {}
        for result in self.simulations:
            for o in outputs_for(result.spec):
                if o.text is not None:
                    seen[_kind(o.suffix)] = None
        return tuple(seen)

    def representative(self, index: int) -> dict[str, Run]:
        """The example runs (one per strategy) the events table and file show, recorded once."""
        from sim.export.runs import representative_runs

        if index not in self._recorded:
            result = self.simulations[index]
            self._recorded[index] = representative_runs(result.spec, result.recorded)
        return self._recorded[index]

    def csv_text(self, kind: str, simulation: str | int = 0) -> str:
        """The text of one simulation's ``<title>_<kind>.csv``, as ``backoff-sim run`` writes it."""
        from sim.export.outputs import Job, outputs_for

        index = self._index(simulation)
        result = self.simulations[index]
        for o in outputs_for(result.spec):
            if o.text is not None and _kind(o.suffix) == kind:
                runs = self.representative(index) if kind == "events" else {}
                return o.text(Job(result, runs, {}, None))
        if kind in self.kinds:
            raise UserError(f"simulation {result.spec.title!r} has no {kind} table (its server "
                            "does not reply: no time series or latencies)")
        raise _kind_error(kind, self.kinds)

    def rows(self, kind: str, simulation: str | int | None = None) -> list[Row]:
        """A table's rows (plain dicts: the CSV's columns and values), of every simulation that
        has it in order, or of one (title or index)."""
        if kind not in self.kinds:
            raise _kind_error(kind, self.kinds)
        if simulation is not None:
            return parse_rows(self.csv_text(kind, simulation))
        from sim.export.outputs import outputs_for

        rows: list[Row] = []
        for i, result in enumerate(self.simulations):
            if any(o.text is not None and _kind(o.suffix) == kind for o in outputs_for(result.spec)):
                rows += parse_rows(self.csv_text(kind, i))
        return rows

    def to_pandas(self, kind: str, simulation: str | int | None = None) -> Any:
        """``rows`` as a ``pandas.DataFrame`` (needs pandas: ``pip install 'backoff-sim[pandas]'``)."""
        return _to_pandas(self.rows(kind, simulation), "Results.to_pandas()")

    def export(self, directory: str | Path, *, theme: str | None = None) -> list[Path]:
        """Write exactly the files ``backoff-sim run --out directory`` writes (PNGs in ``theme``),
        all at once or none; return their paths."""
        from sim.export.names import check_name_lengths
        from sim.export.palette import DEFAULT_THEME, load_palette
        from sim.pipeline import Staged, add_staged, output_set, stage_simulation

        palette = load_palette(theme or DEFAULT_THEME)
        specs = [r.spec for r in self.simulations]
        check_name_lengths(specs, directory)
        staged: dict[int, Staged] = {}
        with output_set(Path(directory)) as output:
            for i, result in enumerate(self.simulations):
                staged[i] = stage_simulation(result, output.dir, palette)
            add_staged(output, specs, staged)
        return output.written

    def _index(self, simulation: str | int) -> int:
        if isinstance(simulation, int) and not isinstance(simulation, bool):
            n = len(self.simulations)
            if not -n <= simulation < n:
                titles = ", ".join(repr(r.spec.title) for r in self.simulations)
                raise IndexError(f"simulation {simulation}: there are {n} simulations, 0 to {n - 1} "
                                 f"(or a title: {titles})")
            return range(n)[simulation]
        if not isinstance(simulation, str):
            raise TypeError(f"simulation must be an index or a title, got {simulation!r}")
        return self.simulations.index(self[simulation])


def _kind(suffix: str) -> str:
    """``_metrics.csv`` → ``metrics``."""
    return suffix[1:].rsplit(".", 1)[0]


@dataclass(frozen=True, eq=False)
class _PlanResults:
    """Results of a config's maps or tunes, one per plan, by title or index."""

    config: Config
    results: tuple

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    def __getitem__(self, key: int | str):
        if isinstance(key, str):
            for result in self.results:
                if result.plan.title == key:
                    return result
            raise KeyError(f"no result for simulation {key!r}")
        return self.results[key]

    def _rows(self, texts: Callable[[Any], str | None]) -> list[Row]:
        rows: list[Row] = []
        for result in self.results:
            text = texts(result)
            if text is not None:
                rows += parse_rows(text)
        return rows

    def _write(self, directory: str | Path, write: Callable[[Any, Path], tuple[list[Path], list[str]]]) -> list[Path]:
        from sim.export.atomic import ensure_output_dir
        from sim.pipeline import output_set

        with output_set(ensure_output_dir(directory)) as output:
            for result in self.results:
                files, old = write(result, output.dir)
                output.add(files, remove=old)
        return output.written


class ExploreResults(_PlanResults):
    """The maps of ``sim.explore``: ``rows()`` is every ``<title>_explore.csv``'s rows."""

    results: tuple[ExploreResult, ...]

    def rows(self, kind: str = "explore") -> list[Row]:
        from sim.exploration.table import explore_csv_text

        if kind != "explore":
            raise _kind_error(kind, ("explore",))
        return self._rows(explore_csv_text)

    def to_pandas(self, kind: str = "explore") -> Any:
        return _to_pandas(self.rows(kind), "ExploreResults.to_pandas()")

    def export(self, directory: str | Path, *, theme: str | None = None) -> list[Path]:
        """``<title>_explore.csv`` and ``.png`` of each map, as ``backoff-sim explore`` writes them."""
        from sim.exploration.figure import write_explore_png
        from sim.exploration.table import write_explore_csv
        from sim.export.palette import DEFAULT_THEME, load_palette

        palette = load_palette(theme or DEFAULT_THEME)
        return self._write(directory, lambda r, d: ([write_explore_csv(r, d),
                                                     write_explore_png(r, d, palette)], []))


class TuneResults(_PlanResults):
    """The tunes of ``sim.tune``: ``rows("tune")`` every trial, ``rows("pareto")`` the
    evaluated candidates (none when no trial was feasible)."""

    results: tuple[TuneResult, ...]

    def rows(self, kind: str = "tune") -> list[Row]:
        from sim.exploration.pareto import pareto_csv_text, tune_csv_text

        if kind == "tune":
            return self._rows(tune_csv_text)
        if kind == "pareto":
            return self._rows(lambda r: pareto_csv_text(r) if r.final is not None else None)
        raise _kind_error(kind, ("tune", "pareto"))

    def to_pandas(self, kind: str = "tune") -> Any:
        return _to_pandas(self.rows(kind), "TuneResults.to_pandas()")

    def export(self, directory: str | Path, *, theme: str | None = None) -> list[Path]:
        """``<title>_tune.csv`` (and the Pareto files) of each tune, as ``backoff-sim explore``."""
        from sim.exploration.pareto import stale_tune_names, write_tune_files
        from sim.export.palette import DEFAULT_THEME, load_palette

        palette = load_palette(theme or DEFAULT_THEME)

        def write(result, staging: Path) -> tuple[list[Path], list[str]]:
            files = write_tune_files(result, staging, palette)
            return files, stale_tune_names(result.plan.title, files)
        return self._write(directory, write)


@dataclass(frozen=True, eq=False)
class ReplayResults:
    """The runs of an events file rebuilt from their events (``sim.replay``): ``rows("latency")``
    and ``rows("timeseries")`` are the rows the run that wrote the file gives for each of them
    (``sim.export.replay``); ``metrics`` each run's record by its ``EventsKey``, ``notes`` what
    may be off (an older file without calls, under open traffic)."""

    runs: ReplayedRuns = field(repr=False)

    @property
    def kinds(self) -> tuple[str, ...]:
        return self.runs.kinds

    @property
    def metrics(self) -> dict[EventsKey, Any]:
        """Each run's ``OpenRunMetrics``, as the engine would have counted them."""
        return self.runs.metrics

    @property
    def notes(self) -> dict[EventsKey, str]:
        return self.runs.notes

    def rows(self, kind: str) -> list[Row]:
        """One table's rows, every run's in file order (plain dicts, as ``Results.rows``)."""
        return [row for text in self.runs.csv_texts(kind) for row in parse_rows(text)]

    def to_pandas(self, kind: str) -> Any:
        return _to_pandas(self.rows(kind), "ReplayResults.to_pandas()")
