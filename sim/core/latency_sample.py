"""The one rule for which successes' latencies a run keeps, so a run of any length fits in memory.

**The rule.** Of a run's successes, numbered 0, 1, 2, ... as they arrive, those whose number is a
multiple of the *stride* are kept; the stride is the smallest power of two that keeps at most
``LATENCY_SAMPLE`` of them (``stride_for``). Up to ``LATENCY_SAMPLE`` successes every one is
kept; past it, between 2**19 and 2**20 of them, evenly spread over the run, in 16 MB at most.
Percentiles of longer runs are then estimates from that sample.

A run applies it as it goes (``LatencySample``: the reference's client models; the kernels'
``sim.kernels.outputs.keep_latency`` is its transcription over arrays, which numba compiles):
every success after the last kept one counts, the ``stride``-th is kept, and when the kept ones
pass ``LATENCY_SAMPLE`` every other one is dropped and the stride doubles, which leaves exactly
the multiples of the new stride. A replay, which sees every success, applies it at once
(``sampled``): live and replay keep the same successes (``tests/test_latency_sample.py``).
"""

from __future__ import annotations

import numpy as np

# The most latencies a run keeps (see the module docstring). Read where a run starts, so a test
# may lower it.
LATENCY_SAMPLE = 1 << 20


def stride_for(successes: int, sample: int | None = None) -> int:
    """The stride of the rule for a run of ``successes``: the smallest power of two ``s`` with
    ``ceil(successes / s) <= sample`` (the multiples of ``s`` below ``successes``)."""
    limit = LATENCY_SAMPLE if sample is None else sample
    stride = 1
    while (successes + stride - 1) // stride > limit:
        stride *= 2
    return stride


def sampled(values: np.ndarray, sample: int | None = None) -> np.ndarray:
    """The kept part of every success's ``values`` (in arrival order): those at multiples of
    ``stride_for``, as a run that kept them as it went holds them."""
    return values[::stride_for(len(values), sample)]


class LatencySample:
    """The latencies a run keeps as its successes arrive (the rule above), with each one's
    client and arrival time: what ``OpenRunMetrics.latencies`` holds at the end."""

    __slots__ = ("latencies", "clients", "times", "_stride", "_since", "_limit")

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.clients: list[int] = []
        self.times: list[float] = []
        self._stride = 1
        self._since = 0
        self._limit = LATENCY_SAMPLE

    def keep(self, latency: float, c: int, t: float) -> None:
        """A success of client ``c`` at ``t`` whose call took ``latency``: kept or passed over."""
        since = self._since + 1
        if since < self._stride:
            self._since = since
            return
        self._since = 0
        latencies = self.latencies
        latencies.append(latency)
        self.clients.append(c)
        self.times.append(t)
        if len(latencies) > self._limit:  # the multiples of twice the stride stay
            del latencies[1::2], self.clients[1::2], self.times[1::2]
            self._stride *= 2
