"""One result record per case row: what report.json's `cases` entries, results.csv and the history hold.

Plain dicts on purpose (typed as a TypedDict): the record crosses process boundaries (isolated workers), goes into
JSON and SQLite, and is read back by `compare` long after the code that wrote it has changed.

Keys (contract, docs/architecture.md "Report"; every key in docs/formats.md):
  case_name, op, table, line, description (the table's description cell), verdict, expected_status, status,
  reason, is_perf, params, flops, duration_s,
  precision  None | {"gate": str, "matched_ratio", "max_abs_error", "mere", "mare": float for real outputs or
             {"real": float, "imag": float} for complex ones, "golden_trusted": bool, "evidence": str, ...}
  timing     None | {"mode": "sync"|"steady", "n", "warmup", "mean_us", "median_us", "min_us", "p90_us",
             "stdev_us", "ci95_us": [lo, hi], "samples_us": [...], "converged": bool, "outliers": {...}}
  baseline   [] | [{"kind": "taskbook"|"gpu", "verdict": "PASS"|"FAIL"|"INCONCLUSIVE"|"NO_REF", ...}]
  memory     None | {"workspace_bytes", "peak_bytes", "expected_workspace_bytes", "verdict"}
  disputed_accepted  only on DISPUTED rows the user accepted (--accept-disputed)
"""
from __future__ import annotations

from typing import Any, Mapping, TypedDict

from harness.model.exitcodes import Exit

VERDICTS = ("PASS", "DISPUTED", "FAIL", "ERROR", "CRASH", "TIMEOUT", "SKIP")
#: The verdicts that fail a run (exit code 1) whatever the user accepts.
FAILING = ("FAIL", "ERROR", "CRASH", "TIMEOUT")
#: The official precision gate failed, but the diagnosis shows the output is as accurate as float32 allows
#: (harness.judge.diagnosis.judge). Never a PASS: it fails the run unless the user accepts disputed rows explicitly.
DISPUTED = "DISPUTED"
PERF_VERDICTS = ("PASS", "FAIL", "INCONCLUSIVE", "NO_REF")

class _RecordKeys(TypedDict):
    case_name: str
    op: str
    table: str
    line: int
    description: str
    verdict: str  # one of VERDICTS
    expected_status: int | None
    status: int | None
    reason: str
    is_perf: bool
    params: dict[str, Any]
    flops: float
    duration_s: float
    precision: dict[str, Any] | None
    timing: dict[str, Any] | None
    baseline: list[dict[str, Any]]
    memory: dict[str, Any] | None


class Record(_RecordKeys, total=False):
    disputed_accepted: bool


def new_record(case_name: str, op: str, table: str, line: int, expected_status: int | None,
               is_perf: bool = False, params: dict[str, Any] | None = None, description: str = "") -> Record:
    """A record with every contract key present, so readers never need `.get` guesses."""
    return {
        "case_name": case_name, "op": op, "table": table, "line": line, "description": description,
        "verdict": "ERROR", "expected_status": expected_status, "status": None, "reason": "",
        "is_perf": is_perf, "params": params or {}, "flops": 0.0, "duration_s": 0.0,
        "precision": None, "timing": None, "baseline": [], "memory": None,
    }


def summarize(records: list[Record]) -> dict[str, int]:
    """report.json `summary`: totals per verdict family."""
    count = {v: 0 for v in VERDICTS}
    for r in records:
        count[r["verdict"]] += 1
    return {
        "total": len(records), "passed": count["PASS"], "failed": count["FAIL"],
        "errors": count["ERROR"], "crashed": count["CRASH"], "timeouts": count["TIMEOUT"],
        "skipped": count["SKIP"], "disputed": count[DISPUTED],
        "disputed_accepted": sum(1 for r in records if r["verdict"] == DISPUTED and r.get("disputed_accepted")),
    }


def accept_disputed(rec: Record) -> Record:
    """Mark a DISPUTED row as accepted by the user (`--accept-disputed`); its verdict stays DISPUTED."""
    if rec["verdict"] == DISPUTED:
        rec["disputed_accepted"] = True
    return rec


def fails_run(rec: Record) -> bool:
    """Whether this row makes the run exit 1: a failing verdict, or a DISPUTED one the user has not accepted."""
    return rec["verdict"] in FAILING or (rec["verdict"] == DISPUTED and not rec.get("disputed_accepted"))


def unjudged_device_run(records: list[dict], backend: str, hardware: str) -> str:
    """The one line saying a device run judged none of its perf rows against a baseline ('' when it did, or on
    the cpu backend, which no baseline is for): such a run must not pass as if its times had been checked."""
    if backend == "cpu":
        return ""
    timed = [r for r in records if r.get("timing")]
    judged = [r for r in timed if any(b.get("verdict") not in (None, "NO_REF") for b in r.get("baseline") or [])]
    if judged or not timed:
        return ""
    return (f"harness run: no perf row got a judged baseline on {hardware or 'unknown hardware'} "
            f"({len(timed)} timed rows, every baseline verdict NO_REF); --hardware NAME names the hardware")


def outcome(records: list[Record], meta: Mapping[str, Any] | None = None) -> tuple[Exit, str]:
    """The run's exit code (contract) and, when that is INSUFFICIENT for a reason the counts do not show, the line
    saying why. The one rule for `harness run`, `report`, `merge` and report.json's `exit_code`:
    1 on any row that fails the run (fails_run) or a FAIL baseline verdict; 2 when nothing failed but no row ran,
    a baseline verdict is INCONCLUSIVE, or a device run (meta's backend is not cpu) judged none of its perf rows;
    else 0. Without a meta the run is judged as a cpu run (no baseline is for the cpu backend)."""
    perf = {b.get("verdict") for r in records for b in r.get("baseline") or []}
    if any(fails_run(r) for r in records) or "FAIL" in perf:
        return Exit.FAIL, ""
    if {r["verdict"] for r in records} <= {"SKIP"} or "INCONCLUSIVE" in perf:
        return Exit.INSUFFICIENT, ""
    if meta is not None:
        hardware = meta.get("hardware")
        name = hardware.get("name", "") if isinstance(hardware, Mapping) else str(hardware or "")
        unjudged = unjudged_device_run(records, str(meta.get("backend") or "cpu"), name)
        if unjudged:
            return Exit.INSUFFICIENT, unjudged
    return Exit.OK, ""


def exit_code(records: list[Record], meta: Mapping[str, Any] | None = None) -> Exit:
    """outcome()'s exit code alone."""
    return outcome(records, meta)[0]
