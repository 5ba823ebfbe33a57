"""The success-rate column both strategy tables show (``RunMetrics.success_rate``: the share of
calls that succeeded in the end), as text: a percentage, with its 95% CI where the table's other
means carry theirs."""

from __future__ import annotations

import math

from sim.runs.sweep import SweepResult

SUCCESS_HEADER = "Success"


def success_cell(result: SweepResult, s: int, k: int, ci: bool = True) -> str:
    """``99.2% ± 0.4`` (mean over the repetitions, ± the CI in points when ``ci`` and there are
    several), ``—`` for a run without calls."""
    estimate = result.summary("success_rate", s, k)
    if math.isnan(estimate.mean):
        return "—"
    text = f"{estimate.mean:.1%}"
    if ci and not math.isnan(estimate.ci95):
        text += f" ± {estimate.ci95 * 100:.1f}"
    return text
