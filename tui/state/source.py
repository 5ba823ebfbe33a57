"""Where the app's runs come from: a config (simulate on demand) or an events CSV (replay).

Both sources answer the same questions (which simulations, strategies, client counts and
repetitions exist, and the history of one of them), so the app switches among runs the same way
in both modes. Nothing here imports Textual; the blocking calls run in the app's workers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from sim.analysis.replay import present_codes, records_hedges
from sim.runs.sweep import Progress, ShouldStop, SweepResult, run_sweeps
from sim.core.history import History
from sim.exploration.cache import SweepCache, cached_note  # noqa: F401 (cached_note: the screens say it)
from sim.exploration.plan import ExplorePlan
from sim.exploration.tune_plan import TunePlan
from sim.models import recorded_capabilities
from sim.models.controls import Capabilities
from sim.runs.tiers import TierLayout
from sim.settings.spec import Config, SimulationSpec, StrategySpec
from sim.vocabulary.units import DEFAULT_TIME_UNIT

from ..view.rundata import RunData
from ..view.timeline_grid import cached_grid
from .recorder import Geometry, RunRecorder


@dataclass(frozen=True)
class Selection:
    """The run on screen: its coordinates, the seed it was simulated with (None in replay), and
    which explore cell's spec stands in for the simulation's (None: the config's own)."""

    simulation: str
    strategy: str
    clients: int
    repetition: int
    seed: int | None = None
    variant: str | None = None


class Source(ABC):
    """The runs the app can show."""

    replay: bool = False

    @abstractmethod
    def simulations(self) -> list[str]: ...

    @abstractmethod
    def strategies(self, simulation: str) -> list[str]: ...

    @abstractmethod
    def client_counts(self, simulation: str, strategy: str) -> list[int]: ...

    @abstractmethod
    def repetitions(self, simulation: str, strategy: str, clients: int) -> list[int]: ...

    @abstractmethod
    def control(self, simulation: str) -> str:
        """The server control's name, for the status line."""

    @abstractmethod
    def seed(self, simulation: str) -> int | None: ...

    @abstractmethod
    def initial_clients(self, simulation: str, strategy: str) -> int:
        """The client count shown first: small enough to follow event by event."""

    @abstractmethod
    def history(self, selection: Selection) -> History:
        """The selected run's events (blocking: simulates in config mode)."""

    @abstractmethod
    def capabilities(self, simulation: str) -> Capabilities:
        """What the simulation's server kind offers: the views and columns that apply."""

    def time_unit(self, simulation: str) -> str:
        """What the simulation's times are in, for every label (``ms`` unless told)."""
        return DEFAULT_TIME_UNIT

    def hedges(self, simulation: str) -> bool:
        """Whether the simulation's runs count hedges (a strategy entry hedges, and its runs
        record them): the comparison then has a hedges column."""
        return False

    def layout(self, selection: Selection) -> TierLayout | None:
        """A tiered run's numbering of clients and tier callers (None: no tiers)."""
        return None

    def variant(self, simulation: str) -> str | None:
        """Which explore cell stands in for the simulation (``ConfigSource.with_cell``), if any."""
        return None

    def run_data(self, selection: Selection, recorder: RunRecorder | None = None,
                 geometry: Geometry | None = None,
                 should_stop: ShouldStop = lambda: False) -> RunData:
        """The selected run, converted for the views and binned for the timeline's
        ``geometry`` (blocking: call it from a worker)."""
        data = RunData.from_history(self.history(selection), selection.clients,
                                    time_unit=self.time_unit(selection.simulation),
                                    layout=self.layout(selection))
        if geometry is not None:
            cached_grid(data.top, *geometry)  # the timeline bins the clients' part
        return data

    def options(self, selection: Selection, axis: str) -> list:
        """The values ``axis`` can take given the selection's coarser axes."""
        s = selection
        if axis == "simulation":
            return self.simulations()
        if axis == "strategy":
            return self.strategies(s.simulation)
        if axis == "clients":
            return self.client_counts(s.simulation, s.strategy)
        return self.repetitions(s.simulation, s.strategy, s.clients)

    def initial(self) -> Selection:
        return self.complete(self.simulations()[0])

    def complete(self, simulation: str, strategy: str | None = None, clients: int | None = None,
                 repetition: int | None = None) -> Selection:
        """A valid selection, keeping each given value that exists, else the nearest one."""
        strategies = self.strategies(simulation)
        strategy = strategy if strategy in strategies else strategies[0]
        counts = self.client_counts(simulation, strategy)
        if clients is None:
            clients = self.initial_clients(simulation, strategy)
        clients = _nearest(counts, clients)
        reps = self.repetitions(simulation, strategy, clients)
        repetition = _nearest(reps, 0 if repetition is None else repetition)
        return Selection(simulation, strategy, clients, repetition, self.seed(simulation),
                         self.variant(simulation))

    def cycle(self, selection: Selection, axis: str, delta: int) -> Selection:
        """The selection with ``axis`` moved ``delta`` places (wrapping), the finer axes kept."""
        values = self.options(selection, axis)
        current = getattr(selection, axis)
        index = values.index(current) if current in values else 0
        moved = replace(selection, **{axis: values[(index + delta) % len(values)]})
        return self.complete(moved.simulation, moved.strategy, moved.clients, moved.repetition)


def _nearest(values: Sequence[int], wanted: int) -> int:
    return min(values, key=lambda v: (abs(v - wanted), v))


class ConfigSource(Source):
    """Runs simulated from a validated config; sweeps on demand. ``explores`` and ``tunes`` are
    the config's maps and tunes by simulation title; ``variants`` name the explore cells whose
    spec replaced a simulation's (``with_cell``)."""

    def __init__(self, config: Config, explores: Mapping[str, ExplorePlan] | None = None,
                 variants: Mapping[str, str] | None = None,
                 tunes: Mapping[str, TunePlan] | None = None,
                 cache: SweepCache | None = None) -> None:
        self.config = config
        self.explores = dict(explores or {})
        self.variants = dict(variants or {})
        self.tunes = dict(tunes or {})
        # Finished sweeps on disk, shared with ``backoff-sim run`` (none unless given: the
        # launcher gives the user's, ``SweepCache.default``).
        self.cache = cache if cache is not None else SweepCache(None)

    def _with_config(self, config: Config, variants: Mapping[str, str] | None = None) -> ConfigSource:
        return ConfigSource(config, self.explores, self.variants if variants is None else variants, self.tunes,
                            self.cache)

    def with_seed(self, seed: int) -> ConfigSource:
        """The same config re-seeded (the seed dialog), so every run and sweep is redone."""
        return self._with_config(self.config.with_seed(seed))

    def tune_plan(self, simulation: str) -> TunePlan | None:
        """The simulation's tune at the seed its runs use now (the optimiser's own seed stays),
        or None if it has none."""
        plan = self.tunes.get(simulation)
        if plan is None or plan.base.seed == self.seed(simulation):
            return plan
        return replace(plan, base=replace(plan.base, seed=self.seed(simulation)))

    def with_tuned(self, simulation: str, tuned: StrategySpec) -> ConfigSource:
        """The same source with ``tuned`` as the simulation's last strategy (in place of an
        earlier variant of the same label): a row of the table, run like the others."""
        spec = self.spec(simulation)
        kept = tuple(s for s in spec.strategies if s.label != tuned.label)
        return self._with_spec(simulation, replace(spec, strategies=(*kept, tuned)))

    def _with_spec(self, simulation: str, spec: SimulationSpec,
                   variants: Mapping[str, str] | None = None) -> ConfigSource:
        config = replace(self.config, simulations=tuple(
            spec if s.title == simulation else s for s in self.config.simulations))
        return self._with_config(config, variants)

    def explore_plan(self, simulation: str) -> ExplorePlan | None:
        """The simulation's map at the seed its runs use now, or None if it has none."""
        plan = self.explores.get(simulation)
        return None if plan is None else plan.with_seed(self.seed(simulation))

    def with_cell(self, simulation: str, spec: SimulationSpec, label: str) -> ConfigSource:
        """The same source with ``spec`` (an explore cell, same title) in place of the
        simulation's, named ``label``: its runs and sweep are that cell's."""
        return self._with_spec(simulation, spec, {**self.variants, simulation: label})

    def variant(self, simulation: str) -> str | None:
        return self.variants.get(simulation)

    def spec(self, simulation: str) -> SimulationSpec:
        return self.config.simulation(simulation)

    def simulations(self) -> list[str]:
        return [s.title for s in self.config.simulations]

    def strategies(self, simulation: str) -> list[str]:
        return list(self.spec(simulation).labels)

    def client_counts(self, simulation: str, strategy: str) -> list[int]:
        return list(self.spec(simulation).clients)

    def repetitions(self, simulation: str, strategy: str, clients: int) -> list[int]:
        return list(range(self.spec(simulation).repeat))

    def control(self, simulation: str) -> str:
        return self.spec(simulation).control.type_name

    def seed(self, simulation: str) -> int:
        return self.spec(simulation).seed

    def initial_clients(self, simulation: str, strategy: str) -> int:
        return self.spec(simulation).representative_clients()

    def history(self, selection: Selection) -> History:
        return self.run_data(selection).history

    def run_data(self, selection: Selection, recorder: RunRecorder | None = None,
                 geometry: Geometry | None = None,
                 should_stop: ShouldStop = lambda: False) -> RunData:
        """Simulate the run (in ``recorder``'s child process when it has one), with its exact
        time series when the server replies."""
        s = selection
        recorder = recorder or RunRecorder(in_process=True)
        return recorder.record(self.spec(s.simulation), s.strategy, s.clients, s.repetition,
                               geometry, should_stop)

    def capabilities(self, simulation: str) -> Capabilities:
        return self.spec(simulation).caps

    def hedges(self, simulation: str) -> bool:
        return self.spec(simulation).hedges

    def time_unit(self, simulation: str) -> str:
        return self.spec(simulation).time_unit

    def cached_sweep(self, simulation: str) -> tuple[SweepResult, datetime] | None:
        """The simulation's sweep as ``backoff-sim run`` or an earlier launch cached it, with
        when it was cached; None when it has to be simulated (blocking: reads a file)."""
        return self.cache.get(self.spec(simulation))

    def sweep(self, simulation: str, *, workers: int | None, progress: Progress | None = None,
              should_stop: ShouldStop | None = None) -> SweepResult:
        """Every strategy × client count × repetition of one simulation (blocking), with the
        example runs the export writes (as ``run`` records them: the same cache entry); cached."""
        result = run_sweeps([self.spec(simulation)], workers=workers, progress=progress,
                            should_stop=should_stop, record=True)[0]
        self.cache.put(result)
        return result


RunCoordinates = tuple[str, str, int, int]


class ReplaySource(Source):
    """Runs read back from an exported events CSV: nothing is simulated."""

    replay = True

    def __init__(self, runs: Mapping[RunCoordinates, History], path: Path,
                 time_unit: str = DEFAULT_TIME_UNIT,
                 layouts: Mapping[RunCoordinates, TierLayout] | None = None) -> None:
        if not runs:
            raise ValueError("a replay needs at least one run")
        self.runs = dict(runs)
        # A tiered events file's runs: their tiers as its ``tier`` column shows them.
        self.layouts = {tuple(k): v for k, v in (layouts or {}).items()}
        self.path = path
        self._time_unit = time_unit  # an events file does not say; ``replay --time-unit`` does
        # Scanned once, before the app starts: what each simulation's server kind offers, as
        # the events of all its runs show (an events file does not name its server).
        codes: dict[str, set[int]] = {}
        for (simulation, *_), history in self.runs.items():
            codes.setdefault(simulation, set()).update(present_codes(history.codes()))
        self._caps = {simulation: recorded_capabilities(found) for simulation, found in codes.items()}
        # The simulations whose runs record hedges (an older file's never say them).
        self._hedged = {simulation for simulation, found in codes.items() if records_hedges(found)}

    def _keys(self, *prefix: object) -> list[RunCoordinates]:
        return [k for k in self.runs if k[:len(prefix)] == prefix]

    @staticmethod
    def _unique(values: list) -> list:
        return list(dict.fromkeys(values))

    def simulations(self) -> list[str]:
        return self._unique([k[0] for k in self.runs])

    def strategies(self, simulation: str) -> list[str]:
        return self._unique([k[1] for k in self._keys(simulation)])

    def client_counts(self, simulation: str, strategy: str) -> list[int]:
        return sorted(self._unique([k[2] for k in self._keys(simulation, strategy)]))

    def repetitions(self, simulation: str, strategy: str, clients: int) -> list[int]:
        return sorted(self._unique([k[3] for k in self._keys(simulation, strategy, clients)]))

    def control(self, simulation: str) -> str:
        return "replay"

    def seed(self, simulation: str) -> None:
        return None

    def initial_clients(self, simulation: str, strategy: str) -> int:
        return self.client_counts(simulation, strategy)[0]

    def history(self, selection: Selection) -> History:
        s = selection
        return self.runs[(s.simulation, s.strategy, s.clients, s.repetition)]

    def capabilities(self, simulation: str) -> Capabilities:
        return self._caps[simulation]

    def hedges(self, simulation: str) -> bool:
        return simulation in self._hedged

    def layout(self, selection: Selection) -> TierLayout | None:
        s = selection
        return self.layouts.get((s.simulation, s.strategy, s.clients, s.repetition))

    def time_unit(self, simulation: str) -> str:
        return self._time_unit
