"""Small statistics: means with 95% confidence intervals and paired differences.

Student-t critical values are tabulated for small samples (so no SciPy dependency); beyond 30
degrees of freedom a Cornish-Fisher expansion around the normal quantile is accurate to 1e-4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_T975 = (12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
         2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
         2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423)
_Z975 = 1.959963984540054


def t975(dof: int) -> float:
    """The two-sided 95% Student-t critical value for ``dof`` degrees of freedom."""
    if dof < 1:
        return math.nan
    if dof <= len(_T975):
        return _T975[dof - 1]
    z, v = _Z975, float(dof)
    return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3))


@dataclass(frozen=True)
class Estimate:
    """A sample mean with the half-width of its 95% confidence interval (NaN for one sample)."""

    mean: float
    ci95: float
    n: int

    def format(self, digits: int = 1) -> str:
        if math.isnan(self.ci95):
            return f"{self.mean:,.{digits}f}"
        return f"{self.mean:,.{digits}f} ± {self.ci95:,.{digits}f}"


def estimate(values: np.ndarray) -> Estimate:
    """Mean and 95% CI half-width of a 1-D sample."""
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    if n == 0:
        return Estimate(math.nan, math.nan, 0)
    mean = float(values.mean())
    if n < 2:
        return Estimate(mean, math.nan, n)
    sd = float(values.std(ddof=1))
    return Estimate(mean, t975(n - 1) * sd / math.sqrt(n), n)


def paired_difference(a: np.ndarray, b: np.ndarray) -> Estimate:
    """Mean of ``a - b`` over paired samples (same seeds, so common random numbers) with its CI."""
    return estimate(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))


def significantly_different(a: np.ndarray, b: np.ndarray) -> bool | None:
    """True when the paired 95% CI of ``a - b`` excludes zero; None when there is no CI (a
    single pair): one repetition can say which is lower, not whether that is significant."""
    d = paired_difference(a, b)
    if math.isnan(d.ci95):
        return None
    return abs(d.mean) > d.ci95
