"""Playback arithmetic: speeds, cursor moves and how far a frame of play advances.

The cursor is an index into the recorded history; everything on screen is derived from
``history[:cursor + 1]``, so moving back is as exact as moving forward. Playing advances a
simulated clock by ``speed × elapsed real time`` and puts the cursor on the last event at or
before it, so events appear at their simulated times.
"""

from __future__ import annotations

import numpy as np

from sim.vocabulary import units

# Simulated time units (ms by default) per real second.
SPEEDS: tuple[float, ...] = (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000,
                             10_000, 20_000, 50_000, 100_000)
# A whole run plays in about this many seconds at the initial speed.
TARGET_PLAY_SECONDS = 20.0
MAX_FPS = 20


def initial_speed(total_time: float) -> float:
    """The largest speed at which the run lasts at least ``TARGET_PLAY_SECONDS``."""
    fitting = [s for s in SPEEDS if s * TARGET_PLAY_SECONDS <= total_time]
    return fitting[-1] if fitting else SPEEDS[0]


def change_speed(speed: float, steps: int) -> float:
    """The speed ``steps`` levels faster (negative: slower), clamped to the known levels."""
    index = int(np.searchsorted(SPEEDS, speed))
    index = min(max(index + steps, 0), len(SPEEDS) - 1)
    return SPEEDS[index]


def format_speed(speed: float, unit: str = units.DEFAULT_TIME_UNIT) -> str:
    return units.format_speed(speed, unit)


def clamp(index: int, n: int) -> int:
    """A valid cursor for a history of ``n`` events."""
    return min(max(index, 0), max(n - 1, 0))


def advance(times: np.ndarray, clock: float, elapsed: float, speed: float) -> tuple[int, float, bool]:
    """One frame of play: ``(new cursor, new clock, finished)`` after ``elapsed`` real seconds."""
    end = float(times[-1]) if len(times) else 0.0
    clock = min(clock + speed * elapsed, end)
    cursor = max(0, int(np.searchsorted(times, clock, side="right")) - 1)
    return cursor, clock, clock >= end
