"""The perf table at the end of a pytest session over a case table (`--harness-timing`), like pytest-benchmark's:
one line per timed perf row with its statistics, under xdist too; without the option nothing is timed and no table
is printed (the control). Each test runs a real pytest."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tables import csymm_row, write_csymm_table


def _session(where: Path, lib: Path, *args: str) -> subprocess.CompletedProcess:
    write_csymm_table(where / "csymm_test.csv", [csymm_row("TC_L0_ok", 4, 3), csymm_row("TC_PF_0001", 16, 16),
                                                 csymm_row("TC_PF_0002", 8, 8)])
    cmd = [sys.executable, "-m", "pytest", "csymm_test.csv", f"--harness-operator-lib={lib}", "-q",
           "-o", f"cache_dir={where / '.cache'}", *args]
    return subprocess.run(cmd, cwd=where, capture_output=True, text=True, timeout=300)


def _table(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.startswith("csymm_test.csv::TC_PF_")]


def test_timed_perf_rows_end_the_session_with_a_perf_table(tmp_path, toy_lib):
    result = _session(tmp_path, toy_lib, "--harness-timing")
    assert result.returncode == 0 and "3 passed" in result.stdout, result.stdout + result.stderr
    assert "harness perf: 2 timed rows (us; one round, not judged against baselines" in result.stdout, result.stdout
    header = next(line.split() for line in result.stdout.splitlines() if line.startswith("row "))
    assert header == ["row", "op", "n", "min", "max", "mean", "stddev", "median", "CI95", "GFLOP/s"]
    rows = _table(result.stdout)
    assert [r[0] for r in rows] == ["csymm_test.csv::TC_PF_0001", "csymm_test.csv::TC_PF_0002"]
    for r in rows:
        n, low, high, mean = int(r[2]), float(r[3]), float(r[4]), float(r[5])
        assert n >= 2 and 0 < low <= mean <= high, r
        assert re.fullmatch(r"\[[\d.e+-]+,", r[8]) and float(r[-1]) > 0


def test_under_xdist_the_controller_prints_the_table(tmp_path, toy_lib):
    result = _session(tmp_path, toy_lib, "--harness-timing", "-n", "2")
    assert "3 passed" in result.stdout, result.stdout + result.stderr
    assert len(_table(result.stdout)) == 2 and "2 xdist workers shared the CPU" in result.stdout


def test_without_the_option_nothing_is_timed_and_no_table(tmp_path, toy_lib):
    result = _session(tmp_path, toy_lib)
    assert "3 passed" in result.stdout and "harness perf" not in result.stdout and _table(result.stdout) == []
