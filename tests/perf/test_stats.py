"""harness.perf.stats against scipy/numpy on known samples."""
import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.perf.stats import hodges_lehmann, summarize, tukey_outliers

KNOWN_S = [10e-6, 11e-6, 12e-6, 11.5e-6, 10.5e-6, 30e-6, 11e-6, 10.8e-6, 2e-6, 11.2e-6]


def test_summary_matches_scipy():
    s = summarize(KNOWN_S)
    us = np.array(KNOWN_S) * 1e6
    assert s["n"] == 10
    assert s["mean_us"] == pytest.approx(us.mean())
    assert s["median_us"] == pytest.approx(11.0)
    assert s["min_us"] == pytest.approx(2.0) and s["max_us"] == pytest.approx(30.0)
    assert s["p90_us"] == pytest.approx(sps.scoreatpercentile(us, 90))
    assert s["stdev_us"] == pytest.approx(sps.tstd(us))
    lo, hi = sps.ttest_1samp(us, 0).confidence_interval(0.95)
    assert s["ci95_us"] == pytest.approx([lo, hi])
    lo2, hi2 = sps.t.interval(0.95, len(us) - 1, loc=us.mean(), scale=sps.sem(us))
    assert s["ci95_us"] == pytest.approx([lo2, hi2])


def test_outliers_reported_not_dropped():
    s = summarize(KNOWN_S)
    assert s["outliers"] == {"low": 1, "high": 1, "rule": "Tukey 1.5 IQR"}
    assert s["n"] == len(KNOWN_S)          # both outliers still counted in n and the mean
    assert s["max_us"] == pytest.approx(30.0)


def test_tukey_fences_are_strict():
    # q1=2, q3=6 (linear), IQR=4, fences -4 and 12: a value on the fence is not an outlier
    base = [0, 1, 2, 3, 4, 5, 6, 7]
    assert tukey_outliers(np.array(base + [12.0])) == {"low": 0, "high": 0, "rule": "Tukey 1.5 IQR"}
    assert tukey_outliers(np.array(base + [12.5]))["high"] == 1
    assert tukey_outliers(np.array([-4.5] + base[1:] + [8]))["low"] == 1


def test_single_sample_has_no_spread():
    s = summarize([5e-6])
    assert s["n"] == 1 and s["mean_us"] == pytest.approx(5.0)
    assert s["stdev_us"] is None and s["ci95_us"] is None


def test_empty_is_rejected():
    with pytest.raises(ValueError):
        summarize([])


def test_hodges_lehmann_estimate_and_ci():
    rng = np.random.default_rng(1)
    x = rng.normal(100, 2, 80)
    y = rng.normal(105, 2, 90)
    est, lo, hi = hodges_lehmann(x, y)
    assert est == pytest.approx(np.median(np.subtract.outer(y, x)))
    assert lo < est < hi
    assert lo < 5 < hi and lo > 3 and hi < 7
    # inverting the test: shifting y by the CI ends puts the Mann-Whitney p-value near alpha
    p_lo = sps.mannwhitneyu(x, y - lo).pvalue
    p_hi = sps.mannwhitneyu(x, y - hi).pvalue
    assert 0.02 < p_lo < 0.1 and 0.02 < p_hi < 0.1
    assert sps.mannwhitneyu(x, y - est).pvalue > 0.5


def test_hodges_lehmann_too_few_samples_is_unbounded():
    est, lo, hi = hodges_lehmann([1.0, 2.0], [3.0])
    assert est == pytest.approx(1.5)
    assert lo == -math.inf and hi == math.inf


def test_median_ci_order_statistics_and_coverage():
    from harness.perf.stats import median_ci
    assert median_ci(np.arange(100.0)) == [39.0, 60.0]       # ranks 40 and 61 of 100 (binomial, 95 %)
    assert median_ci(np.arange(5.0)) is None                   # 5 samples cannot give 95 %
    rng = np.random.default_rng(0)
    skewed = [median_ci(rng.lognormal(0, 1, 41)) for _ in range(2000)]
    cover = np.mean([lo <= 1.0 <= hi for lo, hi in skewed])   # the lognormal's median is exp(0) = 1
    assert 0.95 <= cover <= 0.985


def test_modes_find_two_clusters_and_not_a_skewed_tail():
    from harness.perf.stats import modes
    rng = np.random.default_rng(2)
    two = np.concatenate([rng.normal(480, 10, 300), rng.normal(830, 15, 200)])   # the twin's TC_PF_0001 shape
    found = modes(two)
    assert len(found) == 2 and found[0] == pytest.approx(480, rel=0.03) and found[1] == pytest.approx(830, rel=0.03)
    one = np.concatenate([rng.normal(70, 0.7, 900), 70 + rng.gamma(2, 5, 100)])  # one peak, a long slow tail
    assert len(modes(one)) == 1
    rare = np.concatenate([rng.normal(70, 0.7, 990), rng.normal(3900, 50, 10)])  # 1 % descheduled: not a mode
    assert len(modes(rare)) == 1


def test_drift_needs_size_and_significance():
    from harness.perf.stats import drift
    rng = np.random.default_rng(4)
    ramp = np.linspace(100, 120, 300) + rng.normal(0, 2, 300)
    assert drift(ramp) == pytest.approx(0.13, abs=0.03)
    assert drift(rng.normal(100, 2, 300)) is None
    assert drift(np.linspace(100, 103, 300)) is None           # 3 %: under the 5 % that counts
    assert drift(np.array([100.0, 200.0] * 10)) is None        # too few samples for thirds of >= 10


def test_summary_reports_shape():
    rng = np.random.default_rng(2)
    two = rng.permutation(np.concatenate([rng.normal(480, 10, 300), rng.normal(830, 15, 200)])) * 1e-6
    s = summarize(list(two))
    assert len(s["modes_us"]) == 2 and s["drift"] is None
    lo, hi = s["median_ci95_us"]
    assert lo <= s["median_us"] <= hi


def test_the_workers_statistics_agree_with_scipy_stats():
    """t quantile, binomial quantile and Mann-Whitney p without scipy (a timed worker imports none of it): the
    numbers scipy.stats gives (the t quantile to 1e-8: scipy 1.11's own inversion is up to 4e-9 off where scipy
    1.14 agrees to 1e-13; past 60 dof, its series, to 5e-10 at 95 % and 4e-8 at 99.9 %)."""
    from harness.perf.stats import _binomial_half_ppf, mann_whitney_p, t_quantile
    for confidence, rel in ((0.95, 1e-8), (0.8, 1e-8), (0.99, 1e-8), (0.999, 4e-8)):
        for dof in [*range(1, 400), 999, 2999, 100000]:
            assert t_quantile(dof, confidence) == pytest.approx(float(sps.t.ppf(0.5 + confidence / 2, dof)),
                                                                rel=rel), dof
    for n in range(2, 3001, 7):
        assert _binomial_half_ppf(0.025, n) == int(sps.binom.ppf(0.025, n, 0.5))
    rng = np.random.default_rng(5)
    for i in range(200):
        x = rng.normal(size=int(rng.integers(10, 300)))
        y = rng.normal(0.3 * rng.random(), size=int(rng.integers(10, 300)))
        if i % 2:  # ties, as rounded timings have
            x, y = np.round(x, 1), np.round(y, 1)
        want = float(sps.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic").pvalue)
        assert mann_whitney_p(x, y) == pytest.approx(want, rel=1e-9, abs=1e-300)
