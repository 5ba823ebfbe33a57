"""PoolServer with open arrivals and no retries against queueing theory, and against Ciw.

Every run: CLIENTS Poisson sources (so Poisson arrivals at rate λ), one attempt per call, no
network delay, no timeout, so a request's latency is its sojourn time (wait + service). The
queue starts empty: requests completing in the first WARMUP are left out.

Tolerances come from repetitions (each its own seeded streams): successive sojourn times are
strongly correlated near saturation, so the spread of whole-run means is the honest error. With
R repetitions the grand mean's error over its standard error SE is t-distributed with R − 1
degrees of freedom; |t| > 5 has probability 0.07% at 9 df (0.008% at 19; 0.4% at 5, the Ciw
check's 6 runs), so ``BOUND`` SEs is a failure only when the model is wrong (the runs are
seeded: a test that passes keeps passing). Each test also asserts that its SE is small (a
tolerance too wide to catch a wrong formula would pass anything).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from queueing import (mean_and_se, md1_sojourn, mm1k_blocking, mmc_sojourn, pool_spec,
                      runs, steady)

BOUND = 5.0  # standard errors (see the module docstring)
S = 10.0  # mean service time
MU = 1.0 / S


def _check_mean(measured: list[float], theory: float, max_relative_se: float) -> None:
    mean, se = mean_and_se(measured)
    assert se / theory < max_relative_se, f"too noisy to test: SE {se:.3g} of {theory:.4g}"
    assert abs(mean - theory) <= BOUND * se, f"mean {mean:.4g} vs theory {theory:.4g} (SE {se:.3g})"


def test_mmc_mean_sojourn_matches_erlang_c() -> None:
    """M/M/4 at ρ = 0.7: W = C(4, 2.8)/(4μ − λ) + 1/μ = 13.57 (S = 10). 10 repetitions of ~20k
    arrivals: SE ≈ 1.2% (measured), so the test catches an error of ~6% and more."""
    lam = 0.7 * 4 * MU
    spec = pool_spec(lam, 70_000.0, workers=4, service_time=S, service_distribution="exponential")
    means = [steady(m, 5_000.0).mean() for m in runs(spec, 10)]
    _check_mean(means, mmc_sojourn(4, lam, MU), 0.02)


def test_md1_mean_sojourn_matches_pollaczek_khinchine() -> None:
    """M/D/1 at ρ = 0.7: Wq = ρS/(2(1 − ρ)) = 11.67, W = 21.67. Constant service halves M/M/1's
    wait, so a distribution drawn where constant was asked fails by ~30%."""
    lam = 0.7 * MU
    spec = pool_spec(lam, 200_000.0, workers=1, service_time=S)
    means = [steady(m, 5_000.0).mean() for m in runs(spec, 10)]
    _check_mean(means, md1_sojourn(lam, S), 0.02)


def test_mm1k_blocking_probability() -> None:
    """M/M/1/K with K = 5 (1 in service + queue_size 4) at ρ = 0.9: P_K = (1 − ρ)ρ⁵/(1 − ρ⁶)
    = 0.1260. By PASTA the share of arrivals rejected is P_K; ~18k arrivals per repetition."""
    lam = 0.9 * MU
    spec = pool_spec(lam, 200_000.0, workers=1, service_time=S, service_distribution="exponential",
                     queue_size=4)
    shares = []
    for m in runs(spec, 10):
        # rejected is the server's count of refused arrivals; offered counts every call
        shares.append(m.series["rejected"].sum() / m.series["offered"].sum())
    _check_mean(shares, mm1k_blocking(0.9, 5), 0.03)


def test_littles_law() -> None:
    """L = λ_eff · W for any discipline and a bounded queue: L is the time average of requests
    held (in service + queued, sampled at 1,000 bucket ends), λ_eff the admitted rate, W their
    mean sojourn. M/M/2 with 3 waiting places at ρ = 0.9, LIFO."""
    lam = 0.9 * 2 * MU
    spec = pool_spec(lam, 100_000.0, workers=2, service_time=S, service_distribution="exponential",
                     queue_size=3, discipline="lifo")
    ratios = []
    for m in runs(spec, 10):
        held = (m.series["in_service"] + m.series["queued"]).mean()
        admitted = m.successes / m.horizon
        ratios.append(held / (admitted * m.latencies.mean()))
    _check_mean(ratios, 1.0, 0.02)


def test_fifo_and_lifo_give_the_same_mean_but_lifo_a_heavier_tail() -> None:
    """M/M/1 at ρ = 0.75. Same seeds: same arrivals and the same service times in the order
    service starts, so (work-conserving, non-preemptive) the same departure times: the sums of
    sojourn times differ only by the few requests still held at the horizon (≈ L = 3 of ~37k),
    so the means agree to well within 1%. LIFO's second moment of wait is FIFO's / (1 − ρ)
    (Kleinrock, Queueing Systems vol. 2, §3.2), 4x here: its 99th percentile is far out (~2.3x
    FIFO's measured; > 1.5 asserted, FIFO's own p99 being ln(100)/(μ − λ) = 184)."""
    lam = 0.75 * MU
    pooled = {}
    for discipline in ("fifo", "lifo"):
        spec = pool_spec(lam, 500_000.0, workers=1, service_time=S, service_distribution="exponential",
                         discipline=discipline)
        pooled[discipline] = np.concatenate([m.latencies for m in runs(spec, 2)])
    fifo, lifo = pooled["fifo"], pooled["lifo"]
    assert abs(lifo.mean() / fifo.mean() - 1) < 0.01
    assert abs(fifo.mean() / (1 / (MU - lam)) - 1) < 0.15  # W = 1/(μ − λ) = 40; 2 runs: ~5% SE
    assert np.percentile(lifo, 99) > 1.5 * np.percentile(fifo, 99)


def test_lognormal_quantiles_are_the_median_and_service_p99() -> None:
    """service_time = 10 is the median, service_p99 = 50 the 99th percentile (σ = ln 5 / z₀.₉₉
    = 0.692). Enough workers that nobody waits, so sojourn = service. 20k draws: the sample
    p99's SE is √(0.01·0.99/n) / f(q₉₉) = 0.91 (1.8%), the median's 0.061 (0.6%); 5 SEs."""
    spec = pool_spec(0.5, 40_000.0, workers=200, service_time=10.0,
                     service_distribution="lognormal", service_p99=50.0)
    (m,) = runs(spec, 1)
    n = m.latencies.size
    assert n > 19_000
    sigma = math.log(5.0) / 2.3263478740408408
    for q, value, density in ((50, 10.0, 1 / (math.sqrt(2 * math.pi) * 10.0 * sigma)),
                              (99, 50.0, math.exp(-2.3263478740408408 ** 2 / 2) / (math.sqrt(2 * math.pi) * 50.0 * sigma))):
        se = math.sqrt(q / 100 * (1 - q / 100) / n) / density
        assert abs(np.percentile(m.latencies, q) - value) <= BOUND * se


def _ciw_means(lam: float, c: int, horizon: float, warmup: float, seeds: int) -> list[float]:
    """Mean sojourn of M/M/c runs simulated by Ciw (Palmer et al., a queueing-network
    simulator), one per seed, of the customers that left after ``warmup``."""
    ciw = pytest.importorskip("ciw")  # the test extra installs it: this never skips there
    means = []
    for seed in range(seeds):
        network = ciw.create_network(arrival_distributions=[ciw.dists.Exponential(rate=lam)],
                                     service_distributions=[ciw.dists.Exponential(rate=MU)],
                                     number_of_servers=[c])
        ciw.seed(seed)
        q = ciw.Simulation(network)
        q.simulate_until_max_time(horizon)
        means.append(float(np.mean([r.waiting_time + r.service_time for r in q.get_all_records()
                                    if r.exit_date >= warmup])))
    return means


def _agree_with_ciw(lam: float, c: int, horizon: float, warmup: float, runs_each: int,
                    max_relative_se: float) -> None:
    """Our mean and Ciw's agree within 5 SEs of their difference, and each agrees with Erlang C."""
    ours = [steady(m, warmup).mean()
            for m in runs(pool_spec(lam, horizon, workers=c, service_time=S,
                                    service_distribution="exponential"), runs_each)]
    (a, sa), (b, sb) = mean_and_se(ours), mean_and_se(_ciw_means(lam, c, horizon, warmup, runs_each))
    theory = mmc_sojourn(c, lam, MU)
    assert math.hypot(sa, sb) / theory < max_relative_se, "too noisy to test"
    assert abs(a - b) <= BOUND * math.hypot(sa, sb), f"ours {a:.4g} ± {sa:.2g}, Ciw {b:.4g} ± {sb:.2g}"
    assert abs(a - theory) <= BOUND * sa and abs(b - theory) <= BOUND * sb


@pytest.mark.slow  # a long walk or round trip; a shorter default test keeps its feature
def test_mmc_against_ciw() -> None:
    """M/M/3 at ρ = 0.6 (λ = 0.18, μ = 0.1; W = 12.96), 8 runs of ~5k arrivals each by Ciw and
    by us: the SE of the difference is ~1.2% (measured), so a 6% disagreement fails."""
    _agree_with_ciw(0.18, 3, 30_000.0, 1_000.0, 8, 0.025)


# --- long runs: tighter, and near saturation ---------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("c, rho", [(1, 0.8), (4, 0.8), (16, 0.9)])
def test_mmc_near_saturation(c: int, rho: float) -> None:
    """20 repetitions of ~100k arrivals: SE ≈ 1% at M/M/1 ρ = 0.8 (the noisiest), asserted < 2%."""
    lam = rho * c * MU
    spec = pool_spec(lam, 100_000.0 * S / (rho * c), workers=c, service_time=S,
                     service_distribution="exponential")
    means = [steady(m, 200 * S).mean() for m in runs(spec, 20)]
    _check_mean(means, mmc_sojourn(c, lam, MU), 0.02)


@pytest.mark.slow
def test_mg1_lognormal_matches_pollaczek_khinchine() -> None:
    """M/G/1, lognormal service (median 10, p99 40: σ = 0.596, E[S] = m·e^(σ²/2) = 11.94,
    E[S²] = m²·e^(2σ²) = 203.6) at ρ = 0.8: Wq = λE[S²]/(2(1 − ρ))."""
    sigma = math.log(4.0) / 2.3263478740408408
    mean_s, second = 10.0 * math.exp(sigma ** 2 / 2), 100.0 * math.exp(2 * sigma ** 2)
    lam = 0.8 / mean_s
    spec = pool_spec(lam, 1_500_000.0, workers=1, service_time=10.0, service_distribution="lognormal",
                     service_p99=40.0)
    means = [steady(m, 5_000.0).mean() for m in runs(spec, 20)]
    _check_mean(means, lam * second / (2 * (1 - 0.8)) + mean_s, 0.02)


@pytest.mark.slow
def test_lifo_tail_at_rho_08() -> None:
    """M/M/1 at ρ = 0.8, 10 repetitions of ~100k arrivals: the means agree (see the fast test)
    and LIFO's p99 is over twice FIFO's (≈ 2.8x in the reference's quick simulation)."""
    lam = 0.8 * MU
    pooled = {}
    for discipline in ("fifo", "lifo"):
        spec = pool_spec(lam, 1_250_000.0, workers=1, service_time=S, service_distribution="exponential",
                         discipline=discipline)
        pooled[discipline] = np.concatenate([m.latencies for m in runs(spec, 10)])
    fifo, lifo = pooled["fifo"], pooled["lifo"]
    assert abs(lifo.mean() / fifo.mean() - 1) < 0.01
    assert np.percentile(lifo, 99) > 2.0 * np.percentile(fifo, 99)
    # FIFO's sojourn is Exp(μ − λ): p99 = ln(100)/(μ − λ) = 230; ~1M pooled samples
    assert abs(np.percentile(fifo, 99) / (math.log(100) / (MU - lam)) - 1) < 0.05


@pytest.mark.slow
def test_mmc_against_ciw_near_saturation() -> None:
    """M/M/3 at ρ = 0.8 (W = 20.79), 16 runs of ~24k arrivals each by Ciw and by us (the SE of
    the difference ~2.4%: runs near saturation are strongly correlated within)."""
    _agree_with_ciw(0.24, 3, 100_000.0, 2_000.0, 16, 0.03)
