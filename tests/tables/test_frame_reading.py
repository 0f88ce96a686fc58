"""Each operator package reads its cells as that operator's ops-blas frame does (issue 25): csymm_param.h turns an
ld cell <= 0 into the compact minimum, the Ssymm and batched GEMM frames pass a written ld as it is; lint names the
cells a literal reading would misunderstand, and the generator writes none of them."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.model import abi
from harness.model import operators as ops
from harness.tables.reader import CellReader, read_table
from harness.cli import main
from harness.tables.lint import lint_table
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]


def parsed(path: Path) -> list:
    table = read_table(str(path))
    spec = ops.get(Path(path).stem.removesuffix("_test"))
    return [spec.parse(CellReader(row, []), row.cells.get("description", "")) for row in table.rows]


def test_csymm_reads_an_ld_cell_at_or_below_0_as_the_compact_minimum(tmp_path):
    rows = [csymm_row("TC_0", 24, 40, lda="0", ldb="-3", ldc=""),                   # LEFT: lda >= m, ldb, ldc >= m
            csymm_row("TC_1", 24, 40, side="ACLBLAS_SIDE_RIGHT", lda="-1", ldb="0", ldc="0"),   # RIGHT: lda >= n
            csymm_row("TC_2", 0, 12, lda="0", ldb="0", ldc="0"),                     # m = 0: ldb = ldc = 1
            csymm_row("TC_3", 24, 40, lda="12", ldb="30", ldc="25")]                 # positive: as written
    a = parsed(write_csymm_table(tmp_path / "csymm_test.csv", rows))
    assert [(x.lda, x.ldb, x.ldc) for x in a] == [(24, 24, 24), (40, 24, 24), (1, 1, 1), (12, 30, 25)]


def test_the_other_frames_pass_a_written_ld_as_it_is(tmp_path):
    ssymm = tmp_path / "ssymm_test.csv"
    ssymm.write_text("case_name,description,side,uplo,m,n,alpha,lda,ldb,beta,ldc\nTC_0,d,LEFT,,4,4,1,0,-2,0,4\n")
    (a,) = parsed(ssymm)
    assert (a.lda, a.ldb, a.ldc) == (0, -2, 4)
    assert a.uplo == abi.LOWER                                # ssymm_param.h: ReadMap(map, "uplo", "LOWER")
    gemm = ("case_name,description,transA,transB,m,n,k,alpha,beta,lda,ldb,ldc,batchCount\n"
            "TC_0,d,N,N,4,4,4,1,0,0,-1,,2\n")
    for op in ("sgemm_batched", "sgemm_strided_batched"):
        (tmp_path / f"{op}_test.csv").write_text(gemm)
        (a,) = parsed(tmp_path / f"{op}_test.csv")
        assert (a.lda, a.ldb, a.ldc) == (0, -1, 4), op        # only the empty ldc is compact


def test_lint_names_each_csymm_ld_cell_the_frame_reads_as_compact(tmp_path):
    path = write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_0", 24, 40, lda="0", ldb="12", ldc="-5"),
                                                           csymm_row("TC_1", 24, 40, lda="23", ldb="24", ldc="")])
    found = [str(d) for d in lint_table(str(path))]
    assert found == [
        f"{path}:2:10: warning: lda '0': the Csymm frame (csymm_param.h) reads an ld <= 0 as the compact minimum "
        "24, so the operator gets lda=24, not 0; write a positive ld below 24 to test a rejected lda",
        f"{path}:2:16: warning: ldc '-5': the Csymm frame (csymm_param.h) reads an ld <= 0 as the compact minimum "
        "24, so the operator gets ldc=24, not -5; write a positive ld below 24 to test a rejected ldc",
    ]


def test_the_generated_csymm_table_means_the_same_in_both_readings():
    """No ld cell <= 0 (the frame would run it compact); a rejected ld is a positive one below the minimum."""
    table = read_table(str(ROOT / "cases" / "csymm_test.csv"))
    assert not [f"{row.cells['case_name']} {col}" for row in table.rows for col in ("lda", "ldb", "ldc")
                if col in row.cells and int(row.cells[col]) <= 0]
    assert not lint_table(table.path)
    bad_ld = [row for row in table.rows if row.cells["description"].startswith("invalid_ld")]
    assert len(bad_ld) >= 12 and all(row.cells["expect_result"] == "ACLBLAS_STATUS_INVALID_VALUE" for row in bad_ld)


def test_a_table_written_for_the_frames_ld_convention_passes_on_the_twin(tmp_path, capsys):
    """m = 0 rows with ld cells 0 expect SUCCESS in the frame's reading; a literal reading ran them as ldb = 0
    and failed a correct operator ("status INVALID_VALUE, expected SUCCESS")."""
    rows = [csymm_row(f"TC_ED_{i}", m, n, side=side, lda="0", ldb="0", ldc="0")
            for i, (m, n, side) in enumerate(((0, 12, "ACLBLAS_SIDE_LEFT"), (0, 12, "ACLBLAS_SIDE_RIGHT"),
                                              (0, 0, "ACLBLAS_SIDE_LEFT"), (8, 5, "ACLBLAS_SIDE_RIGHT")))]
    rows.append(csymm_row("TC_ED_bad", 8, 5, lda="7", expect="ACLBLAS_STATUS_INVALID_VALUE"))
    table = write_csymm_table(tmp_path / "csymm_test.csv", rows)
    code = main(["run", str(table), "--report-dir", str(tmp_path / "reports"), "--history",
                 str(tmp_path / "h.sqlite"), "-n", "1"])
    out = capsys.readouterr().out
    assert code == 0, out


def test_csymm_empty_uplo_and_fills_take_the_frames_defaults(tmp_path):
    """csymm_param.h (arch35): uplo "LOWER", every fill "RANDOM_NORM_5_5" where the cell is empty."""
    path = tmp_path / "csymm_test.csv"
    path.write_text("case_name,description,side,uplo,m,n,a_fill,b_fill,c_fill\nTC_0,d,LEFT,,4,4,,,\n")
    (a,) = parsed(path)
    assert a.uplo == abi.LOWER and (a.a_fill, a.b_fill, a.c_fill) == ("RANDOM_NORM_5_5",) * 3
