"""harness.tables.lint and `harness lint`: every finding at its file:line:column, nothing on clean tables."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.model import operators as ops
from harness.cli import main
from harness.tables.lint import lint_table
from tables import csymm_row, write_csymm_table

SHARED = Path("/work/shared/data/ops-blas-csv")
SHARED_TABLES = ("cgemm_batched_test.csv", "gemv_strided_batched_test.csv", "sgemm_batched_test.csv",
                 "ssymm_test.csv")

CLEAN = ("case_name,description,transA,side,uplo,m,lda,strideA,alpha,beta,a_fill,alpha_null,expect_result,"
         "mere_threshold,random_seed,alpha_real,alpha_imag\n"
         "c1,ok,N,LEFT,UPPER,4,4,16,1.0,1.5;0.3,RANDOM_NORM_1,true,SUCCESS,0.00012207031,42,1,0\n"
         "c2,nulls,INVALID,999,INVALID,,,,null,,NULLPTR,,ACLBLAS_STATUS_INVALID_VALUE,,,null,\n")

BROKEN = ("case_name,description,transA,side,uplo,m,lda,strideA,alpha,beta,a_fill,alpha_null,expect_result,"
          "mere_threshold,random_seed,x\n"
          "c1,d,Q,INVALID,0xFF,four,1.5,1e3,abc,x;1,RANDOM:-10:10,TRUE,BOGUS,zero,-1,RANDOM_abc\n"
          "c1,dup,N,LEFT,UPPER,4,4,16,1,0,RANDOM_1,,SUCCESS,0,1,2.5\n")


def write(tmp_path: Path, text: str, name: str = "demo_test.csv") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_clean_table_has_no_findings(tmp_path):
    assert lint_table(write(tmp_path, CLEAN)) == []


def test_every_broken_cell_is_reported_in_file_order(tmp_path):
    path = write(tmp_path, BROKEN)
    found = [str(d) for d in lint_table(path)]
    assert found == [
        f"{path}:2:3: warning: unknown transA 'Q': the C++ frame reads it as N (111)",
        f"{path}:2:4: warning: unknown side 'INVALID': the C++ frame reads it as LEFT (141)",
        f"{path}:2:5: warning: uplo '0xFF': the C++ frame reads it as 0 (std::stoi stops at 'xFF')",
        f"{path}:2:6: error: m 'four': expected an integer",
        f"{path}:2:7: warning: lda '1.5': the C++ frame reads it as 1 (std::stoi stops at '.5')",
        f"{path}:2:8: warning: strideA '1e3': the C++ frame reads it as 1 (std::stoi stops at 'e3')",
        f"{path}:2:9: error: alpha 'abc': expected a number",
        f"{path}:2:10: warning: beta: real part 'x' is not a number; the C++ frame reads it as 1",
        f"{path}:2:11: warning: a_fill 'RANDOM:-10:10': unknown fill method; the C++ frame fills the index "
        "sequence 1,2,3…",
        f"{path}:2:12: warning: alpha_null 'TRUE': only lowercase 'true' is true; the C++ frame reads this as false",
        f"{path}:2:13: warning: unknown status 'BOGUS': the C++ frame reads it as INTERNAL_ERROR (6)",
        f"{path}:2:14: error: mere_threshold 'zero': expected a number",
        f"{path}:2:15: warning: random_seed '-1': not a uint32, the C++ frame reads it as 0",
        f"{path}:2:16: error: x: fill 'RANDOM_abc': token 'abc' is not a fill number such as 1, 0.5, N2 "
        "(negative), 1E6, 1EN3 (1e-3), INF, NINF or NAN (no number at the start of 'abc')",
        f"{path}:3:1: error: duplicate case_name 'c1' (first on line 2)",
    ]


def test_array_named_column_with_a_number_is_a_scalar(tmp_path):
    path = write(tmp_path, "case_name,a,b\nc1,1.5,RANDOM_1\nc2,RANDOM_1,N3\n")
    found = lint_table(path)
    assert [(d.line, d.column) for d in found] == [(3, 3)]  # 'N3' is no number and no known fill method


def test_columns_are_checked_only_for_an_operator_this_harness_implements(tmp_path):
    path = write(tmp_path, "# c\ncase_name,m,random_sead\nc1,4,7\n")  # demo_test.csv: an operator it lacks
    assert lint_table(path) == []
    errors = [str(d) for d in lint_table(path, "csymm") if d.severity == "error"]
    assert errors[0] == f"{path}:2:3: error: unknown column 'random_sead' (did you mean 'random_seed'?)"
    assert f"{path}:2:4: error: missing column 'side': a csymm row means nothing without it (the frame would " \
           "silently give every row its default)" in errors


def test_command_exit_codes_and_output(tmp_path, capsys):
    clean = str(write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_1", 4, 4, lda="4")]))
    broken = write(tmp_path, BROKEN, "broken_test.csv")
    assert main(["lint", clean]) == 0
    assert capsys.readouterr().out == "1 file(s) checked: 0 error(s), 0 warning(s)\n"
    assert main(["lint", clean, broken]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 17 and lines[0].startswith(f"{broken}:1:1: warning: operator 'broken': this harness does "
                                                    "not implement it")
    assert lines[1].startswith(f"{broken}:2:3: warning:")
    assert lines[-1] == "2 file(s) checked: 5 error(s), 11 warning(s)"
    assert main(["lint", clean, str(tmp_path / "missing_test.csv")]) == 3
    captured = capsys.readouterr()
    assert "missing_test.csv" in captured.err and captured.out.endswith("1 file(s) checked: 0 error(s), 0 warning(s)\n")


def test_a_table_of_an_operator_not_implemented_is_not_clean(tmp_path, capsys):
    generic = write(tmp_path, CLEAN, "cgemm_batched_test.csv")
    assert lint_table(generic) == []                    # its cells are fine to the C++ frame's generic rules...
    assert main(["lint", generic]) == 1                 # ...but `harness run` would skip every row
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{generic}:1:1: warning: operator 'cgemm_batched': this harness does not implement it (it "
                     f"implements {', '.join(ops.names())}); only the C++ frame's generic cell rules were checked, "
                     "and `harness run` skips every row", "1 file(s) checked: 0 error(s), 1 warning(s)"]


def test_project_table_gets_unknown_column_check(tmp_path, capsys):
    header = ("case_name,description,side,uplo,m,n,alpha_real,alpha_imag,a_fill,lda,b_fill,ldb,beta_real,beta_imag,"
              "c_fill,ldc,expect_result,mere_threshold,mare_multiplier,random_sead")
    path = write(tmp_path, header + "\nTC_1,d,LEFT,UPPER,4,4,1,0,RANDOM_NORM_1,4,RANDOM_NORM_1,4,0,0,VALUE_NORM_0,4,"
                 "SUCCESS,0,0,1\n", "csymm_test.csv")
    assert main(["lint", path]) == 1
    out = capsys.readouterr().out
    assert f"{path}:1:20: error: unknown column 'random_sead' (did you mean 'random_seed'?)" in out
    assert f"{path}:1:21: note: columns the header lacks take the frame's default in every row: random_seed = 0 " \
           "(seed 42)" in out


def test_shared_tables_report_only_real_findings(tmp_path, capsys):
    missing = [n for n in SHARED_TABLES if not (SHARED / n).exists()]
    if missing:
        pytest.skip(f"shared tables not on this machine: {missing}")
    paths = []
    for name in SHARED_TABLES:
        shutil.copy(SHARED / name, tmp_path / name)
        paths.append(str(tmp_path / name))
    assert main(["lint", *paths]) == 1
    cgemm, gemv, sgemm, ssymm = paths
    lacks = "note: columns the header lacks take the frame's default in every row:"
    assert capsys.readouterr().out.splitlines() == [
        *(f"{path}:1:1: warning: operator '{op}': this harness does not implement it (it implements "
          f"{', '.join(ops.names())}); only the C++ frame's generic cell rules were checked, and `harness run` skips "
          "every row" for path, op in ((cgemm, "cgemm_batched"), (gemv, "gemv_strided_batched"))),
        f"{sgemm}:1:23: {lacks} mere_threshold, mare_multiplier = 0 (the gate's default); random_seed = 0 (seed 42)",
        f"{ssymm}:1:15: {lacks} random_seed = 0 (seed 42); a_fill, b_fill, c_fill = RANDOM:-10:10 (the index sequence "
        "1, 2, 3...); alpha_null, beta_null = false",
        f"{ssymm}:9:3: warning: side '0xFF': the C++ frame reads it as 0 (std::stoi stops at 'xFF')",
        f"{ssymm}:10:4: warning: uplo '0xFF': the C++ frame reads it as 0 (std::stoi stops at 'xFF')",
        "4 file(s) checked: 0 error(s), 4 warning(s), 2 note(s)",
    ]


def test_declared_extension_is_not_warned_per_cell_but_undeclared_is(tmp_path):
    body = "case_name,a_fill\nTC_1,NORMAL_1_0.5\nTC_2,NORMAL_N2_1\n"
    undeclared = tmp_path / "u_test.csv"
    undeclared.write_text(body)
    declared = tmp_path / "d_test.csv"
    declared.write_text("# harness-extensions: NORMAL\n" + body)
    assert [d.line for d in lint_table(str(undeclared))] == [2, 3]
    assert lint_table(str(declared)) == []
    # declaring one extension does not silence an unknown fill string
    declared.write_text("# harness-extensions: NORMAL\n" + body + "TC_3,GAUSS_1_2\n")
    assert [d.line for d in lint_table(str(declared))] == [5]
