"""pytest habits on case tables: printed ids paste back as node ids, skips and failures point at the CSV line, and
`--lf`, `-x`/`--maxfail`, `--junitxml` and `-k` work, with and without xdist. Each test runs a real pytest."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tables import csymm_row, write_csymm_table


@pytest.fixture
def tables(tmp_path: Path) -> Path:
    """Two failing rows between passing ones, and a table for an operator the harness does not have."""
    write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_ok", 4, 3),
        csymm_row("TC_L0_bad", 4, 3, expect="ACLBLAS_STATUS_INVALID_VALUE"),
        csymm_row("TC_L0_bad2", 4, 3, expect="ACLBLAS_STATUS_INVALID_VALUE"),
        csymm_row("TC_L1_ok", 5, 2),
    ])
    (tmp_path / "zfoo_test.csv").write_text("case_name,description,m\nTC_A,x,1\n")
    return tmp_path


def _pytest(where: Path, lib: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", f"--harness-operator-lib={lib}", "-o", f"cache_dir={where / '.cache'}",
           *args]
    return subprocess.run(cmd, cwd=where, capture_output=True, text=True, timeout=300)


def test_printed_ids_are_node_ids_that_paste_back(tables, toy_lib):
    listed = _pytest(tables, toy_lib, "csymm_test.csv", "-v")
    assert "csymm_test.csv::TC_L0_ok PASSED" in listed.stdout, listed.stdout
    assert "csymm_test::csv" not in listed.stdout
    again = _pytest(tables, toy_lib, "csymm_test.csv::TC_L1_ok", "-q")
    assert again.returncode == 0 and "1 passed" in again.stdout, again.stdout + again.stderr


def test_skips_and_failures_point_at_the_csv_line(tables, toy_lib):
    result = _pytest(tables, toy_lib, "csymm_test.csv", "zfoo_test.csv", "-q", "-rs")
    assert result.returncode == 1
    assert "zfoo_test.csv:2: operator zfoo is not implemented by this harness" in result.stdout, result.stdout
    assert "plugin.py" not in result.stdout
    assert f"{tables / 'csymm_test.csv'}:3: FAIL: status ACLBLAS_STATUS_SUCCESS" in result.stdout


def test_last_failed_reruns_only_the_failing_rows(tables, toy_lib):
    first = _pytest(tables, toy_lib, "csymm_test.csv", "-q")
    assert "2 failed, 2 passed" in first.stdout, first.stdout
    rerun = _pytest(tables, toy_lib, "csymm_test.csv", "-q", "--lf")
    assert "2 failed, 2 deselected" in rerun.stdout, rerun.stdout
    first_failed = _pytest(tables, toy_lib, "csymm_test.csv", "-v", "--ff")
    order = [line.split()[0] for line in first_failed.stdout.splitlines() if " PASSED" in line or " FAILED" in line]
    assert order[:2] == ["csymm_test.csv::TC_L0_bad", "csymm_test.csv::TC_L0_bad2"], order


def test_maxfail_junitxml_and_k_work_under_xdist(tables, toy_lib):
    xml = tables / "junit.xml"
    result = _pytest(tables, toy_lib, "csymm_test.csv", "-n", "2", "--junitxml", str(xml), "-k", "TC_L0", "-q")
    assert "2 failed, 1 passed in" in result.stdout, result.stdout  # xdist deselects in the workers, unreported
    cases = {tc.get("name"): tc for tc in ET.parse(xml).getroot().iter("testcase")}
    assert set(cases) == {"TC_L0_ok", "TC_L0_bad", "TC_L0_bad2"}
    failure = cases["TC_L0_bad"].find("failure")
    assert failure is not None and "csymm_test.csv:3: FAIL" in failure.get("message")
    assert cases["TC_L0_ok"].find("failure") is None

    stopped = _pytest(tables, toy_lib, "csymm_test.csv", "-n", "2", "--maxfail", "1", "-q")
    assert stopped.returncode in (1, 2) and "stopping after 1 failures" in stopped.stdout, stopped.stdout
