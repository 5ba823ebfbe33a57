"""Attempts and retries both, wherever one is shown (issue 39, item 9): ``max_attempts = 4`` is
4 attempts (3 retries); the event tables read ``attempt=3 (retry 2)``, ``attempts=4 (3 retries)``;
the CSV keeps its ``attempt=3``."""

from __future__ import annotations

import numpy as np
from support import make_spec

from sim.core import events as ev
from sim.report.tables import history_table
from sim.runs.engine import record_run
from tui.view.log_search import detail_text, search_mask


def test_attempts_and_retries_read_together() -> None:
    assert ev.attempts_and_retries(4) == "4 attempts (3 retries)"
    assert ev.attempts_and_retries(2) == "2 attempts (1 retry)"
    assert ev.attempts_and_retries(1) == "1 attempt (no retries)"


def test_an_events_attempt_says_which_retry_it_is() -> None:
    assert ev.shown_detail(ev.CLIENT_REQUESTS_WRITE, 1) == "attempt=1"  # the first is no retry
    assert ev.shown_detail(ev.CLIENT_REQUESTS_WRITE, 3) == "attempt=3 (retry 2)"
    assert ev.shown_detail(ev.CLIENT_TIMES_OUT, 2) == "attempt=2 (retry 1)"
    assert ev.shown_detail(ev.CLIENT_GIVES_UP, 4) == "attempts=4 (3 retries)"
    assert ev.shown_detail(ev.CLIENT_SUCCEEDS, 1) == "attempts=1 (no retries)"
    assert ev.shown_detail(ev.SERVER_ACCEPTS, 3) == "count=3"  # not an attempt count
    # The CSV's detail is the reference's, unchanged.
    assert ev.format_detail(ev.CLIENT_REQUESTS_WRITE, 3) == "attempt=3"


def test_the_apps_log_and_runs_table_show_retries_and_search_finds_them() -> None:
    # A pool that drops on a queue timeout through a half-capacity incident: calls retry.
    spec = make_spec("PoolServer", clients=[16], repeat=1, network_mu=1.0, network_sigma=0.2,
                     work_to_duration=0.0, workers=8, service_time=10.0, workload="open",
                     think_time=25.0, horizon=3000.0, timeout=2000.0, queue_timeout=30.0,
                     incidents=[{"start": 1000.0, "duration": 500.0, "capacity": 0.5}],
                     strategies=[{"type": "Constant", "constant": 0.0, "max_attempts": 4}])
    run = record_run(spec, spec.labels[0], 16, 0)
    h = run.history
    codes, details = h.codes(), h.details()
    retried = np.flatnonzero((codes == ev.CLIENT_REQUESTS_WRITE) & (details == 2))
    assert retried.size
    i = int(retried[0])
    assert detail_text(int(codes[i]), int(details[i]), int(h.clients[i])) == "attempt=2 (retry 1)"
    mask = search_mask(codes, details, np.asarray(h.clients), "retry 1")
    assert mask[i] and not mask[(codes == ev.CLIENT_REQUESTS_WRITE) & (details == 1)].any()
    table = history_table(h, limit=len(h))
    cells = [str(c) for c in table.columns[-1].cells]
    assert "attempt=2 (retry 1)" in cells
