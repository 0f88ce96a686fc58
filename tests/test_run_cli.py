"""The front doors: `harness run` on foreign ops-blas tables, the pytest plugin, a missing backend, `harness
mutants`. Each runs the real command line."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness import ops
from harness.cli import main
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[1]
SHARED_TABLES = ROOT.parent / "shared" / "data" / "ops-blas-csv"


@pytest.mark.skipif(not SHARED_TABLES.is_dir(), reason="needs ../shared/data/ops-blas-csv beside the checkout")
def test_foreign_ops_blas_tables_run_without_traceback_and_skip_with_a_reason(tmp_path, capsys):
    for table in SHARED_TABLES.glob("*_test.csv"):  # the tables of operators this harness lacks
        if ops.get(table.name.removesuffix("_test.csv")) is None:
            shutil.copy(table, tmp_path)
    tables = sorted(str(p) for p in tmp_path.glob("*_test.csv"))
    code = main(["run", *tables, "--report-dir", str(tmp_path / "r"), "--history", str(tmp_path / "h.sqlite")])
    assert code == 2  # nothing failed, nothing ran: insufficient evidence
    report = json.loads(next((tmp_path / "r").glob("*/report.json")).read_text())
    assert report["summary"]["total"] == 280 == report["summary"]["skipped"]
    reasons = {c["reason"] for c in report["cases"]}
    assert reasons == {f"operator {op} is not implemented by this harness"
                       for op in ("cgemm_batched", "gemv_strided_batched")}


def test_pytest_plugin_runs_each_row_as_an_item(tmp_path, toy_lib):
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_ok", 4, 3), csymm_row("TC_L0_wrong_status", 4, 3, expect="ACLBLAS_STATUS_INVALID_VALUE"),
        csymm_row("TC_L1_other", 5, 2),
    ])
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(table), "-k", "TC_L0", "-v", "-p", "no:cacheprovider",
         f"--harness-operator-lib={toy_lib}", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 1 passed, 1 deselected" in result.stdout
    assert "TC_L0_wrong_status FAILED" in result.stdout
    assert "status ACLBLAS_STATUS_SUCCESS, expected ACLBLAS_STATUS_INVALID_VALUE" in result.stdout


def test_missing_backend_exits_3_with_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND", "LD_LIBRARY"))}
    result = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--backend", "npu",
                             "--report-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 3
    assert len(result.stderr.strip().splitlines()) == 1 and "npu backend" in result.stderr


def test_mutants_command_names_the_rows_that_caught_each_mutant(capsys):
    # two of the mutants tests/test_twin_mutants.py builds anyway (shared build cache)
    code = main(["mutants", "--mutant", "conjugated_a", "--mutant", "beta0_reads_c", "-k",
                 "TC_L0_0001 or TC_L0_0002 or TC_EX_0061", "--every", "1", "-n", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "conjugated_a: caught by" in out and "beta0_reads_c: caught by" in out
    assert "mutants caught: 2/2" in out
