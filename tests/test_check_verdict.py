"""The one verdict line of ``backoff-sim check``, and the range, from the result's rows (issue 36):
built by hand here, so each wording is checked against the verdicts it states."""

from __future__ import annotations

import math

from sim.analysis.check import IncidentFigures
from sim.analysis.recovery import RecoverySummary
from sim.check.battery import BATTERY
from sim.check.outcome import CheckResult, IncidentRow, LayerRow, RangeRow, recovery_text, verdict

FIGURES = IncidentFigures(0.1, 100.0, 0.05)
ALL = RecoverySummary(3, (1000.0, 2000.0, 3000.0))
NONE = RecoverySummary(3, ())


def _result(given, budget, ranges=()) -> CheckResult:
    rows = tuple(IncidentRow("as_given", BATTERY[i], r, FIGURES) for i, r in enumerate(given))
    rows += tuple(IncidentRow("retry_budget", BATTERY[i], r, FIGURES) for i, r in enumerate(budget))
    layers = (LayerRow("app", "a.toml", 3, 2, 3, 3.0), LayerRow("sidecar", "s.toml", 3, 2, 9, 9.0))
    return CheckResult(layers, rows, {"as_given": "", "retry_budget": "sidecar: a retry budget"}, (),
                       ("sidecar", "num_retries") if ranges else None, tuple(ranges), 3, 50, 1)


def test_settings_that_survive_say_so_with_the_run_count():
    line = verdict(_result([ALL, ALL], [ALL, ALL]))
    assert line == "Your settings survive every incident of the battery (3 runs each); worst case 9 attempts " \
                   "per call at the service."


def test_settings_that_fail_name_the_incidents_and_the_alternative_that_survives_more():
    ranges = [RangeRow(0, 2, 2), RangeRow(1, 2, 2), RangeRow(2, 1, 2)]
    line = verdict(_result([ALL, NONE], [ALL, ALL], ranges))
    assert line.startswith(f"Your settings do not survive 1 of 2 incidents ({BATTERY[1].words}; 3 runs each)")
    assert "; with sidecar: a retry budget it survives 2 of 2" in line
    assert line.endswith("; num_retries recovers from every incident at 0, 1.")


def test_an_undecided_incident_is_not_survived():
    # None: no run could be judged (too noisy): the verdict does not count it as recovered.
    line = verdict(_result([ALL, None], [ALL, ALL]))
    assert "do not survive 1 of 2" in line
    assert recovery_text(None) == "— (not judged)"
    assert recovery_text(ALL) == "3/3 recovered, median 2.0 s (1.0–3.0)"
    assert recovery_text(NONE) == "never (0/3)"
    assert math.isnan(NONE.median)
