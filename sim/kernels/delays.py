"""The plain strategies' delays as the kernels draw them (``sim.models.strategies``), one step of
a strategy's ``delays`` generator at a time, its state in an array the kernel holds per client
or per call (``bo``)."""

from __future__ import annotations

import math

from sim.kernels.jit import maybe_njit

# Strategy codes: a kernel's configuration names its strategy by one of these.
S_CONSTANT = 0
S_NO_BACKOFF = 1
S_EXPO = 2
S_FULL_JITTER = 3
S_EQUAL_JITTER = 4
S_NORMAL_JITTER = 5  # NormalJitterExpo (study 003's client): ``sim.kernels.latency_closed``
S_THINK_TIME = 6  # ThinkTimeExpo (study 003's Go client): ``sim.kernels.latency_closed``


@maybe_njit
def doubling_delay(kind, cap, bo, s, jitter, jitter_pos, c):
    """The next delay of Expo, FullJitteredExpo or EqualJitteredExpo (``_capped_doubling``
    from the base ``bo[s]`` holds, then the jitter's uniform from client ``c``'s stream)."""
    t = bo[s]
    if t >= cap:  # _capped_doubling: the cap for ever
        t = cap
    else:
        bo[s] = t * 2.0
    if kind == S_EXPO:
        return t
    u = jitter[c, jitter_pos[c]]
    jitter_pos[c] += 1
    if kind == S_FULL_JITTER:
        return u * t
    half = t / 2.0  # S_EQUAL_JITTER
    return half + u * half


@maybe_njit
def normal_variate(jitter, jitter_pos, c):
    """A standard normal from client ``c``'s next two uniforms, by the Box-Muller transform the
    strategies use (``NormalJitterExpo``, ``ThinkTimeExpo``): the same expression, the same bits."""
    u1 = jitter[c, jitter_pos[c]]
    u2 = jitter[c, jitter_pos[c] + 1]
    jitter_pos[c] += 2
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)

