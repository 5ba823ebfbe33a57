"""The app's sweeps, apart from Textual: results by (simulation, seed), the note saying why one
has none, the sweeps running and which of them the user cancelled.

The main screen starts a worker for a sweep and reports its end here; whatever it shows (a
table, a note, whether to start a sweep) it asks this book. A running sweep is known by the
handle the caller chooses (the Textual worker), so nothing here imports Textual and the
lifecycle is tested without an app.
"""

from __future__ import annotations

from collections.abc import Hashable

from sim.runs.sweep import SweepCancelled, SweepResult

SweepKey = tuple[str, int | None, str | None]  # (simulation title, seed override, explore cell)

CANCELLED_NOTE = "The sweep was cancelled: press w to run it again."


def failed_note(error: BaseException | None) -> str:
    return f"The sweep failed: {error}"


def stopped(error: BaseException | None) -> bool:
    """Whether a worker's error is the stop its caller asked for (``SweepCancelled``): a sweep,
    a map or a tune the user cancelled, not one that failed."""
    return isinstance(error, SweepCancelled)


class SweepBook:
    """Finished sweeps, notes and running sweeps of one app session."""

    def __init__(self) -> None:
        self._results: dict[SweepKey, SweepResult] = {}
        self._notes: dict[SweepKey, str] = {}
        self._running: dict[Hashable, SweepKey] = {}
        self._cancelled_by_user: set[SweepKey] = set()

    def result(self, key: SweepKey) -> SweepResult | None:
        return self._results.get(key)

    def note(self, key: SweepKey) -> str:
        """Why ``key`` has no result (cancelled, failed), or ""."""
        return self._notes.get(key, "")

    def is_running(self, key: SweepKey) -> bool:
        return key in self._running.values()

    @property
    def busy(self) -> bool:
        """True while any sweep runs."""
        return bool(self._running)

    def needs_start(self, key: SweepKey) -> bool:
        """True when showing ``key`` should start its sweep: no result, no note, not running.
        A note (cancelled, failed) waits for the user to ask again."""
        return key not in self._results and key not in self._notes and not self.is_running(key)

    def started(self, handle: Hashable, key: SweepKey) -> None:
        """A sweep for ``key`` now runs as ``handle``; an earlier note of it no longer applies."""
        self._notes.pop(key, None)
        self._cancelled_by_user.discard(key)
        self._running[handle] = key

    def forget(self, key: SweepKey) -> None:
        """Drop the result of ``key`` (the user asked to run it again)."""
        self._results.pop(key, None)

    def cancel_all(self) -> list[Hashable]:
        """Mark every running sweep as cancelled by the user; return their handles to stop."""
        self._cancelled_by_user.update(self._running.values())
        return list(self._running)

    def succeeded(self, handle: Hashable, result: SweepResult) -> SweepKey | None:
        """A sweep ended with its result; its key, or None for a handle not (or no longer) known."""
        key = self._running.pop(handle, None)
        if key is not None:
            self._results[key] = result
        return key

    def cancelled(self, handle: Hashable) -> SweepKey | None:
        """A sweep stopped early: by the user (noted, rerun on request) or superseded by another
        simulation's sweep (no note: it starts again when shown)."""
        key = self._running.pop(handle, None)
        if key is not None and key in self._cancelled_by_user:
            self._cancelled_by_user.discard(key)
            self._notes[key] = CANCELLED_NOTE
        return key

    def failed(self, handle: Hashable, error: BaseException | None) -> SweepKey | None:
        """A sweep raised: noted with its error."""
        key = self._running.pop(handle, None)
        if key is not None:
            self._notes[key] = failed_note(error)
        return key
