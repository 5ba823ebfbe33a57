"""CSV exports of a sweep (metrics, per-run results, representative event histories) and a
validating reader for the events file, which ``backoff-sim replay`` opens.

Numbers are written as the shortest text that reads back to the value rounded to 12 significant
digits (``format_float``), so identical results give byte-identical files and sums of floats
do not show their rounding noise (``1480.45``, not ``1480.449999999999``).

The events file ends with a marker line, ``# end: N events``, after its N event rows: a file cut
short exactly at a line boundary (a full disk, a partial copy) lacks it or disagrees with it, and
the reader refuses it. CSV readers that skip comment lines (pandas' ``comment="#"``) ignore it.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from pathlib import Path
from typing import NamedTuple

import numpy as np

from sim.runs.sweep import SweepResult
from sim.analysis.versus import NOT_AVAILABLE, cost_versus_best
from sim.vocabulary.bounds import MAX_CLIENT_ID, MAX_DETAIL, MAX_INTEGER, MAX_TIERS, MAX_TIME
from sim.core import events as ev
from sim.runs.engine import Run, record_run
from sim.runs.tiers import TierLayout
from sim.core.history import NO_CALL, History, unpack_hosts
from sim.vocabulary.errors import UserError
from sim.export.atomic import atomic_write_parts, atomic_write_text
from sim.vocabulary.inputs import InputFileError, read_limited

METRICS_HEADER = ("simulation", "control", "strategy", "clients", "repeats", "work_mean",
                  "work_ci95", "duration_mean", "duration_ci95", "cost_mean", "cost_ci95",
                  "gave_up_mean", "cost_vs_best_mean", "cost_vs_best_ci95",
                  "cost_vs_best_percent", "vs_best", "retries_denied_mean", "calls_refused_mean",
                  "amplification_mean", "amplification_ci95", "breaker_open_time_mean")
RUNS_HEADER = ("simulation", "strategy", "clients", "repetition", "work", "duration", "cost",
               "gave_up", "retries_denied", "calls_refused", "amplification", "breaker_open_time")
# ``call``: the id of the call a client's event belongs to (``History.calls``: calls numbered
# from 0 as they start; -1 for a server's event or a breaker's), so one call can be followed
# when a client has several in flight.
EVENTS_HEADER = ("simulation", "strategy", "clients", "repetition", "time", "client_id",
                 "event_type", "event_detail", "call")
# A tiered simulation's events file adds the tier each event belongs to (``TierLayout.tier_of``:
# 1 for the clients and the server they call, k for tier k and the processes that call it, whose
# ids follow the clients'); a simulation without tiers keeps the header above, byte for byte.
TIERED_EVENTS_HEADER = EVENTS_HEADER + ("tier",)
# The headers of events files written before events carried their call (still replayed: their
# calls are then derived, ``sim.analysis.calls``).
UNNUMBERED_EVENTS_HEADER = EVENTS_HEADER[:-1]
UNNUMBERED_TIERED_EVENTS_HEADER = UNNUMBERED_EVENTS_HEADER + ("tier",)
# A fleet's events name their host in a last column (empty for the clients' events).
HOST_COLUMN = "host"


# Outages pause and resume the whole server, and incidents start and end for all of it: the
# engine records those events with client -1.
NO_CLIENT = -1
SERVER_WIDE = frozenset({ev.SERVER_PAUSES, ev.SERVER_RESUMES, ev.SERVER_INCIDENT_STARTS,
                         ev.SERVER_INCIDENT_ENDS, ev.HOST_EJECTED, ev.HOST_RETURNS, ev.HOST_UNHEALTHY,
                         ev.HOST_HEALTHY})

END_MARKER = "# end: {} events"
# A run that keeps series (it ends at a horizon) says its horizon and bucket width after the
# count, so a replay counts its series in the run's own buckets (``RunSeries.from_events``).
CLOCK_MARKER = "; horizon {}; bucket {}"
MAX_REPLAY_BUCKETS = 1 << 22  # a replay's series arrays stay within some 300 MB
_END = re.compile(r"# end: (\d{1,19}) events(?:; horizon ([0-9.e+-]{1,30}); bucket ([0-9.e+-]{1,30}))?")
# The largest events file replay reads: twice the longest history measured in the app (1.27 M
# events, about 110 MB of CSV); reading takes about three times the file's size in memory.
MAX_EVENTS_FILE_BYTES = 256 * 2**20


SIGNIFICANT_DIGITS = 12
# Rows of the events file formatted at once (bounds the memory of a chunk's arguments).
_EVENT_CHUNK = 1 << 16


def format_float(value: float) -> str:
    """The shortest text that reads back to ``value`` rounded to 12 significant digits (more
    than any simulated figure means, fewer than a double's noise); empty for NaN."""
    value = float(value)
    if math.isnan(value):
        return ""
    if math.isinf(value):
        return repr(value)
    return repr(float(f"{value:.{SIGNIFICANT_DIGITS}g}"))


def float_texts(values: list[float]) -> list[str]:
    """``format_float`` of each value, the common case formatted by one ``%`` over them all: a
    ``%.12g`` text with a point and no exponent is already the shortest text of its rounded
    value (12 digits or fewer read back exactly, so no shorter text reads back to it)."""
    if not values:
        return []
    texts = ((f"%.{SIGNIFICANT_DIGITS}g," * len(values)) % tuple(values))[:-1].split(",")
    # A whole number without an exponent (a time of 5 ms: "5") reads back as itself, and Python
    # writes that float "5.0"; only exponents, nan and inf need the slow path.
    return [s if "." in s and "e" not in s else s + ".0" if s.lstrip("-").isdigit() else format_float(v)
            for s, v in zip(texts, values)]


_NEEDS_QUOTES = frozenset(',"\r\n')


def csv_row_text(fields: tuple[str, ...]) -> str:
    """One row as ``csv.writer`` writes it (quoted where needed), without its newline."""
    if len(fields) > 1 and not _NEEDS_QUOTES.intersection("".join(fields)):
        # Nothing to quote (a lone empty field would be): the fields and commas, as csv.writer
        # writes them, without making one (~3 us; an events file has a row per (type, detail) pair).
        return ",".join(fields)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(fields)
    return buffer.getvalue()[:-1]


def format_ci(value: float, repeat: int) -> str:
    """A 95% CI half-width; ``n/a`` for one repetition, which has none."""
    return NOT_AVAILABLE if repeat < 2 else format_float(value)


def csv_text(header: tuple[str, ...], rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def metrics_csv_text(result: SweepResult) -> str:
    """One row per (strategy, client count): means and 95% CI half-widths, and the paired cost
    difference from the best strategy at that count (``sim.analysis.versus``: its verdict is ``best``,
    ``worse``, ``tied`` or, with one repetition, ``n/a``, as are its CIs)."""
    spec = result.spec
    rows = []
    for s, label in enumerate(spec.labels):
        for k, n in enumerate(spec.clients):
            row = [spec.title, spec.control.type_name, label, str(n), str(spec.repeat)]
            for name in ("work", "duration", "cost"):
                e = result.summary(name, s, k)
                row += [format_float(e.mean), format_ci(e.ci95, spec.repeat)]
            row.append(format_float(result.summary("gave_up", s, k).mean))
            versus = cost_versus_best(result, s, k)
            row += [format_float(versus.difference.mean),
                    format_ci(versus.difference.ci95, spec.repeat),
                    format_float(versus.percent), versus.verdict]
            amplification = result.summary("amplification", s, k)
            row += [format_float(result.summary("retries_denied", s, k).mean),
                    format_float(result.summary("calls_refused", s, k).mean),
                    format_float(amplification.mean), format_ci(amplification.ci95, spec.repeat),
                    format_float(result.summary("breaker_open_time", s, k).mean)]
            rows.append(row)
    return csv_text(METRICS_HEADER, rows)


def runs_csv_text(result: SweepResult) -> str:
    """One row per run of the sweep."""
    spec = result.spec
    cost = result.cost
    rows = []
    for s, label in enumerate(spec.labels):
        for k, n in enumerate(spec.clients):
            for r in range(spec.repeat):
                rows.append([spec.title, label, str(n), str(r), str(int(result.work[s, k, r])),
                             format_float(result.duration[s, k, r]), format_float(cost[s, k, r]),
                             str(int(result.gave_up[s, k, r])), str(int(result.retries_denied[s, k, r])),
                             str(int(result.calls_refused[s, k, r])),
                             format_float(result.amplification[s, k, r]),
                             format_float(result.breaker_open_time[s, k, r])])
    return csv_text(RUNS_HEADER, rows)


def run_clock(spec) -> tuple[float, float] | None:
    """(horizon, bucket width) of a simulation whose runs keep series, which its events file
    says (``CLOCK_MARKER``); None for the others."""
    return (float(spec.horizon), float(spec.bucket_width)) if spec.control.CAPS.keeps_series else None


def events_csv_text(runs: Mapping[str, Run]) -> str:
    """Every event of each recorded run, in order, one block of rows per run."""
    layout = next((run.layout for run in runs.values()), None)
    clock = next((run_clock(run.spec) for run in runs.values()), None)
    hosts = any(run.spec.fleet is not None for run in runs.values())
    return histories_csv_text([(run.spec.title, label, run.clients, run.repetition, run.history)
                               for label, run in runs.items()], layout, clock, hosts)


def histories_csv_text(blocks: list[tuple[str, str, int, int, History]], layout: TierLayout | None = None,
                       clock: tuple[float, float] | None = None, hosts: bool = False) -> str:
    """The events file for histories given with their (simulation, strategy, clients,
    repetition): one block of rows each, in order; with a tiered run's ``layout``, each row's
    tier in a column; with ``hosts`` (a fleet's runs), each row's host in a last one; with the
    runs' ``clock`` (``run_clock``), their horizon and bucket width in the end marker.

    Written a chunk of rows at a time, each chunk by one ``%`` format over all its rows
    (``float_texts`` for the times): the same bytes as a ``csv.writer`` row by row, ~3x faster
    (the 720,000 rows of server_outage's events file took 2.2 s on an idle core)."""
    return "".join(histories_csv_parts(((*block, layout) for block in blocks), layout is not None,
                                       clock, hosts))


def histories_csv_parts(blocks: Iterable[tuple[str, str, int, int, History, TierLayout | None]],
                        tiered: bool, clock: tuple[float, float] | None = None,
                        hosts: bool = False) -> Iterator[str]:
    """``histories_csv_text``'s text, a chunk at a time, for blocks that come one by one, each
    with its own tier layout (``tiered``: the file has the tier column): every run of a sweep
    (``--events all``) is written so, one history in memory at a time."""
    header = TIERED_EVENTS_HEADER if tiered else EVENTS_HEADER
    yield csv_row_text(header + ((HOST_COLUMN,) if hosts else ())) + "\n"
    # A run has millions of events but few distinct (type, detail) pairs: format each pair once.
    pairs: dict[int, str] = {}
    rows = 0
    for title, label, clients, rep, h, layout in blocks:
        prefix = csv_row_text((title, label, str(clients), str(rep))).replace("%", "%%") + ","
        for start in range(0, len(h), _EVENT_CHUNK):
            end = start + _EVENT_CHUNK
            times, ids, packed = h.times[start:end], h.clients[start:end], h.packed[start:end]
            calls = h.calls[start:end] if h.has_calls else [NO_CALL] * len(times)
            for p in set(packed).difference(pairs):
                code, detail = ev.unpack(p)
                pairs[p] = csv_row_text((ev.EVENT_NAMES[code], ev.format_detail(code, detail)))
            columns = [float_texts(times), ids, map(pairs.__getitem__, packed), calls]
            line = "%s,%d,%s,%d\n"
            if layout is not None:
                columns.append(layout.tiers_of(np.asarray(ids, dtype=np.int64)).tolist())
                line = "%s,%d,%s,%d,%d\n"
            if hosts:
                columns.append(["" if p < 0 else str(p) for p in unpack_hosts(packed).tolist()])
                line = line[:-1] + ",%s\n"
            yield (prefix + line) * len(times) % tuple(chain.from_iterable(zip(*columns)))
        rows += len(h)
    marker = END_MARKER.format(rows)
    if clock is not None:
        marker += CLOCK_MARKER.format(format_float(clock[0]), format_float(clock[1]))
    yield marker + "\n"


def every_run_parts(result: SweepResult) -> Iterator[str]:
    """The events file of every run of a sweep (``--events all``), strategy by strategy, client
    count by client count, repetition by repetition: the runs the sweep recorded as they are,
    the others simulated again here one at a time (a sweep keeps no run's history, and all of
    them at once would not fit in memory), so the file is written as they come."""
    spec = result.spec

    def blocks() -> Iterator[tuple[str, str, int, int, History, TierLayout | None]]:
        for label in spec.labels:
            for clients in spec.clients:
                for rep in range(spec.repeat):
                    run = result.recorded.get((label, clients)) if rep == 0 else None
                    run = run or record_run(spec, label, clients, rep)
                    yield spec.title, label, clients, rep, run.history, run.layout
    return histories_csv_parts(blocks(), bool(spec.tiers), run_clock(spec), spec.fleet is not None)


def write_every_run_csv(result: SweepResult, path: str | Path) -> Path:
    """``every_run_parts`` into ``path``, atomically, a chunk at a time."""
    return atomic_write_parts(path, every_run_parts(result))


def write_events_csv(runs: Mapping[str, Run], path: str | Path) -> Path:
    return atomic_write_text(path, events_csv_text(runs))


def write_history_csv(path: str | Path, simulation: str, strategy: str, clients: int,
                      repetition: int, history: History, layout: TierLayout | None = None,
                      clock: tuple[float, float] | None = None) -> Path:
    """One run's events file (replayable like the sweep's): the app's export of the run on
    screen, which may be any run, not only a representative one; a tiered run's (``layout``)
    with its ``tier`` column; a fleet's (its events name hosts) with its ``host`` column;
    ``clock``: as ``histories_csv_text`` (the history's own when it was read from a file that
    said it)."""
    hosts = any(p >> ev.HOST_SHIFT for p in history.packed)
    return atomic_write_text(path, histories_csv_text([(simulation, strategy, clients,
                                                        repetition, history)], layout,
                                                      history.clock if clock is None else clock, hosts))


# --- reading the events file back -------------------------------------------------------------

class EventsKey(NamedTuple):
    """Which run a block of rows in an events file belongs to; enough to title and lay it out."""

    simulation: str
    strategy: str
    clients: int
    repetition: int


def _parse_detail(code: int, text: str) -> int:
    """Inverse of ``events.format_detail``; raises ValueError with the reason."""
    if text == "":
        return ev.NO_DETAIL
    label, sep, number = text.partition("=")
    expected = ev.DETAIL_LABELS.get(code, "value")
    names = ev.DETAIL_NAMES.get(code)
    if names is not None:  # a name, e.g. policy=token_bucket
        if not sep or label != expected or number not in names:
            raise ValueError(f"event_detail {_short(text)} should look like '{expected}=NAME' with NAME "
                             f"one of {', '.join(names)}")
        return names.index(number)
    if not sep or label != expected:
        raise ValueError(f"event_detail {text!r} should be empty or look like '{expected}=3'")
    if not number.isdigit() or not number.isascii():
        raise ValueError(f"event_detail {text!r} should end in a non-negative integer")
    if len(number) > len(str(MAX_DETAIL)) or int(number) > MAX_DETAIL:
        raise ValueError(f"event_detail {_short(text)} is out of range (at most {MAX_DETAIL})")
    return int(number)


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _parse_int(text: str, column: str, minimum: int, maximum: int) -> int:
    digits = text.lstrip("+-")
    if not digits.isdigit() or not digits.isascii():
        raise ValueError(f"{column} {_short(text)} is not an integer")
    if len(digits) > len(str(maximum)) + 1:
        raise ValueError(f"{column} {_short(text)} is out of range ({minimum} to {maximum})")
    value = int(text)
    if value < minimum:
        raise ValueError(f"{column} {text!r} must be >= {minimum}")
    if value > maximum:
        raise ValueError(f"{column} {_short(text)} is out of range ({minimum} to {maximum})")
    return value


def _parse_time(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"time {_short(text)} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"time {_short(text)} must be a finite number >= 0")
    if value > MAX_TIME:
        raise ValueError(f"time {_short(text)} is out of range (at most {MAX_TIME:g})")
    return value


def _parse_clock(horizon: str, bucket: str) -> tuple[float, float] | None:
    """The end marker's (horizon, bucket width), or None when they make no sense."""
    try:
        h, w = float(horizon), float(bucket)
    except ValueError:
        return None
    if not (math.isfinite(h) and math.isfinite(w) and 0 < w <= h <= MAX_TIME and h / w <= MAX_REPLAY_BUCKETS):
        return None
    return h, w


def read_events_csv(path: str | Path,
                    layouts: dict[EventsKey, TierLayout] | None = None) -> dict[EventsKey, History]:
    """Read an ``*_events.csv`` back into one ``History`` per run, in file order.

    ``layouts``, when given, receives each tiered run's ``TierLayout`` as far as the file's
    ``tier`` column shows it (``TierLayout.seen``): the app's tier lanes need it.

    The whole file is validated before anything uses it: every value within the range the app
    can show (client ids below the run's client count, details and times bounded), and the end
    marker present and agreeing with the rows read. Any problem raises ``UserError`` with one
    line naming the file and the line number.
    """
    path = Path(path)
    try:
        raw = read_limited(path, MAX_EVENTS_FILE_BYTES, what="events CSV file")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file (give the path of a *_events.csv file)") from None
    except InputFileError as exc:
        hint = f" ({exc.hint})" if exc.hint else ""
        raise UserError(f"{path}: {exc.reason}{hint}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise UserError(f"{path}: line {line}: not UTF-8 text (is this an events CSV file?)") from None

    def fail(line: int, why: str) -> UserError:
        return UserError(f"{path}: line {line}: {why}")

    if not text:
        raise fail(1, f"empty file (expected the header {','.join(EVENTS_HEADER)})")
    if not text.endswith("\n"):
        raise fail(text.count("\n") + 1, "the last line is cut short (no final newline): "
                                         "the file looks truncated")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    out: dict[EventsKey, History] = {}
    raw_key: tuple[str, str, str, str] | None = None
    times: list[float] = []
    clients = 0
    rows = 0
    end: int | None = None  # the line of the end marker
    # Few distinct (event_type, event_detail) pairs: parse each once (files hold millions of rows).
    packed_by_text: dict[tuple[str, str], int] = {}
    # Per tiered run, per tier below the first: the lowest and highest caller id recorded.
    tier_ids: dict[EventsKey, dict[int, tuple[int, int]]] = {}
    try:
        header = tuple(next(reader))
        with_hosts = bool(header) and header[-1] == HOST_COLUMN
        if with_hosts:
            header = header[:-1]
        if header not in (EVENTS_HEADER, TIERED_EVENTS_HEADER, UNNUMBERED_EVENTS_HEADER,
                          UNNUMBERED_TIERED_EVENTS_HEADER):
            raise fail(1, f"wrong header: expected {','.join(EVENTS_HEADER)} (and ,tier for a tiered "
                          f"simulation, ,host for a fleet), got {','.join(header)}")
        tiered = header[-1] == "tier"
        numbered = "call" in header  # an older file's events carry no call ids
        tier_at = len(header) - 1  # the host column, where there is one, follows the tier
        width = len(header) + with_hosts
        for row in reader:
            if end is not None:
                raise fail(reader.line_num, f"text after the end marker on line {end}")
            if len(row) == 1 and row[0].startswith("#"):
                marker = _END.fullmatch(row[0])
                if marker is None:
                    raise fail(reader.line_num, f"expected the end marker '{END_MARKER.format('N')}', "
                                                f"got {_short(row[0])}")
                if int(marker.group(1)) != rows:
                    raise fail(reader.line_num, f"the end marker counts {int(marker.group(1)):,} "
                                                f"events but the file has {rows:,}: rows are missing")
                if marker.group(2) is not None:
                    clock = _parse_clock(marker.group(2), marker.group(3))
                    if clock is None:
                        raise fail(reader.line_num, f"the end marker's horizon {marker.group(2)!r} and "
                                                    f"bucket {marker.group(3)!r} must be numbers > 0, "
                                                    f"the bucket at most the horizon and at least 1/{MAX_REPLAY_BUCKETS:,} of it")
                    for history_read in out.values():
                        history_read.clock = clock
                end = reader.line_num
                continue
            if len(row) != width:
                raise fail(reader.line_num, f"expected {width} columns, got {len(row)}")
            simulation, strategy, clients_s, rep_s, time_s, client_s, name, detail_s = row[:8]
            try:
                if (simulation, strategy, clients_s, rep_s) != raw_key:
                    raw_key = (simulation, strategy, clients_s, rep_s)
                    key = EventsKey(simulation, strategy,
                                    _parse_int(clients_s, "clients", 1, MAX_CLIENT_ID + 1),
                                    _parse_int(rep_s, "repetition", 0, MAX_INTEGER))
                    if key in out:
                        raise ValueError(f"rows of run {strategy!r} clients={key.clients} "
                                         f"repetition={key.repetition} are not contiguous")
                    history = out[key] = History()
                    if not numbered:
                        history.calls = None
                    times = history.times
                    clients = key.clients
                t = _parse_time(time_s)
                client = _parse_int(client_s, "client_id", NO_CLIENT, MAX_CLIENT_ID)
                packed = packed_by_text.get((name, detail_s))
                if packed is None:
                    code = ev.EVENT_CODES.get(name)
                    if code is None:
                        raise ValueError(f"unknown event_type {_short(name)}")
                    packed = packed_by_text[name, detail_s] = ev.pack(code, _parse_detail(code, detail_s))
                if client < 0 and not (client == NO_CLIENT and packed & ev.CODE_MASK in SERVER_WIDE):
                    raise ValueError(f"client_id {client_s!r} must be >= 0 (only the server-wide "
                                     f"events {' and '.join(ev.EVENT_NAMES[c] for c in sorted(SERVER_WIDE))} "
                                     f"have client_id {NO_CLIENT})")
                call = _parse_int(row[8], "call", NO_CALL, MAX_INTEGER) if numbered else NO_CALL
                # A tier below the first records its callers' ids, which follow the clients'.
                tier = _parse_int(row[tier_at], "tier", 1, MAX_TIERS + 1) if tiered else 1
                below = tier > 1
                if below and layouts is not None:
                    seen = tier_ids.setdefault(key, {})
                    low, high = seen.get(tier, (client, client))
                    seen[tier] = (min(low, client), max(high, client))
                if client >= clients and not below:
                    raise ValueError(f"client_id {client} is out of range: the run has {clients} "
                                     f"clients, numbered 0 to {clients - 1}")
                if times and t < times[-1]:
                    raise ValueError(f"time {time_s} is earlier than the previous event's "
                                     f"({times[-1]!r}) in the same run")
            except ValueError as exc:
                raise fail(reader.line_num, str(exc)) from None
            if with_hosts and row[-1]:
                try:
                    packed |= ev.host_tag(_parse_int(row[-1], "host", 0, MAX_INTEGER))
                except ValueError as exc:
                    raise fail(reader.line_num, str(exc)) from None
            history.append(t, client, packed, call)
            rows += 1
    except csv.Error as exc:
        raise fail(reader.line_num, f"malformed CSV: {exc}") from None
    if not out:
        raise fail(max(reader.line_num, 1), "no events after the header")
    if end is None:
        raise fail(reader.line_num, f"no end marker ('{END_MARKER.format(rows)}') after the last "
                                    "event: the file is cut short (or was not written by backoff-sim)")
    if layouts is not None and tiered:
        for key in out:
            layouts[key] = TierLayout.seen(key.clients, tier_ids.get(key, {}))
    return out
