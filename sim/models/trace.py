"""``workload = "trace"``: calls at the start times of a file, e.g. exported from an access log.

``trace_file`` (relative to the config) holds one start time per line, or is a CSV whose header
names a ``start`` column and optionally a ``client`` column (other columns are ignored, so an
access log's export needs no editing; blank lines and lines starting with ``#`` are skipped).
Times are in the simulation's ``time_unit``, from the run's t = 0.

- **Rows**: a missing, empty, non-numeric, non-finite or negative start, a missing or empty
  client, a file that is empty, not UTF-8 text, larger than ``MAX_TRACE_BYTES`` or of more than
  ``MAX_TRACE_CALLS`` calls is refused in one line naming the file and the line.
- **Order**: rows are sorted by start time (stably: ties keep the file's order), not refused. An
  access log is written when each request *ends*, so its start times are out of order by up to a
  request's latency; refusing would make every such export fail for no fault of the user's.
- **Clients**: each call belongs to a trace client: its ``client`` value (any text: an address,
  a user id), numbered in order of first call; without the column, every call is a client of its
  own, numbered in time order. Trace client ``k`` is run by client ``k mod N`` of a run of ``N``
  clients (the simulation's ``clients``), so ``clients = [K]`` for the trace's K clients keeps
  each one's calls, its policies and its network stream together, fewer clients merge some, and
  without a client column calls are dealt round-robin.
- **One call at a time**: a client makes its calls in order, as every client of this simulator
  does (retries, timeouts and policies as with other workloads); a call logged while its client's
  previous call is still open starts when that one ends. With enough clients (one per call in
  flight) every call starts exactly at its logged time; with few, a slow server delays the trace,
  as a closed loop would.

No draws: the trace is the same for every seed and every strategy.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import partial
from hashlib import sha256
from pathlib import Path
from typing import ClassVar

import numpy as np

from sim.vocabulary.bounds import MAX_TIME
from sim.vocabulary.errors import ParamError
from sim.vocabulary.inputs import is_csv_header, read_text
from sim.models.workloads import Workload, register

# An access log's export of a few million requests fits (about 25 bytes a row with a client);
# a file larger is no trace to replay call by call (each call is several events and every run
# holds the times): resample or cut it.
MAX_TRACE_BYTES = 64 * 2**20
MAX_TRACE_CALLS = 2_000_000
START, CLIENT = "start", "client"


class TraceFileError(ValueError):
    """A trace file that cannot be used: the message names the file and, where a row is at
    fault, its line."""


@dataclass(frozen=True)
class TraceData:
    """A trace as read: start times in order, and each call's trace client (0, 1, ... in order
    of first call); ``named`` is the number of clients the file names (0: no client column)."""

    times: np.ndarray
    owners: np.ndarray
    named: int


def read_trace(path: str | Path) -> TraceData:
    """The calls of a trace file (see the module); ``TraceFileError`` for a file or row that
    cannot be used."""
    name = str(path)
    text = read_text(path, MAX_TRACE_BYTES, what="trace file", error=TraceFileError)
    start_column, client_column = 0, None
    header_seen = False
    starts: list[float] = []
    owners: list[str] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        end = 0
        for cells in reader:
            line, end = end + 1, reader.line_num  # the row's first line, and its last
            if line < end and any("\n" in cell or "\r" in cell for cell in cells):
                # A quote that never closes swallows every later line into one cell.
                raise TraceFileError(f"{name} line {line}: a quoted cell runs on to line {end} "
                                     "(a quote that is not closed?); close the quote or remove it")
            cells = [cell.strip() for cell in cells]
            if not cells or not any(cells) or cells[0].startswith("#"):
                continue
            if not header_seen and not starts:
                header_seen = True
                if is_csv_header(cells):
                    if START not in cells:
                        raise TraceFileError(f"{name} line {line}: a CSV header without a {START!r} column "
                                             f"(got {', '.join(cells)[:80]})")
                    start_column = cells.index(START)
                    client_column = cells.index(CLIENT) if CLIENT in cells else None
                    continue
                if len(cells) > 1:
                    raise TraceFileError(f"{name} line {line}: {len(cells)} cells and no header; give one "
                                         f"start time per line, or a CSV whose header names a {START!r} "
                                         f"column (and optionally {CLIENT!r})")
            starts.append(_start(name, line, cells, start_column))
            if client_column is not None:
                owners.append(_client(name, line, cells, client_column))
            if len(starts) > MAX_TRACE_CALLS:
                raise TraceFileError(f"{name} line {line}: more than {MAX_TRACE_CALLS:,} calls; "
                                     "replay a shorter stretch of the log")
    except csv.Error as exc:
        raise TraceFileError(f"{name} line {reader.line_num}: not CSV: {exc}") from None
    if not starts:
        raise TraceFileError(f"{name}: has no calls (one start time per line, or a CSV with a "
                             f"{START!r} column)")
    times = np.asarray(starts, dtype=np.float64)
    order = np.argsort(times, kind="stable")
    times = times[order]
    if client_column is None:
        return TraceData(times, np.arange(times.size, dtype=np.int64), 0)
    # Trace clients numbered by their first call, in time order.
    ids: dict[str, int] = {}
    numbered = [ids.setdefault(owners[i], len(ids)) for i in order.tolist()]
    return TraceData(times, np.asarray(numbered, dtype=np.int64), len(ids))


def _start(name: str, line: int, cells: list[str], column: int) -> float:
    if column >= len(cells):
        raise TraceFileError(f"{name} line {line}: has no {START!r} cell ({len(cells)} cells)")
    cell = cells[column]
    if not cell:
        raise TraceFileError(f"{name} line {line}: the {START!r} cell is empty")
    try:
        value = float(cell)
    except ValueError:
        raise TraceFileError(f"{name} line {line}: start {cell[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise TraceFileError(f"{name} line {line}: start {cell[:40]!r} is not a finite number")
    if value < 0:
        raise TraceFileError(f"{name} line {line}: start {value:g} is negative; times count from the "
                             "run's t = 0")
    if value > MAX_TIME:
        raise TraceFileError(f"{name} line {line}: start {value:g} is beyond {MAX_TIME:g}; "
                             "shift the times to start near 0")
    return value


def _client(name: str, line: int, cells: list[str], column: int) -> str:
    if column >= len(cells):
        raise TraceFileError(f"{name} line {line}: has no {CLIENT!r} cell ({len(cells)} cells)")
    if not cells[column]:
        raise TraceFileError(f"{name} line {line}: the {CLIENT!r} cell is empty")
    return cells[column]


@register
@dataclass(frozen=True, kw_only=True)
class Trace(Workload):
    """Calls at the logged start times of ``trace_file`` (see the module)."""

    NAME: ClassVar[str] = "trace"
    REPEATS: ClassVar[bool] = True
    DRAWS: ClassVar[bool] = False
    # Keys naming a file, resolved relative to the config file that gives them (sim.settings.config).
    PATH_KEYS: ClassVar[tuple[str, ...]] = ("trace_file",)
    trace_file: str

    def validate(self) -> None:
        try:
            data = read_trace(self.trace_file)
        except TraceFileError as exc:
            raise ParamError("trace_file", str(exc)) from None
        digest = sha256(data.times.tobytes() + data.owners.tobytes()).hexdigest()[:16]
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_digest", digest)

    def __repr__(self) -> str:
        # The fields and a digest of the calls: a repr keys explore's cell cache, which must miss
        # when the file changes under the same name.
        text = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))
        return f"{type(self).__qualname__}({text}, trace_sha256={self.__dict__.get('_digest')!r})"

    @property
    def data(self) -> TraceData:
        return self.__dict__["_data"]

    @property
    def named_clients(self) -> int:
        """How many clients the file's ``client`` column names (0: it has none)."""
        return self.data.named

    def calls_before(self, horizon: float) -> int:
        """Logged calls that start before ``horizon``."""
        return int(np.searchsorted(self.data.times, horizon, side="left"))

    def _schedules(self, clients: int) -> list[list[float]]:
        """Each run client's logged start times, in order (trace client k → client k mod N)."""
        data = self.data
        run_client = data.owners % clients
        order = np.argsort(run_client, kind="stable")  # keeps time order within each client
        times = data.times[order].tolist()
        bounds = np.concatenate(([0], np.cumsum(np.bincount(run_client, minlength=clients)))).tolist()
        return [times[bounds[c]:bounds[c + 1]] for c in range(clients)]

    def start_times(self, rng: np.random.Generator | None, clients: int) -> list[float]:
        # A client the trace gives no call never calls (its first call is never due).
        return [s[0] if s else math.inf for s in self._schedules(clients)]

    def logged_calls(self, clients: int) -> list[Callable[[], float | None]]:
        return [partial(next, iter(s[1:]), None) for s in self._schedules(clients)]
