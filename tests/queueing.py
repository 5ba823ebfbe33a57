"""Queueing-theory formulas and a driver for open-arrival PoolServer runs (no retries, no
network, no timeouts: a client's latency is the request's sojourn time at the server)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sim.analysis.open_metrics import OpenRunMetrics
from sim.runs.engine import run_metrics
from support import make_spec

# Open arrivals come from CLIENTS Poisson sources, so the server sees Poisson at CLIENTS / think.
CLIENTS = 10


def erlang_c(c: int, a: float) -> float:
    """Probability that an arrival waits in M/M/c with offered load a = λ/μ (a < c)."""
    top = a ** c / math.factorial(c) * c / (c - a)
    return top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)


def mmc_sojourn(c: int, lam: float, mu: float) -> float:
    """Mean sojourn time of M/M/c: Wq = C(c, a) / (cμ − λ), W = Wq + 1/μ."""
    return erlang_c(c, lam / mu) / (c * mu - lam) + 1.0 / mu


def md1_sojourn(lam: float, s: float) -> float:
    """Pollaczek–Khinchine for constant service S: Wq = ρS / (2(1 − ρ)), W = Wq + S."""
    rho = lam * s
    return rho * s / (2 * (1 - rho)) + s


def mm1k_blocking(rho: float, k: int) -> float:
    """M/M/1/K (K in the system, the one in service included): P_K = (1 − ρ)ρᴷ / (1 − ρᴷ⁺¹)."""
    return (1 - rho) * rho ** k / (1 - rho ** (k + 1))


def pool_spec(lam: float, horizon: float, **server: Any):
    """An open-arrival PoolServer simulation at arrival rate ``lam``, no retries (a constant
    strategy with one attempt), no network delay, no timeout."""
    return make_spec("PoolServer", **server, workload="open", think_time=CLIENTS / lam,
                     horizon=horizon, clients=[CLIENTS], repeat=1, network_mu=0.0,
                     network_sigma=0.0, bucket=horizon / 1000,
                     strategies=[{"type": "Constant", "constant": 1.0, "max_attempts": 1}])


def runs(spec, repetitions: int) -> list[OpenRunMetrics]:
    """Independent repetitions (each its own seeded streams)."""
    return [run_metrics(spec, spec.strategies[0].chain, CLIENTS, r) for r in range(repetitions)]


def steady(m: OpenRunMetrics, warmup: float) -> np.ndarray:
    """Sojourn times of requests that completed after the warm-up (the queue starts empty)."""
    return m.latencies[m.latency_times >= warmup]


def mean_and_se(values: list[float]) -> tuple[float, float]:
    """The mean of independent estimates and its standard error (from their spread)."""
    x = np.asarray(values, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x)))
