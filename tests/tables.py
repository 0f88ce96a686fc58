"""Tiny case tables written by tests (never copies of real tables)."""
from __future__ import annotations

from pathlib import Path

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
