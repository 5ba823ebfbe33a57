"""The validated, frozen specs a run consumes: a strategy entry, a simulation, a config.

Built by ``sim.settings.config`` from TOML (all validation happens there); everything downstream (engine,
analysis, export, the app) reads only these.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sim.models.controls import Capabilities, Control
from sim.models.fleet import FleetSpec
from sim.models.incidents import Incident, merged_windows
from sim.models.strategies import Strategy
from sim.models.workloads import Burst, Outage, Workload
from sim.policies.chain import ChainSpec
from sim.models.hedging import Hedging
from sim.policies.seam import Policy
from sim.vocabulary.units import DEFAULT_TIME_UNIT

DEFAULT_BUCKETS = 200  # time-series buckets over the horizon when ``bucket`` is not given


@dataclass(frozen=True)
class StrategySpec:
    """A strategy with the label it carries in tables, charts and files."""

    label: str
    strategy: Strategy
    # Policies after the strategy's own limits (sim.policies); none: the engine's fast path.
    policies: tuple[Policy, ...] = ()
    # The entry's ``hedging = {...}`` (sim.models.hedging): copies of each attempt.
    hedging: Hedging | None = None

    @property
    def chain(self) -> ChainSpec:
        """What a client of this entry asks after each attempt (sim.policies.seam), with its hedging."""
        return ChainSpec(self.strategy, self.policies, self.hedging)


@dataclass(frozen=True)
class TierSpec:
    """One ``[[simulation.tiers]]`` entry: a server the tier above calls for every request it
    serves (``sim.models.tiers``), with the caller's ``retry`` chain and ``timeout`` per attempt;
    with ``propagate_deadline`` the calls carry the caller's deadline. Its own incidents and
    outages (``incidents`` of capacity 0 and ``outages`` stop it, as for the first tier)."""

    control: Control
    retry: ChainSpec
    timeout: float | None = None
    propagate_deadline: bool = False
    incidents: tuple[Incident, ...] = ()
    outages: tuple[Outage, ...] = ()
    # ``[simulation.tiers.fleet]``: the tier is that many copies behind a balancer (sim.models.fleet).
    fleet: FleetSpec | None = None

    @property
    def stops(self) -> tuple[Outage, ...]:
        """The windows in which this tier stops: ``outages`` and incidents of capacity 0."""
        stopped = [Outage(i.start, i.duration) for i in self.incidents if i.is_outage]
        return tuple(sorted((*self.outages, *stopped), key=lambda o: o.start)) if stopped else self.outages

    @property
    def degradations(self) -> tuple[Incident, ...]:
        """The incidents that do not stop this tier."""
        return tuple(i for i in self.incidents if not i.is_outage)


@dataclass(frozen=True)
class SimulationSpec:
    """One ``[[simulation]]`` block, validated."""

    title: str
    clients: tuple[int, ...]
    repeat: int
    network_mu: float
    network_sigma: float
    work_to_duration: float
    control: Control
    strategies: tuple[StrategySpec, ...]
    seed: int = 0
    workload: Workload = Burst()
    horizon: float | None = None
    timeout: float | None = None
    outages: tuple[Outage, ...] = ()
    bucket: float | None = None
    # Successes before this time are left out of the latency statistics (``_latency.csv``'s
    # percentiles and mean): a queue that starts empty is not yet in its steady state.
    warmup: float = 0.0
    backlog: int | None = None  # requests held during an outage; None: no bound
    # Beyond the backlog, "syn-retry" (the client's TCP stack sends its SYN again) or "drop"; a
    # held request whose client stopped waiting is "serve"d at the resume or "drop"ped
    # (sim.models.outage).
    backlog_overflow: str = "syn-retry"
    abandoned: str = "serve"
    # Where a retry's backoff is counted from: the failure's reply ("reply") or the failed
    # attempt's send ("send": the retry goes at max(reply, send + backoff), study 004's ticks;
    # sim.models.clients, BACKOFF_FROM).
    backoff_from: str = "reply"
    time_unit: str = DEFAULT_TIME_UNIT  # what every time of this simulation is in (labels only)
    # How many policies at the end of every strategy's chain are the simulation's own
    # ``policies`` (one copy per strategy), so a key path ``policies[i].NAME`` can set them all.
    shared_policies: int = 0
    # Windows in which the server keeps part of its capacity, slows down or fails attempts
    # (sim.models.incidents); those of capacity 0 are outages (``stops``).
    incidents: tuple[Incident, ...] = ()
    # The tiers below the server the clients call (``[[simulation.tiers]]``): tier 2 first.
    tiers: tuple[TierSpec, ...] = ()
    # ``[simulation.fleet]``: the server is that many copies behind a balancer (sim.models.fleet).
    fleet: FleetSpec | None = None
    # Not part of its identity: the config file it came from and the key that gave its client
    # counts (for messages), and whether the engine stops runs far beyond their estimate.
    source: str = field(default="", compare=False)
    clients_key: str = field(default="clients", compare=False)
    soft_limits: bool = field(default=True, compare=False)

    @property
    def bucket_width(self) -> float:
        """Width of the time-series buckets: ``bucket``, or the horizon over 200."""
        if self.bucket is not None:
            return self.bucket
        return (self.horizon or 1.0) / DEFAULT_BUCKETS

    @property
    def stops(self) -> tuple[Outage, ...]:
        """The windows in which the server stops (the ``OutageGate``'s): ``outages`` and the
        incidents of capacity 0, in time order."""
        stopped = [Outage(i.start, i.duration) for i in self.incidents if i.is_outage]
        if not stopped:
            return self.outages
        return tuple(sorted((*self.outages, *stopped), key=lambda o: o.start))

    @property
    def degradations(self) -> tuple[Incident, ...]:
        """The incidents that do not stop the server (``sim.models.incidents.Incidents``)."""
        return tuple(i for i in self.incidents if not i.is_outage)

    @property
    def disruptions(self) -> tuple[Outage, ...]:
        """Every window of trouble, outages and incidents alike (a tier's and a fleet host's too), overlapping ones joined, in
        time order: the recovery verdict's baseline ends where the first starts and its judgement
        begins where the last ends, and the charts shade them (``outages`` without incidents)."""
        below = [w for tier in self.tiers for w in (*tier.outages, *tier.incidents)]
        if self.fleet is not None:
            below += self.fleet.incidents  # the hosts' own: crashes, outages, incidents
        if self.workload.NAME == "open":  # an open load spike is trouble the server must recover from
            below += [Outage(start, end - start) for start, end in self.workload.spikes(self.max_clients)]
        if not self.incidents and not below:
            return self.outages
        windows = [(w.start, w.end) for w in (*self.outages, *self.incidents, *below)]
        return tuple(Outage(start, end - start) for start, end in merged_windows(windows))

    @property
    def caps(self) -> Capabilities:
        """What the simulation's server kind offers (its declared ``Control.CAPS``)."""
        return self.control.CAPS

    @property
    def hedges(self) -> bool:
        """Whether a strategy entry hedges (``hedging``): its outputs gain a ``hedges`` column."""
        return any(s.hedging is not None for s in self.strategies or ())

    @property
    def series_declared(self) -> tuple[str, ...]:
        """The counters beyond the common ones its runs keep: the server kind's, and ``hedges``
        when a strategy entry hedges (``sim.core.series.extra_series`` orders them)."""
        return self.control.CAPS.series + (("hedges",) if self.hedges else ())

    @property
    def runs_to_horizon(self) -> bool:
        """True when runs keep per-bucket series and so end at the horizon, not when the clients
        are done (``Capabilities.keeps_series``)."""
        return self.control.CAPS.keeps_series

    @property
    def max_clients(self) -> int:
        return max(self.clients)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.strategies)

    def strategy(self, label: str) -> StrategySpec:
        for s in self.strategies:
            if s.label == label:
                return s
        raise KeyError(label)

    def representative_clients(self) -> int:
        """The reference's choice for example histories: the smallest client count above 2."""
        counts = sorted(self.clients)
        return next((n for n in counts if n > 2), 2 if 2 in counts else counts[0])


@dataclass(frozen=True)
class Config:
    """A whole config file: its simulations and, from their ``[simulation.explore]`` and
    ``[simulation.tune]`` tables, the maps and tunes (``sim.exploration``'s plans; empty when the
    file has none, or when it was read by ``sim.settings.config.load_config``, which skips them)."""

    path: str
    simulations: tuple[SimulationSpec, ...]
    explores: tuple = ()  # ExplorePlan (sim.exploration.plan), in the order of the simulations
    tunes: tuple = ()  # TunePlan (sim.exploration.tune_plan)

    def with_seed(self, seed: int) -> Config:
        """The same config with every simulation's seed replaced (the CLI's ``--seed``), its
        maps' and tunes' too."""
        return replace(self, simulations=tuple(replace(s, seed=seed) for s in self.simulations),
                       explores=tuple(p.with_seed(seed) for p in self.explores),
                       tunes=tuple(replace(t, base=replace(t.base, seed=seed)) for t in self.tunes))

    def with_soft_limits(self, on: bool) -> Config:
        """The same config with the engine's run-time budget on or off (``--force`` turns it
        off), in every simulation, map cell and tune."""
        return replace(self, simulations=tuple(replace(s, soft_limits=on) for s in self.simulations),
                       explores=tuple(p.with_soft_limits(on) for p in self.explores),
                       tunes=tuple(replace(t, base=replace(t.base, soft_limits=on)) for t in self.tunes))

    def simulation(self, title: str) -> SimulationSpec:
        for s in self.simulations:
            if s.title == title:
                return s
        raise KeyError(title)
