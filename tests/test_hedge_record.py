"""Issue 35's last gaps: a run's record says which copies were hedges (``client_hedges``), so a
replay (``sim.replay``) and the app's comparison view count them as the latency table does; and
the ★ for requests counts every copy sent (``metrics.copies_sent``), hedges too."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from support import toml_text
from test_hedging import once, spec_of, table
from tui_support import make_app, pilot_test, settle

import sim
from sim.analysis.best import best_rows, star_rule
from sim.analysis.replay import hedges_sent, present_codes, records_hedges
from sim.core import events as ev
from sim.core.history import unpack_hosts
from sim.export.csv_files import read_events_csv
from sim.report.latency import latency_table, strategy_values
from sim.runs.engine import Run, run_metrics
from sim.runs.sweep import run_sweep
from tui.screens.compare import CompareScreen
from tui.state.source import ReplaySource

# Two strategies of one simulation, one of them hedging (every attempt sends its 2nd copy after
# 1 ms; lognormal service, p99 20 ms, so many attempts are still out by then).
PLAIN = {"type": "NoBackoff", "max_attempts": 1, "name": "plain"}
HEDGED = once({"max_attempts": 3, "delay": 1.0}, name="hedged")


def two_strategies(**kw: Any) -> dict[str, Any]:
    return table(PLAIN, strategies=[PLAIN, HEDGED], service_distribution="lognormal", service_p99=20.0,
                 horizon=800.0, **kw)


def recorded(t: dict[str, Any], label: str = "hedged") -> Run:
    spec = spec_of(t)
    return Run(spec, label, spec.clients[0], 0).run()


# --- the record ------------------------------------------------------------------------------

def test_each_hedge_is_an_event_of_its_call_followed_by_the_copy_s_arrival() -> None:
    run = recorded(two_strategies(fleet={"hosts": 3}))
    h, m = run.history, run.metrics()
    codes, details, calls = h.codes(), h.details(), np.asarray(h.calls)
    ids, hosts = np.asarray(h.clients), unpack_hosts(h.packed)
    at = np.flatnonzero(codes == ev.CLIENT_HEDGES)
    # One event per hedged copy: the engine's count (the latency table's), the fleet's per host.
    assert at.size == hedges_sent(codes) == m.hedges == sum(run._wiring.fleet.hedges) > 0
    # Recorded or not, a run processes the same events (the sweep's metrics-only loop too).
    assert m.events == len(h) == run_metrics(run.spec, run.spec.strategy("hedged").chain, run.clients, 0).events
    # The copy's number (1: the first hedge, up to max_attempts - 1 = 2), the call of an earlier
    # attempt of the same client, and no host (the balancer picks it; the arrival names it).
    assert set(details[at].tolist()) == {1, 2}
    writes = codes == ev.CLIENT_REQUESTS_WRITE
    for i in at.tolist():
        assert calls[i] >= 0 and hosts[i] == ev.NO_HOST
        assert np.any(writes[:i] & (calls[:i] == calls[i]) & (ids[:i] == ids[i]))
    # Right after it, at the same time, the copy reaches a host (a server event of that client).
    after = at + 1
    assert np.array_equal(np.asarray(h.times)[after], np.asarray(h.times)[at])
    assert np.all(ids[after] == ids[at]) and np.all(hosts[after] >= 0)
    assert not ev.is_server_event(ev.CLIENT_HEDGES)  # the client's: it belongs to a call
    # A strategy that does not hedge records none.
    plain = recorded(two_strategies(fleet={"hosts": 3}), "plain")
    assert hedges_sent(plain.history.codes()) == plain.metrics().hedges == 0


def _strip_hedges(path: Path) -> Path:
    """The events file as one written before hedges were recorded: no ``client_hedges`` rows,
    the end marker's count made to agree."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if ",client_hedges," not in line]
    rows = len(kept) - 2  # the header and the end marker
    kept[-1] = re.sub(r"# end: \d+ events", f"# end: {rows} events", kept[-1])
    old = path.with_name("Old_events.csv")
    old.write_text("".join(kept), encoding="utf-8")
    return old


def test_a_replay_counts_the_hedges_the_latency_table_counts(tmp_path: Path) -> None:
    config = tmp_path / "hedge.toml"
    config.write_text(toml_text(two_strategies(repeat=1)))
    results = sim.run(config, workers=1)
    events = tmp_path / "hedge_events.csv"
    events.write_text(results.csv_text("events"), encoding="utf-8")
    assert ",client_hedges,copy=1," in events.read_text(encoding="utf-8")
    replayed = sim.replay(events)
    live, again = results.rows("latency"), replayed.rows("latency")
    assert [row["strategy"] for row in again] == ["plain", "hedged"]
    # One repetition: each latency row is one run, the replay's the same one.
    assert [row["hedges"] for row in again] == [row["hedges"] for row in live]
    assert live[0]["hedges"] == 0 < live[1]["hedges"]
    assert [row["requests"] for row in again] == [row["requests"] for row in live]
    for a, b in zip(results.rows("timeseries"), replayed.rows("timeseries"), strict=True):
        assert b["hedges"] == a["hedges"] and b["bucket_start"] == a["bucket_start"]
    assert [m.hedges for m in replayed.metrics.values()] == [row["hedges"] for row in live]

    # A file without the event (written before it existed) still replays; its hedges are
    # unknown, so its tables have no hedges column (not a 0 that would be wrong).
    old = _strip_hedges(events)
    rows = sim.replay(old).rows("latency")
    assert [row["requests"] for row in rows] == [row["requests"] for row in live]
    assert all("hedges" not in row for row in rows)
    runs = read_events_csv(old)
    assert not any(records_hedges(present_codes(history.codes())) for history in runs.values())
    source = ReplaySource(runs, old)
    assert not source.hedges("hedge")
    assert ReplaySource(read_events_csv(events), events).hedges("hedge")


def test_runs_without_hedging_record_as_before() -> None:
    # No hedging, no new event: a plain run's events and counts are those of a run whose
    # simulation has no hedging entry at all.
    alone = recorded(table(PLAIN, service_distribution="lognormal", service_p99=20.0, horizon=800.0), "plain")
    beside = recorded(two_strategies(), "plain")
    assert alone.history.packed == beside.history.packed and alone.history.times == beside.history.times


# --- the comparison view ---------------------------------------------------------------------

@pilot_test
async def test_the_comparison_view_has_a_hedges_column_counted_as_the_latency_table(tmp_path: Path) -> None:
    config = tmp_path / "hedge.toml"
    t = two_strategies(repeat=1)
    config.write_text(toml_text(t))
    sweep = run_sweep(spec_of(t), workers=1)
    counts = [row["hedges"] for row in strategy_values(sweep, 0)]  # the latency table's
    assert counts[0] == 0 < counts[1]
    app = make_app(tmp_path, config)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.picked == ["plain", "hedged"]
        grid = screen.query_one("#compare-table")
        headers = [str(c.label) for c in grid.columns.values()]
        assert headers[2:4] == ["Requests", "Hedges"]
        column = headers.index("Hedges")
        cells = [str(grid.get_row(key)[column]) for key in ("plain", "hedged")]
        assert cells == [f"{n:,.0f}" for n in counts]
        titles = {pane.strategy: str(pane.border_title) for pane in screen.panes}
        assert f"hedges {counts[1]:,.0f}" in titles["hedged"] and "hedges 0" in titles["plain"]


# --- the ★ for requests ----------------------------------------------------------------------

def _row(requests: float, hedges: float, successes: float = 100.0, p50: float = 5.0) -> dict:
    return {"requests": requests, "hedges": hedges, "successes": successes, "p50": p50, "recovery": None}


def test_the_star_for_requests_counts_every_copy_sent() -> None:
    # 100 attempts and 100 hedges (200 copies) against 150 attempts and none: the second.
    assert best_rows([_row(100.0, 100.0), _row(150.0, 0.0)])["requests"] == 1
    # A table without a hedges column compares the requests, as before.
    assert best_rows([{"requests": 100.0, "successes": 100.0, "p50": 5.0}, _row(150.0, 0.0)])["requests"] == 0


def test_fewer_attempts_but_more_copies_in_all_gets_no_star(tmp_path: Path) -> None:
    # A FlakyServer failing 30% of attempts: retrying (3 attempts at most) sends about
    # 1 + 0.3 + 0.09 = 1.39 attempts a call; hedging with no delay sends 1 attempt and 1 hedge
    # a call (2 copies). Both serve about as many (0.91 and 0.97 of the calls: within 90%).
    retrying = {"type": "Constant", "constant": 0.0, "max_attempts": 3, "name": "retrying"}
    hedging = once({"max_attempts": 2, "delay": 0.0}, name="hedging")
    t = table(retrying, server="FlakyServer", strategies=[hedging, retrying], failure_rate=0.3, latency=1.0,
              horizon=1500.0)
    result = run_sweep(spec_of(t), workers=1)
    section = strategy_values(result, 0)
    assert section[0]["requests"] < section[1]["requests"]  # fewer attempts...
    assert section[0]["requests"] + section[0]["hedges"] > section[1]["requests"]  # ...more copies
    assert best_rows(section)["requests"] == 1
    caption = " ".join(str(latency_table(result).caption).split())
    assert star_rule(False, hedges=True) in caption and "every copy sent, hedges too" in caption


def test_the_rule_says_hedges_count_only_where_a_strategy_hedges() -> None:
    assert "hedge" not in star_rule(False) and "hedge" not in star_rule(True)
    assert star_rule(True, hedges=True).startswith(star_rule(True))
    assert "with hedging, requests count every copy sent" in star_rule(None)
