"""Backoff delays per attempt, as the fluid model needs them: a distribution of the delay after
each failed attempt, and the chance that the client gives up there.

Any strategy's ``delays(uniform)`` is sampled ``SAMPLES`` times with a numpy Generator derived
from the simulation's seed (never ``random``), so jittered, capped, decorrelated and library
strategies all have a fluid form without a formula each: the empirical distribution of the k-th
delay is what the clients of the simulation draw from, up to sampling error (with 256 samples
the mean of a full-jitter delay is within ~3.6% of the truth at 2 sigma: sd of U(0,1) is 0.29,
0.29 / sqrt(256) / 0.5 = 3.6%). Jitter therefore spreads a cohort of retries over the bins the
samples fall in, and no jitter keeps it together, as in the simulation.

Giving up: ``max_attempts`` is exact; ``max_elapsed`` ("give up when a failure arrives more
than max_elapsed after the call started") assumes every failure is a timeout, so failure j
arrives j·timeout plus the first j − 1 delays after the start (a rejection arrives sooner: the
fluid then gives up later than the simulation would).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

import numpy as np

from sim.models.strategies import Strategy

SAMPLES = 256
POINTS = 12  # support points per level: a jittered delay's spread at 1/12 of its range
MAX_LEVELS = 48  # attempt levels kept apart; beyond, the last level's distribution repeats
NOISE_Z = 4.0  # a level whose mean delay moves by less than this many standard errors repeats
SEED_TAG = 0xF1D  # the delays' stream: (seed, SEED_TAG), apart from every run's streams


@dataclass(frozen=True)
class DelayTable:
    """Per level k (the k-th failure of a call, from 0): ``offsets[k]``, ``weights[k]``: the
    backoff in steps of the model and its probability (weights sum to 1 - give_up[k]);
    ``give_up[k]``: the chance the client gives up after failure k."""

    offsets: tuple[np.ndarray, ...]
    weights: tuple[np.ndarray, ...]
    give_up: np.ndarray

    @property
    def levels(self) -> int:
        return len(self.offsets)


def sample_delays(strategy: Strategy, seed: int, levels: int) -> np.ndarray:
    """``SAMPLES`` × ``levels`` delays: row i is one client's sequence of backoffs."""
    rng = np.random.default_rng([seed, SEED_TAG])
    out = np.empty((SAMPLES, levels))
    # Enough uniforms for any strategy's few per delay; drawn at once, they are the same stream
    # as a row at a time, and each client's are made Python floats only as it takes them.
    draws = rng.random((SAMPLES, 64 * levels + 64))
    for i in range(SAMPLES):
        out[i] = list(islice(strategy.delays(map(float, draws[i]).__next__), levels))
    return out


def delay_table(strategy: Strategy, seed: int, step: float, timeout: float | None) -> DelayTable:
    """The strategy's backoffs in model steps of ``step``, and its give-up chances."""
    levels = MAX_LEVELS if strategy.max_attempts is None else min(MAX_LEVELS, strategy.max_attempts)
    raw = sample_delays(strategy, seed, levels)
    gives_up = np.zeros((SAMPLES, levels), dtype=bool)
    if strategy.max_attempts is not None:
        gives_up[:, strategy.max_attempts - 1:] = True  # failure of attempt max_attempts
    if strategy.max_elapsed is not None and timeout is not None:
        # failure k (0-based) arrives (k + 1)·timeout + d_0 + ... + d_{k-1} after the start
        arrive = (np.arange(levels) + 1) * timeout + np.concatenate(
            [np.zeros((SAMPLES, 1)), np.cumsum(raw, axis=1)[:, :-1]], axis=1)
        gives_up |= arrive > strategy.max_elapsed
    # a client that gave up once is gone: the later levels see only those still trying
    alive = np.logical_not(np.logical_or.accumulate(gives_up, axis=1))
    reached = np.concatenate([np.ones((SAMPLES, 1), dtype=bool), alive[:, :-1]], axis=1)
    offsets, weights, give_up = [], [], np.zeros(levels)
    for k in range(levels):
        at = reached[:, k]
        n = int(at.sum())
        if n == 0:  # nobody gets here: give up (never used)
            offsets.append(np.zeros(1, dtype=np.int64))
            weights.append(np.zeros(1))
            give_up[k] = 1.0
            continue
        stay = alive[:, k] & at
        give_up[k] = 1.0 - stay.sum() / n
        uniq, counts = _support(raw[stay, k] / step)
        offsets.append(uniq)
        weights.append(counts / n)
    keep = _stationary_from(offsets, weights, give_up)
    return DelayTable(tuple(offsets[:keep]), tuple(weights[:keep]), give_up[:keep])


def _support(delays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At most ``POINTS`` delays (in whole steps) and how many samples each stands for: equal
    shares of the sorted samples, each at its mean (a jitter's spread kept to 1/POINTS of its
    range, its mean exactly; the model's cost grows with the points)."""
    if delays.size == 0:  # every client gives up here
        return np.zeros(1, dtype=np.int64), np.zeros(1)
    ordered = np.sort(delays)
    groups = np.array_split(ordered, min(POINTS, ordered.size))
    at = np.array([max(0, int(np.rint(g.mean()))) for g in groups], dtype=np.int64)
    sizes = np.array([g.size for g in groups], dtype=np.float64)
    uniq, where = np.unique(at, return_inverse=True)
    return uniq, np.bincount(where, weights=sizes)


def pack(tables: list[DelayTable], timeouts: np.ndarray, step: float) -> PackedTables:
    """A batch's tables (one per case): the distinct ones with the cases that use each, and
    per case and level (up to the batch's most levels; a table's last level repeats) the
    give-up chance and the mean time from a call's start to that attempt."""
    levels = max(t.levels for t in tables)
    distinct: dict[int, list[int]] = {}
    first: dict[int, DelayTable] = {}
    for i, t in enumerate(tables):
        distinct.setdefault(id(t), []).append(i)
        first[id(t)] = t
    shared = tuple((np.array(rows, dtype=np.int64), first[key]) for key, rows in distinct.items())
    # per distinct table, then per case (a map's 160 cases share two tables)
    gives = {key: [t.give_up[min(k, t.levels - 1)] for k in range(levels)] for key, t in first.items()}
    means = {key: [_mean(t, min(k, t.levels - 1)) * step for k in range(levels)] for key, t in first.items()}
    give_up = np.array([gives[id(t)] for t in tables])
    mean_delay = np.array([means[id(t)] for t in tables])
    # Mean time from a call's start to its attempt k: k timeouts and the first k delays (each a
    # failure heard at its timeout: the fluid's latency of a retried success).
    elapsed = np.zeros((len(tables), levels))
    elapsed[:, 1:] = np.cumsum(timeouts[:, None] + mean_delay, axis=1)[:, :-1]
    return PackedTables(levels, shared, give_up, elapsed)


def _mean(table: DelayTable, k: int) -> float:
    """Mean delay (in steps) after failure ``k`` of those that retry."""
    w = table.weights[k]
    return float(np.dot(table.offsets[k], w) / max(float(w.sum()), 1e-300))


@dataclass(frozen=True)
class PackedTables:
    """A batch's backoff tables: ``shared``, each distinct table with the cases (rows) using it;
    per case and level the give-up chance and the mean time from a call's start to an attempt
    of that level."""

    levels: int
    shared: tuple[tuple[np.ndarray, DelayTable], ...]
    give_up: np.ndarray
    elapsed: np.ndarray


def _stationary_from(offsets: list[np.ndarray], weights: list[np.ndarray], give_up: np.ndarray) -> int:
    """How many levels to keep: up to the first from which every level's mean delay (in steps)
    and give-up chance are those of the last level, within sampling noise (``NOISE_Z`` standard
    errors of the difference of two sample means: a capped or constant backoff settles after a
    few levels and its levels then differ by noise alone). The model repeats the last level
    kept, so a strategy needs as many levels in memory as it has distinct ones."""
    stats = []
    for o, w in zip(offsets, weights):
        total = max(float(w.sum()), 1e-300)
        mean = float(np.dot(o, w) / total)
        var = float(np.dot((o - mean) ** 2, w) / total)
        stats.append((mean, var / (total * SAMPLES)))
    last_mean, last_var = stats[-1]
    keep = len(offsets)
    # from the end back: the first level of the run that is within noise of the last level
    while keep > 1:
        mean, var = stats[keep - 2]
        if abs(mean - last_mean) > NOISE_Z * np.sqrt(var + last_var) + 1e-9 or give_up[keep - 2] != give_up[-1]:
            break
        keep -= 1
    return keep
