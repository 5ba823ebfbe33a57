"""Means, 95% confidence intervals and paired differences (no SciPy: tabulated t values)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim.analysis.stats import Estimate, estimate, paired_difference, significantly_different, t975


@pytest.mark.parametrize("dof, expected", [(1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228),
                                           (19, 2.093), (29, 2.045), (30, 2.042), (31, 2.040),
                                           (40, 2.021), (60, 2.000), (100, 1.984), (120, 1.980)])
def test_t975_table(dof: int, expected: float) -> None:
    assert t975(dof) == pytest.approx(expected, abs=1e-3)


def test_t975_tends_to_the_normal_quantile() -> None:
    assert t975(10**6) == pytest.approx(1.96, abs=1e-3)
    values = [t975(d) for d in range(1, 500)]
    assert all(a > b for a, b in zip(values, values[1:]))  # strictly decreasing, no seam at 30
    assert math.isnan(t975(0))


def test_estimate_of_a_known_sample() -> None:
    # mean 5, sample sd sqrt(2.5), n 5: half-width t(4)·sd/√n = 2.7764·0.7071.
    e = estimate(np.array([3.0, 4.0, 5.0, 6.0, 7.0]))
    assert e.n == 5 and e.mean == 5.0
    assert e.ci95 == pytest.approx(2.7764 * math.sqrt(2.5) / math.sqrt(5), rel=1e-4)
    assert e.format() == "5.0 ± 2.0"


def test_constant_sample_has_zero_width() -> None:
    e = estimate(np.full(7, 4.25))
    assert (e.mean, e.ci95, e.n) == (4.25, 0.0, 7)


def test_single_sample_ci_is_nan() -> None:
    e = estimate(np.array([42.0]))
    assert e.mean == 42.0 and e.n == 1 and math.isnan(e.ci95)
    assert e.format() == "42.0"


def test_empty_sample() -> None:
    e = estimate(np.array([]))
    assert e.n == 0 and math.isnan(e.mean) and math.isnan(e.ci95)


def test_paired_difference() -> None:
    a = np.array([10.0, 12.0, 14.0, 16.0])
    b = np.array([9.0, 10.0, 11.0, 12.0])  # differences 1, 2, 3, 4
    d = paired_difference(a, b)
    assert d == estimate(np.array([1.0, 2.0, 3.0, 4.0]))
    assert d.mean == 2.5
    assert d.ci95 == pytest.approx(3.1824 * np.std([1, 2, 3, 4], ddof=1) / 2, rel=1e-4)
    assert significantly_different(a, b) and significantly_different(b, a)


def test_pairing_removes_shared_noise() -> None:
    """A shift of 1 buried in large shared noise: unpaired CIs overlap, the paired one does not."""
    noise = np.random.default_rng(0).normal(0, 50, 20)
    a, b = 100 + noise + 1.0, 100 + noise
    ea, eb = estimate(a), estimate(b)
    assert abs(ea.mean - eb.mean) < ea.ci95 + eb.ci95
    assert significantly_different(a, b)


def test_not_significant_when_the_difference_straddles_zero() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0])
    b = np.array([2.0, 1.0, 4.0, 3.0])  # differences -1, 1, -1, 1
    assert paired_difference(a, b).mean == 0.0
    assert not significantly_different(a, b)
    assert not significantly_different(a, a)


def test_single_pair_has_no_significance() -> None:
    """One repetition has no confidence interval, so no verdict (not "significant")."""
    assert significantly_different(np.array([2.0]), np.array([1.0])) is None
    assert significantly_different(np.array([1.0]), np.array([1.0])) is None


def test_estimate_is_a_value() -> None:
    assert Estimate(1.0, 0.5, 3).format(2) == "1.00 ± 0.50"
