"""Tiny case tables written by tests (never copies of real tables), and the committed tables' rows."""
from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CSYMM_HEADER = ("case_name,description,side,uplo,m,n,alpha_real,alpha_imag,a_fill,lda,b_fill,ldb,"
                "beta_real,beta_imag,c_fill,ldc,expect_result,mere_threshold,mare_multiplier,random_seed")


def csymm_row(name: str, m: int, n: int, *, side: str = "ACLBLAS_SIDE_LEFT", uplo: str = "ACLBLAS_UPPER",
              lda: str = "", ldb: str = "", ldc: str = "", alpha: str = "1.5,0.5", beta: str = "0.5,-0.25",
              fill: str = "RANDOM_5_5", expect: str = "ACLBLAS_STATUS_SUCCESS", seed: int = 7,
              description: str = "t") -> str:
    return (f"{name},{description},{side},{uplo},{m},{n},{alpha},{fill},{lda},{fill},{ldb},{beta},{fill},{ldc},"
            f"{expect},0,0,{seed}")


def write_csymm_table(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join([CSYMM_HEADER, *rows]) + "\n")
    return path


def committed_rows(op: str) -> list[dict[str, str]]:
    """The rows of cases/<op>_test.csv, every cell (empty ones as ""), as the generator returns them: the tests of
    the generated tables read these instead of regenerating (minutes for csymm), because the byte-for-byte check
    (test_generate.py::test_committed_table_is_the_seeded_regeneration) proves they are the generator's output."""
    text = (ROOT / "cases" / f"{op}_test.csv").read_text(encoding="ascii")
    return list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
