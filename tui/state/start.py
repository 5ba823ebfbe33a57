"""Where the app opens: a run (simulation, strategy, clients, repetition) and a place in it, as
``--simulation --strategy --clients --repetition --at/--event`` ask (``tui.main`` parses them),
and the command that asks for what is on screen (``y``: copy reproduction), so the two
round-trip.

Repetitions and events are counted from 1, as the app shows them (``rep 1 of 3``,
``event 12 of 340``); ``Selection.repetition`` and the cursor count from 0.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass

import numpy as np

from sim.settings.config import SAMPLE_CONFIG
from sim.vocabulary.errors import UserError

from .source import ConfigSource, ReplaySource, Selection, Source


@dataclass(frozen=True)
class Start:
    """The run to open first, and where: the last event at or before ``time``, or the event
    ``event`` (0-based); neither: the run's start."""

    selection: Selection
    time: float | None = None
    event: int | None = None


def _choose(what: str, flag: str, value: object, options: list, where: str) -> None:
    if value is not None and value not in options:
        shown = ", ".join(repr(o) if isinstance(o, str) else str(o) for o in options)
        raise UserError(f"{flag} {value!r}: no {what} of that name{where}; choose one of {shown}"
                        if isinstance(value, str) else
                        f"{flag} {value}: no such {what}{where}; choose one of {shown}")


def resolve_start(source: Source, args: argparse.Namespace) -> Start | None:
    """The start the options ask for (None: they ask for none); a value the source does not
    have is a ``UserError`` naming the values it has."""
    asked = (args.simulation, args.strategy, args.clients, args.repetition, args.at, args.event)
    if all(value is None for value in asked):
        return None
    simulation = args.simulation or source.simulations()[0]
    _choose("simulation", "--simulation", args.simulation, source.simulations(), "")
    within = f" in simulation {simulation!r}"
    _choose("strategy", "--strategy", args.strategy, source.strategies(simulation), within)
    strategy = args.strategy or source.strategies(simulation)[0]
    _choose("client count", "--clients", args.clients,
            source.client_counts(simulation, strategy), within)
    clients = args.clients or source.initial_clients(simulation, strategy)
    repetition = None if args.repetition is None else args.repetition - 1
    reps = source.repetitions(simulation, strategy, clients)
    _choose("repetition", "--repetition", args.repetition, [r + 1 for r in reps], within)
    selection = source.complete(simulation, strategy, clients, repetition)
    if args.event is not None and isinstance(source, ReplaySource):
        # A replay's runs are read already: an event past the last is a mistake to say now (a
        # config's run is simulated in the app, which says so there).
        total = len(source.history(selection))
        if args.event > total:
            raise UserError(f"--event {args.event:,}: the run has only {total:,} events{within} "
                            f"(give --event 1 to {total:,})")
    return Start(selection, args.at, None if args.event is None else args.event - 1)


def command_words(source: Source, selection: Selection, times: np.ndarray,
                  cursor: int) -> tuple[list[str], str]:
    """The command that opens the app on ``selection`` with the cursor on event ``cursor``
    (``times``: the run's event times), and what it cannot reproduce ("" when nothing)."""
    caveat = ""
    if isinstance(source, ReplaySource):
        words = ["backoff-sim", "replay", str(source.path), "--time-unit", source.time_unit("")]
    else:
        assert isinstance(source, ConfigSource)
        path = source.config.path
        words = ["backoff-sim"] + ([] if path == str(SAMPLE_CONFIG) else [path])
        words += ["--seed", str(selection.seed)]
        if selection.variant is not None:
            caveat = (f"it opens the config's own {selection.simulation!r}, not the explore cell "
                      f"{selection.variant} (p, then Enter on that cell)")
    words += ["--simulation", selection.simulation, "--strategy", selection.strategy,
              "--clients", str(selection.clients), "--repetition", str(selection.repetition + 1)]
    if len(times):
        t = float(times[cursor])
        # --at lands on the last event at that time; another one at the same time needs --event
        last = int(np.searchsorted(times, t, side="right")) - 1
        words += ["--at", repr(t)] if cursor == last else ["--event", str(cursor + 1)]
    return words, caveat


def command_line(words: list[str]) -> str:
    return shlex.join(words)

