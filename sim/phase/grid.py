"""The grid of states a phase portrait estimates: work at the server by retry orbit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PhaseGrid:
    """``size`` values of work (0 .. ``work_max``) by ``size`` of orbit (0 .. ``orbit_max``),
    whole numbers; cell ``i`` is work index ``i % size``, orbit index ``i // size``."""

    size: int
    work_max: int
    orbit_max: int

    @property
    def work(self) -> np.ndarray:
        return np.rint(np.linspace(0, self.work_max, self.size)).astype(int)

    @property
    def orbit(self) -> np.ndarray:
        return np.rint(np.linspace(0, self.orbit_max, self.size)).astype(int)

    @property
    def cells(self) -> list[tuple[int, int]]:
        """Every cell's state (work, orbit), orbit rows from the bottom."""
        work, orbit = self.work.tolist(), self.orbit.tolist()
        return [(w, o) for o in orbit for w in work]

    @property
    def steps(self) -> tuple[float, float]:
        """The distance between neighbouring cells along work and along orbit."""
        return (self.work_max / max(self.size - 1, 1), self.orbit_max / max(self.size - 1, 1))
