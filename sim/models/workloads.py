"""Workloads: when clients send requests.

- ``burst``: every client starts at 0 and wants one success (the contention model of the reference).
- ``spike``: each client wants one success; a fraction start within ``spike_width`` of 0, the rest
  uniformly over ``arrival_window`` (study 004).
- ``poisson``: each client sends requests forever, one at a time, with exponential gaps of mean
  ``think_time`` between finishing one and starting the next, until the horizon (study 003), so
  only servers that keep series (those that reply) run it;
  optionally a surge: gaps that start in ``[surge_start, surge_start + surge_duration)`` are
  ``surge_factor`` times shorter (the same draws, scaled, so a run without the surge differs only
  there).

- ``open``: each client starts calls at exponential gaps of mean ``think_time`` whatever
  happens to them (open arrivals: Poisson at clients / think_time in all), so a client may
  have several calls in flight (``sim.models.open_clients``); only servers that reply run it.

Burst and spike run with any server. Start times and gaps come from the run's workload stream, so
they are the same for every strategy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from sim.core.streams import ClientStreams, Draw
from sim.models.rate_profile import RateClock, RatePoint, above_windows, order_problem
from sim.vocabulary.errors import ParamError
from sim.vocabulary.params import above, at_least


@dataclass(frozen=True)
class Outage:
    """A window in which the server stops processing (study 003's SIGSTOP), then resumes."""

    start: float
    duration: float

    @property
    def end(self) -> float:
        return self.start + self.duration


@dataclass(frozen=True, kw_only=True)
class Workload:
    """Base class; the dataclass fields are the simulation keys the workload takes."""

    NAME: ClassVar[str] = ""
    # True when each client keeps sending new requests after one finishes.
    REPEATS: ClassVar[bool] = False
    # False when ``start_times`` draws nothing (a run then makes no workload stream).
    DRAWS: ClassVar[bool] = True
    # True when a client's next call does not wait for its previous one to end (open arrivals).
    CONCURRENT: ClassVar[bool] = False

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ParamError for impossible parameters."""

    def start_times(self, rng: np.random.Generator, clients: int) -> list[float]:
        """When each client sends its first request."""
        raise NotImplementedError

    def gaps(self, rng: np.random.Generator, clients: int) -> list[Callable[[], float]] | None:
        """Per-client think-time streams between calls, for workloads that repeat (else None)."""
        return None

    def logged_calls(self, clients: int) -> list[Callable[[], float | None]] | None:
        """Per client, its next call's logged start time (None after its last), for a workload
        that replays a log (``sim.models.trace``); None for the others."""
        return None


WORKLOADS: dict[str, type[Workload]] = {}


def register(cls: type[Workload]) -> type[Workload]:
    WORKLOADS[cls.NAME] = cls
    return cls


def exponential_starts(think_time: float, rng: np.random.Generator, clients: int) -> list[float]:
    """Each client's first request after one exponential gap: a steady load from the start
    (``poisson`` and ``open`` draw the same)."""
    return rng.exponential(think_time, clients).tolist()


def exponential_draw(think_time: float) -> Draw:
    """Blocks of exponential think times of mean ``think_time``."""
    think = float(think_time)

    def draw(generator: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return generator.exponential(think, shape)
    return draw


def exponential_gaps(think_time: float, rng: np.random.Generator, clients: int) -> list[Callable[[], float]]:
    """Each client's exponential think times, drawn in blocks from its own stream."""
    return ClientStreams(rng, clients, exponential_draw(think_time)).next_functions()


@register
@dataclass(frozen=True, kw_only=True)
class Burst(Workload):
    NAME: ClassVar[str] = "burst"
    DRAWS: ClassVar[bool] = False

    def start_times(self, rng: np.random.Generator | None, clients: int) -> list[float]:
        return [0.0] * clients


@register
@dataclass(frozen=True, kw_only=True)
class Spike(Workload):
    NAME: ClassVar[str] = "spike"
    spike_fraction: float
    spike_width: float
    arrival_window: float

    def validate(self) -> None:
        if not 0 <= self.spike_fraction <= 1:
            raise ParamError("spike_fraction", f"must be between 0 and 1, got {self.spike_fraction!r}")
        at_least(self, 0, "spike_width")
        above(self, 0, "arrival_window")

    def start_times(self, rng: np.random.Generator, clients: int) -> list[float]:
        in_spike = int(round(self.spike_fraction * clients))
        spike = rng.uniform(0.0, self.spike_width, in_spike) if self.spike_width else np.zeros(in_spike)
        rest = rng.uniform(0.0, self.arrival_window, clients - in_spike)
        return np.concatenate([spike, rest]).tolist()


@register
@dataclass(frozen=True, kw_only=True)
class Poisson(Workload):
    NAME: ClassVar[str] = "poisson"
    REPEATS: ClassVar[bool] = True
    think_time: float
    # A surge: a client that finishes a call in [surge_start, surge_start + surge_duration)
    # thinks surge_factor times less before its next (a load spike on steady traffic).
    surge_start: float = 0.0
    surge_duration: float = 0.0
    surge_factor: float = 1.0

    def validate(self) -> None:
        above(self, 0, "think_time", "surge_factor")
        at_least(self, 0, "surge_start", "surge_duration")

    @property
    def surge(self) -> tuple[float, float, float] | None:
        """``(start, end, factor)`` of the surge, or None without one."""
        if not self.surge_duration or self.surge_factor == 1.0:
            return None
        return (float(self.surge_start), float(self.surge_start + self.surge_duration), float(self.surge_factor))

    def start_times(self, rng: np.random.Generator, clients: int) -> list[float]:
        return exponential_starts(self.think_time, rng, clients)

    def gaps(self, rng: np.random.Generator, clients: int) -> list[Callable[[], float]]:
        return exponential_gaps(self.think_time, rng, clients)

    def gap_draw(self) -> Draw:
        """How ``gaps`` draws its blocks (the compiled fast path draws the same, ``sim.kernels``)."""
        return exponential_draw(self.think_time)


@register
@dataclass(frozen=True, kw_only=True)
class Open(Workload):
    """Open arrivals: each client starts a call every exponential gap of mean ``think_time``,
    replies or not, so the server sees Poisson arrivals at clients / think_time that do not slow
    down when it does (Schroeder, Wierman, Harchol-Balter, NSDI '06). The first call of each
    client comes after one gap, as in ``poisson``; the draws are the same as ``poisson``'s."""

    NAME: ClassVar[str] = "open"
    REPEATS: ClassVar[bool] = True
    CONCURRENT: ClassVar[bool] = True
    think_time: float
    # ``rate_profile``: the rate over time (sim.models.rate_profile), the same draws laid out on
    # its clock; empty: the own rate throughout.
    rate_profile: tuple[RatePoint, ...] = ()

    def validate(self) -> None:
        above(self, 0, "think_time")
        problem = order_problem(self.rate_profile)
        if problem is not None:
            raise ParamError(f"rate_profile[{problem[0]}].at", problem[1], "list the points in time order")

    def clock(self, clients: int) -> RateClock | None:
        """The profile's clock for ``clients`` sources (None without a profile)."""
        return RateClock(clients / self.think_time, self.rate_profile) if self.rate_profile else None

    def spikes(self, clients: int) -> tuple[tuple[float, float], ...]:
        """The profile's spans above the own rate of ``clients`` sources (``above_windows``)."""
        return above_windows(self.rate_profile, clients / self.think_time) if self.rate_profile else ()

    def start_times(self, rng: np.random.Generator, clients: int) -> list[float]:
        starts = exponential_starts(self.think_time, rng, clients)
        clock = self.clock(clients)
        return starts if clock is None else [clock.after(0.0, gap) for gap in starts]

    def gaps(self, rng: np.random.Generator, clients: int) -> list[Callable[[], float]]:
        return exponential_gaps(self.think_time, rng, clients)

    def gap_draw(self) -> Draw:
        """How ``gaps`` draws its blocks (the compiled fast path draws the same, ``sim.kernels``)."""
        return exponential_draw(self.think_time)
