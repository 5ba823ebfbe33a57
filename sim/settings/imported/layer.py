"""One layer of a call path, as read from a settings file: the seam between the readers and
``backoff-sim check`` (readers build ``Layer``s, the check only consumes them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Knob:
    """The setting a user would tune first (budget percent, ``num_retries``, ``maxTokens``...):
    ``path`` names it in the layer's ``entry`` (keys joined by dots), ``values`` are the ones a
    check sweeps, ``label`` is how the source file names it."""

    path: str
    label: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Layer:
    """What one layer does to each call: its attempts and the strategy entry it becomes.

    ``entry`` is a backoff-sim strategy table, exactly as it would be written in a config's
    ``strategies = [...]`` (``{ preset = "envoy", num_retries = 2 }`` or ``{ name, strategy,
    policies }``), with times in milliseconds. ``attempts`` is the most attempts this layer makes
    per call it receives (retries + 1; hedged copies included); the worst-case amplification of
    a stack is the product of its layers' ``attempts``. ``timeout`` is the per-attempt timeout
    and ``total_timeout`` the whole call's deadline, in ms, where the source sets them.
    ``fleet`` holds ``[simulation.fleet]`` keys the source implies (outlier detection, retries
    to another host); ``notes`` say what was assumed or is not modelled, one line each.
    ``options`` are the reader's options this layer was read with (resilience4j: ``{"order":
    "retry-outside"}``); ``read_settings(source, **options)`` with another value reads the
    alternative (the other decorator order).
    """

    source: str
    kind: str
    name: str
    attempts: int
    entry: dict[str, Any]
    timeout: float | None = None
    total_timeout: float | None = None
    fleet: dict[str, Any] = field(default_factory=dict)
    knob: Knob | None = None
    notes: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def retries(self) -> int:
        return self.attempts - 1

    def counts(self) -> str:
        """"4 attempts (3 retries)": both counts, as every output shows them."""
        return attempts_text(self.attempts)


def attempts_text(attempts: int) -> str:
    """"4 attempts (3 retries)": the one wording of both counts."""
    a, r = attempts, attempts - 1
    return f"{a} attempt{'s' if a != 1 else ''} ({r} retr{'ies' if r != 1 else 'y'})"
