"""The phase pane's portraits, apart from Textual: what a run's portrait depends on (its key),
the session's cache of finished ones, and why a run has none.

A portrait is of the simulation and strategy on screen at the run's client count; the app's
grid is small (``sim.phase.glyphs.APP_SETTINGS``) so it is there in seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sim.vocabulary.errors import UserError
from sim.phase.glyphs import APP_SETTINGS
from sim.phase.pool import cell_runner
from sim.runs.procpool import worker_count
from sim.phase.portrait import Portrait, compute_portrait, replying_problem

from .source import ConfigSource, Selection, Source

PhaseKey = tuple[str, str | None, int, str, int]  # (simulation, explore cell, seed, strategy, clients)

REPLAY_NOTE = "A replay has no config to simulate: open it with `backoff-sim CONFIG` for a phase portrait."


def phase_key(selection: Selection, source: Source) -> PhaseKey | None:
    """What the selection's portrait depends on; None for a replay (no config)."""
    if not isinstance(source, ConfigSource):
        return None
    s = selection
    return s.simulation, s.variant, source.seed(s.simulation), s.strategy, s.clients


def no_portrait(selection: Selection, source: Source) -> str:
    """One line saying why the selection has no portrait, or ""."""
    if not isinstance(source, ConfigSource):
        return REPLAY_NOTE
    problem = replying_problem(source.spec(selection.simulation))
    return f"No phase portrait: {problem}." if problem else ""


def compute(selection: Selection, source: ConfigSource, progress: Callable[[int, int], None],
            cancelled: Callable[[], bool], workers: int | None = None) -> Portrait:
    """The selection's portrait, its cells on every core (the app's ``--workers``; one: on this
    thread, one cell after another); ``SweepCancelled`` when ``cancelled()`` turns true (asked
    between cells, and while waiting for the workers, which are then stopped)."""
    spec = source.spec(selection.simulation)
    settings = replace(APP_SETTINGS, clients=selection.clients)
    with cell_runner(worker_count(workers), progress=progress, cancelled=cancelled) as run_all:
        return compute_portrait(spec, selection.strategy, settings, run_all)


class PhaseCache:
    """The session's finished portraits and failures, by ``PhaseKey``."""

    def __init__(self) -> None:
        self._portraits: dict[PhaseKey, Portrait] = {}
        self._failures: dict[PhaseKey, str] = {}

    def get(self, key: PhaseKey) -> Portrait | None:
        return self._portraits.get(key)

    def failure(self, key: PhaseKey) -> str:
        return self._failures.get(key, "")

    def done(self, key: PhaseKey, portrait: Portrait) -> None:
        self._portraits[key] = portrait

    def failed(self, key: PhaseKey, error: BaseException | None) -> None:
        message = str(error) if isinstance(error, UserError) else repr(error)
        self._failures[key] = f"The phase portrait failed: {message}"
