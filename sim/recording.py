"""One recorded run's events as named numpy columns: what ``sim.record`` gives a notebook.

The columns are the events file's (``<title>_events.csv``), typed: ``time`` (float64, in the
config's ``time_unit``), ``client`` (int32; -1 for the whole server), ``event`` (the event's name,
as the file's ``event_type``), ``code`` (int8, ``sim.core.events``), ``detail`` (int64; -1 when
the event has none) and ``call`` (int64: the id of the call a client's event belongs to, calls
numbered as they start; -1 for the others). pandas is optional: ``to_pandas`` says how to get it when it is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from sim.core import events as ev
from sim.vocabulary.extras import install_command

if TYPE_CHECKING:  # pragma: no cover
    from sim.analysis.metrics import RunMetrics
    from sim.runs.engine import Run

__all__ = ["COLUMNS", "Recording", "require_pandas"]

COLUMNS = ("time", "client", "event", "code", "detail", "call")
_EVENT_NAMES = np.array(ev.EVENT_NAMES)


def require_pandas(what: str) -> Any:
    """pandas, or an ImportError that says how to install it (it is an optional extra)."""
    try:
        import pandas
    except ImportError:
        raise ImportError(f"{what} needs pandas, which is optional: "
                          f"{install_command('pandas')} (or pip install pandas)") from None
    return pandas


@dataclass(frozen=True, eq=False)
class Recording:
    """One run's events in order, as read-only columns (``recording["time"]``...)."""

    simulation: str
    strategy: str
    clients: int
    repetition: int
    time_unit: str
    columns: dict[str, np.ndarray] = field(repr=False)
    metrics: RunMetrics = field(repr=False)  # the engine's own metrics of this run

    @classmethod
    def of(cls, run: Run) -> Recording:
        h = run.history
        codes = h.codes().astype(np.int8)
        columns = {"time": np.asarray(h.times, dtype=np.float64),
                   "client": np.asarray(h.clients, dtype=np.int32),
                   "event": _EVENT_NAMES[codes],
                   "code": codes,
                   "detail": h.details(),
                   "call": np.asarray(h.calls if h.has_calls else [-1] * len(h), dtype=np.int64)}
        for array in columns.values():
            array.flags.writeable = False
        return cls(run.spec.title, run.label, run.clients, run.repetition, run.spec.time_unit,
                   columns, run.metrics())

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.columns[name]
        except KeyError:
            raise KeyError(f"no column {name!r}: the columns are {', '.join(COLUMNS)}") from None

    def __len__(self) -> int:
        return len(self.columns["time"])

    def __iter__(self) -> Iterator[str]:
        return iter(COLUMNS)

    def keys(self) -> tuple[str, ...]:
        return COLUMNS

    def to_pandas(self) -> Any:
        """The columns as a ``pandas.DataFrame`` (needs pandas)."""
        pandas = require_pandas("Recording.to_pandas()")
        return pandas.DataFrame({name: self.columns[name] for name in COLUMNS})
