"""Resource bounds: what a config will cost, estimated before any work, and each run's budget.

Before a sweep starts, ``check_resources`` estimates its events (time) and its peak memory from
the config alone, and refuses with one line naming the simulation and the key when the machine
cannot hold it (hard: more memory than the machine has) or finish it in reasonable time, or hold
it without swapping (soft: ``--force`` runs it anyway). While a run executes, the engine stops it
when it goes far beyond its estimate (``event_budget``) or creeps (``time_scale``). The figures
below are measured on the engine, and the README states the resulting limits.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from sim.core.latency_sample import LATENCY_SAMPLE
from sim.vocabulary.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from sim.models.strategies import Strategy
    from sim.settings.spec import SimulationSpec

# --- events ---------------------------------------------------------------------------------
# The fewest events a client of a contention control makes: request, accept, commit (and the
# version read of read-then-write OCC); measured 5.4-6.6 per client at 10 clients across the four
# controls and three strategies (more under contention, up to about 1.2 x clients each).
EVENTS_PER_CLIENT = 5
# A request to a replying server: request, accept (or queue), complete, success.
EVENTS_PER_REQUEST = 4
# A call a tier makes to the tier below: request, accept, and the reply its caller sees.
EVENTS_PER_TIER_CALL = 3
# Soft limit on a sweep's estimated events: about an hour at the engine's 1.5 M events/s per core
# (bench/bench.py's target) on 2 cores, and an estimate that is a lower bound.
EVENTS_LIMIT = 10**10
# A run stops when it passes this many times its estimate (the estimate is a lower bound;
# contention measured up to ~240x it: ReadWriteOCC, NoBackoff, 1000 clients), and never
# before RUNAWAY_FLOOR events (a few minutes of one core), so no ordinary run trips it.
RUNAWAY_FACTOR = 1000
RUNAWAY_FLOOR = 1 << 27

# --- memory (bytes), measured with resource.getrusage (peak RSS growth over the run) -----------
# A run's per-client state in flight (lists, streams, heap items): 4.1 KB per client measured on
# a 10^5-client QueueServer burst, 5.7 KB on a Poisson one, 5.5 KB on a 5,000-client locking run.
BYTES_PER_CLIENT = 6_000
BYTES_PER_BUCKET_LIVE = 300       # a run's 8 per-bucket counters while it runs (Python lists)
BYTES_PER_LATENCY_LIVE = 48       # a kept latency and its client while the run goes on
BYTES_PER_RUN_STORED = 600        # a run's metrics kept for the sweep, and its row in runs.csv
BYTES_PER_OPEN_RUN_STORED = 2_000  # the overload metrics object of a run
BYTES_PER_BUCKET_STORED = 1_000   # int64 series and the row of timeseries.csv being written
BYTES_PER_LATENCY_STORED = 16     # a kept latency and its client, float64 + int64
# An event of a recorded history: 84 B in the History, 115 B while its CSV text is built
# (measured on a 1.9M-event run), and the arrays the tables and plots make of it.
BYTES_PER_RECORDED_EVENT = 300

# Parameters that set the size of a run's steps (the creep check's scale). Caps, timeouts,
# horizons and outages are bounds, often set huge as "none": they do not count.
STEP_KEYS = frozenset({
    "network_mu", "network_sigma", "write_mu", "write_sigma", "window", "service_time",
    "reject_delay", "base_latency", "constant", "base", "low", "high", "initial_interval",
    "slot", "min_delay", "floor",
})


def _step_values(obj: object) -> list[float]:
    return [float(getattr(obj, f.name)) for f in fields(obj) if f.name in STEP_KEYS
            and isinstance(getattr(obj, f.name), (int, float))]


def time_scale(spec: SimulationSpec, strategy: Strategy | None = None) -> float:
    """The largest step-like time of a run (latency, write, window, first backoff): the clock
    must advance by a fraction of it for every few million events."""
    values = [spec.network_mu, spec.network_sigma, *_step_values(spec.control)]
    strategies = [strategy] if strategy is not None else [s.strategy for s in spec.strategies]
    for s in strategies:
        values += _step_values(s)
    return max([v for v in values if v > 0], default=0.0)


def _repeats(spec: SimulationSpec) -> bool:
    """Clients go on to another request after each reply (an open workload against a server
    that replies, ``Capabilities.replies``)."""
    return spec.caps.replies and spec.workload.REPEATS


def requests_per_client(spec: SimulationSpec, clients: int | None = None) -> float:
    """First requests a client of a replying server makes over the horizon (retries aside); a
    trace's calls before the horizon shared by ``clients`` (the largest count by default)."""
    calls_before = getattr(spec.workload, "calls_before", None)
    if calls_before is not None:
        return calls_before(float(spec.horizon or 0.0)) / (clients or spec.max_clients)
    think = getattr(spec.workload, "think_time", None)
    if spec.workload.REPEATS and think:
        return 1.0 + float(spec.horizon or 0.0) / float(think)
    return 1.0


def recorded_events(spec: SimulationSpec, clients: int) -> float:
    """A lower-bound estimate of one run's recorded events: its size, not its contention."""
    if spec.caps.replies:  # each request ends in a reply, and clients may make many
        # Each tier below (``[[simulation.tiers]]``) serves at least one call per request it is
        # passed: its caller's request, its accept and its reply (a PoolServer adds its complete,
        # a FlakyServer does not). examples/three_tiers.toml's Top_Only at 64 clients (two tiers)
        # recorded 46,310 events for its 3,904 requests: 11.9 per request, >= 4 + 2 x 3 = 10;
        # many more once the layers retry (Every_Layer at 128 clients: 35x, contention).
        per_request = EVENTS_PER_REQUEST + EVENTS_PER_TIER_CALL * len(spec.tiers)
        return per_request * clients * requests_per_client(spec, clients)
    return EVENTS_PER_CLIENT * clients


def timer_events(spec: SimulationSpec, clients: int) -> float:
    """The server's own periodic events in one run (``Control.timer``: a ``LatencyServer``'s
    checks), unrecorded but each one a step of the engine like any other: one per period of the
    time in which some request is in service. With a workload that repeats, first requests come
    at about clients / (think_time + service) per unit of time, each in service for at least the
    service time, so (as for an M/G/inf queue) some request is in service for an expected
    fraction 1 - exp(-rate * service) of the horizon outside outages; with one call per client,
    for at least one service time. A check_interval of 1e-3 against a base latency of 100 costs
    10^5 events per request-time, which the requests alone never showed."""
    timer = spec.control.timer
    if timer is None:
        return 0.0
    span = max(0.0, float(spec.horizon or 0.0) - sum(o.duration for o in spec.stops))
    think = getattr(spec.workload, "think_time", None)
    if spec.workload.REPEATS and think:
        rate = clients / (float(think) + timer.service)
        busy = span * -math.expm1(-rate * timer.service)
    else:
        busy = min(span, timer.service)
    return busy / timer.period


def expected_events(spec: SimulationSpec, clients: int) -> float:
    """A lower-bound estimate of one run's events (the engine's steps): its recorded events and
    the server's own periodic ones."""
    return recorded_events(spec, clients) + timer_events(spec, clients)


def event_budget(spec: SimulationSpec, clients: int) -> int:
    """The events after which a run is stopped as a runaway (soft limits on)."""
    return int(min(max(RUNAWAY_FLOOR, RUNAWAY_FACTOR * expected_events(spec, clients)), 2**62))


# --- the estimate of a whole simulation -------------------------------------------------------

def machine_memory() -> tuple[int | None, int | None]:
    """(total, available) physical memory in bytes, None where the platform does not say."""
    total = available = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name in ("MemTotal", "MemAvailable"):
                    value = int(rest.split()[0]) * 1024
                    if name == "MemTotal":
                        total = value
                    else:
                        available = value
    except (OSError, ValueError, IndexError):
        pass
    if total is None:
        try:
            total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, AttributeError):
            total = None
    return total, available if available is not None else total


@dataclass(frozen=True)
class Estimate:
    """What one simulation's sweep and exports cost, with the key that drives each part."""

    events: float
    events_key: str
    memory: float
    memory_key: str


def _buckets(spec: SimulationSpec) -> float:
    if not spec.caps.keeps_series:
        return 0.0
    return math.ceil(float(spec.horizon) / spec.bucket_width)


def estimate(spec: SimulationSpec, workers: int) -> Estimate:
    """Events and peak memory of sweeping ``spec`` with ``workers`` processes and exporting it."""
    clients_key = spec.clients_key
    runs = len(spec.strategies) * len(spec.clients) * spec.repeat
    largest = max(spec.clients)
    recorded_clients = spec.representative_clients() + largest
    per_run = [expected_events(spec, n) for n in spec.clients]
    sweep_events = len(spec.strategies) * spec.repeat * sum(per_run)
    examples = (spec.representative_clients(), largest)  # the recorded example histories
    example_events = len(spec.strategies) * sum(expected_events(spec, n) for n in examples)
    events = sweep_events + example_events
    timers = len(spec.strategies) * (spec.repeat * sum(timer_events(spec, n) for n in spec.clients)
                                     + sum(timer_events(spec, n) for n in examples))
    # The key that makes the events many: the server's timer, the length of each run, or their number.
    if timers > events / 2:
        events_key = spec.control.timer.key
    elif _repeats(spec) and requests_per_client(spec) > largest:
        events_key = "horizon"
    elif max(per_run) * len(spec.strategies) * spec.repeat > sweep_events / 2 and spec.repeat < largest:
        events_key = clients_key
    else:
        events_key = "repeat"

    buckets = _buckets(spec)
    latencies = min(LATENCY_SAMPLE, largest * requests_per_client(spec)) if spec.caps.latencies else 0.0
    parts: dict[str, float] = {}

    def add(key: str, amount: float) -> None:
        parts[key] = parts.get(key, 0.0) + amount

    in_flight = min(workers, runs)
    add(clients_key, in_flight * largest * BYTES_PER_CLIENT)
    add("bucket" if spec.bucket is not None else "horizon", in_flight * buckets * BYTES_PER_BUCKET_LIVE)
    add("horizon", in_flight * latencies * BYTES_PER_LATENCY_LIVE)
    add("repeat", runs * BYTES_PER_RUN_STORED)
    mean_clients = sum(spec.clients) / len(spec.clients)
    if spec.caps.keeps_series:  # the overload metrics and series each run keeps
        add("repeat", runs * (BYTES_PER_OPEN_RUN_STORED + 8 * mean_clients))
        add("bucket" if spec.bucket is not None else "repeat", runs * buckets * BYTES_PER_BUCKET_STORED)
    if spec.caps.latencies:
        add("horizon", runs * min(LATENCY_SAMPLE, mean_clients * requests_per_client(spec))
            * BYTES_PER_LATENCY_STORED)
    recorded_key = "horizon" if _repeats(spec) else clients_key
    recorded = len(spec.strategies) * sum(recorded_events(spec, n) for n in examples)  # no timers
    add(recorded_key, recorded * BYTES_PER_RECORDED_EVENT + recorded_clients * BYTES_PER_CLIENT)
    memory = sum(parts.values())
    return Estimate(events, events_key, memory, max(parts, key=parts.get))


def size_text(n: float) -> str:
    """A byte count as people read it (``60.0 GB``), for the resource checks' messages."""
    if n >= 1e18:
        return f"{n:.1e} bytes"
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} EB"  # pragma: no cover


def _lower(key: str, spec: SimulationSpec) -> str:
    """How to shrink what ``key`` drives (a timer's events: a longer period)."""
    if key == "bucket":
        return "use a wider bucket"
    timer = spec.control.timer
    return f"raise {key}" if timer is not None and key == timer.key else f"lower {key}"


def check_resources(specs: list[SimulationSpec] | tuple[SimulationSpec, ...], *, workers: int,
                    force: bool = False, memory: tuple[int | None, int | None] | None = None) -> None:
    """Refuse (ConfigError, one line per simulation) a config the machine cannot hold or finish.

    Hard: more memory than the machine has. Soft (``force`` lifts them): more than
    ``EVENTS_LIMIT`` events, or more memory than is available now.
    """
    total, available = machine_memory() if memory is None else memory
    errors: list[ConfigError] = []
    for spec in specs:
        cost = estimate(spec, workers)

        def refuse(key: str, message: str, hint: str) -> None:
            errors.append(ConfigError(message, file=spec.source or None, simulation=spec.title,
                                      key=key, hint=hint))

        if total is not None and cost.memory > total:
            refuse(cost.memory_key, f"the sweep and its exports would need about {size_text(cost.memory)} "
                   f"of memory, more than this machine's {size_text(total)}",
                   _lower(cost.memory_key, spec))
        elif not force and available is not None and cost.memory > available:
            refuse(cost.memory_key, f"the sweep and its exports would need about {size_text(cost.memory)} "
                   f"of memory, more than the {size_text(available)} available now",
                   f"{_lower(cost.memory_key, spec)}, or pass --force to run it anyway")
        elif not force and cost.events > EVENTS_LIMIT:
            refuse(cost.events_key, f"the sweep would simulate at least {cost.events:.2g} events, "
                   f"more than the limit of {EVENTS_LIMIT:.0e} (about an hour on 2 cores)",
                   f"{_lower(cost.events_key, spec)}, or pass --force to run it anyway")
    if errors:
        raise ConfigError.combine(errors)
