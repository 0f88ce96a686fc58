"""The port of ops-blas `test/frame/verify.h`: its strategies (MIXED_TOLERANCE, MERE_MARE, EXACT) over numpy arrays,
each a verdict with its metrics. What the harness concludes beyond them (the golden trust rule, the diagnosis of a
failed gate, the row's judgement) is harness.judge.diagnosis.

The criteria replicate the C++ frame so that a verdict here is the verdict a reviewer gets from the ops-blas gtest
binaries (skip rules, float vs double arithmetic, strict `<`); where this harness deliberately differs (a NaN on one
side only, the golden trust rule) the docstring says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: MERE_MARE's kEpsilon in ops-blas `verify.h` (2^-14).
EPS_OPS_BLAS = 2.0 ** -14
#: The opbase experimental standard v1's epsilon.
EPS_OPBASE = 1e-7
#: `getMereThreshold(ACL_FLOAT)`; the MARE limit is `multiplier` times this.
FP32_MERE_THRESHOLD = 2.0 ** -13
DEFAULT_MARE_MULTIPLIER = 10.0
#: The sgemm_strided_batched seed's near-zero clamp ("近零抵消元素通过 atol_floor=2^-13 钳位豁免").
SGEMM_ATOL_FLOOR = 2.0 ** -13

GATES = ("mixed_tolerance", "mere_mare", "exact")

#: `getMixedToleranceDefaults(dtype)`: rtol, atol, fixed per-element cap, mantissa bits, emin.
MIXED_DEFAULTS: dict[str, tuple[float, float, float, int, int]] = {
    "float32": (2.0 ** -10, 2.0 ** -16, 1e-2, 23, -126),
    "float16": (2.0 ** -9, 2.0 ** -9, 0.1, 10, -14),
    "bfloat16": (2.0 ** -6, 2.0 ** -6, 1.0, 7, -126),
}


@dataclass(frozen=True)
class MixedResult:
    passed: bool
    matched_ratio: float
    max_abs_error: float
    fail_count: int
    cap_violations: int
    nonfinite_mismatches: int
    count: int
    reason: str


@dataclass(frozen=True)
class MereMareResult:
    passed: bool
    mere: float
    mare: float
    outliers: int
    nonfinite_mismatches: int
    count: int
    valid_count: int
    reason: str


@dataclass(frozen=True)
class ExactResult:
    passed: bool
    mismatches: int
    count: int
    reason: str


def _pair(out: np.ndarray, golden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    o, g = np.asarray(out).ravel(), np.asarray(golden).ravel()
    if o.shape != g.shape:
        raise ValueError(f"output has {o.size} elements, golden {g.size}")
    if np.iscomplexobj(o) or np.iscomplexobj(g):
        raise TypeError("criteria judge real arrays; split complex ones with components()")
    return o, g


def skipped(o: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The frame's skip rule: equal as floats (+0 == -0, equal infinities) or both NaN."""
    return (o == g) | (np.isnan(o) & np.isnan(g))


def fmt(x: Any) -> str:
    """A value as it reads back: 9 significant digits round-trip float32, repr for float64."""
    return f"{float(x):.9g}" if np.asarray(x).dtype.itemsize <= 4 else repr(float(x))


def first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def dtype_name(dtype: Any) -> str:
    """The MIXED_DEFAULTS key for an op precision; complex64 is judged as its float32 components."""
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    name = {"complex64": "float32", "complex32": "float16"}.get(name, name)
    if name not in MIXED_DEFAULTS:
        raise ValueError(f"no mixed-tolerance defaults for {name!r}; known: {', '.join(MIXED_DEFAULTS)}")
    return name


def ulp(x: np.ndarray, mantissa_bits: int = 23, emin: int = -126) -> np.ndarray:
    """`getUlpsAt`: 2^(max(floor(log2|x|), emin) - mantissa_bits); ULP(0) = 2^(emin - mantissa_bits)."""
    ax = np.abs(np.asarray(x, dtype=np.float64))
    _, e = np.frexp(ax)  # ax = f * 2^e with f in [0.5, 1), so floor(log2 ax) = e - 1
    exponent = np.where(ax > 0, np.maximum(e - 1, emin), emin)
    return np.ldexp(1.0, exponent - mantissa_bits)


def mixed_tolerance(out: np.ndarray, golden: np.ndarray, dtype: Any = "float32", *, rtol: float | None = None,
                    atol: float | None = None, required_ratio: float = 0.99) -> MixedResult:
    """ops-blas MIXED_TOLERANCE (opbase standard v2 as `verify.h` implements it).

    Per non-skipped element, in float64: diff = |o - g|; diff > atol + rtol*|g| counts a failure; diff >
    max(fixed, 32*ULP(|g|)) is a hard failure (cap); NaN/Inf on either side (after the skip rule) counts a
    failure and is a hard failure. Skipped elements count as matched. Pass iff matched_ratio >= required_ratio
    and no hard failure. `max_abs_error` is the largest finite diff.
    """
    o, g = _pair(out, golden)
    d_rtol, d_atol, fixed, mantissa, emin = MIXED_DEFAULTS[dtype_name(dtype)]
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    o64, g64 = o.astype(np.float64), g.astype(np.float64)
    live = ~skipped(o64, g64)
    finite = np.isfinite(o64) & np.isfinite(g64)
    nonfinite = live & ~finite
    judged = live & finite
    diff = np.zeros(o.size)
    diff[judged] = np.abs(o64[judged] - g64[judged])
    ag = np.abs(np.where(judged, g64, 0.0))
    tol_fail = judged & (diff > atol + rtol * ag)
    cap = np.maximum(fixed, 32.0 * ulp(ag, mantissa, emin))
    cap_fail = judged & (diff > cap)
    count = o.size
    n_nonfinite, n_cap = int(nonfinite.sum()), int(cap_fail.sum())
    fail_count = n_nonfinite + int(tol_fail.sum())
    ratio = (count - fail_count) / count if count else 1.0
    max_abs = float(diff.max()) if count else 0.0
    passed = ratio >= required_ratio and n_cap == 0 and n_nonfinite == 0
    reason = ""
    if n_nonfinite:
        i = first(nonfinite)
        reason = f"{n_nonfinite} NaN/Inf mismatch(es), first at index {i}: out {fmt(o[i])} vs golden {fmt(g[i])}"
    elif n_cap:
        i = int(np.argmax(np.where(cap_fail, diff / cap, 0.0)))
        reason = (f"{n_cap} element(s) over the max({fixed:g}, 32 ulp) cap, worst at index {i}: |diff| "
                  f"{diff[i]:.6g} > {cap[i]:.6g} (out {fmt(o[i])} vs golden {fmt(g[i])})")
    elif not passed:
        reason = f"matched_ratio {ratio:.6g} < {required_ratio:g} ({fail_count} of {count} outside atol+rtol*|g|)"
    return MixedResult(passed, ratio, max_abs, fail_count, n_cap, n_nonfinite, count, reason)


def effective_thresholds(threshold: float, multiplier: float) -> tuple[float, float]:
    """CSV `mere_threshold <= 0` means the FP32 default (2^-13, multiplier 10), as ops-blas ssymm reads it; a
    non-positive multiplier alone falls back to 10."""
    if threshold <= 0:
        return FP32_MERE_THRESHOLD, DEFAULT_MARE_MULTIPLIER
    return threshold, multiplier if multiplier > 0 else DEFAULT_MARE_MULTIPLIER


def _relative_errors(o: np.ndarray, g: np.ndarray, eps: float, atol_floor: float | None) -> np.ndarray:
    # verify.h: std::abs(outVal - goldVal) is float arithmetic; the division is double.
    diff = np.abs(o - g).astype(np.float64)
    ag = np.abs(g.astype(np.float64))
    return diff / (ag + eps if atol_floor is None else np.maximum(ag, atol_floor))


def mere_mare(out: np.ndarray, golden: np.ndarray, threshold: float, multiplier: float, eps: float = EPS_OPS_BLAS,
              *, atol_floor: float | None = None) -> MereMareResult:
    """ops-blas MERE_MARE: rel = |o - g| / (|g| + eps) over non-skipped finite elements; MERE = mean (exactly
    equal elements do not dilute it), MARE = max; pass iff no NaN/Inf mismatch and MERE < threshold and MARE <
    multiplier*threshold (both strict).

    Harness rule: a NaN or Inf on one side only is a non-finite mismatch (hard fail) and is left out of MERE/MARE,
    so the reported metrics stay finite (upstream: Inf mismatch, and a lone NaN turns MERE into NaN - fails too).

    atol_floor (the Sgemm seed's clamp, 2^-13): rel = |o - g| / max(|g|, atol_floor), replacing |g| + eps. `max`
    rather than `+` keeps elements with |g| >= atol_floor at their plain relative error, while elements whose
    golden is near zero (cancellation) are judged on absolute error scaled by the floor, i.e. |o - g| <
    threshold*atol_floor counts as good - the exemption the seed asks for.
    """
    o, g = _pair(out, golden)
    if threshold <= 0 or multiplier <= 0:
        raise ValueError("threshold and multiplier must be > 0; use effective_thresholds() for CSV defaults")
    live = ~skipped(o, g)
    finite = np.isfinite(o) & np.isfinite(g)
    nonfinite = live & ~finite
    valid = live & finite
    rel = _relative_errors(o[valid], g[valid], eps, atol_floor)
    limit = multiplier * threshold
    valid_count = int(rel.size)
    mere = float(rel.sum() / valid_count) if valid_count else 0.0
    mare = float(rel.max()) if valid_count else 0.0
    outliers = int((rel > limit).sum())
    n_nonfinite = int(nonfinite.sum())
    passed = n_nonfinite == 0 and mere < threshold and mare < limit
    reason = ""
    if n_nonfinite:
        i = first(nonfinite)
        reason = f"{n_nonfinite} NaN/Inf mismatch(es), first at index {i}: out {fmt(o[i])} vs golden {fmt(g[i])}"
    elif mere >= threshold:
        reason = f"MERE {mere:.6g} >= {threshold:.6g}"
    elif mare >= limit:
        i = int(np.flatnonzero(valid)[int(np.argmax(rel))])
        reason = (f"MARE {mare:.6g} >= {limit:.6g} ({outliers} outlier(s), worst at index {i}: out {fmt(o[i])} vs "
                  f"golden {fmt(g[i])})")
    return MereMareResult(passed, mere, mare, outliers, n_nonfinite, o.size, valid_count, reason)


def exact(out: np.ndarray, golden: np.ndarray) -> ExactResult:
    """ops-blas EXACT: every non-skipped element is a mismatch (bit equality up to +-0 and NaN == NaN)."""
    o, g = _pair(out, golden)
    bad = ~skipped(o, g)
    n = int(bad.sum())
    reason = ""
    if n:
        i = first(bad)
        reason = f"{n} of {o.size} element(s) differ, first at index {i}: out {fmt(o[i])} vs golden {fmt(g[i])}"
    return ExactResult(n == 0, n, o.size, reason)


def components(arr: np.ndarray) -> dict[str, np.ndarray]:
    """Complex outputs are judged per component, as two real arrays (ops-blas cgemm_batched, csymm task book)."""
    a = np.asarray(arr).ravel()
    if np.iscomplexobj(a):
        return {"real": a.real, "imag": a.imag}
    return {"value": a}
