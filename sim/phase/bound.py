"""When a portrait's run is decided: the collapse bound past which it cannot return in time.

A cell's run counts as returning when it is back in the healthy region within the time limit
(``sim.phase.estimate``); once its work is so high that it cannot be, running on only costs
(a collapsed run's work, and so its events per second, grows to the limit).

**LatencyServer** (``latency_rule = "current"``, study 003's): a request completes at a check
when its time at the server exceeds the latency ``L(c)`` at the concurrency ``c`` of that
moment, and ``c`` is all the work at the server (it has no queue). In a portrait's run every
request reached the server at t >= 0, so at any t' <= limit none is older than ``limit``. While
nothing completes, ``c`` does not fall, so ``L(c) >= L(W)`` for the work ``W`` seen now; if
``L(W) > limit`` no request can complete before the limit, the work never falls below ``W`` and
the run cannot be healthy (work at most ``Healthy.work < W``) by then: decided. ``L(c) =
base·factor^((c - limit_c)/k)`` above the concurrency limit ``limit_c``, so ``L(W) > T`` for

    W > limit_c + k · ln(T / base) / ln(factor)

(``examples/server_outage.toml``: 30 + 15 · ln(30000/100)/ln 1.05 = 1,784 for a 30 s limit).
The bound only ever cuts runs that could not have returned: a portrait's numbers are those of
running every run to its limit.

**Other servers** (queues, pools: their completions are not bounded by a latency law, and some
cancel or drop work): the run stops when its work passes ``BEYOND_FACTOR`` times the grid's top
(or the client count), far above any healthy state -- a heuristic cut, counted as not returning.
"""

from __future__ import annotations

import math

from sim.settings.spec import SimulationSpec

# Past this many times the grid's top (or the clients) a run of a server without a latency law
# counts as not returning (a heuristic: see the module docstring).
BEYOND_FACTOR = 2


def latency_bound(spec: SimulationSpec, time_left: float) -> float | None:
    """The work above which no request of ``spec``'s LatencyServer completes within
    ``time_left`` (None: not a LatencyServer with the ``"current"`` rule, or no bound)."""
    from sim.models.servers import LatencyServer

    control = spec.control
    if (not isinstance(control, LatencyServer) or control.latency_rule != "current" or spec.tiers
            or spec.degradations or spec.fleet is not None):
        return None
    base, factor = float(control.base_latency), float(control.factor)
    if factor <= 1.0 or time_left <= base:
        return None if factor <= 1.0 else float(control.concurrency_limit)
    return float(control.concurrency_limit) + float(control.k) * math.log(time_left / base) / math.log(factor)


def collapse_bound(spec: SimulationSpec, limit: float, top: int) -> float:
    """The work past which a portrait's run (time limit ``limit``, grid top or clients ``top``)
    is decided not to return: the latency bound where there is one, else the heuristic."""
    bound = latency_bound(spec, limit)
    return bound if bound is not None else float(BEYOND_FACTOR * top)
