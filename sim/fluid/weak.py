"""Where the fluid estimate is known to be weak, so that ``explore``'s adaptive method simulates
those pairs instead of trusting it (issue 34, item 5: on a pool map with heavy-tailed service it
reported "recovered" for cells at 93% load that the simulation recovers 1 time in 3).

The fluid is the mean's path: below saturation its queue is empty and a backlog drains at the
capacity left over, exactly on time. The simulation's queue fluctuates, and how much is known
(Kingman's heavy-traffic law for a G/G/c queue; Poisson arrivals, so the arrivals' squared
CV is 1): the wait of those who wait is about ``(1 + CV²) / 2 · S / (c · (1 − ρ))``, ``S`` the
mean service, ``c`` the slots, ``ρ`` the load, ``CV`` the service time's sd / mean. Hence
three rules, each a reason a pair is simulated (the first that applies is the one reported):

- **variable service**: ``CV > CV_MAX``. The model keeps only the mean service time. It has
  been checked against simulation up to an exponential's CV of 1 (bench/fluid_pool_map.toml:
  60 of 60 verdicts) and a lognormal's 1.29 (p99 = 10 × the median: the issue's map,
  tests/fixtures/maps/adaptive_lognormal_map.toml); 1.5 is past both by the margin between them.
- **near saturation**: ``1 − ρ < BAND · (1 + CV²) / 2``, ρ the offered load of first attempts
  over the capacity (``sim.analysis.load``: for clients that wait, an upper bound). Kingman's
  wait grows as (1 + CV²) / (1 − ρ): the band is where that scale exceeds an exponential
  service's at 90% load (BAND = 0.1), below which the fluid agreed with simulation on every
  checked pool map (the pool map's heaviest column is 89%), and the issue's two wrong cells lie
  above it (93%, 95%). A lognormal of CV 1.29 has (1 + CV²) / 2 = 1.33: its band starts at 86.7%.
- **a recovery within noise of the horizon**: the verdict needs a stretch of ``RECOVERY_WINDOW``
  buckets that lasts to the horizon, so a fluid run that recovers at ``t`` is judged recovered
  only if ``t`` is before ``horizon − window``. A slot server drains a backlog ``Q`` at
  ``δ = cμ − λ``; in the simulation the drain is a random walk whose net count has variance
  ``λ + cμ·CV²`` per unit time, so the time it takes (an inverse Gaussian's first passage) has a
  standard deviation ``sqrt(Q·(λ + cμ·CV²) / δ³) = sqrt(t_r·(λ + cμ·CV²)) / δ`` with
  ``t_r = Q / δ`` the fluid's own drain. A fluid recovery less than ``NOISE_Z`` of those before
  the last moment that counts (or, for any server, than ``LATE_SHARE`` of the time from the
  last disruption's end to the horizon) is within noise of the verdict's threshold: 2 standard
  deviations leave a 2.3% chance (one-sided) that a run's drain ends past it.

A LatencyServer has no service-time spread and no fixed capacity (it slows as it fills), so only
the last rule's ``LATE_SHARE`` applies to it.
"""

from __future__ import annotations

import math

from sim.analysis.load import offered_load, server_capacity, service_cv
from sim.analysis.recovery import RECOVERY_WINDOW
from sim.settings.spec import SimulationSpec

CV_MAX = 1.5
BAND = 0.1
NOISE_Z = 2.0
LATE_SHARE = 0.1
SLOT_SERVERS = ("PoolServer", "QueueServer")

VARIABLE = "variable service"
SATURATION = "near saturation"
LATE = "a recovery within noise of the horizon"


def weak_reason(spec: SimulationSpec, values: dict[str, float]) -> str | None:
    """Why the fluid verdict ``values`` (one pair's fluid run) of the one-client-count ``spec``
    is not to be trusted (see the module), or None."""
    control = spec.control
    capacity = cv = load = None
    if type(control).__name__ in SLOT_SERVERS:
        capacity, cv = server_capacity(control), service_cv(control)
        load = offered_load(spec, spec.clients[0]).utilisation
    if cv is not None and cv > CV_MAX:
        return VARIABLE
    kingman = (1.0 + (cv or 0.0) ** 2) / 2.0
    if load is not None and 1.0 - load < BAND * kingman:
        return SATURATION
    if _late(spec, values, capacity, cv, load):
        return LATE
    return None


def _late(spec: SimulationSpec, values: dict[str, float], capacity: float | None, cv: float | None,
          load: float | None) -> bool:
    """A fluid recovery within noise of the last moment the verdict counts (the module's rule 3)."""
    when = values.get("recovery_time", math.nan)
    if values.get("recovered") != 1.0 or not math.isfinite(when) or not spec.disruptions or spec.horizon is None:
        return False
    end = max(d.end for d in spec.disruptions)
    horizon = float(spec.horizon)
    last = horizon - RECOVERY_WINDOW * spec.bucket_width  # a later recovery has no stretch to judge
    margin = last - (end + when)
    noise = LATE_SHARE * (horizon - end)
    if capacity is not None and load is not None and cv is not None and load < 1.0:
        arrivals = load * capacity
        spare = capacity - arrivals
        noise = max(noise, NOISE_Z * math.sqrt(max(when, 0.0) * (arrivals + capacity * cv * cv)) / spare)
    return margin < noise
