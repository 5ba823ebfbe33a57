"""An independent, minimal transcription of the ``backoff-simulator`` reference's algorithm, for
parity tests: the same loop (a heap of timed to-dos), the same servers and clients, the same
draws (network ``max(0, N)``, write durations ``abs(N)`` as its code has them). It shares no code
with ``sim/`` on purpose: only the algorithm, written out again from the reference's source.

Random numbers come from a numpy ``Generator`` rather than the reference's ``random`` module:
the distributions are the same, so means agree, not individual runs.
"""

from __future__ import annotations

import heapq
from itertools import count

import numpy as np


def reference_work(control: str, clients: int, constant: float, *, network_mu: float,
                   network_sigma: float, write_mu: float, write_sigma: float,
                   rng: np.random.Generator) -> int:
    """Work (client write requests) of one reference run with ``Constant(constant)`` backoff."""
    todos: list[tuple[float, int, str, int, int]] = []  # (time, tie-break, step, client, version)
    seq = count()

    def later(delay: float, step: str, client: int, version: int = 0) -> None:
        heapq.heappush(todos, (t + delay, next(seq), step, client, version))

    def network() -> float:
        return max(0.0, rng.normal(network_mu, network_sigma))

    def write_duration() -> float:
        return abs(rng.normal(write_mu, write_sigma))

    t = 0.0
    for c in range(clients):
        later(0.0, "initiate", c)
    work, version, available = 0, 0, True
    while todos:
        t, _, step, c, payload = heapq.heappop(todos)
        if step == "initiate":  # the client starts an attempt
            if control == "ReadWriteOCCServer":
                later(network(), "read", c)
            else:
                work += 1
                later(network(), "write", c)
        elif step == "read":  # the server reports its version; the client then writes it back
            later(network(), "write_read_version", c, version)
        elif step == "write_read_version":
            work += 1
            later(network(), "write", c, payload)
        elif step == "write":  # the request reaches the server
            if control == "LockingServer":
                if available:
                    available = False
                    later(write_duration(), "free", c)
                else:
                    later(network(), "rejected", c)
            else:
                based_on = payload if control == "ReadWriteOCCServer" else version
                later(write_duration(), "maybe_commit", c, based_on)
        elif step == "free":
            available = True
        elif step == "maybe_commit":
            if version > payload:
                later(network(), "rejected", c)
            else:
                version += 1
        elif step == "rejected":  # the client hears so and backs off
            later(constant, "initiate", c)
    return work
