"""What the library takes from whoever runs it, rather than importing the shell's machinery.

How a stop is noticed while work waits (``check_stop``), which steps a stop must not split
(``hold_stops``: moving an output set into place, starting a process), what to remove should
the process be ended before its ``with`` blocks unwind (``on_abandon``), whether the process is
already on its way out (``ending``), that the command has succeeded (``settled``: a stop
arriving now changes nothing), how a helper thread keeps the stop signals off itself
(``shield_thread``) and the garbage collector's policy (``collector_frozen``: the caller froze
objects out of it, so the engine leaves it alone).

The command layer (``sim.commands``) installs its own as it is imported; a notebook or a script
gets the defaults: nothing held, nothing checked, nothing registered, the collector the
engine's to pause. Nothing here imports ``signal`` or knows a command.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, fields, replace

__all__ = ["Caller", "caller", "install"]


def _nothing() -> None:
    return None


def _no(*_: object) -> bool:
    return False


def _register(cleanup: Callable[[], None]) -> int:
    return 0


def _forget(handle: int) -> None:
    return None


@dataclass(frozen=True)
class Caller:
    """The caller's policies; every field is a plain callable."""

    hold_stops: Callable[[], AbstractContextManager[None]] = nullcontext
    check_stop: Callable[[], None] = _nothing
    on_abandon: Callable[[Callable[[], None]], int] = _register
    forget: Callable[[int], None] = _forget
    on_final: Callable[[Callable[[], None]], None] = _forget  # type: ignore[assignment]
    ending: Callable[[], bool] = _no
    settled: Callable[[], None] = _nothing
    shield_thread: Callable[[], None] = _nothing
    prepare_children: Callable[[], None] = _nothing
    collector_frozen: Callable[[], bool] = _no


_current = Caller()


def caller() -> Caller:
    """The policies in force (the defaults until a caller installs its own)."""
    return _current


def install(**policies: Callable) -> Caller:
    """Replace some of the policies (by field name); returns the previous ones, for a test or
    a caller that wants to put them back (``install(**vars_of(previous))``)."""
    global _current
    known = {f.name for f in fields(Caller)}
    unknown = sorted(set(policies) - known)
    if unknown:
        raise TypeError(f"unknown caller policies: {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    previous, _current = _current, replace(_current, **policies)
    return previous
