"""A crashing, hanging or out-of-bounds operator costs one row, never the run; a deliberately broken operator is
caught with a reason that names the metric or the region (issues 3 and 8)."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from tables import csymm_row, write_csymm_table


def _run(tmp_path: Path, table: Path, lib: Path, *extra: str) -> tuple[int, dict[str, dict]]:
    code = main(["run", str(table), "--operator-lib", str(lib), "--report-dir", str(tmp_path / "reports"),
                 "--history", str(tmp_path / "h.sqlite"), *extra])
    report = next((tmp_path / "reports").glob("*/report.json"))
    cases = {c["case_name"]: c for c in json.loads(report.read_text())["cases"]}
    return code, cases


def test_crash_hang_and_out_of_bounds_rows_are_isolated(tmp_path, toy_lib, monkeypatch):
    monkeypatch.setenv("TOY_CRASH_M", "13")
    monkeypatch.setenv("TOY_HANG_M", "17")
    monkeypatch.setenv("TOY_OOB_M", "19")
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L0_good1", 4, 3), csymm_row("TC_L0_crash", 13, 2), csymm_row("TC_L0_good2", 5, 5),
        csymm_row("TC_L0_hang", 17, 2), csymm_row("TC_L0_oob", 19, 2), csymm_row("TC_L0_good3", 6, 2),
    ])
    code, cases = _run(tmp_path, table, toy_lib, "--timeout", "3", "-n", "2")
    assert code == 1
    crash = cases["TC_L0_crash"]
    assert crash["verdict"] == "CRASH" and "SIGSEGV: invalid write of address 0x0 (a NULL pointer) at pc in " in \
        crash["reason"], crash["reason"]
    # the note names the faulting instruction as library+offset: addr2line finds the operator's function there
    where = re.search(r"at pc in (\S+)\+(0x[0-9a-f]+)", crash["reason"])
    assert where and Path(where[1]) == toy_lib.resolve(), crash["reason"]
    function = subprocess.run(["addr2line", "-f", "-e", where[1], where[2]], capture_output=True, text=True).stdout
    assert function.splitlines()[0] == "aclblasCsymm", function
    assert cases["TC_L0_hang"]["verdict"] == "TIMEOUT"
    assert cases["TC_L0_oob"]["verdict"] == "FAIL" and "guard zone" in cases["TC_L0_oob"]["reason"]
    assert [cases[f"TC_L0_good{i}"]["verdict"] for i in (1, 2, 3)] == ["PASS"] * 3

    from harness.store.history import History

    _, records = History(tmp_path / "h.sqlite").load_run(
        json.loads(next((tmp_path / "reports").glob("*/report.json")).read_text())["run_id"])
    assert {r["case_name"]: r["verdict"] for r in records}["TC_L0_hang"] == "TIMEOUT"


def test_conjugating_operator_fails_precision_rows_with_the_metric_named(tmp_path, toy_lib, monkeypatch):
    monkeypatch.setenv("TOY_CONJ_A", "1")
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L1_left", 9, 4), csymm_row("TC_L1_right", 4, 9, side="ACLBLAS_SIDE_RIGHT"),
        csymm_row("TC_L1_one", 1, 1),  # 1x1: A has no off-diagonal element, conjugation cannot show
    ])
    code, cases = _run(tmp_path, table, toy_lib)
    assert code == 1
    for name in ("TC_L1_left", "TC_L1_right"):
        assert cases[name]["verdict"] == "FAIL"
        assert "mixed_tolerance" in cases[name]["reason"]
    assert cases["TC_L1_one"]["verdict"] == "PASS"


@pytest.mark.parametrize("ignore_ld", ["0", "1"])
def test_operator_ignoring_ld_padding_is_caught_only_on_padded_rows(tmp_path, toy_lib, monkeypatch, ignore_ld):
    monkeypatch.setenv("TOY_IGNORE_LD", ignore_ld)
    table = write_csymm_table(tmp_path / "csymm_test.csv", [
        csymm_row("TC_L1_compact", 6, 3), csymm_row("TC_L1_padded", 6, 3, lda="9"),
    ])
    code, cases = _run(tmp_path, table, toy_lib)
    assert cases["TC_L1_compact"]["verdict"] == "PASS"
    assert cases["TC_L1_padded"]["verdict"] == ("FAIL" if ignore_ld == "1" else "PASS")
    assert code == (1 if ignore_ld == "1" else 0)
