"""When one strategy's run stands for another's: a run in which no attempt failed.

A strategy (its backoff, its policies and limits) is consulted only after an attempt fails: a
timeout, a rejection or a server error. Every random draw of a run is keyed by its coordinates,
not its strategy (``sim.core.streams``: common random numbers), so until the first failure
every strategy's run at the same (simulation, clients, repetition) is the same run, event for
event. A run that ends without any failure therefore *is* each other strategy's run, provided
their attempts time out alike (a chain's ``attempt_timeout`` shortens the run's timeout) and they
hedge alike (a hedge goes out without any failure). In
the metastability map 16 of 96 cells are such runs: their strategies are simulated once.

Only runs against replying servers qualify (``OpenRunMetrics``, which count timeouts and
rejections); tiered runs do not (a tier below retries on its own).
"""

from __future__ import annotations

from sim.analysis.metrics import RunMetrics
from sim.analysis.open_metrics import OpenRunMetrics
from sim.policies.chain import ChainSpec


def no_attempt_failed(m: RunMetrics) -> bool:
    """True when the run's strategy was never consulted: no timeout, rejection or server error,
    no retry denied, no call refused, nobody gave up."""
    return (isinstance(m, OpenRunMetrics) and not m.tiers and m.timeouts == 0 and m.rejections == 0
            and m.retries_denied == 0 and m.calls_refused == 0 and m.gave_up == 0)


def stands_for(template: ChainSpec, chain: ChainSpec) -> bool:
    """Whether a run of ``template`` in which no attempt failed is also ``chain``'s run: their
    attempts time out at the same moment (so none of ``chain``'s would have failed either)."""
    return template.attempt_timeout == chain.attempt_timeout and template.hedging == chain.hedging  # hedges need no failure
