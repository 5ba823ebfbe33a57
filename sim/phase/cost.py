"""What a phase portrait will cost, estimated before any work with the estimate ``run`` uses.

A portrait is many short runs: its pilot runs from the empty state, each to half the time limit,
then at least the first half of every cell's runs (``sim.phase.estimate.run_cell``), each at
least to the drift's horizon.
Each run is costed by ``sim.runs.resources.expected_events`` (a lower bound, as for a sweep) and
holds ``BYTES_PER_CLIENT`` per client while it runs, one run per worker at a time. The limits are
``run``'s: the machine's memory (hard), the memory available now and ``EVENTS_LIMIT`` (soft,
``--force`` lifts them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sim.vocabulary.errors import ConfigError
from sim.runs.resources import (
    BYTES_PER_CLIENT,
    EVENTS_LIMIT,
    expected_events,
    machine_memory,
    size_text,
)
from sim.settings.spec import SimulationSpec

# A cell's replicate kept until its portrait is drawn: two drifts, whether it returned and when,
# as floats and bools in tuples (8-byte slots and 24-byte floats): about 100 bytes.
BYTES_PER_REPLICATE_STORED = 100


@dataclass(frozen=True)
class PortraitCost:
    """One portrait's least events and its peak memory."""

    runs: int
    events: float
    memory: float


def first_runs(runs: int) -> int:
    """The runs every cell makes before deciding whether to make the rest (``run_cell``)."""
    return min(runs, max(2, runs // 2))


def portrait_cost(spec: SimulationSpec, resolved, workers: int) -> PortraitCost:
    """The least events and the peak memory of one strategy's portrait of ``spec`` (a
    ``sim.phase.portrait.Resolved``), on ``workers`` processes."""
    from sim.phase.estimate import phase_spec

    cells = resolved.size ** 2
    first = cells * first_runs(resolved.runs)  # at least these cell runs, each to the horizon
    runs = resolved.runs + first  # and the pilot's, each to half the time limit
    events = (resolved.runs * expected_events(phase_spec(spec, resolved.limit / 2), resolved.clients)
              + first * expected_events(phase_spec(spec, resolved.horizon), resolved.clients))
    in_flight = max(1, min(workers, cells))
    # A state's work beyond its clients is orphan requests the server holds (``InitialState``).
    held = max(resolved.clients, resolved.grid.work_max)
    memory = in_flight * held * BYTES_PER_CLIENT + first * BYTES_PER_REPLICATE_STORED
    return PortraitCost(runs, events, memory)


def check_phase_resources(portraits: Sequence[tuple[SimulationSpec, str, object]], *, workers: int,
                          force: bool = False,
                          memory: tuple[int | None, int | None] | None = None) -> None:
    """Refuse (ConfigError, one line per portrait) portraits the machine cannot hold or finish;
    ``portraits`` are (spec, strategy label, ``Resolved``)."""
    total, available = machine_memory() if memory is None else memory
    errors: list[ConfigError] = []
    for spec, label, resolved in portraits:
        cost = portrait_cost(spec, resolved, workers)
        what = f"the phase portrait of {label!r}"

        def refuse(message: str, hint: str) -> None:
            errors.append(ConfigError(message, file=spec.source or None, simulation=spec.title, hint=hint))

        held = max(resolved.clients, resolved.grid.work_max)
        need = (f"{what} (runs of {held:,} clients or requests, {min(workers, resolved.size ** 2)} at a time) "
                f"would need about {size_text(cost.memory)} of memory")
        if total is not None and cost.memory > total:
            refuse(f"{need}, more than this machine's {size_text(total)}", "lower --clients, --work-max or --workers")
        elif not force and available is not None and cost.memory > available:
            refuse(f"{need}, more than the {size_text(available)} available now",
                   "lower --clients, --work-max or --workers, or pass --force to run it anyway")
        elif not force and cost.events > EVENTS_LIMIT:
            refuse(f"{what} ({resolved.size}x{resolved.size} cells, {resolved.runs} runs each, "
                   f"{resolved.clients:,} clients) would simulate at least {cost.events:.2g} events, "
                   f"more than the limit of {EVENTS_LIMIT:.0e} (about an hour on 2 cores)",
                   "lower --grid, --runs, --clients or --horizon, or pass --force to run it anyway")
    if errors:
        raise ConfigError.combine(errors)
