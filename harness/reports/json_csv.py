"""report.json and results.csv: the machine-readable halves of a run's report.

report.json is strict JSON in the one codec of a run's evidence (harness.model.codec: RFC 8259, non-finite floats as the
strings "NaN", "Infinity" and "-Infinity").

results.csv has one row per case with a fixed column set (`COLUMNS`, then any extra precision values a criterion
reported, sorted; one that clashes with a fixed column gets a `precision_` prefix): the columns people paste into the
self-test sheet. Missing values are empty cells; measured non-finite values are NaN / inf / -inf. A text cell that a
spreadsheet would run as a formula (leading `=`, `+`, `-`, `@`, tab or CR) gets a leading `'`, except plain numbers
such as `-1.5`, which stay numeric (OWASP's CSV-injection rule); text over MAX_CSV_CELL_CHARS is cut (report.json
keeps it whole). A complex output's
metrics are in `<metric>_real` / `<metric>_imag`, and the plain `<metric>` column holds the worse of the two, so one
column sorts every row. `flatten` is also what report.md and report.html read, so the files cannot disagree.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.model.abi import INVALID_ENUM_VALUE, LOWER, OP_C, OP_N, OP_T, SIDE_LEFT, SIDE_RIGHT, UPPER, status_name
from harness.model.codec import dumps, strict
from harness.model.record import Record, exit_code, summarize
from harness.reports import headline

#: Precision metrics reported per component ({"real", "imag"} for complex outputs, a plain float for real ones).
METRICS = ("matched_ratio", "max_abs_error", "mere", "mare")
#: Precision keys with a column of their own (or, for `reason`, the record's reason) rather than a generic one.
_PRECISION_OWN = ("gate", "evidence", "golden_trusted", "reason")

COLUMNS = (
    "table", "line", "case_name", "description", "op", "family", "verdict", "expected_status", "status", "reason",
    "shape", "dtype", "params", "flops",
    "gate", *[f"{m}{suffix}" for m in METRICS for suffix in ("", "_real", "_imag")],
    "golden_trusted", "golden_evidence",
    "timing_mode", "n", "warmup", "mean_us", "median_us", "min_us", "p90_us", "stdev_us", "ci95_lo_us", "ci95_hi_us",
    "converged", "outliers_low", "outliers_high", "gflops",
    "taskbook_verdict", "taskbook_limit_us", "taskbook_factor", "gpu_verdict", "gpu_us", "gpu_ratio", "gpu_factor",
    "workspace_bytes", "peak_bytes", "expected_workspace_bytes", "memory_verdict",
    "duration_s",
)

_FIXED = frozenset(COLUMNS)
_ENUM_WORDS = {SIDE_LEFT: "LEFT", SIDE_RIGHT: "RIGHT", UPPER: "UPPER", LOWER: "LOWER", OP_N: "N", OP_T: "T",
               OP_C: "C", INVALID_ENUM_VALUE: "INVALID"}
_SHAPE_FLAGS = ("side", "uplo", "transa", "transb")
_SHAPE_DIMS = (("m", "m"), ("n", "n"), ("k", "k"), ("batchcount", "batch"), ("batch", "batch"))
_PRECISION_LETTER = {"h": "float16", "s": "float32", "d": "float64", "c": "complex64", "z": "complex128"}
_FAMILY = re.compile(r"^(TC_[A-Za-z0-9]+?)_")


def report_document(meta: dict[str, Any], records: list[Record]) -> dict[str, Any]:
    """report.json's content: meta keys at top level, then `summary`, `exit_code`, `headline` (精度 / 性能 / 内存,
    each {verdict, word, reason, detail}), `headline_line` (the report's overall line) and `cases` (the records)."""
    hardware = meta.get("hardware")
    head = headline.headline(records, str(hardware.get("name", "") if isinstance(hardware, dict) else hardware or ""))
    return strict({**meta, "summary": summarize(records), "exit_code": exit_code(records, meta), "headline": head,
                   "headline_line": headline.overall(head), "cases": records})


def write_json(path: Path, meta: dict[str, Any], records: list[Record]) -> Path:
    """Write report.json; atomic, because the runner rewrites it as results arrive and a reader (or a run killed
    mid-write) must never see half a file."""
    write_atomic(Path(path), dumps(report_document(meta, records)))
    return Path(path)


def write_results_csv(path: Path, records: list[Record], frame: pd.DataFrame | None = None) -> Path:
    """Write results.csv (one row per case, `COLUMNS` first); atomic for the same reason as write_json. `frame`
    is `results_frame(records)` when the caller already has it."""
    write_atomic(Path(path), csv_text(results_frame(records) if frame is None else frame))
    return Path(path)


def results_frame(records: list[Record]) -> pd.DataFrame:
    """One flat row per record, fixed columns first and extra precision metrics after them. Object dtype keeps a
    missing value (None) apart from a measured NaN, which the reports show differently."""
    rows = [flatten(r) for r in records]
    columns = [*COLUMNS, *sorted({k for row in rows for k in row} - set(COLUMNS))]
    return pd.DataFrame([[row.get(c) for c in columns] for row in rows], columns=columns, dtype=object)


def csv_text(frame: pd.DataFrame) -> str:
    """results.csv text: missing values empty, measured non-finite values as NaN / inf / -inf (pandas reads them),
    integers stay integers, formula-like text neutralised."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180; a CR inside a cell is then quoted too
    writer.writerow(frame.columns)
    writer.writerows([_csv_cell(v) for v in row] for row in frame.itertuples(index=False, name=None))
    return out.getvalue()


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str):
        if len(value) > MAX_CSV_CELL_CHARS:
            value = f"{value[:MAX_CSV_CELL_CHARS]}… ({len(value)} characters; whole in report.json)"
        return neutralise_formula(value)
    return value


#: Longest text cell in results.csv: a spreadsheet cell holds at most 32767 characters; report.json keeps it whole.
MAX_CSV_CELL_CHARS = 32000


def neutralise_formula(text: str) -> str:
    """`'` before a cell a spreadsheet would evaluate as a formula; plain numbers (`-1.5`, `+3`) stay numbers."""
    if not text.startswith(_FORMULA_START):
        return text
    try:
        float(text)
    except ValueError:
        return "'" + text
    return text if text.strip() == text else "'" + text


def flatten(record: Record) -> dict[str, Any]:
    """A record as one flat dict of scalars (None where a value does not apply)."""
    params = record.get("params") or {}
    row: dict[str, Any] = {
        "table": record.get("table"), "line": record.get("line"), "case_name": record["case_name"],
        "description": record.get("description") or "", "op": record["op"], "family": family(record["case_name"]), "verdict": record["verdict"],
        "expected_status": _status(record.get("expected_status")), "status": _status(record.get("status")),
        "reason": record.get("reason") or "", "shape": shape(params), "dtype": dtype(record["op"], params),
        "params": json.dumps(strict(params), ensure_ascii=False, sort_keys=True) if params else "",
        "flops": record.get("flops") or None, "duration_s": record.get("duration_s"),
    }
    row.update(_precision_columns(record.get("precision")))
    row.update(_timing_columns(record.get("timing"), record.get("flops") or 0.0))
    row.update(_baseline_columns(record))
    memory = record.get("memory") or {}
    row.update({k: memory.get(k) for k in ("workspace_bytes", "peak_bytes", "expected_workspace_bytes")})
    row["memory_verdict"] = memory.get("verdict")
    return row


def family(case_name: str) -> str:
    """`TC_L0_0001` -> `TC_L0`: the case family the ops-blas tables group rows by."""
    match = _FAMILY.match(case_name)
    return match.group(1) if match else "other"


def shape(params: dict[str, Any]) -> str:
    """A short human shape, e.g. `LEFT UPPER m=256 n=256` or `N T m=64 n=64 k=32 batch=8`."""
    lowered = {str(k).lower().replace("_", ""): v for k, v in params.items()}  # trans_a, transA -> transa
    flags = [_enum_word(lowered[k]) for k in _SHAPE_FLAGS if lowered.get(k) is not None]
    dims = [f"{label}={lowered[k]}" for k, label in _SHAPE_DIMS if lowered.get(k) is not None]
    return " ".join(flags + dims)


def dtype(op: str, params: dict[str, Any]) -> str:
    """The data type from the BLAS name's precision letter (aclblasCsymm -> c -> complex64), else what params say."""
    letter = op.lower().removeprefix("aclblas")[:1]
    return _PRECISION_LETTER.get(letter) or str(params.get("dtype", ""))


def baseline_entry(record: Record, kind: str) -> dict[str, Any] | None:
    """The record's first baseline verdict of this kind ("taskbook" | "gpu"), if any."""
    return next((b for b in record.get("baseline") or [] if b.get("kind") == kind), None)


def worst(metric: str, value: Any) -> Any:
    """One number per metric for sorting and plots: the worse component of a complex result."""
    if not isinstance(value, dict):
        return value
    parts = [v for v in value.values() if v is not None]
    if not parts:
        return None
    return min(parts) if metric == "matched_ratio" else max(parts, key=lambda x: (math.isnan(x), abs(x)))


def _precision_columns(precision: dict[str, Any] | None) -> dict[str, Any]:
    if not precision:
        return {}
    row: dict[str, Any] = {"gate": precision.get("gate"), "golden_trusted": precision.get("golden_trusted"),
                           "golden_evidence": precision.get("evidence") or None}
    for key, value in precision.items():
        if key in _PRECISION_OWN:
            continue
        column = f"precision_{key}" if key in _FIXED and key not in METRICS else key  # e.g. its "dtype"
        if isinstance(value, dict):
            row.update({f"{column}_{part}": v for part, v in value.items()})
            row[column] = worst(key, value)
        elif isinstance(value, (str, int, float, bool, np.number, np.bool_)) or value is None:
            row[column] = value
    return row


def _timing_columns(timing: dict[str, Any] | None, flops: float) -> dict[str, Any]:
    if not timing:
        return {}
    ci = timing.get("ci95_us") or [None, None]
    mean = timing.get("mean_us")
    return {
        "timing_mode": timing.get("mode"), "n": timing.get("n"), "warmup": timing.get("warmup"),
        **{k: timing.get(k) for k in ("mean_us", "median_us", "min_us", "p90_us", "stdev_us")},
        "ci95_lo_us": ci[0], "ci95_hi_us": ci[1], "converged": timing.get("converged"),
        "outliers_low": (timing.get("outliers") or {}).get("low"),
        "outliers_high": (timing.get("outliers") or {}).get("high"),
        "gflops": flops / mean / 1e3 if flops and mean else None,
    }


def _baseline_columns(record: Record) -> dict[str, Any]:
    """Taskbook and GPU verdicts side by side; a perf row lacking one kind reports NO_REF for it (contract)."""
    judged = bool(record.get("baseline")) or record.get("timing") is not None
    if not judged:
        return {}
    taskbook = baseline_entry(record, "taskbook") or {}
    gpu = baseline_entry(record, "gpu") or {}
    return {
        "taskbook_verdict": taskbook.get("verdict", "NO_REF"), "taskbook_limit_us": taskbook.get("value_us"),
        "taskbook_factor": taskbook.get("implied_factor"),
        "gpu_verdict": gpu.get("verdict", "NO_REF"), "gpu_us": gpu.get("value_us"), "gpu_ratio": gpu.get("ratio"),
        "gpu_factor": gpu.get("implied_factor"),
    }


def _status(code: int | None) -> str:
    return "" if code is None else status_name(int(code))


def _enum_word(value: Any) -> str:
    try:
        return _ENUM_WORDS.get(int(value), str(value))
    except (TypeError, ValueError):
        return str(value).removeprefix("ACLBLAS_").removeprefix("SIDE_").removeprefix("OP_")


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
