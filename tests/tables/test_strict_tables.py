"""Tables read strictly (issue 36): `harness run` checks every header before the first row, finds a table's operator
from its header (or --operator), refuses cells the harness would read otherwise than the ops-blas frame unless
--lenient, and says on the console why rows were skipped. Each command-line test runs the real `harness run`."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.model import operators as ops
from harness.cli import main
from harness.options import default_tables
from harness.reports.progress import skip_lines
from harness.tables.load import load_table
from harness.tables import header, preflight
from harness.tables.reader import NOTE, read_table
from tables import CSYMM_HEADER, csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]
SHARED_TABLES = ROOT.parent / "shared" / "data" / "ops-blas-csv"
ROWS = [csymm_row("TC_L0_a", 4, 3), csymm_row("TC_L0_b", 5, 2)]
MISSPELLED = CSYMM_HEADER.replace(",m,", ",M,").replace(",ldc,", ",ldc_,")


def _run(tmp_path: Path, *argv: str) -> int:
    return main(["run", *argv, "--report-dir", str(tmp_path / "r"), "--history", str(tmp_path / "h.sqlite"),
                 "-n", "1"])


def _write(path: Path, head: str, rows: list[str]) -> Path:
    path.write_text("\n".join([head, *rows]) + "\n")
    return path


def _report(tmp_path: Path) -> dict:
    return json.loads(next((tmp_path / "r").glob("*/report.json")).read_text())


def test_a_misspelled_column_exits_3_naming_it_and_runs_nothing(tmp_path, capsys):
    """On b6fba62 this table ran both rows with m = 0 and default ldc: `2 passed`, exit 0."""
    table = _write(tmp_path / "csymm_test.csv", MISSPELLED, ROWS)
    assert _run(tmp_path, str(table)) == 3
    err = capsys.readouterr().err
    assert f"{table}:1:5: error: unknown column 'M' (did you mean 'm'?)" in err
    assert f"{table}:1:16: error: unknown column 'ldc_' (did you mean 'ldc'?)" in err
    assert f"{table}:1:21: error: missing column 'm'" in err
    assert err.rstrip().endswith("nothing run (exit 3)")
    assert not (tmp_path / "r").exists() and not (tmp_path / "h.sqlite").exists()


def test_a_duplicate_column_exits_3(tmp_path, capsys):
    table = _write(tmp_path / "csymm_test.csv", CSYMM_HEADER + ",m", [r + ",9" for r in ROWS])
    assert _run(tmp_path, str(table)) == 3
    assert f"{table}:1:21: error: duplicate column 'm' (also column 5)" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_table_not_named_op_test_runs_as_its_headers_operator(tmp_path, capsys):
    """On b6fba62 `my_csymm.csv` was skipped row by row ("operator ? is not implemented"), exit 2."""
    table = _write(tmp_path / "my_csymm.csv", CSYMM_HEADER, ROWS)
    assert _run(tmp_path, str(table)) == 0, capsys.readouterr()
    cases = _report(tmp_path)["cases"]
    assert [(c["case_name"], c["op"], c["verdict"]) for c in cases] == [("TC_L0_a", "csymm", "PASS"),
                                                                       ("TC_L0_b", "csymm", "PASS")]


GEMM_HEAD = "case_name,description,transA,transB,m,n,k,alpha,beta,batchCount,expect_result"
GEMM_ROWS = ["G1,x,N,N,4,3,2,1.0,0.0,2,ACLBLAS_STATUS_SUCCESS"]


def test_a_header_two_operators_share_is_an_error_listing_them(tmp_path, capsys):
    table = _write(tmp_path / "my_gemm.csv", GEMM_HEAD, GEMM_ROWS)
    assert _run(tmp_path, str(table)) == 3
    assert (f"{table}:1:1: error: which operator? the header fits sgemm_strided_batched and sgemm_batched: name "
            "the file <op>_test.csv or pass --operator NAME") in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_header_no_operator_fits_is_read_against_the_closest(tmp_path):
    table = read_table(str(_write(tmp_path / "mine.csv", MISSPELLED, ROWS)))
    op, found = header.resolve(table)
    assert op is None and [d.severity for d in found] == ["error"] * 4
    assert found[0].message.startswith("which operator? the header fits none this harness implements")
    assert found[0].message.endswith("read as the closest, csymm:")
    assert "unknown column 'M' (did you mean 'm'?)" == found[1].message
    assert {c.skip for c in load_table(table.path)} == {"no operator: the file is not named <op>_test.csv and its "
                                                        "header tells none (harness lint)"}


def test_operator_option_decides_a_shared_header(tmp_path, capsys):
    table = _write(tmp_path / "my_gemm.csv", GEMM_HEAD, GEMM_ROWS)
    assert _run(tmp_path, str(table), "--operator", "sgemm_batched") == 0, capsys.readouterr()
    assert [(c["op"], c["verdict"]) for c in _report(tmp_path)["cases"]] == [("sgemm_batched", "PASS")]


def test_operator_option_overrides_the_file_name(tmp_path, capsys):
    """--operator reads a csymm_test.csv as ssymm's: the csymm-only columns are then unknown (exit 3)."""
    table = _write(tmp_path / "csymm_test.csv", CSYMM_HEADER, ROWS)
    assert _run(tmp_path, str(table), "--operator", "ssymm") == 3
    err = capsys.readouterr().err
    assert f"{table}:1:7: error: unknown column 'alpha_real' (did you mean " in err
    assert f"{table}:1:1: error: the header is csymm's, not ssymm's: rename the file or pass --operator csymm" in err


def test_a_skipped_row_says_why_on_the_console_and_in_the_reports(tmp_path, capsys):
    """On b6fba62 the console said only `2 skipped`."""
    rows = [f"TC_{i},d,N,N,4,4,4,1,0,4,4,4,1,ACLBLAS_STATUS_SUCCESS" for i in range(5)]
    table = _write(tmp_path / "cgemm_batched_test.csv",
                   "case_name,description,transA,transB,m,n,k,alpha,beta,lda,ldb,ldc,batchCount,expect_result", rows)
    assert _run(tmp_path, str(table)) == 2
    captured = capsys.readouterr()
    reason = "operator cgemm_batched is not implemented by this harness"
    assert f"skipped 5: {reason} (TC_0, TC_1, TC_2, ...)" in captured.out.splitlines()
    assert f"{table}:1:1: warning: operator 'cgemm_batched': this harness does not implement it" in captured.out
    assert {c["reason"] for c in _report(tmp_path)["cases"]} == {reason}
    markdown = next((tmp_path / "r").glob("*/report.md")).read_text()
    assert re.search(rf"\| {re.escape(reason)} +\| 5 +\| TC_0, TC_1, TC_2, TC_3, TC_4 +\|", markdown)


def test_skip_lines_group_reasons_most_rows_first():
    records = [{"verdict": "SKIP", "reason": "a", "case_name": f"A{i}"} for i in range(2)]
    records += [{"verdict": "SKIP", "reason": "b", "case_name": f"B{i}"} for i in range(4)]
    records.append({"verdict": "PASS", "reason": "", "case_name": "P"})
    assert skip_lines(records) == ["skipped 4: b (B0, B1, B2, ...)", "skipped 2: a (A0, A1)"]
    assert skip_lines(records, groups=1) == ["skipped 4: b (B0, B1, B2, ...)",
                                             "skipped 2 more for 1 other reasons (report.md lists them)"]
    assert skip_lines(records[-1:]) == []


def test_a_cell_the_frame_reads_otherwise_is_refused_unless_lenient(tmp_path, capsys):
    """NORMAL is a harness fill the C++ frame does not know (it would fill 1, 2, 3...): the run would judge other
    inputs than the frame's, so it is refused (exit 3); --lenient runs it with a warning, and a table that declares
    the extension (`# harness-extensions: NORMAL`) runs without one."""
    rows = [csymm_row("TC_L0_n", 4, 3, fill="NORMAL_1_0.5")]
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    assert _run(tmp_path, str(table)) == 3
    err = capsys.readouterr().err
    assert f"{table}:2:9: error: a_fill 'NORMAL_1_0.5': NORMAL is an extension unknown to the C++ frame" in err
    assert "(--lenient runs them, as warnings); nothing run (exit 3)" in err
    assert not (tmp_path / "r").exists()

    assert _run(tmp_path, str(table), "--lenient") == 0
    assert f"{table}:2:9: warning: a_fill 'NORMAL_1_0.5': NORMAL" in capsys.readouterr().out

    table.write_text("# harness-extensions: NORMAL\n" + table.read_text())
    assert preflight.check(str(table))[2:] == ([], [])


def test_a_byte_order_mark_is_refused_unless_lenient(tmp_path):
    """The frame reads the BOM into the first column's name and never finds case_name; the harness strips it."""
    table = tmp_path / "csymm_test.csv"
    table.write_bytes(b"\xef\xbb\xbf" + write_csymm_table(table, ROWS).read_bytes())
    refusals = preflight.check(str(table))[2]
    assert [(d.severity, d.message.split(":")[0]) for d in refusals] == [("error", "UTF-8 byte order mark")]
    assert preflight.check(str(table), lenient=True)[2] == []


def test_every_column_is_required_or_has_a_default_said_once():
    for name in ops.names():
        spec = ops.get(name)
        required, defaults = header.required(spec), header.defaults(spec)
        assert not set(required) & set(defaults), name
        assert sorted(spec.COLUMNS) == sorted([*required, *defaults]), name
        assert header.fits(list(spec.COLUMNS), spec), name


def test_the_project_and_ops_blas_tables_pass_the_checks():
    """The main job's tables and the real ops-blas ones are refused nothing; the project's get at most a note each
    (columns that take their default); tables of operators the harness lacks stay warnings (their rows skip)."""
    for path in default_tables():
        _, op, refusals, findings = preflight.check(path)
        assert op == Path(path).name.removesuffix("_test.csv") and refusals == [], path
        assert all(d.severity == NOTE for d in findings), [str(d) for d in findings]
    if SHARED_TABLES.is_dir():
        for path in sorted(SHARED_TABLES.rglob("*.csv")):
            assert preflight.check(str(path))[2] == [], path


def test_the_pytest_plugin_refuses_the_same_header_and_collects_any_named_csv(tmp_path):
    misspelled = _write(tmp_path / "csymm_test.csv", MISSPELLED, ROWS)
    mine = _write(tmp_path / "my_csymm.csv", CSYMM_HEADER, ROWS)

    def collect(table: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pytest", str(table), "--collect-only", "-q", "-p",
                               "no:cacheprovider", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)

    refused = collect(misspelled)
    assert refused.returncode == 2 and f"{misspelled}:1:5: error: unknown column 'M' (did you mean 'm'?)" in \
        refused.stdout, refused.stdout + refused.stderr
    collected = collect(mine)
    assert collected.returncode == 0 and "2 tests collected" in collected.stdout, collected.stdout
    assert [line.rpartition("::")[2] for line in collected.stdout.splitlines()[:2]] == ["TC_L0_a", "TC_L0_b"]
