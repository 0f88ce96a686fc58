"""Synthetic records and metas as the reports get them: precision, perf and skipped rows, a small run of each kind,
a 2401-row run with failures, and records shaped like the main job's on the CPU twin (2650 rows of four
operators)."""
from __future__ import annotations

import numpy as np

from harness.model.abi import LOWER, SIDE_LEFT, UPPER, Status
from harness.model.record import new_record
from harness.store.stored import load_meta

#: A meta as the reports get it (the session's, or the one reader's of a stored run: every key present).
META = load_meta({
    "run_id": "20260101-000000-abc1234", "commit": "abc1234", "dirty": False, "branch": "main", "backend": "cpu",
    "device": "cpu twin (2 threads)", "host": "testhost",
    "inputs": [{"path": "cases/csymm_test.csv", "sha256": "ab" * 32}],
    "settings": {"workers": 2, "timeout_s": 60, "timing": {"mode": "sync", "warmup": 10, "min_samples": 50},
                 "gates": {"csymm": "mixed_tolerance", "sgemm_strided_batched": "mere_mare"}},
    "started": "2026-01-01T00:00:00", "finished": "2026-01-01T00:01:00",
    "golden_blas": {"vendor": "OpenBLAS", "version": "0.3.27"}, "backend_info": {"library": "libtwin.so"},
})


def precision_row(name: str, op: str = "csymm", verdict: str = "PASS", trusted: bool = True) -> dict:
    r = new_record(name, op, f"cases/{op}_test.csv", 2, int(Status.SUCCESS),
                   params={"side": SIDE_LEFT, "uplo": UPPER, "m": 16, "n": 8})
    r.update(verdict=verdict, status=int(Status.SUCCESS), duration_s=0.01)
    if op == "csymm":
        r["precision"] = {"gate": "mixed_tolerance", "matched_ratio": {"real": 1.0, "imag": 0.995},
                          "max_abs_error": {"real": 3e-7, "imag": 1e-6}, "mere": {"real": 1e-7, "imag": 2e-7},
                          "mare": {"real": 5e-7, "imag": 0.0}, "count": {"real": 128, "imag": 128},
                          "dtype": "float32", "golden_trusted": trusted,
                          "evidence": "" if trusted else "3 elements overflow: golden inf vs truth 3.5e38"}
    else:
        r["precision"] = {"gate": "mere_mare", "matched_ratio": 1.0, "max_abs_error": 2e-6, "mere": 1e-6,
                          "mare": 4e-6, "mere_threshold": 2.0 ** -13, "mare_multiplier": 10.0, "golden_trusted": True,
                          "evidence": ""}
    if verdict == "FAIL":
        r["reason"] = "mixed_tolerance imag: matched_ratio 0.93 < 0.99"
    return r


def perf_row(name: str, mean: float = 80.0, seed: int = 0, verdict: str = "PASS") -> dict:
    samples = np.random.default_rng(seed).normal(mean, 2.0, 60)
    r = new_record(name, "csymm", "cases/csymm_test.csv", 900, int(Status.SUCCESS), is_perf=True,
                   params={"side": SIDE_LEFT, "uplo": LOWER, "m": 1024, "n": 1024})
    r.update(verdict=verdict, status=int(Status.SUCCESS), flops=8.0 * 1024 ** 3, duration_s=1.5)
    r["timing"] = {"mode": "sync", "n": 60, "warmup": 10, "mean_us": float(samples.mean()),
                   "median_us": float(np.median(samples)), "min_us": float(samples.min()),
                   "p90_us": float(np.percentile(samples, 90)), "stdev_us": float(samples.std(ddof=1)),
                   "ci95_us": [float(samples.mean() - 0.5), float(samples.mean() + 0.5)],
                   "samples_us": samples.tolist(), "converged": True, "outliers": {"low": 0, "high": 1}}
    r["baseline"] = [{"kind": "taskbook", "verdict": "NO_REF", "value_us": 89.27, "ratio": None,
                      "implied_factor": 1.1, "reason": "baseline hardware Ascend 950PR != cpu"}]
    r["memory"] = {"workspace_bytes": 4096, "peak_bytes": 3 * 2 ** 23, "expected_workspace_bytes": 4096,
                   "verdict": "PASS"}
    return r


def skip_row(name: str) -> dict:
    r = new_record(name, "cgemv", "cases/cgemv_test.csv", 5, None)
    r.update(verdict="SKIP", reason="operator cgemv not implemented")
    return r


def run_records() -> list[dict]:
    return [precision_row("TC_L0_0001"), precision_row("TC_L1_0001", op="sgemm_strided_batched"),
            precision_row("TC_EX_0001", trusted=False), perf_row("TC_PF_0001"), skip_row("TC_L0_0002"),
            skip_row("TC_L0_0003")]


def big_run(rows: int = 2400, failing: int = 25) -> list[dict]:
    records = [precision_row(f"TC_L1_{i:04d}", verdict="FAIL" if i < failing else "PASS") for i in range(rows)]
    for i, r in enumerate(records):
        r["line"], r["description"] = i + 2, f"随机用例 {i}"
    judged = perf_row("TC_PF_0001")
    judged["baseline"][0].update(verdict="PASS", reason="")
    return records + [judged]


TWIN = "cpu twin (2 emulated cores)"
MAIN_META = load_meta({**META, "hardware": {"name": TWIN, "detected": TWIN, "override": None},
                       "settings": {**META["settings"], "timing": {"mode": "sync", "warmup": 10, "min_samples": 50,
                                                                   "max_time_s": 0.4, "rounds": 10}}})
#: (op, precision rows, perf rows): the four tables of the main job, 2650 rows
MAIN_TABLES = (("csymm", 1000, 200), ("sgemm_strided_batched", 1000, 200), ("ssymm", 122, 3), ("sgemm_batched", 122, 3))


def main_job() -> list[dict]:
    """Records shaped like the main job's on the CPU twin: 2244 precision and 406 perf rows of four operators;
    perf rows timed under the cap (not converged), the 1024^2 task-book rows with one sample and no CI, task-book
    limits matched but NO_REF (Ascend 950PR limits, twin times), memory judged on perf rows."""
    records = []
    for op, precise, timed_rows in MAIN_TABLES:
        table = f"cases/{op}_test.csv"
        for i in range(precise):
            r = precision_row(f"TC_L{i % 3}_{i:04d}", op="csymm" if op == "csymm" else "sgemm_strided_batched")
            r.update(op=op, table=table, line=i + 2, description=f"random_{op}_{i}")
            r["memory"] = {"workspace_bytes": 0, "peak_bytes": 4096 + i, "expected_workspace_bytes": None,
                           "verdict": "NO_REF", "reason": "expected size unknown"}
            records.append(r)
        for i in range(timed_rows):
            r = perf_row(f"TC_PF_{i + 1:04d}", mean=20.0 + 30 * i, seed=i)
            r.update(op=op, table=table, line=precise + i + 2, description=f"perf_{op}_{i}",
                     flops=8.0 * (64 + 8 * i) ** 3)
            r["params"] = {"side": SIDE_LEFT, "uplo": UPPER, "m": 64 + 8 * i, "n": 64 + 8 * i}
            r["timing"].update(converged=False, not_converged="cap: 40 of 50 samples within the 0.4 s time cap",
                               rounds=[{"n": 6}] * 7)
            r["baseline"] = [{"kind": "none", "verdict": "NO_REF"}]
            r["precision"] = precision_row(r["case_name"], op="csymm" if op == "csymm" else "sgemm")["precision"]
            records.append(r)
    for name, limit, m, side, uplo in (("TC_PF_0001", 7.53, 256, SIDE_LEFT, UPPER),
                                       ("TC_PF_0002", 89.27, 1024, SIDE_LEFT, LOWER),
                                       ("TC_PF_0003", 86.34, 1024, 142, UPPER)):
        r = next(r for r in records if r["op"] == "csymm" and r["case_name"] == name)
        r["params"] = {"side": side, "uplo": uplo, "m": m, "n": m}
        if m == 1024:
            r["timing"].update(n=1, samples_us=[412345.0], mean_us=412345.0, median_us=412345.0, ci95_us=None)
        r["baseline"] = [{"kind": "taskbook", "verdict": "NO_REF", "value_us": limit, "hardware": "Ascend 950PR",
                          "measured_mean_us": r["timing"]["mean_us"], "implied_factor": r["timing"]["mean_us"] / limit,
                          "reason": f"the taskbook rule judges times measured on Ascend 950PR, this run is on {TWIN}"}]
    return records
