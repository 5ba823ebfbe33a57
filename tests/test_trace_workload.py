"""``workload = "trace"`` (``sim.models.trace``): calls replayed at the start times of a file,
bad rows refused in one line naming the file and the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import one_error_line, sim_process, toml_text, write_config

from sim.settings.config import load_config
from sim.core import events as ev
from sim.vocabulary.errors import ConfigError
from sim.exploration.cache import cell_key
from sim.models import trace as trace_module
from sim.runs.engine import record_run
from sim.runs.resources import expected_events

# A server with room for every call (10 slots, calls of 10 at most a few at once), a constant
# network delay of 1: a call's first attempt is sent at its start, its reply heard 12 later.
TABLE: dict[str, Any] = {
    "title": "replay", "control": "QueueServer", "concurrency": 10, "service_time": 10.0,
    "queue_size": 10, "workload": "trace", "trace_file": "calls.csv", "horizon": 1000.0,
    "network_mu": 1.0, "network_sigma": 0.0, "clients": [4], "repeat": 1,
    "strategies": [{"type": "Constant", "constant": 5.0}],
}


def _config(tmp_path: Path, rows: str, **overrides: Any) -> Path:
    (tmp_path / "calls.csv").write_text(rows, "utf-8")
    return write_config(tmp_path / "replay.toml", toml_text({**TABLE, **overrides}))


def _first_attempts(spec, clients: int) -> tuple[np.ndarray, np.ndarray]:
    """(time, client) of each call's first attempt, in order."""
    run = record_run(spec, spec.labels[0], clients, 0)
    h = run.history
    codes, details = h.codes(), h.details()
    first = (codes == ev.CLIENT_REQUESTS_WRITE) & (details == 1)
    return np.asarray(h.times)[first], np.asarray(h.clients)[first]


def test_calls_start_exactly_at_their_logged_times(tmp_path: Path) -> None:
    # Times out of order (as an access log written at each request's end has them): replayed
    # sorted. 4 clients and calls 20 apart at most 3 in flight: no call waits for its client.
    times = [5.0, 0.5, 33.25, 20.0, 61.0, 47.5, 100.0, 20.0]
    spec = load_config(_config(tmp_path, "".join(f"{t}\n" for t in times))).simulations[0]
    started, clients = _first_attempts(spec, 4)
    assert started.tolist() == sorted(times)
    # Without a client column every call is a client of its own, dealt round-robin in time order.
    assert clients.tolist() == [i % 4 for i in range(len(times))]


def test_a_client_column_keeps_each_clients_calls_together(tmp_path: Path) -> None:
    # Trace clients numbered by first call: b (t=1) is 0, a (t=2) is 1, c (t=3) is 2; with
    # clients = [3] each is one client of the run; with 2, trace client 2 joins client 0, whose
    # call at 1 ends at 13 (1 + 10 + 1 + 1): c's call logged at 3 starts then, and b's at 60
    # when c's at 50 ends, at 62.
    rows = "when,start,client,path\nx,2,a,/\nx,1,b,/\nx,3,c,/\nx,40,a,/\nx,50,c,/\nx,60,b,/\n"
    spec = load_config(_config(tmp_path, rows, clients=[3])).simulations[0]
    assert spec.workload.named_clients == 3
    started, clients = _first_attempts(spec, 3)
    assert started.tolist() == [1.0, 2.0, 3.0, 40.0, 50.0, 60.0]
    assert clients.tolist() == [0, 1, 2, 1, 2, 0]
    started, clients = _first_attempts(spec, 2)
    assert started.tolist() == [1.0, 2.0, 13.0, 40.0, 50.0, 62.0]
    assert clients.tolist() == [0, 1, 0, 1, 0, 0]


def test_a_call_logged_while_its_client_is_busy_starts_when_the_previous_ends(tmp_path: Path) -> None:
    # One client, calls logged at 0, 1 and 30: the first ends at 12 (1 + 10 + 1), so the second
    # starts then and ends at 24; the third starts at its own time, 30.
    spec = load_config(_config(tmp_path, "0\n1\n30\n", clients=[1])).simulations[0]
    started, _ = _first_attempts(spec, 1)
    assert started.tolist() == [0.0, 12.0, 30.0]


def test_retries_and_timeouts_work_as_with_other_workloads(tmp_path: Path) -> None:
    # One slot, no queue, no time to reject: of three calls logged at once, one is served and
    # the others are rejected and retry after 5 (Constant); a timeout of 11.5 is shorter than a
    # served attempt's 12 (1 + 10 + 1), so served attempts time out and are retried too.
    spec = load_config(_config(tmp_path, "0\n0\n0\n", clients=[3], concurrency=1, queue_size=0,
                               timeout=11.5)).simulations[0]
    run = record_run(spec, spec.labels[0], 3, 0)
    codes = run.history.codes().tolist()
    assert codes.count(ev.SERVER_REJECTS) > 0
    assert codes.count(ev.CLIENT_TIMES_OUT) > 0 and codes.count(ev.CLIENT_BACKS_OFF) > 0
    m = run.open_metrics
    assert m.offered == 3


def test_clients_without_calls_never_call(tmp_path: Path) -> None:
    spec = load_config(_config(tmp_path, "3\n4\n", clients=[5])).simulations[0]
    started, clients = _first_attempts(spec, 5)
    assert started.tolist() == [3.0, 4.0] and clients.tolist() == [0, 1]


def test_the_path_is_relative_to_the_config(tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / "calls.csv").write_text("1\n2\n", "utf-8")
    path = write_config(folder / "c.toml", toml_text({**TABLE, "trace_file": "logs/calls.csv"}))
    result = sim_process("run", str(path), "--out", str(tmp_path / "out"), "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "replay_timeseries.csv").exists()


@pytest.mark.parametrize("rows,words", [
    ("", "has no calls"),
    ("# only a comment\n\n", "has no calls"),
    ("1\n2\nabc\n", "line 3: start 'abc' is not a number"),
    ("start\n1\n\n-2\n", "line 4: start -2 is negative"),
    ("start\n1\nnan\n", "line 3: start 'nan' is not a finite number"),
    ("start\n1e16\n", "line 2: start 1e+16 is beyond 1e+15"),
    ("start,client\n1,a\n2\n", "line 3: has no 'client' cell"),
    ("start,client\n1,a\n2, \n", "line 3: the 'client' cell is empty"),
    ("client,start\nb,1\na,\n", "line 3: the 'start' cell is empty"),
    ("when,who\n1,a\n", "line 1: a CSV header without a 'start' column"),
    ("1,2\n", "line 1: 2 cells and no header"),
    ('start,client\n"1,5",x\n', "line 2: start '1,5' is not a number"),
    ("5000\n", "no call before the horizon (1000)"),
])
def test_a_bad_trace_is_refused_in_one_line_naming_file_and_line(tmp_path: Path, rows: str, words: str) -> None:
    path = _config(tmp_path, rows)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    (line,) = caught.value.lines()
    assert "trace_file" in line and words in line
    if "line " in words:
        assert str(tmp_path / "calls.csv") in line


def test_a_missing_or_huge_trace_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(tmp_path / "c.toml", toml_text({**TABLE, "trace_file": "nowhere.csv"}))
    result = sim_process("run", str(path), "--quiet")
    assert result.returncode == 2 and "nowhere.csv: no such file" in one_error_line(result.stderr)
    monkeypatch.setattr(trace_module, "MAX_TRACE_BYTES", 64)
    with pytest.raises(ConfigError, match="larger than"):
        load_config(_config(tmp_path, "1\n" * 40))
    monkeypatch.setattr(trace_module, "MAX_TRACE_BYTES", 2**20)
    monkeypatch.setattr(trace_module, "MAX_TRACE_CALLS", 10)
    with pytest.raises(ConfigError, match=r"line 11: more than 10 calls"):
        load_config(_config(tmp_path, "1\n" * 40))


def test_the_cell_cache_key_follows_the_files_calls(tmp_path: Path) -> None:
    first = load_config(_config(tmp_path, "1\n2\n")).simulations[0]
    again = load_config(_config(tmp_path, "2\n1\n")).simulations[0]  # the same calls, sorted
    changed = load_config(_config(tmp_path, "1\n3\n")).simulations[0]
    assert cell_key(first) == cell_key(again) != cell_key(changed)


def test_the_events_estimate_counts_the_calls_before_the_horizon(tmp_path: Path) -> None:
    # Four events a call (request, accept, complete, success: EVENTS_PER_REQUEST), whatever
    # the client count: the calls are the trace's, not the clients'.
    spec = load_config(_config(tmp_path, "1\n2\n3\n999\n1000\n2000\n")).simulations[0]
    assert spec.workload.calls_before(1000.0) == 4
    assert expected_events(spec, 1) == expected_events(spec, 4) == 16
