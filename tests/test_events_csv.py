"""The events CSV round-trips, and every kind of damaged file is one located line of error."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest
from support import make_spec

from sim.vocabulary.errors import UserError
from sim.export.csv_files import EVENTS_HEADER, EventsKey, read_events_csv, write_events_csv
from sim.export.runs import representative_runs

STRATEGIES = [{"type": "Constant", "constant": 0.5},
              {"type": "FullJitteredExpo", "base": 2.0, "cap": 1000.0}]


@pytest.fixture(scope="module")
def runs():
    spec = make_spec("ReadWriteOCCServer", STRATEGIES, title="Round, trip", clients=[1, 4], repeat=1)
    return representative_runs(spec)


@pytest.fixture
def good_file(tmp_path: Path, runs) -> Path:
    return write_events_csv(runs, tmp_path / "good_events.csv")


def test_round_trip_gives_the_same_histories(good_file: Path, runs) -> None:
    read = read_events_csv(good_file)
    assert list(read) == [EventsKey("Round, trip", label, 4, 0) for label in runs]
    for key, history in read.items():
        original = runs[key.strategy].history
        # Times are written rounded to 12 significant digits (see ``format_float``).
        assert history.times == [float(f"{t:.12g}") for t in original.times]
        assert history.clients == original.clients
        assert history.packed == original.packed
        assert history.calls == original.calls
        assert [row[1:] for row in history.rows()] == [row[1:] for row in original.rows()]


def test_every_client_event_carries_its_call_and_the_file_keeps_it(good_file: Path, runs) -> None:
    # Each client makes one call here: every event of client c is of one call, numbered as the
    # calls start; a server's event belongs to no call.
    from sim.core import events as ev
    from sim.core.history import NO_CALL
    for history in read_events_csv(good_file).values():
        codes = history.codes()
        for client, code, call in zip(history.clients, codes, history.calls):
            if code in ev.CLIENT_EVENTS:
                assert call >= 0
            else:
                assert call == NO_CALL
        by_client = {}
        for client, code, call in zip(history.clients, codes, history.calls):
            if call >= 0:
                assert by_client.setdefault(client, call) == call
        assert sorted(by_client.values()) == list(range(len(by_client)))


def test_an_events_file_without_the_call_column_still_replays(good_file: Path, runs) -> None:
    # Written before events carried their call: read as it was, its histories without call ids.
    lines = _lines(good_file)
    old = [lines[0].replace(",call\n", "\n")] + [line.rsplit(",", 1)[0] + "\n" for line in lines[1:-1]]
    good_file.write_text("".join(old + lines[-1:]), "utf-8")
    read = read_events_csv(good_file)
    for key, history in read.items():
        assert not history.has_calls and history.call_column() is None
        assert history.packed == runs[key.strategy].history.packed


def test_file_ends_with_newline_and_exact_header(good_file: Path) -> None:
    text = good_file.read_text("utf-8")
    assert text.splitlines()[0] == ",".join(EVENTS_HEADER)
    assert text.endswith("\n")


def _lines(path: Path) -> list[str]:
    return path.read_text("utf-8").splitlines(keepends=True)


def _edit(path: Path, index: int, old: str, new: str) -> None:
    lines = _lines(path)
    assert old in lines[index]
    lines[index] = lines[index].replace(old, new, 1)
    path.write_text("".join(lines), "utf-8")


def _set_field(path: Path, index: int, field: int, value: str) -> None:
    """Replace field ``field`` of line ``index`` split at every comma (a quoted comma too)."""
    lines = _lines(path)
    fields = lines[index].split(",")
    fields[field] = value
    lines[index] = ",".join(fields)
    path.write_text("".join(lines), "utf-8")


def _assert_located(path: Path, line: int, words: str) -> None:
    with pytest.raises(UserError) as info:
        read_events_csv(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    assert f"line {line}:" in message
    assert words in message


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent_events.csv"
    with pytest.raises(UserError, match="no such file") as info:
        read_events_csv(path)
    assert str(path) in str(info.value)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("")
    _assert_located(path, 1, "empty file")


def test_wrong_header(good_file: Path) -> None:
    _edit(good_file, 0, "event_detail", "detail")
    _assert_located(good_file, 1, "wrong header")


def test_missing_header(good_file: Path) -> None:
    good_file.write_text("".join(_lines(good_file)[1:]), "utf-8")
    _assert_located(good_file, 1, "wrong header")


def test_wrong_column_count(good_file: Path) -> None:
    _edit(good_file, 3, "\n", ",extra\n")
    _assert_located(good_file, 4, f"expected {len(EVENTS_HEADER)} columns, got {len(EVENTS_HEADER) + 1}")


def test_non_numeric_time(good_file: Path) -> None:
    # The title contains a comma, so it is quoted: time is the 6th field of the raw split.
    _set_field(good_file, 2, 5, "soon")
    _assert_located(good_file, 3, "time 'soon' is not a number")


def test_non_numeric_client(good_file: Path) -> None:
    _set_field(good_file, 2, 6, "c1")
    _assert_located(good_file, 3, "client_id 'c1' is not an integer")


def test_unknown_event_type(good_file: Path) -> None:
    _edit(good_file, 2, "client_requests_version", "client_sings")
    _assert_located(good_file, 3, "unknown event_type 'client_sings'")


@pytest.mark.parametrize("bad", ["colour=3", "version=x", "version=-1", "version"])
def test_bad_detail(good_file: Path, bad: str) -> None:
    lines = _lines(good_file)
    index = next(i for i, line in enumerate(lines) if ",version=0," in line)
    lines[index] = lines[index].replace("version=0", bad)
    good_file.write_text("".join(lines), "utf-8")
    _assert_located(good_file, index + 1, "event_detail")


def test_times_decreasing_within_a_run(good_file: Path) -> None:
    lines = _lines(good_file)
    # Swap two events of the first run whose times differ.
    i = next(i for i in range(2, len(lines) - 1)
             if lines[i].split(",")[5] != lines[i + 1].split(",")[5] and
             lines[i].split(",")[2] == lines[i + 1].split(",")[2])
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    good_file.write_text("".join(lines), "utf-8")
    _assert_located(good_file, i + 2, "earlier than the previous event")


def test_truncated_last_line(good_file: Path) -> None:
    text = good_file.read_text("utf-8")
    good_file.write_text(text[:-9], "utf-8")
    _assert_located(good_file, len(text.splitlines()), "truncated")


def test_header_only(tmp_path: Path) -> None:
    path = tmp_path / "header_only.csv"
    path.write_text(",".join(EVENTS_HEADER) + "\n")
    _assert_located(path, 1, "no events")


def test_runs_must_be_contiguous(good_file: Path) -> None:
    lines = _lines(good_file)
    marker = lines.pop()
    # Move the first run's last row to the end of the events, after the second run.
    first_strategy = lines[1].split(",")[2]
    last_of_first = max(i for i, line in enumerate(lines) if line.split(",")[2] == first_strategy)
    moved = lines.pop(last_of_first)
    lines.append(moved)
    good_file.write_text("".join(lines + [marker]), "utf-8")
    _assert_located(good_file, len(lines), "not contiguous")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "binary.csv"
    path.write_bytes(",".join(EVENTS_HEADER).encode() + b"\n\xff\xfe\n")
    _assert_located(path, 2, "not UTF-8")


# --- the end marker, ranges, special files ------------------------------------------------------

def test_the_file_ends_with_a_marker_counting_its_events(good_file: Path, runs) -> None:
    lines = _lines(good_file)
    assert lines[-1] == f"# end: {sum(len(r.history) for r in runs.values())} events\n"
    assert len(lines) == 1 + sum(len(r.history) for r in runs.values()) + 1


def test_a_file_cut_at_a_line_boundary_is_refused(good_file: Path) -> None:
    lines = _lines(good_file)
    cut = lines[:len(lines) // 2]  # a whole number of lines, as a full disk or a partial copy leaves
    good_file.write_text("".join(cut), "utf-8")
    _assert_located(good_file, len(cut), "no end marker")


def test_rows_missing_before_the_marker_are_refused(good_file: Path) -> None:
    lines = _lines(good_file)
    del lines[3]
    good_file.write_text("".join(lines), "utf-8")
    _assert_located(good_file, len(lines), "rows are missing")


def test_text_after_the_marker_is_refused(good_file: Path) -> None:
    lines = _lines(good_file)
    good_file.write_text("".join(lines + [lines[1]]), "utf-8")
    _assert_located(good_file, len(lines) + 1, "after the end marker")


def _replace_field(path: Path, index: int, column: int, value: str) -> None:
    lines = _lines(path)
    fields = next(csv.reader([lines[index]]))
    fields[column] = value
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(fields)
    lines[index] = buffer.getvalue()
    path.write_text("".join(lines), "utf-8")


@pytest.mark.parametrize("column, value, words", [
    (7, "version=" + str(10**23), "out of range"),     # OverflowError in the app's int64 arrays before
    (5, str(2**31), "out of range"),                   # client id beyond the app's int32 and the run
    (5, "4", "the run has 4 clients"),                 # the first id past the run's clients
    (2, str(10**20), "out of range"),                  # a clients column the app would allocate
    (4, "1e308", "out of range"),                      # a time whose use overflows the timeline
    (4, "9" * 5000, "finite"),                         # 5000 digits: inf as a float, one line
], ids=["detail", "client-int32", "client-run", "clients", "time", "time-digits"])
def test_values_out_of_range_are_refused_with_their_line(good_file: Path, column: int, value: str,
                                                         words: str) -> None:
    lines = _lines(good_file)
    index = next(i for i, line in enumerate(lines) if ",version=0," in line)
    if column == 4 and value.startswith("9"):
        index = 2
    _replace_field(good_file, index, column, value)
    _assert_located(good_file, index + 1, words)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "events.csv"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="FIFO") as info:
        read_events_csv(fifo)  # opening it to read would block for ever
    assert "\n" not in str(info.value)


def test_a_character_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="character device"):
        read_events_csv(Path("/dev/zero"))  # reading it would never end


def test_a_file_over_the_limit_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sim.export.csv_files as csv_files

    path = tmp_path / "big_events.csv"
    path.write_text(",".join(EVENTS_HEADER) + "\n" + "x" * 2000 + "\n")
    monkeypatch.setattr(csv_files, "MAX_EVENTS_FILE_BYTES", 1024)
    with pytest.raises(UserError, match="larger than"):
        read_events_csv(path)


def _row_by_row(blocks, layout=None) -> str:
    """The events file as ``csv.writer`` writes it one row at a time (what the chunked writer
    must match byte for byte)."""
    from sim.core import events as ev
    from sim.export.csv_files import END_MARKER, TIERED_EVENTS_HEADER, format_float
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(EVENTS_HEADER if layout is None else TIERED_EVENTS_HEADER)
    for title, label, clients, rep, h in blocks:
        for t, c, p, call in zip(h.times, h.clients, h.packed, h.calls):
            code, detail = ev.unpack(p)
            row = [title, label, clients, rep, format_float(t), c, ev.EVENT_NAMES[code],
                   ev.format_detail(code, detail), call]
            writer.writerows([row + ([] if layout is None else [1 if c < 0 else layout.tier_of(c)])])
    buffer.write(END_MARKER.format(sum(len(b[4]) for b in blocks)) + "\n")
    return buffer.getvalue()


def test_the_chunked_writer_writes_what_csv_writer_writes_row_by_row() -> None:
    """Times a ``%.12g`` prints with an exponent or no point, quoted titles, a ``%`` in a name,
    server-wide events and a tier column: the same bytes as a ``csv.writer`` row by row."""
    from sim.core import events as ev
    from sim.core.history import History
    from sim.export.csv_files import histories_csv_text
    from sim.runs.tiers import TierLayout
    history = History()
    times = [0.0, 2.0, 1480.449999999999, 1 / 3, 3e-21, 1e-5, 123456789012345.0, 1.5e13, 9.99e15,
             2.5e16, 7.000000000001, 0.1 + 0.2]
    for i, t in enumerate(times):
        history.append(t, i % 5 - 1, ev.pack(ev.SERVER_PAUSES) if i % 5 == 0 else
                       ev.pack(ev.SERVER_DROPS, 1) if i % 2 else ev.pack(ev.CLIENT_REQUESTS_WRITE, i),
                       -1 if i % 5 == 0 or i % 2 else i)
    blocks = [("Round, \"trip\"", "100% on", 4, 0, history), ("plain", "b", 4, 1, History()),
              ("plain", "c", 4, 2, history)]
    assert histories_csv_text(blocks) == _row_by_row(blocks)
    layout = TierLayout(2, (2,), (4,))
    assert histories_csv_text(blocks, layout) == _row_by_row(blocks, layout)
