"""A kernel's random streams: the values ``sim.core.streams`` gives, held in arrays.

``ClientStreams`` hands client ``i`` row ``i`` of block 0, then of block 1, ..., block ``k``
being the k-th draw of its Generator; so client ``i``'s j-th value depends only on the run's key,
and drawing a block earlier than the reference does changes no value. ``ClientBlocks`` draws the
same blocks with the same draw functions and keeps their columns side by side (``values[i]`` is
client ``i``'s stream from ``base`` on, ``pos[i]`` its next unread column); columns every client
has read are dropped at each refill, so memory stays bounded as in the reference.
``SerialBlocks`` does the same for the server's one stream.
"""

from __future__ import annotations

import numpy as np

from sim.core.streams import BLOCK_WIDTHS, SERIAL_BLOCK, Draw


class ClientBlocks:
    """Per-client streams carved out of one Generator, as ``sim.core.streams.ClientStreams``."""

    def __init__(self, rng: np.random.Generator, n: int, draw: Draw) -> None:
        self._rng = rng
        self._n = n
        self._draw = draw
        self._drawn = 0
        self.values = np.empty((n, 0), dtype=np.float64)
        self.pos = np.zeros(n, dtype=np.int64)

    @property
    def have(self) -> int:
        """Columns held: client i may read ``values[i, pos[i]:have]``."""
        return self.values.shape[1]

    @property
    def exhausted(self) -> bool:
        """True when some client has read every column held."""
        return self._n > 0 and int(self.pos.max()) >= self.have

    def refill(self) -> None:
        """Drop the columns every client has read, then append the next block."""
        read = int(self.pos.min()) if self._n else 0
        width = BLOCK_WIDTHS[min(self._drawn, len(BLOCK_WIDTHS) - 1)]
        block = np.asarray(self._draw(self._rng, (self._n, width)), dtype=np.float64)
        self._drawn += 1
        kept = self.have - read
        values = np.empty((self._n, kept + width), dtype=np.float64)
        values[:, :kept] = self.values[:, read:]
        values[:, kept:] = block
        self.values = values
        self.pos -= read


class SerialBlocks:
    """The server's stream, as ``sim.core.streams.serial_stream``: blocks of ``SERIAL_BLOCK``."""

    def __init__(self, rng: np.random.Generator | None, draw: Draw | None) -> None:
        self._rng = rng
        self._draw = draw
        self.values = np.empty(0, dtype=np.float64)

    def refill(self, pos: int) -> int:
        """Drop the values before ``pos``, append the next block; returns the new position (0).
        Drawing ahead of the reference changes no value: the k-th block is the k-th draw."""
        block = np.asarray(self._draw(self._rng, (SERIAL_BLOCK,)), dtype=np.float64)
        self.values = np.concatenate([self.values[pos:], block])
        return 0
