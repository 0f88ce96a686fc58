"""The harness's peak memory per row against the `--memory-cap` estimate (harness/run/memory.py), for the largest rows
of both project tables and the issue's batchCount 10^6 row. Each row runs alone in a fresh process on the CPU twin
(timing off: the perf phase's timed calls add no harness memory); the peak is VmHWM over the row minus the resident
bytes at its start, so it includes the operator's own workspace.

Usage: python3 benchmarks/harness_footprint.py [--quick]     (--quick: only rows up to 2048^2)
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SGEMM_HEADER = ("case_name,description,transA,transB,m,n,k,alpha,beta,lda,strideA,ldb,strideB,ldc,strideC,batchCount,"
                "a_fill,b_fill,c_fill,expect_result,mere_threshold,mare_multiplier,random_seed")

#: (table, case name, quick): the largest rows of cases/*.csv by buffer bytes, precision and perf
FROM_TABLES = [
    ("cases/csymm_test.csv", "TC_L1_0465", True), ("cases/csymm_test.csv", "TC_PF_0004", False),
    ("cases/csymm_test.csv", "TC_PF_0006", True),
    ("cases/sgemm_strided_batched_test.csv", "TC_PF_0005", False),
    ("cases/sgemm_strided_batched_test.csv", "TC_PF_0003", True),
]
#: rows of our own: a 4096^3 gemm judged on its full golden (as a precision row), and batchCount 10^6
OWN = [
    ("TC_L1_big", "4096,4096,4096", "1", False),
    ("TC_L1_batches", "8,8,8", "1000000", False),
]

CHILD = """
import json, sys
from harness.backends import open_backend
from harness.run.engine import run_case
from harness.tables.load import load_table
case = next(c for c in load_table(sys.argv[1]) if c.name == sys.argv[2])
backend = open_backend("cpu")
rec = run_case(case, backend, memory_cap=1 << 40)
print(json.dumps({"verdict": rec["verdict"], "reason": rec["reason"][:200], "memory": rec["memory"],
                  "duration_s": rec["duration_s"]}))
"""


def measure(table: str, name: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, table, name], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        return {"verdict": "CHILD FAILED", "reason": out.stderr.strip()[-300:], "memory": None}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        own = Path(tmp) / "sgemm_strided_batched_test.csv"
        own.write_text("\n".join([SGEMM_HEADER] + [
            f"{name},own,ACLBLAS_OP_N,ACLBLAS_OP_N,{mnk},1,0,,,,,,,{batch},RANDOM,RANDOM,RANDOM,"
            "ACLBLAS_STATUS_SUCCESS,0,0,1" for name, mnk, batch, _ in OWN]) + "\n")
        rows = [(t, n) for t, n, q in FROM_TABLES if q or not quick]
        rows += [(str(own), n) for n, _, _, q in OWN if q or not quick]
        print(f"{'table':38} {'row':14} {'verdict':8} {'peak GiB':>9} {'estimate GiB':>13} {'ratio':>6} {'s':>6}")
        for table, name in rows:
            result = measure(table, name)
            mem = result.get("memory") or {}
            peak, estimate = mem.get("harness_peak_bytes"), mem.get("harness_estimate_bytes")
            ratio = f"{peak / estimate:.2f}" if peak and estimate else "-"
            print(f"{Path(table).name:38} {name:14} {result['verdict']:8} "
                  f"{(peak or 0) / 2**30:9.3f} {(estimate or 0) / 2**30:13.3f} {ratio:>6} "
                  f"{result.get('duration_s', 0):6.1f}  {result['reason'][:80]}", flush=True)


if __name__ == "__main__":
    main()
