"""Perf and memory verdicts of one row against its baselines.

Verdicts are statistical: a mean a hair under the limit with a CI reaching over it still passes (the task book
judges the mean), but FAIL needs the whole CI on the wrong side; anything between is INCONCLUSIVE, so the answer
to noise is more samples, not a coin flip. `implied_factor` = measured mean / the largest mean that would pass
(<= 1 passes; 1.3 means the operator must get 1.3x faster). Each verdict is judged on the row's figure in the
timing scope its baseline was measured in (`scope` in the entry); when that scope did not run, the verdict is
NO_REF and says which scope to run.
"""
from __future__ import annotations

import math
import re
from typing import Any

from harness.model.settings import DEFAULT_SCOPE
from harness.perf.timing import in_scope

NO_BASELINE = {"kind": "none", "verdict": "NO_REF"}


def same_hardware(a: str | None, b: str | None) -> bool:
    """'Ascend 950PR' == 'ascend950pr': names are compared without case, spaces or punctuation."""
    def norm(s: str | None) -> str:
        return re.sub(r"[^0-9a-z]", "", (s or "").lower())
    return bool(norm(a)) and norm(a) == norm(b)


def hardware_identity(backend_info: dict, override: str | None) -> dict:
    """{"name": what baselines are judged on, "detected": what the runtime reported, "override": --hardware}.
    The runtime's word is `hardware` in the backend's describe() (Ascend SoC, CUDA device name), else its
    `device`; an override replaces it for judging, and the report shows both."""
    detected = str(backend_info.get("hardware") or backend_info.get("device") or "")
    return {"name": override or detected, "detected": detected, "override": override or None}


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else math.inf


def _taskbook(limit: float, mean: float, ci: list[float] | None) -> tuple[str, float, float]:
    """(verdict, ratio limit/mean, implied factor mean/limit)."""
    if mean <= limit:
        verdict = "PASS"
    elif ci is not None and ci[0] > limit:
        verdict = "FAIL"
    else:
        verdict = "INCONCLUSIVE"
    return verdict, _ratio(limit, mean), _ratio(mean, limit)


def _gpu(gpu_us: float, rule: float, mean: float, ci: list[float] | None) -> tuple[str, float, float]:
    """(verdict, ratio gpu/mean, implied factor rule/ratio); the CI's favourable end is its low (fast) end."""
    ratio = _ratio(gpu_us, mean)
    if ratio >= rule:
        verdict = "PASS"
    elif ci is not None and _ratio(gpu_us, ci[0]) < rule:
        verdict = "FAIL"
    else:
        verdict = "INCONCLUSIVE"
    return verdict, ratio, _ratio(rule, ratio) if ratio > 0 else math.inf


#: The hardware whose times the GPU-ratio rule judges: the task packages' gpu_baseline.csv (measured on a GPU, whose
#: name is in the baseline's `hardware` column) is written for Ascend 950PR operator times.
GPU_RULE_TARGET = "Ascend 950PR"


def baseline_verdicts(timing: dict | None, baselines: list, hardware: str) -> list[dict]:
    """One verdict per baseline (harness.perf.baselines.Baseline), task-book and GPU reported separately.

    A task-book limit judges times from its own hardware; a GPU ratio judges times from GPU_RULE_TARGET. On other
    hardware the ratio is still shown, but the verdict is NO_REF with the reason.
    """
    if not baselines:
        return [dict(NO_BASELINE)]
    out = []
    for b in baselines:
        scope = getattr(b, "scope", DEFAULT_SCOPE)
        entry: dict[str, Any] = {
            "kind": b.kind, "verdict": "NO_REF", "reason": "", "value_us": b.value_us,
            "measured_mean_us": None, "ratio": None, "ratio_rule": b.ratio_rule if b.kind == "gpu" else None,
            "implied_factor": None, "hardware": b.hardware, "source": b.source, "method": b.method,
            "scope": scope,
        }
        out.append(entry)
        if b.kind == "none":  # a lookup that matched nothing (harness.perf.baselines.unmatched): its reason says where
            entry["reason"] = b.source
            continue
        if timing is None or not timing.get("n"):
            entry["reason"] = "row was not timed"
            continue
        figure = in_scope(timing, scope)
        if figure is None or not figure.get("n"):
            ran = ", ".join([timing.get("scope", "?"), *(timing.get("scopes") or {})])
            fallback = (timing.get("scope_fallback") or {}).get("reason")
            entry["reason"] = (f"the {b.kind} figure is for the {scope} scope, this run timed {ran} "
                               + (f"({fallback})" if fallback else f"(--timing-scope {scope})"))
            continue
        mean, ci = figure["mean_us"], figure.get("ci95_us")
        if b.kind == "taskbook":
            verdict, ratio, factor = _taskbook(b.value_us, mean, ci)
        elif b.kind == "gpu":
            verdict, ratio, factor = _gpu(b.value_us, b.ratio_rule, mean, ci)
        else:
            entry["reason"] = f"unknown baseline kind {b.kind!r}"
            continue
        entry.update(measured_mean_us=mean, ratio=ratio, implied_factor=factor, verdict=verdict)
        judged_on = b.hardware if b.kind == "taskbook" else GPU_RULE_TARGET
        if not same_hardware(judged_on, hardware):
            entry["verdict"] = "NO_REF"
            entry["reason"] = (f"the {b.kind} rule judges times measured on {judged_on or 'unnamed hardware'}, "
                               f"this run is on {hardware or 'unknown hardware'}")
    return out


def round_decides(rec: dict) -> bool:
    """A round whose record ends its row: not timed, or not passing (also when checked wrong after its timed calls)."""
    return not rec.get("timing") or rec.get("verdict") != "PASS"


def merge_round_records(records: list[dict], case: Any, config: Any, baselines: Any, hardware: str) -> dict:
    """One perf row's record from its rounds (harness.run.runner runs each round in a fresh process): the rounds'
    timings merged (harness.perf.timing.merge_rounds) and judged once against the baselines on `hardware`. A round
    that did not end timed and passing (FAIL, also after its timed calls; CRASH, TIMEOUT, ERROR) decides the row as
    it is, saying which round it was."""
    from harness.perf.timing import merge_rounds

    decided = [(i, r) for i, r in enumerate(records, 1) if round_decides(r)]
    if decided:
        i, rec = decided[0]
        if len(records) > 1:
            rec["reason"] = f"round {i}: {rec.get('reason', '')}"
        return rec
    rec = dict(records[-1])
    rec["timing"] = merge_rounds([r["timing"] for r in records], config)
    rec["duration_s"] = sum(r.get("duration_s") or 0.0 for r in records)
    rec["baseline"] = baseline_verdicts(rec["timing"], baselines(case) if baselines else [], hardware)
    return rec


def memory_verdict(expected_bytes: int | None, measured: dict) -> dict:
    """Workspace high-water against the bytes the operator's design says it needs (exact match)."""
    workspace = measured.get("workspace_bytes")
    result = {"workspace_bytes": workspace, "peak_bytes": measured.get("peak_bytes"),
              "expected_workspace_bytes": expected_bytes}
    if expected_bytes is None or workspace is None:
        missing = "expected size" if expected_bytes is None else "measured workspace"
        return {**result, "verdict": "NO_REF", "reason": f"{missing} unknown"}
    if workspace == expected_bytes:
        return {**result, "verdict": "PASS", "reason": ""}
    return {**result, "verdict": "FAIL",
            "reason": f"workspace high-water {workspace} B, expected {expected_bytes} B"}
