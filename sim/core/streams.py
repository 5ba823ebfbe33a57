"""Seeded random streams.

Every draw comes from a numpy ``Generator`` whose ``SeedSequence`` is keyed by the seed and the
run's coordinates (simulation title, client count, repetition) and the stream's purpose. The
strategy is deliberately *not* part of the key: every strategy at the same coordinates sees the
same network delays, write durations and jitter uniforms (common random numbers), so strategy
comparisons are paired.

Per-client streams are row ``i`` of successive blocks drawn from one Generator. Block ``k`` is
always the k-th draw from that Generator, so client ``i``'s j-th variate is fixed by the key alone,
however the clients interleave; and a run creates three Generators, not three per client.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import lru_cache
from itertools import chain, count, repeat

import numpy as np
from numpy.random.bit_generator import ISeedSequence

PURPOSE_NETWORK = 1
PURPOSE_JITTER = 2
PURPOSE_SERVER = 3
PURPOSE_WORKLOAD = 4
PURPOSE_INCIDENTS = 5  # an incident's error draws (sim.models.incidents): no other stream moves
PURPOSE_LIMITER = 6  # a server's admission limiter (Vegas's probe jitter)
PURPOSE_STATE = 7  # a run started from a state: its orbit's backoff left (sim.models.initial)

# Per-client block widths: small first (most clients need few draws), then larger.
BLOCK_WIDTHS = (8, 16, 32, 64)
SERIAL_BLOCK = 256
# Blocks of up to this many values are kept as lists of floats (~32 bytes a value, not 8): 256 KB
# at most each, and converted in one call (``ClientStreams._row``); only while fewer than
# LISTED_LIVE blocks are alive, so a stream holds 1 MB more than its arrays at most.
LISTED_BLOCK = 8192
LISTED_LIVE = 4

Draw = Callable[[np.random.Generator, "tuple[int, ...]"], np.ndarray]


@lru_cache(maxsize=256)
def _title_words(title: str) -> tuple[int, ...]:
    """A stable integer key for a title (Python's ``hash`` is salted per process, so not that)."""
    digest = hashlib.blake2b(title.encode("utf-8"), digest_size=16).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


@lru_cache(maxsize=4096)
def _seed_words(entropy: tuple[int, ...], n_words: int, dtype: type) -> np.ndarray:
    """What ``SeedSequence(entropy)`` hands a bit generator, computed once per process: every
    strategy's run at the same coordinates asks for the same words (a ``SeedSequence`` and its
    words were ~30 us of a run's ~40 us per stream)."""
    return np.random.SeedSequence(list(entropy)).generate_state(n_words, dtype)


class _CachedSeed(ISeedSequence):
    """A ``SeedSequence`` stand-in that gives its bit generator the cached ``_seed_words``: the
    same state, so the same draws."""

    __slots__ = ("entropy",)

    def __init__(self, entropy: tuple[int, ...]) -> None:
        self.entropy = entropy

    def generate_state(self, n_words: int, dtype: type = np.uint32) -> np.ndarray:
        return _seed_words(self.entropy, n_words, dtype).copy()


def generator(seed: int, title: str, clients: int, repetition: int, purpose: int) -> np.random.Generator:
    """The Generator for one stream of one run, derived only from its coordinates."""
    entropy = (int(seed), *_title_words(title), int(clients), int(repetition), int(purpose))
    return np.random.Generator(np.random.PCG64(_CachedSeed(entropy)))


def clipped_normal(mu: float, sigma: float) -> Draw:
    """Draws of ``max(0, N(mu, sigma))``: the reference's model of network latencies."""
    def draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if sigma == 0:
            return np.full(shape, max(0.0, mu))
        return np.maximum(0.0, rng.normal(mu, sigma, shape))
    return draw


def folded_normal(mu: float, sigma: float) -> Draw:
    """Draws of ``|N(mu, sigma)|``: the reference's code draws write durations so (its README
    says max(0, N)); the two differ whenever ``sigma`` is comparable to ``mu``."""
    def draw(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if sigma == 0:
            return np.full(shape, abs(mu))
        return np.abs(rng.normal(mu, sigma, shape))
    return draw


def uniform01(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Draws of U[0, 1): the raw material of every strategy's jitter."""
    return rng.random(shape)


class ClientStreams:
    """``n`` independent-looking per-client streams carved out of one Generator.

    Block ``k`` (``n`` rows of one width) is drawn when the first client needs it; each client
    takes its own row as a list of floats when it reaches that block (a small block is turned
    into lists whole, ``LISTED_BLOCK``), and the block is freed once all ``n`` rows are taken.
    So a long run holds only the blocks between its slowest and fastest client, not every number
    ever drawn: memory does not grow with the horizon.
    """

    def __init__(self, rng: np.random.Generator, n: int, draw: Draw) -> None:
        self._rng = rng
        self._n = n
        self._draw = draw
        self._blocks: dict[int, np.ndarray | list[list[float]]] = {}
        self._untaken: dict[int, int] = {}  # rows of each live block not yet taken
        self._drawn = 0

    def _row(self, k: int, i: int) -> list[float]:
        blocks = self._blocks
        while self._drawn <= k:
            width = BLOCK_WIDTHS[min(self._drawn, len(BLOCK_WIDTHS) - 1)]
            block = self._draw(self._rng, (self._n, width))
            # A small block becomes Python floats at once, a row per client: one call, where a
            # row at a time costs ~1 us each (a view, then its copy), ~8% of the sample's sweep.
            # Not while others are alive: rows nobody takes (clients that stopped drawing) keep
            # a block alive, and a list of them takes four times the memory.
            listed = block.size <= LISTED_BLOCK and len(blocks) < LISTED_LIVE
            blocks[self._drawn] = block.tolist() if listed else block
            self._untaken[self._drawn] = self._n
            self._drawn += 1
        row = blocks[k][i]
        if row.__class__ is not list:
            row = row.tolist()
        left = self._untaken[k] - 1
        if left:
            self._untaken[k] = left
        else:
            del blocks[k], self._untaken[k]
        return row

    @property
    def live_blocks(self) -> int:
        """Blocks drawn and not yet freed (for tests of bounded memory)."""
        return len(self._blocks)

    def next_functions(self) -> list[Callable[[], float]]:
        """One zero-argument callable per client; each call returns that client's next variate.
        Client i's are its rows of blocks 0, 1, 2, ..., each fetched when the previous is used
        up: the same lazy sequence as a generator, iterated in C (a generator's frame per draw
        was ~9% of a Poisson run's time)."""
        row, iterate = self._row, chain.from_iterable  # built per client of each run: kept lean
        return [iterate(map(row, count(), repeat(i))).__next__ for i in range(self._n)]


def serial_stream(rng: np.random.Generator, draw: Draw) -> Callable[[], float]:
    """A single stream (the server's), drawn in blocks for speed: block after block, each drawn
    when the previous is used up (as a generator would), but iterated in C (a generator's
    resumption per draw was ~4% of a PoolServer run's time)."""
    def block(_: int) -> list[float]:
        return draw(rng, (SERIAL_BLOCK,)).tolist()
    return chain.from_iterable(map(block, count())).__next__
