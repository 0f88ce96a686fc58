"""Coverage summary (`harness cases describe`): categories from cell values, FLOP sums, budgets, exit codes."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.generate import coverage
from harness import generate
from harness.model import operators as ops
from harness.cli import main
from tables import committed_rows
import harness.ops.csymm.generate as csymm
import harness.ops.sgemm_strided_batched.generate as sgemm_strided_batched

ROOT = Path(__file__).resolve().parents[2]
OPS = ("csymm", "sgemm_strided_batched")


def _write(path: Path, op: str, rows: list[dict[str, str]]) -> Path:
    header = generate.module(op).HEADER
    path.write_text("\n".join([",".join(header)] + [",".join(r[c] for c in header) for r in rows]) + "\n")
    return path


@pytest.mark.parametrize("op", OPS)
def test_every_issue_category_is_covered_in_the_committed_tables(op):
    header, rows = coverage.read_rows(ROOT / "cases" / f"{op}_test.csv")
    counts = coverage.summarize(op, rows)
    assert coverage.missing(op, counts) == []
    assert all(counts[key]["total"] > 0 for key in ops.part(op, "coverage").REQUIRED)
    text, ok = coverage.describe(ROOT / "cases" / f"{op}_test.csv")
    assert ok and "every required category is covered" in text


def test_side_uplo_is_crossed_with_every_other_dimension():
    _, rows = coverage.read_rows(ROOT / "cases" / "csymm_test.csv")
    counts = coverage.summarize("csymm", rows)
    combos = ("LEFT UPPER", "LEFT LOWER", "RIGHT UPPER", "RIGHT LOWER")
    for (group, cat), entry in counts.items():
        if group in ("size", "alpha", "beta", "leading dim", "inputs") and cat not in ("ge_4096", "null"):
            assert all(entry.get(c, 0) > 0 for c in combos), (group, cat, entry)


def test_trans_pairs_are_crossed_with_strides_and_ld():
    _, rows = coverage.read_rows(ROOT / "cases" / "sgemm_strided_batched_test.csv")
    counts = coverage.summarize("sgemm_strided_batched", rows)
    pairs = [a + b for a in "NTC" for b in "NTC"]
    for cat in ("stride0_A", "stride0_B", "gap_A", "gap_B", "gap_C"):
        assert all(counts[("stride", cat)].get(p, 0) > 0 for p in pairs), cat
    for cat in ("lda_padded", "ldb_padded", "ldc_padded"):
        assert all(counts[("leading dim", cat)].get(p, 0) > 0 for p in pairs), cat


def test_categories_come_from_cells_not_names():
    rows = committed_rows("csymm")[:60]
    renamed = [{**r, "case_name": f"X_{i}", "description": "handle_null" if "handle_null" in r["description"]
                else "anything"} for i, r in enumerate(rows)]
    def by_cells(counts: dict) -> dict:
        return {k: v for k, v in counts.items() if k[0] != "family"}  # family is the one name-based group

    assert by_cells(coverage.summarize("csymm", renamed)) == by_cells(coverage.summarize("csymm", rows))
    broken = [{**rows[0], "side": "999"}]
    counts = coverage.summarize("csymm", broken)
    assert counts[("negative", "invalid_side")]["total"] == 1
    assert counts[("side x uplo", "LEFT UPPER")]["total"] == 0


def test_missing_category_fails_describe(tmp_path):
    """Negative control: drop every NaN input row and every stride-0 row; describe must say so and exit 1."""
    rows = [r for r in committed_rows("sgemm_strided_batched")
            if "VALUE_NORM_NAN" not in (r["a_fill"], r["b_fill"], r["c_fill"]) and "0" not in (r["strideA"],
                                                                                                 r["strideB"])]
    path = _write(tmp_path / "t.csv", "sgemm_strided_batched", rows)
    text, ok = coverage.describe(path)
    assert not ok
    assert "empty category: inputs / nan" in text and "empty category: stride / stride0_A" in text
    assert main(["cases", "describe", str(path)]) == 1


def test_flop_sums_by_hand():
    blank = dict.fromkeys(csymm.HEADER, "") | {"description": "x", "m": "2", "n": "3"}
    rows = [blank | {"case_name": "TC_L1_0001", "side": "ACLBLAS_SIDE_LEFT"},
            blank | {"case_name": "TC_PF_0001", "side": "ACLBLAS_SIDE_RIGHT"}]
    sums = coverage.flop_sums("csymm", rows)
    # the operator's own count: 8 per complex multiply-add plus the 14-FLOP epilogue per element of C
    assert sums["precision_gflop"] == pytest.approx((8 * 2 * 2 * 3 + 14 * 2 * 3) / 1e9)
    assert sums["perf_gflop"] == pytest.approx((8 * 2 * 3 * 3 + 14 * 2 * 3) / 1e9)
    row = dict.fromkeys(sgemm_strided_batched.HEADER, "") | {"case_name": "TC_PF_0001", "description": "x",
                                                              "m": "4", "n": "5", "k": "6", "batchCount": "7"}
    assert coverage.flop_sums("sgemm_strided_batched", [row])["perf_gflop"] == \
        pytest.approx((2 * 4 * 5 * 6 + 3 * 4 * 5) * 7 / 1e9)
    assert coverage.flop_sums("sgemm_strided_batched", [row | {"batchCount": "0"}])["perf_gflop"] == 0


def test_over_budget_is_reported(tmp_path):
    rows = committed_rows("csymm")
    huge = [dict(rows[-1], m="8192", n="8192", case_name=f"TC_PF_{9000 + i}") for i in range(4)]
    text, ok = coverage.describe(_write(tmp_path / "t.csv", "csymm", rows + huge))
    assert not ok and "perf FLOPs" in text and "perf rows above 256 GFLOP" in text


def test_describe_cli_prints_the_table_and_sums(capsys):
    assert main(["cases", "describe", str(ROOT / "cases" / "csymm_test.csv")]) == 0
    out = capsys.readouterr().out
    assert "LEFT UPPER" in out and "precision phase: 1000 rows" in out and "perf phase: 200 rows" in out


def test_describe_rejects_foreign_and_missing_tables(tmp_path):
    foreign = tmp_path / "strmm_test.csv"
    foreign.write_text("case_name,description,side,uplo,m,n\nA,b,LEFT,UPPER,4,4\n")
    with pytest.raises(ValueError, match="no project table"):
        coverage.describe(foreign)
    assert main(["cases", "describe", str(foreign)]) == 3
    assert main(["cases", "describe", str(tmp_path / "absent.csv")]) == 3


UPSTREAM_SSYMM = ("case_name,description,side,uplo,m,n,alpha,lda,ldb,beta,ldc,expect_result,mere_threshold,"
                  "mare_multiplier\n"
                  "TC_L0_01,basic,LEFT,UPPER,4,4,1.0,4,4,0.0,4,ACLBLAS_STATUS_SUCCESS,0.00012207031,10.0\n"
                  "TC_L0_02,bad_lda,RIGHT,LOWER,4,8,1.0,4,8,0.0,8,ACLBLAS_STATUS_INVALID_VALUE,,\n")


def test_describe_reads_an_upstream_table_by_its_file_name(tmp_path, capsys):
    """The upstream ssymm header lacks the project's fill and seed columns: described as the C++ frame reads it
    (those cells empty), not refused."""
    upstream = tmp_path / "ssymm_test.csv"
    upstream.write_text(UPSTREAM_SSYMM)
    text, ok = coverage.describe(upstream)
    assert text.startswith(f"{upstream}: ssymm, 2 rows") and not ok          # a 2-row table covers little
    assert "empty category" in text
    assert main(["cases", "describe", str(upstream)]) == 1                   # described (1: gaps), not refused (3)
    assert "ssymm, 2 rows" in capsys.readouterr().out
    (tmp_path / "sgemm_batched_test.csv").write_text(UPSTREAM_SSYMM)         # an operator's name, not its columns
    with pytest.raises(ValueError, match="no project table"):
        coverage.describe(tmp_path / "sgemm_batched_test.csv")


@pytest.mark.parametrize("name", ["ssymm_test.csv", "arch22/ssymm_test.csv"])
def test_describe_accepts_the_shared_upstream_ssymm_tables(name, capsys):
    path = Path("/work/shared/data/ops-blas-csv") / name
    if not path.exists():
        pytest.skip(f"shared table not on this machine: {path}")
    assert main(["cases", "describe", str(path)]) in (0, 1)
    assert f"{path}: ssymm, " in capsys.readouterr().out
