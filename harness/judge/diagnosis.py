"""A row's judgement: the official gate against the golden (the verify.h port, harness.judge.verify) and the harness's
own diagnosis where it fails: whether the golden can be trusted, whether the elements outside the gate are
ill-conditioned in float32, Netlib's forward error bound. The diagnosis can turn FAIL into DISPUTED, never into
PASS.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

import numpy as np

from harness.judge.verify import (EPS_OPS_BLAS, GATES, MIXED_DEFAULTS, MereMareResult, MixedResult, components,
                                   dtype_name, effective_thresholds, exact, first, fmt, mere_mare,
                                   mixed_tolerance, skipped, ulp)

#: A precision row's verdicts: the official gate passed; it failed but the diagnosis shows the operator is as
#: accurate as float32 allows (the golden or the gate cannot decide the row); it failed.
PASS, DISPUTED, FAIL = "PASS", "DISPUTED", "FAIL"


@dataclass
class Judgement:
    """`verdict` is the official one (the gate against the golden, as ops-blas `verify.h` applies it) except that a
    failed gate becomes DISPUTED when the diagnosis clears the output; `passed` is True only for PASS."""

    passed: bool
    gate: str
    metrics: dict[str, Any]
    reason: str = ""
    golden_trusted: bool = True
    evidence: str = ""
    #: What cleared a DISPUTED row: "truth" (the gate against the truth rounded to the op precision) or
    #: "forward_error" (Netlib's float32 forward error test); "golden" when the official gate decided.
    reference: str = "golden"
    #: The thresholds applied (flat numbers and strings, so reports can tabulate them).
    criteria: dict[str, Any] = field(default_factory=dict)
    verdict: str = PASS
    #: The harness's own findings, never the verdict: golden_trusted, truth_check ("pass"/"fail"/None when not
    #: run), forward_error_ratio (None when not run), ill_conditioned (elements outside the gate whose float32
    #: forward error bound exceeds the gate's tolerance), official_reason (why the gate failed, "" when it passed).
    diagnosis: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The record's `precision` object: metric names at top level (record.py contract), then the official
        outcome (`official_passed`, `official_reason`) and the diagnosis keys, flat so every report can tabulate
        them; the verdict itself is the record's."""
        d = asdict(self)
        d.pop("verdict")
        metrics, criteria, diagnosis = d.pop("metrics"), d.pop("criteria"), d.pop("diagnosis")
        return {**metrics, **criteria, **d, **diagnosis, "official_passed": self.passed}


_METRICS = ("matched_ratio", "max_abs_error", "mere", "mare", "count", "fail_count", "cap_violations",
            "nonfinite_mismatches", "outliers", "valid_count", "exact_mismatches")


def _all_metrics(o: np.ndarray, g: np.ndarray, dtype: str, t: float, m: float, eps: float,
                 atol_floor: float | None) -> tuple[dict[str, Any], dict[str, Any]]:
    mixed = mixed_tolerance(o, g, dtype)
    mm = mere_mare(o, g, t, m, eps, atol_floor=atol_floor)
    ex = exact(o, g)
    values = {
        "matched_ratio": mixed.matched_ratio, "max_abs_error": mixed.max_abs_error, "mere": mm.mere,
        "mare": mm.mare, "count": mixed.count, "fail_count": mixed.fail_count,
        "cap_violations": mixed.cap_violations,
        "nonfinite_mismatches": mixed.nonfinite_mismatches,
        "outliers": mm.outliers, "valid_count": mm.valid_count, "exact_mismatches": ex.mismatches,
    }
    return values, {"mixed_tolerance": mixed, "mere_mare": mm, "exact": ex}


def _summary(result: MixedResult | MereMareResult) -> str:
    """The numbers of a criterion result, without naming sides (evidence compares golden with truth)."""
    if isinstance(result, MixedResult):
        return (f"matched_ratio {result.matched_ratio:.6g}, {result.cap_violations} over the cap, "
                f"{result.nonfinite_mismatches} NaN/Inf mismatch(es)")
    return f"MERE {result.mere:.6g}, MARE {result.mare:.6g}, {result.nonfinite_mismatches} NaN/Inf mismatch(es)"


Check = Callable[[np.ndarray, np.ndarray], Any]


def _gate_check(gate: str, dtype: str, t: float, m: float, eps: float, atol_floor: float | None) -> Check:
    """The gate as a two-argument criterion (output or golden, reference)."""
    if gate == "mixed_tolerance":
        return lambda x, ref: mixed_tolerance(x, ref, dtype)
    if gate == "mere_mare":
        return lambda x, ref: mere_mare(x, ref, t, m, eps, atol_floor=atol_floor)
    return exact


def _untrusted_evidence(name: str, g: np.ndarray, truth: np.ndarray, truth_rounded: np.ndarray, gate: str,
                        check: Check) -> str:
    """Why the golden of one component cannot be trusted, or "" when it can.

    Untrusted when the float64 truth is finite but the golden is not (overflow in the op precision), or when the
    golden fails the gate against the truth rounded to the op precision (cancellation, accumulated rounding).
    """
    t64 = truth.astype(np.float64)
    overflow = np.isfinite(t64) & ~np.isfinite(g)
    verdict = check(g, truth_rounded)
    if not overflow.any() and verdict.passed:
        return ""
    label = f"{name}: " if name != "value" else ""
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.abs(g.astype(np.float64) - t64)
        badness = np.where(overflow, np.inf, gap / (np.abs(t64) + EPS_OPS_BLAS))
    badness = np.where(skipped(g, truth_rounded) & ~overflow, 0.0, np.nan_to_num(badness, nan=np.inf))
    i = int(np.argmax(badness))
    worst = f"worst index {i}: golden {fmt(g[i])} vs truth {fmt(t64[i])}"
    if overflow.any():
        beyond = int((overflow & (np.abs(t64) > np.finfo(g.dtype).max)).sum())
        return (f"{label}overflow: {int(overflow.sum())} element(s) with a finite float64 truth where the "
                f"golden is NaN/Inf ({beyond} beyond the op precision's max); {worst}")
    differing = int((badness > 0).sum())
    return (f"{label}golden fails {gate} against the truth rounded to {g.dtype} ({_summary(verdict)}); "
            f"{differing} of {g.size} element(s) differ from it; {worst}")


def _once(compute: Callable[[], Any]) -> Callable[[], Any]:
    """compute() on first call, the same value after: G costs a float64 product, paid only when needed."""
    memo: list[Any] = []

    def get() -> Any:
        if not memo:
            memo.append(compute())
        return memo[0]
    return get


@dataclass
class ForwardErrorResult:
    passed: bool
    ratio: float
    reason: str


#: Netlib xBLAT3's threshold on its test ratio |c - c_true| / (eps * G).
FORWARD_ERROR_THRESHOLD = 16.0
UNIT_ROUNDOFF_F32 = 2.0 ** -24
FLT32_MAX = float(np.finfo(np.float32).max)
FLT32_TRUE_MIN = 2.0 ** -149  # one subnormal step: the underflow term of the error bound


def forward_error(out: np.ndarray, golden: np.ndarray, truth: np.ndarray, scale: np.ndarray) -> ForwardErrorResult:
    """Netlib's BLAS test ratio, for rows whose fp32 golden is itself wrong (cancellation, overflow, Inf arithmetic
    whose NaN/Inf outcome depends on summation order): an fp32 result is acceptable when its error against the
    float64 truth is within the forward error bound of a float32 computation.

    `scale` is G = |alpha| |op(A)| |op(B)| + |beta| |C| per element (the truth computed on magnitudes). Elements
    whose truth is NaN/Inf must be NaN/Inf in the output too (the kind is not compared: it depends on evaluation
    order). Elements whose G exceeds FLT_MAX are not judged: their float32 terms overflow, so any float32 result
    depends on evaluation order. Elsewhere, where the truth is finite, the output may be NaN/Inf only where the
    golden is too (a shared overflow). Over the rest: ratio = |out - truth| / (2^-24 * G) (|out - truth| / 2^-24 where G = 0); pass iff max ratio < 16.
    """
    o, g, t, G = (np.asarray(x, dtype=np.float64) for x in (out, golden, truth, scale))
    finite_t = np.isfinite(t)
    lost = ~finite_t & np.isfinite(o)
    if lost.any():
        i = first(lost)
        return ForwardErrorResult(False, math.inf, f"forward error: {int(lost.sum())} element(s) finite where the "
                                  f"truth is NaN/Inf, first at index {i}: out {fmt(o[i])} vs truth {fmt(t[i])}")
    # where the magnitudes themselves overflow float32, a float32 result depends on evaluation order: not judged
    fits = np.isfinite(G) & (G <= FLT32_MAX)
    blown = finite_t & ~np.isfinite(o) & np.isfinite(g) & fits
    if blown.any():
        i = first(blown)
        return ForwardErrorResult(False, math.inf, f"forward error: {int(blown.sum())} element(s) NaN/Inf where "
                                  f"truth and golden are finite, first at index {i}: out {fmt(o[i])}")
    keep = finite_t & np.isfinite(o) & fits
    if not keep.any():
        return ForwardErrorResult(True, 0.0, "")
    err = np.abs(o[keep] - t[keep])
    ratio = err / (UNIT_ROUNDOFF_F32 * G[keep] + FLT32_TRUE_MIN)
    worst = int(np.argmax(ratio))
    top = float(ratio[worst])
    passed = top < FORWARD_ERROR_THRESHOLD
    reason = "" if passed else (f"forward error ratio {top:.3g} >= {FORWARD_ERROR_THRESHOLD:g} (|out - truth| / "
                                f"(2^-24 G + 2^-149)) at element {int(np.flatnonzero(keep)[worst])}")
    return ForwardErrorResult(passed, top, reason)


def _ill_conditioned_failures(o: np.ndarray, g: np.ndarray, G: np.ndarray, gate: str, dtype: str, t: float,
                              m: float, atol_floor: float | None) -> int:
    """How many elements break the gate's per-element tolerance, if every one of them is ill-conditioned in
    float32 (Netlib's bound 16 * 2^-24 * G exceeds that tolerance, so float32 inputs do not determine the result to
    it: a large alpha cancelling in the epilogue, say); 0 when any breaking element is well-conditioned."""
    o64, g64, G64 = (np.asarray(x, dtype=np.float64) for x in (o, g, G))
    if gate == "mixed_tolerance":
        rtol, atol, fixed, mant, emin = MIXED_DEFAULTS[dtype]
        tol = np.minimum(atol + rtol * np.abs(g64), np.maximum(fixed, 32 * ulp(g64, mant, emin)))
    else:
        tol = m * t * np.maximum(np.abs(g64), atol_floor or 0.0)
    with np.errstate(invalid="ignore"):
        bad = ~skipped(o64, g64) & ~(np.abs(o64 - g64) <= tol)
        ill = FORWARD_ERROR_THRESHOLD * UNIT_ROUNDOFF_F32 * G64 > tol
    return int(bad.sum()) if bad.any() and bool(ill[bad].all()) else 0


def _diagnose(o: np.ndarray, g: np.ndarray, truth: np.ndarray, truth_rounded: np.ndarray, untrusted: bool,
              check: Check, gate: str, dtype: str, t: float, m: float, atol_floor: float | None,
              scales: Callable[[], np.ndarray] | None) -> dict[str, Any]:
    """Why one component failed the official gate, as far as the harness can tell: whether it meets the gate
    against the truth rounded to the op precision (untrusted golden), how many of the elements outside the gate
    are ill-conditioned, and Netlib's forward error ratio. `cleared` says the output is as accurate as float32
    allows; the EXACT gate is a semantic check and is never cleared."""
    out: dict[str, Any] = {"truth_check": None, "forward_error_ratio": None, "ill_conditioned": 0, "cleared": False,
                           "via": "", "detail": ""}
    if gate == "exact" and not untrusted:
        return out
    if untrusted:
        against_truth = check(o, truth_rounded)
        out["truth_check"] = "pass" if against_truth.passed else "fail"
        if against_truth.passed:
            out.update(cleared=True, via="truth")
            return out
        out["detail"] = f"{against_truth.reason} (against the truth rounded to {g.dtype})"
    if scales is None:
        return out
    if not untrusted:
        out["ill_conditioned"] = _ill_conditioned_failures(o, g, scales(), gate, dtype, t, m, atol_floor)
        if not out["ill_conditioned"]:
            return out
    bound = forward_error(o, g, truth, scales())
    out["forward_error_ratio"] = bound.ratio
    if bound.passed:
        out.update(cleared=True, via="forward_error")
    else:
        out["detail"] = "; ".join(x for x in (out["detail"], bound.reason) if x)
    return out


def _verdict(official_reason: str, blocked: list[str], via: str, diagnosis: dict[str, Any]) -> tuple[str, str]:
    """The row's verdict and reason: PASS when the gate passed; DISPUTED when every failing component was cleared
    (`blocked` empty), saying by what; else FAIL with why the diagnosis could not clear it."""
    if not official_reason:
        return PASS, ""
    if not blocked:
        why = ("the output meets the gate against the truth rounded to the op precision" if via == "truth" else
               "the output's error against the float64 truth is within Netlib's float32 forward error bound "
               f"(ratio {diagnosis['forward_error_ratio']:.3g} < 16)")
        doubt_text = "golden untrusted" if not diagnosis["golden_trusted"] else "elements ill-conditioned in float32"
        return DISPUTED, f"official gate fails against the golden ({official_reason}); {doubt_text}: {why}"
    against = "" if diagnosis["golden_trusted"] else " (against the untrusted golden)"
    return FAIL, "; ".join([official_reason + against] + [b for b in blocked if b])


def judge(out: np.ndarray, golden: np.ndarray, truth: np.ndarray, gate: str, *, threshold: float = 0.0,
          multiplier: float = 0.0, eps: float = EPS_OPS_BLAS, atol_floor: float | None = None,
          scale: Callable[[], np.ndarray] | None = None) -> Judgement:
    """Judge an operator's written region: every metric for every component, the official gate, a diagnosis.

    out and golden are 1-D arrays in the op precision (float32 or complex64), truth the float64/complex128
    result from the same inputs. threshold/multiplier <= 0 mean the FP32 MERE/MARE defaults. `scale`, when given,
    returns G (see `forward_error`) for the same elements; it is only called for rows the gate fails.

    The verdict is the gate against the golden on every component, nothing else (what acceptance computes with
    ops-blas `verify.h`). Where it fails, the diagnosis looks for evidence that the output is nevertheless as
    accurate as float32 allows: the golden is untrusted (it fails the gate - for EXACT, mixed tolerance - against
    the truth rounded to the op precision, or is NaN/Inf where the truth is finite) and the output meets the gate
    against that rounded truth or Netlib's forward error bound; or the golden is trusted but every element outside
    the gate is ill-conditioned (`_ill_conditioned_failures`) and the forward error bound holds. When every failing
    component is cleared so, the verdict is DISPUTED, never PASS; otherwise FAIL. `golden_trusted` is False when
    any component's golden is untrusted, and `evidence` says which elements and values showed it.
    """
    if gate not in GATES:
        raise ValueError(f"unknown gate {gate!r}; choose one of {', '.join(GATES)}")
    outs, golds, truths = components(out), components(golden), components(truth)
    if outs.keys() != golds.keys() or golds.keys() != truths.keys():
        raise TypeError("out, golden and truth must all be real or all be complex")
    t, m = effective_thresholds(threshold, multiplier)
    scales = _once(lambda: {name: np.abs(scale()) for name in outs}) if scale is not None else None
    per: dict[str, dict[str, Any]] = {}
    official, cleared, blocked, evidence = [], [], [], []
    diagnosis: dict[str, Any] = {"golden_trusted": True, "truth_check": None, "forward_error_ratio": None,
                                 "ill_conditioned": 0}
    via = ""
    dtype = ""
    for name, o in outs.items():
        g = golds[name]
        dtype = dtype_name(g.dtype)
        with np.errstate(over="ignore"):
            truth_rounded = truths[name].astype(g.dtype)
        check = _gate_check(gate, dtype, t, m, eps, atol_floor)
        trust_gate = "mixed_tolerance" if gate == "exact" else gate
        trust_check = _gate_check(trust_gate, dtype, t, m, eps, atol_floor)
        per[name], results = _all_metrics(o, g, dtype, t, m, eps, atol_floor)
        verdict = results[gate]
        doubt = _untrusted_evidence(name, g, truths[name], truth_rounded, trust_gate, trust_check)
        if doubt:
            diagnosis["golden_trusted"] = False
            evidence.append(doubt)
        if verdict.passed:
            continue
        label = f"{gate}" if name == "value" else f"{gate} {name}"
        official.append(f"{label}: {verdict.reason}")
        component_scale = (lambda n=name: scales()[n]) if scales is not None else None
        found = _diagnose(o, g, truths[name], truth_rounded, bool(doubt), check, gate, dtype, t, m, atol_floor,
                          component_scale)
        diagnosis["truth_check"] = diagnosis["truth_check"] if found["truth_check"] is None else found["truth_check"]
        if found["forward_error_ratio"] is not None:
            diagnosis["forward_error_ratio"] = max(diagnosis["forward_error_ratio"] or 0.0,
                                                   found["forward_error_ratio"])
        diagnosis["ill_conditioned"] += found["ill_conditioned"]
        if found["ill_conditioned"]:
            evidence.append(f"{name}: {found['ill_conditioned']} element(s) outside the gate are ill-conditioned in "
                            "float32 (16 * 2^-24 * G exceeds the gate's tolerance there)")
        if found["cleared"]:
            cleared.append(label)
            via = "forward_error" if found["via"] == "forward_error" or via == "forward_error" else found["via"]
        else:
            blocked.append(found["detail"])
    metrics = {k: per["value"][k] if "value" in per else {c: per[c][k] for c in per} for k in _METRICS}
    official_reason = "; ".join(official)
    diagnosis["official_reason"] = official_reason
    verdict_name, reason = _verdict(official_reason, blocked, via, diagnosis)
    params = {"dtype": dtype, "required_ratio": 0.99, "mere_threshold": t, "mare_multiplier": m, "eps": eps,
              "atol_floor": atol_floor}
    rtol, atol, fixed, _, _ = MIXED_DEFAULTS[dtype]
    params.update(rtol=rtol, atol=atol, max_abs_error_limit=f"max({fixed:g}, 32 ulp)")
    return Judgement(verdict_name == PASS, gate, metrics, reason, diagnosis["golden_trusted"], "; ".join(evidence),
                     via or "golden", params, verdict_name, diagnosis)


def worst_part(parts: list[tuple[str, Judgement]]) -> Judgement:
    """One judgement of an output verified in parts, each part on its own (ops-blas verifies every batch of a
    pointer-array operator with its own `verifyVector`, so the 99% matched ratio must hold in each): the first part
    that FAILs, else the first DISPUTED, else the part closest to failing (lowest matched ratio). Its metrics and
    diagnosis are that part's; the reason and the criteria name the part."""
    rank = {FAIL: 0, DISPUTED: 1, PASS: 2}

    def closeness(part: tuple[str, Judgement]) -> tuple[int, float]:
        ratio = part[1].metrics.get("matched_ratio")
        return rank[part[1].verdict], ratio if isinstance(ratio, float) else 1.0

    label, worst = min(parts, key=closeness)
    return replace(worst, reason=f"{label}: {worst.reason}" if worst.reason else "",
                   criteria={**worst.criteria, "verified_in_parts": len(parts), "reported_part": label})


def bound_ratio(golden: np.ndarray, scale: np.ndarray, gate: str, *, threshold: float = 0.0,
                multiplier: float = 0.0, eps: float = EPS_OPS_BLAS, atol_floor: float | None = None) -> float:
    """How close Netlib's float32 forward error bound 16 * 2^-24 * G comes to what the gate tolerates, as one
    ratio per row: below 1, every output within that bound of the truth passes the official gate, so the row is
    decided by the gate for any correct float32 implementation (whatever its summation order). Long sums that do
    not cancel can exceed 16 * 2^-24 * G (rounding grows like sqrt(K) there): the generator keeps their results
    under MIXED_TOLERANCE's absolute cap, and two implementations of different orders check it empirically.

    MIXED_TOLERANCE: the larger of max(bound / max(fixed, 32 ulp(|g|))) (the per-element cap) and the number of
    elements whose bound exceeds atol + rtol*|g| over the 1% the matched ratio allows. MERE_MARE: the larger of
    max(rel) / (multiplier*threshold) and mean(rel) / threshold with rel = bound / the gate's denominator. EXACT
    rows (quick returns, no arithmetic to round) are 0. A finite G beyond FLT_MAX (finite inputs whose float32
    terms overflow) makes the ratio Inf: whether such an element ends up finite, Inf or NaN depends on the
    summation order. Elements whose G is NaN/Inf (an Inf or NaN input reaches them) or whose golden is NaN/Inf are
    left out: their kind is compared, not their size.
    """
    if gate == "exact":
        return 0.0
    t, m = effective_thresholds(threshold, multiplier)
    G = np.abs(np.asarray(scale, dtype=np.float64)).ravel()
    if (np.isfinite(G) & (G > FLT32_MAX)).any():
        return math.inf
    worst = 0.0
    for g in components(golden).values():
        g64 = g.astype(np.float64)
        finite = np.isfinite(g64) & np.isfinite(G)
        g64, b = g64[finite], FORWARD_ERROR_THRESHOLD * UNIT_ROUNDOFF_F32 * G[finite]
        if not b.size:
            continue
        if gate == "mixed_tolerance":
            rtol, atol, fixed, mant, emin = MIXED_DEFAULTS[dtype_name(g.dtype)]
            cap = np.maximum(fixed, 32 * ulp(g64, mant, emin))
            soft = int((b > atol + rtol * np.abs(g64)).sum()) / (0.01 * g.size)
            worst = max(worst, float((b / cap).max()), soft)
        else:
            rel = b / (np.abs(g64) + eps if atol_floor is None else np.maximum(np.abs(g64), atol_floor))
            worst = max(worst, float(rel.max()) / (m * t), float(rel.mean()) / t)
    return worst
