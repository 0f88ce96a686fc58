"""Precision criteria: hand-computed cases at the exact boundary of every threshold, the NaN/Inf rules, complex
outputs per component, and the golden trust rule (with wrong outputs that must still fail)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from harness.judge import diagnosis

from harness.judge import verify

f32 = np.float32
T = verify.FP32_MERE_THRESHOLD
# A golden just below 1 whose |g| + 2^-14 is exactly 1, so rel = |o - g| exactly.
G1 = f32(1 - 2.0 ** -14)


def up(x: float) -> np.float32:
    return np.nextafter(f32(x), f32(np.inf))


# ---------------------------------------------------------------- mixed tolerance
def test_mixed_element_at_exact_tolerance_passes_one_ulp_above_fails():
    tol = 2.0 ** -16 + 2.0 ** -10 * 1.0
    at = f32(1.0 + tol)
    assert float(at) - 1.0 == tol  # representable: the boundary is hit exactly
    r = verify.mixed_tolerance(np.array([at]), np.array([f32(1.0)]))
    assert r.passed and r.fail_count == 0 and r.matched_ratio == 1.0 and r.max_abs_error == tol
    r = verify.mixed_tolerance(np.array([up(at)]), np.array([f32(1.0)]))
    assert not r.passed and r.fail_count == 1 and r.matched_ratio == 0.0 and r.cap_violations == 0
    assert "matched_ratio 0 < 0.99" in r.reason


def test_matched_ratio_exactly_099_passes_098_fails():
    g = np.ones(100, dtype=f32)
    o = g.copy()
    o[0] = 1.002  # outside 2^-16 + 2^-10, inside the 0.01 cap
    r = verify.mixed_tolerance(o, g)
    assert r.matched_ratio == 0.99 and r.passed
    o[1] = 1.002
    r = verify.mixed_tolerance(o, g)
    assert r.matched_ratio == 0.98 and not r.passed and r.fail_count == 2
    assert "matched_ratio 0.98 < 0.99" in r.reason


def test_ulp_definition():
    x = np.array([0.0, 1.0, 1.5, -2.0, 4096.0, 1e-45, 2.0 ** -126])
    want = [2.0 ** -149, 2.0 ** -23, 2.0 ** -23, 2.0 ** -22, 2.0 ** -11, 2.0 ** -149, 2.0 ** -149]
    assert verify.ulp(x).tolist() == want


def test_cap_is_001_below_4096_and_32_ulp_from_4096():
    # |g| = 4096: cap = 32 * 2^-11 = 2^-6 > 0.01; the tolerance atol + rtol*4096 ~ 4 is far looser.
    g = np.array([f32(4096.0)])
    assert verify.mixed_tolerance(np.array([f32(4096.0 + 2.0 ** -6)]), g).passed
    r = verify.mixed_tolerance(np.array([f32(4096.0 + 2.0 ** -6 + 2.0 ** -11)]), g)
    assert not r.passed and r.cap_violations == 1 and r.fail_count == 0 and r.matched_ratio == 1.0
    assert "cap" in r.reason
    # |g| just below 4096: 32 ulp = 2^-7 < 0.01, so the fixed 0.01 governs.
    g = np.array([f32(4095.75)])
    assert verify.mixed_tolerance(np.array([f32(4095.75 + 40 * 2.0 ** -12)]), g).passed  # diff 0.00977
    r = verify.mixed_tolerance(np.array([f32(4095.75 + 41 * 2.0 ** -12)]), g)  # diff 0.01001 > 0.01
    assert not r.passed and r.cap_violations == 1


def test_mixed_skip_rule_counts_as_matched():
    o = np.array([0.0, np.inf, np.nan, 2.0], dtype=f32)
    g = np.array([-0.0, np.inf, np.nan, 2.0], dtype=f32)
    r = verify.mixed_tolerance(o, g)
    assert r.passed and r.count == 4 and r.matched_ratio == 1.0 and r.nonfinite_mismatches == 0
    assert verify.mixed_tolerance(np.array([], f32), np.array([], f32)).matched_ratio == 1.0


@pytest.mark.parametrize("o,g", [(np.inf, -np.inf), (np.nan, 1.0), (1.0, np.nan), (1.0, np.inf), (np.inf, 1.0)])
def test_mixed_nonfinite_on_one_side_is_a_hard_failure(o, g):
    ones = np.ones(999, dtype=f32)  # 999 good elements: the ratio alone (0.999) would pass
    r = verify.mixed_tolerance(np.append(ones, f32(o)), np.append(ones, f32(g)))
    assert not r.passed and r.nonfinite_mismatches == 1 and r.fail_count == 1 and r.matched_ratio == 0.999
    assert "NaN/Inf" in r.reason and "index 999" in r.reason


def test_mixed_diff_is_computed_in_float64():
    # In float32 the difference would overflow to Inf; in float64 it is a finite cap violation.
    r = verify.mixed_tolerance(np.array([f32(3e38)]), np.array([f32(-3e38)]))
    assert r.nonfinite_mismatches == 0 and r.cap_violations == 1 and r.max_abs_error == pytest.approx(6e38, rel=1e-6)


def test_mixed_options_and_input_checks():
    o, g = np.array([f32(1.003)]), np.array([f32(1.0)])
    assert not verify.mixed_tolerance(o, g).passed
    assert verify.mixed_tolerance(o, g, rtol=0.004, atol=0.0).passed
    assert verify.mixed_tolerance(o, g, "float16").passed  # atol + rtol = 2^-8
    with pytest.raises(TypeError):
        verify.mixed_tolerance(o.astype(np.complex64), g.astype(np.complex64))
    with pytest.raises(ValueError):
        verify.mixed_tolerance(o, g, "int8")
    with pytest.raises(ValueError):
        verify.mixed_tolerance(o, np.ones(2, f32))


# ---------------------------------------------------------------- MERE / MARE
def test_mere_exactly_equal_to_threshold_fails():
    g = np.array([G1])
    at = np.array([f32(G1 + 2.0 ** -13)])
    r = verify.mere_mare(at, g, T, 10)
    assert r.mere == T and r.mare == T and not r.passed and "MERE" in r.reason
    below = np.array([np.nextafter(at[0], f32(0))])
    assert verify.mere_mare(below, g, T, 10).passed


def _with_outlier(diff: float) -> tuple[np.ndarray, np.ndarray]:
    g = np.full(100, G1, dtype=f32)
    o = g + f32(2.0 ** -24)  # 99 elements with rel 2^-24
    o[0] = f32(G1 + diff)
    return o, g


def test_mare_exactly_equal_to_limit_fails():
    o, g = _with_outlier(10 * 2.0 ** -13)
    r = verify.mere_mare(o, g, T, 10)
    assert r.mare == 10 * T and r.mere < T and not r.passed and r.outliers == 0
    assert r.reason.startswith("MARE") and "index 0" in r.reason
    o, g = _with_outlier(10 * 2.0 ** -13 - 2.0 ** -23)
    assert verify.mere_mare(o, g, T, 10).passed
    o, g = _with_outlier(10 * 2.0 ** -13 + 2.0 ** -23)
    assert verify.mere_mare(o, g, T, 10).outliers == 1


def test_mere_is_a_mean_over_non_identical_elements_only():
    o = np.array([f32(G1 + 2.0 ** -14)] + [f32(3.0)] * 1000)
    g = np.array([G1] + [f32(3.0)] * 1000)
    r = verify.mere_mare(o, g, T, 10)
    assert r.valid_count == 1 and r.count == 1001 and r.mere == 2.0 ** -14


def test_mere_mare_nonfinite_rules():
    g = np.array([1.0, np.inf, np.nan, -0.0], dtype=f32)
    assert verify.mere_mare(np.array([1.0, np.inf, np.nan, 0.0], dtype=f32), g, T, 10).passed
    for i, bad in ((0, np.inf), (0, np.nan), (1, -np.inf), (2, 1.0)):
        o = g.copy()
        o[i] = bad
        r = verify.mere_mare(o, g, T, 10)
        assert not r.passed and r.nonfinite_mismatches == 1 and np.isfinite(r.mere) and "NaN/Inf" in r.reason


def test_mere_mare_eps_and_atol_floor_formulas():
    zero = np.array([f32(0.0)])
    tiny = np.array([f32(2.0 ** -27)])
    r = verify.mere_mare(tiny, zero, T, 10)  # 2^-27 / (0 + 2^-14) = 2^-13: fails
    assert r.mere == T and not r.passed
    r = verify.mere_mare(tiny, zero, T, 10, atol_floor=verify.SGEMM_ATOL_FLOOR)  # 2^-27 / 2^-13 = 2^-14
    assert r.mere == 2.0 ** -14 and r.passed
    one, off = np.array([f32(1.0)]), np.array([f32(1.0 + 2.0 ** -13)])
    assert verify.mere_mare(off, one, T, 10).passed  # 2^-13 / (1 + 2^-14) < T
    r = verify.mere_mare(off, one, T, 10, atol_floor=verify.SGEMM_ATOL_FLOOR)  # 2^-13 / max(1, floor) == T
    assert r.mere == T and not r.passed
    assert verify.mere_mare(tiny, zero, T, 10, verify.EPS_OPBASE).mere == pytest.approx(2.0 ** -27 / 1e-7)


def test_effective_thresholds_and_invalid_thresholds():
    assert verify.effective_thresholds(0.0, 0.0) == (2.0 ** -13, 10.0)
    assert verify.effective_thresholds(-1.0, 50.0) == (2.0 ** -13, 10.0)
    assert verify.effective_thresholds(1e-3, 0.0) == (1e-3, 10.0)
    assert verify.effective_thresholds(1e-3, 50.0) == (1e-3, 50.0)
    with pytest.raises(ValueError):
        verify.mere_mare(np.ones(2, f32), np.ones(2, f32), 0.0, 10)


# ---------------------------------------------------------------- exact, components
def test_exact():
    g = np.array([0.0, np.nan, np.inf, 1.0], dtype=f32)
    assert verify.exact(np.array([-0.0, np.nan, np.inf, 1.0], dtype=f32), g).passed
    r = verify.exact(np.array([0.0, np.nan, np.inf, up(1.0)], dtype=f32), g)
    assert not r.passed and r.mismatches == 1 and "index 3" in r.reason
    assert not verify.exact(np.array([0.0, np.nan, -np.inf, 1.0], dtype=f32), g).passed


def test_components():
    z = np.array([1 + 2j, 3 - 4j], dtype=np.complex64)
    parts = verify.components(z)
    assert list(parts) == ["real", "imag"] and parts["imag"].tolist() == [2.0, -4.0]
    assert parts["real"].dtype == np.float32
    assert list(verify.components(np.ones(3, f32))) == ["value"]


# ---------------------------------------------------------------- judge
def test_judge_real_trusted_pass_and_record_shape():
    g = np.linspace(-3, 3, 200).astype(f32)
    j = diagnosis.judge(g.copy(), g, g.astype(np.float64), "mixed_tolerance")
    assert j.passed and j.golden_trusted and j.evidence == "" and j.reason == ""
    d = j.to_dict()
    json.dumps(d)
    for key in ("gate", "matched_ratio", "max_abs_error", "mere", "mare", "golden_trusted", "evidence"):
        assert key in d
    assert isinstance(d["matched_ratio"], float) and d["gate"] == "mixed_tolerance"


def test_judge_wrong_output_on_trusted_golden_fails():
    g = np.linspace(1, 2, 100).astype(f32)
    o = g.copy()
    o[:7] *= f32(1.005)
    j = diagnosis.judge(o, g, g.astype(np.float64), "mixed_tolerance")
    assert not j.passed and j.golden_trusted and j.reference == "golden"
    assert j.reason.startswith("mixed_tolerance: matched_ratio 0.93 < 0.99")


def test_judge_complex_per_component():
    rng = np.random.default_rng(1)
    g = (rng.uniform(1, 2, 100) + 1j * rng.uniform(1, 2, 100)).astype(np.complex64)
    o = g.copy()
    o.imag[:7] *= f32(1.005)
    j = diagnosis.judge(o, g, g.astype(np.complex128), "mixed_tolerance")
    assert not j.passed and "mixed_tolerance imag: matched_ratio 0.93 < 0.99" in j.reason
    assert "real" not in j.reason
    assert j.metrics["matched_ratio"] == {"real": 1.0, "imag": 0.93}
    assert set(j.metrics["mere"]) == {"real", "imag"} and j.metrics["mere"]["real"] == 0.0
    json.dumps(j.to_dict())


def test_judge_overflow_beyond_flt_max():
    truth = np.array([3.5e38, 1.0])
    g = np.array([np.inf, 1.0], dtype=f32)
    j = diagnosis.judge(g.copy(), g, truth, "mixed_tolerance")
    assert j.passed and j.verdict == "PASS" and not j.golden_trusted  # the official gate decides: it agrees
    assert "overflow" in j.evidence and "worst index 0" in j.evidence and "3.5e+38" in j.evidence
    # FLT_MAX is not the float32 rounding of 3.5e38 either: untrusted golden or not, this output fails.
    j = diagnosis.judge(np.array([np.finfo(f32).max, 1.0], dtype=f32), g, truth, "mixed_tolerance")
    assert not j.passed and "untrusted golden" in j.reason


def test_judge_intermediate_overflow_untrusted_golden():
    # fp32 golden of 3e38 + 3e38 - 5e38 is Inf, the truth 1e38 is representable.
    truth = np.array([1e38, 2.0, 3.0])
    g = np.array([np.inf, 2.0, 3.0], dtype=f32)
    right = truth.astype(f32)
    j = diagnosis.judge(right, g, truth, "mixed_tolerance")
    assert not j.passed and j.verdict == "DISPUTED" and not j.golden_trusted and j.reference == "truth"
    assert j.reason.startswith("official gate fails against the golden") and "golden untrusted" in j.reason
    assert "overflow: 1 element" in j.evidence and j.diagnosis["truth_check"] == "pass"
    assert diagnosis.judge(g.copy(), g, truth, "mixed_tolerance").passed  # agreeing with the golden passes too
    wrong = right.copy()
    wrong[0] = f32(2e38)
    j = diagnosis.judge(wrong, g, truth, "mixed_tolerance")
    assert j.verdict == "FAIL" and not j.golden_trusted and "NaN/Inf" in j.reason and "cap" in j.reason


@pytest.mark.parametrize("gate", ["mixed_tolerance", "mere_mare"])
def test_judge_cancellation_untrusted_golden(gate):
    # 1e8 + 1 - 1e8 in float32 loses the 1: the golden says 0, the truth says 1.
    truth = np.concatenate([[1.0], np.linspace(1, 2, 99)])
    g = truth.astype(f32)
    g[0] = 0.0
    j = diagnosis.judge(truth.astype(f32), g, truth, gate)
    assert j.verdict == "DISPUTED" and not j.passed and not j.golden_trusted and j.reference == "truth"
    assert "worst index 0: golden 0 vs truth 1.0" in j.evidence and f"golden fails {gate}" in j.evidence
    assert diagnosis.judge(g.copy(), g, truth, gate).passed
    wrong = truth.astype(f32)
    wrong[0] = 5.0
    j = diagnosis.judge(wrong, g, truth, gate)
    assert j.verdict == "FAIL" and "untrusted golden" in j.reason and "truth rounded to float32" in j.reason


def test_judge_mere_mare_defaults_and_floor():
    g, o = np.array([f32(0.0)]), np.array([f32(2.0 ** -27)])
    j = diagnosis.judge(o, g, g.astype(np.float64), "mere_mare")  # threshold 0: FP32 default, MERE == 2^-13 fails
    assert j.criteria["mere_threshold"] == T and j.criteria["mare_multiplier"] == 10.0
    assert not j.passed and j.reason.startswith("mere_mare: MERE") and j.metrics["mere"] == T
    j = diagnosis.judge(o, g, g.astype(np.float64), "mere_mare", atol_floor=verify.SGEMM_ATOL_FLOOR)
    assert j.passed and j.metrics["mere"] == 2.0 ** -14 and j.criteria["atol_floor"] == 2.0 ** -13
    j = diagnosis.judge(o, g, g.astype(np.float64), "mere_mare", threshold=2.0 ** -12, multiplier=50)
    assert j.passed and j.criteria["mare_multiplier"] == 50


def test_judge_exact_gate():
    g = np.array([1.0, 2.0, 3.0], dtype=f32)
    truth = g.astype(np.float64)
    assert diagnosis.judge(g.copy(), g, truth, "exact").passed
    o = g.copy()
    o[2] = up(3.0)
    j = diagnosis.judge(o, g, truth, "exact")
    assert not j.passed and j.reason.startswith("exact: 1 of 3 element(s) differ, first at index 2")
    # A golden one ulp off the rounded truth is still trusted: exactness is judged against the golden.
    g1 = g.copy()
    g1[0] = up(1.0)
    j = diagnosis.judge(g, g1, truth, "exact")
    assert j.golden_trusted and not j.passed
    # A golden far off the truth is untrusted (judged by mixed tolerance); the exact truth then passes.
    g1[0] = 1.5
    j = diagnosis.judge(g, g1, truth, "exact")
    assert j.verdict == "DISPUTED" and not j.golden_trusted and "golden fails mixed_tolerance" in j.evidence


def test_judge_empty_region():
    e = np.array([], dtype=np.complex64)
    j = diagnosis.judge(e, e, e.astype(np.complex128), "mixed_tolerance")
    assert j.passed and j.metrics["matched_ratio"] == {"real": 1.0, "imag": 1.0}


def test_judge_rejects_bad_arguments():
    g = np.ones(3, f32)
    with pytest.raises(ValueError):
        diagnosis.judge(g, g, g.astype(np.float64), "abs")
    with pytest.raises(TypeError):
        diagnosis.judge(g.astype(np.complex64), g, g.astype(np.float64), "exact")


def test_forward_error_accepts_an_fp32_result_within_netlibs_bound_when_the_golden_is_untrusted():
    # Cancelling sums: G (sum of magnitudes) is 1e4 while the results are ~1e-4; fp32 golden and operator both miss.
    truth = np.array([3e-4, -2e-4, 5e-4, 1.0])
    scale = np.array([1e4, 1e4, 1e4, 1.0])
    g = (truth + np.array([4e-5, -3e-5, 2e-5, 0.0])).astype(f32)
    close = (truth + np.array([-5e-5, 2e-5, 3e-5, 0.0])).astype(f32)
    j = diagnosis.judge(close, g, truth, "mere_mare", atol_floor=2.0 ** -13, scale=lambda: scale)
    assert j.verdict == "DISPUTED" and not j.golden_trusted and j.reference == "forward_error"
    assert j.diagnosis["forward_error_ratio"] < 16 and j.to_dict()["official_passed"] is False
    # negative control: an error of 16 * 2^-24 * G on one element is over Netlib's threshold
    far = close.copy()
    far[0] = f32(truth[0] + 16 * 2.0 ** -24 * 1e4 * 1.01)
    j = diagnosis.judge(far, g, truth, "mere_mare", atol_floor=2.0 ** -13, scale=lambda: scale)
    assert j.verdict == "FAIL" and "forward error ratio" in j.reason and "element 0" in j.reason
    # without a scale the fallback is not available: the same output fails against both references
    assert diagnosis.judge(close, g, truth, "mere_mare", atol_floor=2.0 ** -13).verdict == "FAIL"


def test_forward_error_requires_non_finite_truth_to_stay_non_finite():
    truth = np.array([np.nan, -np.inf, 2.0])
    g = np.array([np.nan, np.nan, 2.0], dtype=f32)  # summation order turned -inf into NaN
    scale = np.array([np.inf, np.inf, 2.0])
    assert diagnosis.forward_error(np.array([-np.inf, np.nan, 2.0], dtype=f32), g, truth, scale).passed
    swallowed = diagnosis.forward_error(np.array([0.0, np.nan, 2.0], dtype=f32), g, truth, scale)
    assert not swallowed.passed and "finite where the truth is NaN/Inf" in swallowed.reason
    spurious = diagnosis.forward_error(np.array([np.nan, np.nan, np.inf], dtype=f32), g, truth, scale)
    assert not spurious.passed and "truth and golden are finite" in spurious.reason


def test_forward_error_leaves_elements_whose_magnitudes_overflow_float32_unjudged():
    truth = np.array([1e37, 2.0])
    g = np.array([np.nan, 2.0], dtype=f32)
    scale = np.array([1e39, 2.0])  # FLT_MAX-sized terms: fp32 outcome depends on evaluation order
    assert diagnosis.forward_error(np.array([3e38, 2.0], dtype=f32), g, truth, scale).passed
    assert not diagnosis.forward_error(np.array([3e38, 3.0], dtype=f32), g, truth, scale).passed  # the rest still counts


def test_ill_conditioned_elements_of_a_trusted_golden_fall_back_to_the_forward_error_test():
    # A large alpha cancelling in the epilogue: terms ~2e6, result ~9474; fp32 cannot pin it to 32 ulp.
    truth = np.array([9474.75, 1.0, 2.0])
    g = truth.astype(f32)
    out = g.copy()
    out[0] = f32(truth[0] + 0.04)  # over max(0.01, 32 ulp(9474) = 0.03125)
    ill = np.array([2e6, 1.0, 2.0])
    j = diagnosis.judge(out, g, truth, "mixed_tolerance", scale=lambda: ill)
    assert j.verdict == "DISPUTED" and j.golden_trusted and j.reference == "forward_error"
    assert "ill-conditioned" in j.evidence and j.diagnosis["ill_conditioned"] == 1
    # negative control: the same miss on a well-conditioned element (G of the result's own size) fails
    well = np.array([9474.75, 1.0, 2.0])
    j = diagnosis.judge(out, g, truth, "mixed_tolerance", scale=lambda: well)
    assert j.verdict == "FAIL" and "cap" in j.reason
    # and the exact gate is never cleared
    assert diagnosis.judge(out, g, truth, "exact", scale=lambda: ill).verdict == "FAIL"


def test_precision_object_is_flat():
    """Reports tabulate every precision value: the diagnosis is merged in, never a nested object of strings."""
    g = np.linspace(1, 2, 10).astype(f32)
    o = g.copy()
    o[0] = 9.0
    d = diagnosis.judge(o, g, g.astype(np.float64), "mixed_tolerance").to_dict()
    assert d["official_passed"] is False and d["official_reason"].startswith("mixed_tolerance: 1 element")
    assert "diagnosis" not in d and "verdict" not in d and d["truth_check"] is None


def test_bound_ratio_is_under_one_exactly_where_every_fp32_result_passes_the_gate():
    g = np.array([1.0, 2.0, 3.0], dtype=f32)
    well = np.array([1.0, 2.0, 3.0])  # no cancellation: G = |g|
    assert diagnosis.bound_ratio(g, well, "mixed_tolerance") < 1e-2
    assert diagnosis.bound_ratio(g, well, "mere_mare", atol_floor=2.0 ** -13) < 1e-2
    # a result of 3 out of terms of 1e5: the bound 16 * 2^-24 * 1e5 = 0.095 is over the 0.01 cap
    ill = np.array([1.0, 2.0, 1e5])
    assert diagnosis.bound_ratio(g, ill, "mixed_tolerance") > 1
    # G within the cap (6000 * 2^-20 = 0.0057 < 0.01) but over atol + rtol*|g| on one of three elements (> 1%)
    assert 1 < diagnosis.bound_ratio(g, np.array([1.0, 2.0, 6000.0]), "mixed_tolerance") < 1e3
    # float32 terms overflowing on finite inputs: order decides Inf, NaN or finite
    assert diagnosis.bound_ratio(g, np.array([1.0, 2.0, 1e39]), "mixed_tolerance") == np.inf
    # an Inf input (G Inf) or a NaN/Inf golden is judged by kind, not size; EXACT rows have nothing to round
    assert diagnosis.bound_ratio(np.array([np.nan, 2.0], f32), np.array([np.inf, 2.0]), "mixed_tolerance") < 1
    assert diagnosis.bound_ratio(g, ill, "exact") == 0.0
