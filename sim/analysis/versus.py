"""How each strategy's cost compares with the best strategy's: one verdict and one text, shared by
the CLI table, the app's strategy table and the metrics CSV, so the same cell reads the same.

Strategies ran on common random numbers, so the comparison is paired: the difference of each
repetition's costs, with its 95% CI, and that difference as a percentage of the best mean. A
difference whose CI includes zero is "≈" (not significantly worse). One repetition gives no CI,
so no verdict either: "n/a", never a significance it does not have.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.analysis.stats import Estimate, paired_difference

BEST = "best"
WORSE = "worse"
TIED = "tied"  # the paired difference's 95% CI includes zero
NOT_AVAILABLE = "n/a"  # one repetition: no CI, so no verdict

BEST_MARK = "★ best"
TIED_MARK = "≈"


@dataclass(frozen=True)
class Versus:
    """One strategy against the best: the verdict, the paired difference and its percentage."""

    verdict: str
    difference: Estimate  # mean and 95% CI half-width of (this − best), per paired repetition
    percent: float  # 100 × mean difference / best mean; nan when the best mean is not > 0

    @property
    def text(self) -> str:
        """``★ best``, ``+168.7 ± 54.2 (+17%)``, ``≈ +3.1 ± 5.0 (+1%)`` or, with one
        repetition, ``+168.7 ± n/a (+17%)``."""
        if self.verdict == BEST:
            return BEST_MARK
        d = self.difference
        ci = NOT_AVAILABLE if math.isnan(d.ci95) else f"{d.ci95:,.1f}"
        text = f"{d.mean:+,.1f} ± {ci}"
        if not math.isnan(self.percent):
            text += f" ({format_percent(self.percent)})"
        return f"{TIED_MARK} {text}" if self.verdict == TIED else text


def ci_note(repeat: int) -> str:
    """What the ± in a table means, or that one repetition has none."""
    return "mean ± 95% CI" if repeat > 1 else "1 run each: no CI or significance (n/a)"


def format_percent(value: float) -> str:
    """``+17%``, ``+2%``, ``+0.4%``: whole percents, one decimal below one percent."""
    return f"{value:+.0f}%" if abs(value) >= 0.95 else f"{value:+.1f}%"


def versus_best(values: np.ndarray, best_values: np.ndarray, is_best: bool) -> Versus:
    """Compare one strategy's per-repetition values with the best strategy's (paired)."""
    d = paired_difference(values, best_values)
    best_mean = float(np.mean(best_values))
    percent = 100 * d.mean / best_mean if best_mean > 0 else math.nan
    if is_best:
        verdict = BEST
    elif math.isnan(d.ci95):
        verdict = NOT_AVAILABLE
    elif abs(d.mean) > d.ci95:
        verdict = WORSE
    else:
        verdict = TIED
    return Versus(verdict, d, percent)


def cost_versus_best(result, s: int, k: int) -> Versus:
    """Strategy ``s`` against the lowest mean cost at client-count index ``k`` of a sweep."""
    best = result.best_by_cost(k)
    cost = result.cost[:, k, :]
    return versus_best(cost[s], cost[best], s == best)
