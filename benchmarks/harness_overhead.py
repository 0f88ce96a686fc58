"""Harness overhead per tiny case (target <= 2 ms), measured side by side in one run:

  engine   `engine.run_case` on a 1x1 / 4x4 csymm row in-process (plan, fill, golden, truth, upload, call,
           download, checks, judgement), minus the bare operator call on the same prepared buffers;
  runner   rows per second through `runner.run` (isolated worker processes, pipes), 1 worker, 400 tiny rows.

Usage: python3 benchmarks/harness_overhead.py
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from harness.backends import open_backend
from harness.tables.load import load_table
from harness.run.engine import prepare_call, run_case
from harness.run.runner import Settings, run

HEADER = ("case_name,description,side,uplo,m,n,alpha_real,alpha_imag,a_fill,lda,b_fill,ldb,beta_real,beta_imag,"
          "c_fill,ldc,expect_result,mere_threshold,mare_multiplier,random_seed")


def table(path: Path, rows: int, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [HEADER] + [f"TC_L0_{i:04d},tiny,ACLBLAS_SIDE_LEFT,ACLBLAS_UPPER,{size},{size},1.5,0.5,RANDOM_5_5,,"
                        f"RANDOM_5_5,,0.5,-0.25,RANDOM_5_5,,ACLBLAS_STATUS_SUCCESS,0,0,{i + 1}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def per_case_ms(cases, backend) -> tuple[float, float]:
    whole, bare = [], []
    for case in cases:
        t0 = time.perf_counter()
        record = run_case(case, backend)
        whole.append(time.perf_counter() - t0)
        assert record["verdict"] == "PASS", record["reason"]
        prepared = prepare_call(case, backend)
        t0 = time.perf_counter()
        prepared.call()
        bare.append(time.perf_counter() - t0)
        prepared.close()
    return statistics.median(whole) * 1e3, statistics.median(bare) * 1e3


def main() -> None:
    backend = open_backend("cpu")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (1, 4):
            cases = load_table(table(Path(tmp) / f"s{size}" / "csymm_test.csv", 300, size))
            per_case_ms(cases[:20], backend)  # warm caches and imports
            whole, bare = per_case_ms(cases, backend)
            print(f"engine, {size}x{size} csymm: {whole:.3f} ms per case, operator call {bare:.3f} ms, "
                  f"harness overhead {whole - bare:.3f} ms (median of {len(cases)})")
        cases = load_table(table(Path(tmp) / "runner" / "csymm_test.csv", 400, 4))
        done = []
        t0 = time.perf_counter()
        run(cases, Settings(workers=1), done.append)
        elapsed = time.perf_counter() - t0
        assert all(r["verdict"] == "PASS" for r in done)
        print(f"runner, 1 worker, {len(done)} rows of 4x4 csymm: {elapsed / len(done) * 1e3:.3f} ms per row "
              f"including worker start")
    backend.close()


if __name__ == "__main__":
    main()
