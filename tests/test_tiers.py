"""Retries at every layer (issue 21): tiers of services that call services.

Amplification at tier k is the attempts arriving at tier k per client call. Theory (derived
where used): with a layer making up to ``a`` attempts per call and every attempt failing, tier
k sees ``a^k``; with each bottom attempt failing independently with probability p, the expected
attempts follow the product of (1 + q + q² + q³) terms tier by tier.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from support import one_error_line, sim_process

import sim
from sim.settings.config import load_config
from sim.vocabulary.errors import ConfigError
from sim.runs.engine import run_metrics

NETWORK = "network_mu = 1.0\nnetwork_sigma = 0.0\n"
# Timeouts far beyond any call here (a few hundred time units at most): they never fire.
NEVER = 1.0e6


def three_tiers(p: float = 1.0, *, attempts: tuple[int, int, int] = (4, 4, 4), clients: int = 5,
                repeat: int = 2, top: str = 'control = "PoolServer"\nworkers = 4\nservice_time = 1.0\n',
                extra: str = "", tier2: str = "", tier3: str = "") -> str:
    """Clients → PoolServer → PoolServer → FlakyServer(p), each layer up to ``attempts`` attempts
    with zero backoff, timeouts that never fire; a burst (one call per client)."""
    a1, a2, a3 = attempts
    return f"""
[[simulation]]
title = "Chain"
{top}clients = [{clients}]
repeat = {repeat}
{NETWORK}horizon = {NEVER * 10}
timeout = {NEVER}
strategies = [{{ type = "Constant", constant = 0.0, max_attempts = {a1} }}]
{extra}
[[simulation.tiers]]
control = "PoolServer"
workers = 4
service_time = 1.0
timeout = {NEVER}
retry = {{ type = "Constant", constant = 0.0, max_attempts = {a2} }}
{tier2}
[[simulation.tiers]]
control = "FlakyServer"
failure_rate = {p}
timeout = {NEVER}
retry = {{ type = "Constant", constant = 0.0, max_attempts = {a3} }}
{tier3}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tiers.toml"
    path.write_text(text, encoding="utf-8")
    return path


def amplification(tmp_path: Path, text: str) -> list[list[float]]:
    """Per repetition, the amplification at each tier (arrivals per client call)."""
    spec = load_config(write(tmp_path, text)).simulations[0]
    runs = [run_metrics(spec, spec.strategies[0].chain, spec.clients[0], r) for r in range(spec.repeat)]
    return [[t.requests / m.offered for t in m.tiers] for m in runs]


# --- total failure at the bottom: exactly attempts^depth ---------------------------------------

def test_total_failure_at_the_bottom_amplifies_4_16_64(tmp_path: Path) -> None:
    # Every tier-3 attempt fails, so every call at every layer fails after its 4 attempts: a
    # tier-2 request makes 4 tier-3 attempts, a tier-1 request 4 tier-2 requests (16 tier-3
    # attempts), a client call 4 tier-1 attempts: 4, 16, 64 per client call, in every run.
    for per_run in amplification(tmp_path, three_tiers(1.0)):
        assert per_run == [4.0, 16.0, 64.0]


def test_retrying_only_at_the_top_amplifies_4_at_every_tier(tmp_path: Path) -> None:
    # The tiers make one attempt per call: each of the clients' 4 attempts goes down the chain once.
    for per_run in amplification(tmp_path, three_tiers(1.0, attempts=(4, 1, 1))):
        assert per_run == [4.0, 4.0, 4.0]


def test_retrying_only_in_the_middle(tmp_path: Path) -> None:
    # Clients try once, tier 1 calls tier 2 once, tier 2 tries tier 3 four times: 1, 1, 4.
    for per_run in amplification(tmp_path, three_tiers(1.0, attempts=(1, 1, 4))):
        assert per_run == [1.0, 1.0, 4.0]


def test_a_healthy_chain_sees_one_attempt_per_call_at_every_tier(tmp_path: Path) -> None:
    for per_run in amplification(tmp_path, three_tiers(0.0)):
        assert per_run == [1.0, 1.0, 1.0]


# --- failure probability p at the bottom: the product of (1 + q + q² + q³) terms ---------------

def expected_amplification(p: float, attempts: int = 4) -> list[float]:
    """Expected attempts per client call at tiers 1..3 with up to ``attempts`` attempts per layer.

    A call of up to n attempts, each failing independently with probability q, makes
    1 + q + ... + q^(n-1) attempts on average (attempt i+1 happens when the first i failed) and
    fails with probability q^n. Tier 3 fails each attempt with p: a tier-2 request makes
    A = S(p) tier-3 attempts and fails with q2 = p^n; a tier-1 request makes B = S(q2) tier-2
    requests and fails with q1 = q2^n; a client call makes C = S(q1) tier-1 attempts. The
    attempts of one layer are independent of how many the layer above made (each is a fresh
    request), so the expectations multiply: C, C·B, C·B·A.
    """
    def s(q: float) -> float:
        return sum(q ** i for i in range(attempts))
    q2 = p ** attempts
    q1 = q2 ** attempts
    a, b, c = s(p), s(q2), s(q1)
    return [c, c * b, c * b * a]


def test_expected_amplification_formula_at_its_ends() -> None:
    assert expected_amplification(1.0) == [4.0, 16.0, 64.0]
    assert expected_amplification(0.0) == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("p", [0.5, 0.8])
def test_failure_probability_at_the_bottom_follows_the_product(tmp_path: Path, p: float) -> None:
    # 600 calls a repetition, 8 repetitions (independent streams): the repetitions' means are
    # compared with theory within 4 standard errors of their spread (a normal mean strays that
    # far with probability 6e-5; the seed is fixed, so the check is deterministic). A retry so
    # rare that none happens in all N = 4,800 calls (tier 1 at p = 0.5: 1.5e-5 extra attempts
    # a call) leaves no spread: the mean is then 1 and may miss theory by up to ~1/N.
    calls, repeat = 600, 8
    reps = np.array(amplification(tmp_path, three_tiers(p, clients=calls, repeat=repeat)))
    theory = expected_amplification(p)
    mean = reps.mean(axis=0)
    se = reps.std(axis=0, ddof=1) / math.sqrt(repeat)
    for tier in range(3):
        tolerance = 4 * max(se[tier], 1 / (calls * repeat))
        assert abs(mean[tier] - theory[tier]) <= tolerance, (tier + 1, mean, theory, se)
    # At p = 0.8 each tier is clearly apart from the others: 1.03, 1.69, 5.00.
    if p == 0.8:
        assert mean[0] < mean[1] < mean[2]


# --- deadlines ---------------------------------------------------------------------------------

def deadline_chain(propagate: bool) -> str:
    # Client timeout 120, no client retries; tier 3 fails every attempt after 50 (latency).
    # Times (network 1 each way, service 1 per pool): the client's attempt reaches tier 1 at 1,
    # tier 2 is called at 2 (arrives 3), tier 3 at 4 (arrives 5, fails at 55, reply at 56),
    # retried at 56 (arrives 57, reply 108), at 108 (arrives 109, would fail at 159). The client
    # stops waiting at 120: with deadlines carried down, the call and its attempt in flight are
    # abandoned then, so tier 3 sees 3 attempts; without, tier 2 goes on to its 4th.
    flag = "propagate_deadline = true\n" if propagate else ""
    return f"""
[[simulation]]
title = "Deadline"
control = "PoolServer"
workers = 2
service_time = 1.0
clients = [1]
repeat = 1
{NETWORK}horizon = 10000.0
timeout = 120.0
strategies = [{{ type = "Constant", constant = 0.0, max_attempts = 1 }}]
[[simulation.tiers]]
control = "PoolServer"
workers = 2
service_time = 1.0
timeout = 5000.0
retry = {{ type = "Constant", constant = 0.0, max_attempts = 1 }}
{flag}
[[simulation.tiers]]
control = "FlakyServer"
failure_rate = 1.0
latency = 50.0
timeout = 5000.0
retry = {{ type = "Constant", constant = 0.0, max_attempts = 4 }}
{flag}
"""


def test_deadline_propagation_stops_work_below_a_caller_that_gave_up(tmp_path: Path) -> None:
    assert amplification(tmp_path, deadline_chain(False)) == [[1.0, 1.0, 4.0]]
    assert amplification(tmp_path, deadline_chain(True)) == [[1.0, 1.0, 3.0]]


# --- outputs and determinism ----------------------------------------------------------------------

def test_tiers_table_rows_and_determinism(tmp_path: Path) -> None:
    path = write(tmp_path, three_tiers(0.5, clients=20, repeat=3))
    first = sim.run(path, workers=1)
    rows = first.rows("tiers")
    assert [r["tier"] for r in rows] == [1, 2, 3]
    assert [r["control"] for r in rows] == ["PoolServer", "PoolServer", "FlakyServer"]
    assert set(rows[0]) >= {"tier", "amplification", "amplification_ci95", "requests", "successes", "p50", "p99"}
    # Every client call ends in success or failure at tier 1; successes there are the clients'.
    assert rows[0]["successes"] == pytest.approx(first[0].open_mean("successes", 0, 0))
    again = sim.run(path, workers=1)
    assert again.csv_text("tiers") == first.csv_text("tiers")
    other = sim.run(path, workers=1, seed=9)
    assert other.csv_text("tiers") != first.csv_text("tiers")


def test_a_config_without_tiers_has_no_tiers_table(tmp_path: Path) -> None:
    text = three_tiers(1.0)
    text = text[:text.index("[[simulation.tiers]]")]
    result = sim.run(write(tmp_path, text), workers=1)
    assert "tiers" not in result.kinds


# --- configuration mistakes: one line each ---------------------------------------------------

def config_message(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_contention_control_cannot_be_a_tier(tmp_path: Path) -> None:
    text = three_tiers(1.0).replace('control = "FlakyServer"\nfailure_rate = 1.0',
                                    'control = "LockingServer"\nwrite_mu = 1.0\nwrite_sigma = 0.0')
    message = config_message(tmp_path, text)
    assert "key 'tiers[1].control'" in message and "LockingServer" in message and "contention" in message


def test_a_contention_control_cannot_call_tiers(tmp_path: Path) -> None:
    top = 'control = "LockingServer"\nwrite_mu = 1.0\nwrite_sigma = 0.0\n'
    text = three_tiers(1.0, top=top).replace(f"horizon = {NEVER * 10}\ntimeout = {NEVER}\n", "")
    message = config_message(tmp_path, text)
    assert "key 'control'" in message and "cannot call [[simulation.tiers]]" in message


def test_an_unknown_tier_key_is_named_with_its_tier(tmp_path: Path) -> None:
    message = config_message(tmp_path, three_tiers(1.0, tier2="wrokers = 3"))
    assert "key 'tiers[0].wrokers'" in message and "did you mean 'workers'" in message


def test_a_bad_retry_entry_is_named(tmp_path: Path) -> None:
    text = three_tiers(1.0).replace('retry = { type = "Constant", constant = 0.0, max_attempts = 4 }\n\n[[simulation.tiers]]',
                                    'retry = { type = "Constant", constant = -1.0 }\n\n[[simulation.tiers]]', 1)
    message = config_message(tmp_path, text)
    assert "key 'tiers[0].retry.constant'" in message


def test_a_tier_incident_is_located_under_its_tier(tmp_path: Path) -> None:
    message = config_message(tmp_path, three_tiers(1.0, tier3="incidents = [{ start = 10.0, duration = 5.0, capacity = 0.5 }]"))
    assert "key 'tiers[1].incidents[0]" in message and "FlakyServer" in message


def test_cli_refuses_a_contention_tier_in_one_line_with_status_2(tmp_path: Path) -> None:
    text = three_tiers(1.0).replace('control = "FlakyServer"\nfailure_rate = 1.0',
                                    'control = "ThrottlingServer"\nwindow = 1.0\nlimit = 1')
    path = write(tmp_path, text)
    out = sim_process("run", str(path), "--out", str(tmp_path), "--workers", "1", "--quiet",
                      module="sim.commands.cli", cwd=tmp_path)
    assert out.returncode == 2
    line = one_error_line(out.stderr)
    assert "tiers[1].control" in line and "ThrottlingServer" in line
    assert not list(tmp_path.glob("*.csv"))


# --- explore axes address any tier ---------------------------------------------------------------

def test_explore_axes_address_a_tier_parameter_and_a_tier_incident(tmp_path: Path) -> None:
    text = three_tiers(1.0, clients=3, repeat=1,
                       tier2="incidents = [{ start = 10.0, duration = 5.0, slowdown = 2.0 }]") + """
[simulation.explore]
metric = "amplification"
axes = [{ key = "tiers[1].failure_rate", values = [0.0, 1.0] },
        { key = "tiers[0].incidents[0].duration", values = [5.0, 50.0] }]
"""
    result = sim.explore(write(tmp_path, text), workers=1)
    rows = result.rows()
    cells = {(r["tiers[1].failure_rate"], r["tiers[0].incidents[0].duration"]): r["amplification_mean"]
             for r in rows}
    # Clients make up to 4 attempts at tier 1: one when the bottom never fails, four when it
    # always does (every call below fails for good), whatever the incident's length.
    assert cells == {(0.0, 5.0): 1.0, (0.0, 50.0): 1.0, (1.0, 5.0): 4.0, (1.0, 50.0): 4.0}


def test_an_explore_axis_naming_a_missing_tier_is_one_line(tmp_path: Path) -> None:
    text = three_tiers(1.0, clients=3, repeat=1) + """
[simulation.explore]
axes = [{ key = "tiers[2].failure_rate", values = [0.0, 1.0] }]
"""
    with pytest.raises(ConfigError) as info:
        sim.explore(write(tmp_path, text), workers=1)
    assert "tiers[2] does not exist" in str(info.value) and "\n" not in str(info.value)


# --- events say which tier; the views keep to the clients' ----------------------------------------

def test_a_tiered_events_file_names_each_events_tier_and_reads_back(tmp_path: Path) -> None:
    from sim.export.csv_files import TIERED_EVENTS_HEADER, events_csv_text, read_events_csv
    from sim.runs.engine import record_run
    from tui.view.rundata import RunData

    text = three_tiers(0.5, clients=3, repeat=1,
                       tier3="incidents = [{ start = 0.5, duration = 2.0, error_rate = 0.5 }]")
    spec = load_config(write(tmp_path, text)).simulations[0]
    run = record_run(spec, spec.labels[0], 3, 0)
    # Ids: clients 0-2, tier 1's 4 workers (calling tier 2) 3-6, tier 2's 4 workers 7-10.
    assert (run.layout.starts, run.layout.ends) == ((3, 7), (7, 11))
    csv_text = events_csv_text({spec.labels[0]: run})
    lines = csv_text.splitlines()
    assert tuple(lines[0].split(",")) == TIERED_EVENTS_HEADER
    rows = [line.split(",") for line in lines[1:-1]]
    assert {row[-1] for row in rows} == {"1", "2", "3"}
    for row in rows:
        assert int(row[-1]) == run.layout.tier_of(int(row[5])) if int(row[5]) >= 0 else row[-1] == "1"
    incident = [row for row in rows if row[6].startswith("server_incident")]
    assert [row[-1] for row in incident] == ["3", "3"]  # the bottom's, on its first caller's id
    path = tmp_path / "Chain_events.csv"
    path.write_text(csv_text, encoding="utf-8")
    (history,) = read_events_csv(path).values()
    assert len(history) == len(run.history)
    data = RunData.from_history(history, 3)  # the app's views: the clients and tier 1
    assert int(data.clients.max()) < 3 and len(data.times) == sum(row[-1] == "1" for row in rows)


def test_cli_writes_the_tiers_png(tmp_path: Path) -> None:
    from support import PNG_MAGIC

    path = write(tmp_path, three_tiers(1.0, clients=2, repeat=2))
    out = tmp_path / "out"
    written = sim.run(path, workers=1).export(out)
    names = {p.name for p in written}
    assert {"Chain_tiers.csv", "Chain_tiers.png"} <= names
    assert (out / "Chain_tiers.png").read_bytes().startswith(PNG_MAGIC)


# --- a tier's policies: per worker or shared by the tier -----------------------------------------

@pytest.mark.parametrize("scope", ["client", "shared"])
def test_a_retry_budget_per_tier_bounds_its_retries(tmp_path: Path, scope: str) -> None:
    # Only tier 2 retries (up to 4 attempts at a bottom that always fails), with Finagle's
    # budget at 20% and no reserve: each call deposits 1 on its first attempt, each retry takes
    # 1 / 20% = 5 deposits (all within the budget's 10 s ttl: the run lasts well under 1 s), so
    # at most 1 retry per 5 calls, shared by the tier or per tier-2 worker (4 of them, each
    # affording one retry per 5 of its own calls): 50 calls make at most 50 + 10 bottom attempts,
    # against 4 x 50 = 200 without the budget.
    budget = (f'policies = [{{ type = "RetryBudget", percent = 20.0, min_retries_per_s = 0, '
              f'scope = "{scope}" }}]')
    text = three_tiers(1.0, attempts=(1, 1, 4), clients=50, repeat=1, tier3=budget)
    ((top, middle, bottom),) = amplification(tmp_path, text)
    assert (top, middle) == (1.0, 1.0)
    assert 1.0 < bottom <= 1.2
    assert amplification(tmp_path, three_tiers(1.0, attempts=(1, 1, 4), clients=50, repeat=1)) == [[1.0, 1.0, 4.0]]


# --- the resource estimate counts the tiers ------------------------------------------------------

def test_the_event_estimate_counts_each_tier_and_stays_a_lower_bound(tmp_path: Path) -> None:
    # With p = 0 every call succeeds at once, so each client call passes down the chain exactly
    # once: 4 recorded events at the top (request, accept, complete, success) and at least 3 per
    # tier call (request, accept, reply; the FlakyServer bottom has no complete), against the 4
    # the estimate gave before it knew of tiers.
    from sim.runs.resources import recorded_events

    spec = load_config(write(tmp_path, three_tiers(0.0, clients=5, repeat=1))).simulations[0]
    estimate = recorded_events(spec, 5)
    assert estimate == (4 + 3 * 2) * 5
    recorded = sim.record(write(tmp_path, three_tiers(0.0, clients=5, repeat=1)), simulation="Chain",
                          strategy=spec.strategies[0].label, clients=5)
    assert len(recorded["time"]) >= estimate


def test_a_tier_reports_the_retries_its_callers_policy_denied(tmp_path: Path) -> None:
    # Every bottom attempt fails (p = 1), so tier 2's workers want 3 retries per call to tier 3;
    # a shared retry budget of 10% lets few of them through. Tier 1's calls to tier 2 have no
    # policy: no retry of theirs is denied.
    budget = 'policies = [{ type = "RetryBudget", percent = 10.0, min_retries_per_s = 1, scope = "shared" }]\n'
    spec = load_config(write(tmp_path, three_tiers(1.0, tier3=budget, repeat=1))).simulations[0]
    m = run_metrics(spec, spec.strategies[0].chain, spec.clients[0], 0)
    assert m.tiers[0].retries_denied == m.retries_denied == 0
    assert m.tiers[1].retries_denied == 0
    calls_to_bottom = m.tiers[2].requests
    assert m.tiers[2].retries_denied > 0
    # Each denied retry is one attempt at the bottom that did not happen: with none denied, each
    # of tier 2's calls makes 4 attempts (derived above), so attempts + denied <= 4 per call.
    assert calls_to_bottom + m.tiers[2].retries_denied <= 4 * m.tiers[1].requests
    from sim.export.tiers_csv import TIERS_HEADER
    assert TIERS_HEADER[-1] == "retries_denied"
