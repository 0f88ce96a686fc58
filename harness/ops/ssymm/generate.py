"""Seeded generator of `cases/ssymm_test.csv`: a modest table (about 200 rows) in the upstream table's style.

Families: `TC_L0` gate (every side x uplo, quick returns, every check alone, pairs of faults that pin the ops-blas
check order), `TC_L1` coverage (side x uplo crossed with shapes, scalar classes, row-stride padding and input
fills) and a few small `TC_PF` rows. The header is the upstream one plus fills and a seed; the fills are real
random ones, non-negative like the upstream test's `RANDOM:-10:10`, which is the index sequence (kept for a few
rows with empty fill cells).
"""
from __future__ import annotations

import random
from typing import Any

from harness.model import abi
from harness.model.abi import Status
from harness.generate import cells
from harness.generate.cells import NULLPTR
from harness.ops import symm_family
from harness.ops.ssymm import DEFAULT_UPLO, flops_of, min_lds

OP = "ssymm"
HEADER = ("case_name", "description", "side", "uplo", "m", "n", "alpha", "lda", "ldb", "beta", "ldc", "a_fill",
          "b_fill", "c_fill", "expect_result", "mere_threshold", "mare_multiplier", "random_seed")
COMBOS = symm_family.COMBOS
SHAPES = ((1, 1), (2, 7), (7, 2), (8, 8), (13, 5), (16, 64), (64, 16), (33, 31), (100, 37), (128, 128), (129, 65),
          (255, 256))
#: alpha and beta never of opposite signs, and the fills non-negative: MERE/MARE is a relative measure, so a row
#: whose sums cancel would fail it on elements float32 cannot resolve (the upstream index fill has the same property).
SCALARS = ((1.0, 0.0), (1.0, 1.0), (-1.5, -0.5), (0.5, 2.0), (0.0, 0.0), (0.0, 1.0), (0.0, 0.75), (2.0, 0.0))
FILLS = (("RANDOM_0_1", "RANDOM_0_1", "RANDOM_0_1"), ("RANDOM_0_10", "RANDOM_0_2", "RANDOM_0_1"),
         ("RANDOM_0_1", "RANDOM_0_1", cells.NAN), ("", "", ""))
PERF = ((256, 256, abi.SIDE_LEFT, abi.UPPER), (384, 384, abi.SIDE_RIGHT, abi.LOWER),
        (512, 256, abi.SIDE_LEFT, abi.LOWER))


def parse_row(row: dict[str, str]) -> dict[str, Any]:
    """Typed parameters of a row with the operator's defaults (ld cells have none: 0)."""
    side = cells.enum_value(row["side"], cells.SIDES, abi.SIDE_LEFT)
    m, n = int(row["m"] or 0), int(row["n"] or 0)
    return {"side": side, "uplo": cells.enum_value(row["uplo"], cells.UPLOS, DEFAULT_UPLO), "m": m, "n": n,
            "ka": symm_family.order_of_a(side, m, n),
            "alpha": cells.real_cell(row["alpha"], 1.0), "beta": cells.real_cell(row["beta"], 0.0),
            "lda": int(row["lda"] or 0), "ldb": int(row["ldb"] or 0), "ldc": int(row["ldc"] or 0),
            "a_fill": row["a_fill"], "b_fill": row["b_fill"], "c_fill": row["c_fill"],
            "handle_null": "handle_null" in row["description"], "expect": cells.status_value(row["expect_result"])}


def faults(p: dict[str, Any]) -> list[tuple[str, Status]]:
    """Every fault of a row in the ops-blas check order (operators/host/ssymm_host.h); the first decides. An empty
    problem returns SUCCESS before anything after the dimension check is looked at."""
    out = [(name, Status.INVALID_VALUE) for name, bad in (("negative_m", p["m"] < 0), ("negative_n", p["n"] < 0))
           if bad]
    if out or p["m"] == 0 or p["n"] == 0:
        return out
    out += symm_family.handle_and_enum_faults(p)
    checks = (("invalid_lda", p["lda"] < p["ka"]), ("invalid_ldb", p["ldb"] < p["n"]),
              ("invalid_ldc", p["ldc"] < p["n"]), ("null_alpha", p["alpha"] is None),
              ("null_beta", p["beta"] is None), ("null_A", p["a_fill"] == NULLPTR),
              ("null_B", p["b_fill"] == NULLPTR), ("null_C", p["c_fill"] == NULLPTR))
    return out + [(name, Status.INVALID_VALUE) for name, bad in checks if bad]


def flops(p: dict[str, Any]) -> float:
    """The operator's own count (harness.ops.ssymm.flops_of)."""
    return flops_of(p["m"], p["n"], p["ka"])


def _row(side: int, uplo: int, m: int, n: int, alpha: float | None = 1.0, beta: float | None = 0.0,
         lds: tuple[int, int, int] | None = None, fills: tuple[str, str, str] = FILLS[0], tag: str = "",
         handle_null: bool = False, intended: tuple[str, ...] | None = None) -> dict[str, str]:
    """A rendered row; ld cells default to the minimum (row-major: dimA, n, n)."""
    lda, ldb, ldc = lds if lds is not None else min_lds(side, m, n)
    names = "_".join(x for x in (tag, "handle_null" if handle_null else "",
                                 cells.enum_cell(side, cells.SIDES).removeprefix("ACLBLAS_SIDE_"),
                                 cells.enum_cell(uplo, cells.UPLOS).removeprefix("ACLBLAS_"), f"{m}x{n}") if x)
    row = {"description": names, "side": cells.enum_cell(side, cells.SIDES), "uplo": cells.enum_cell(uplo, cells.UPLOS),
           "m": str(m), "n": str(n), "alpha": "null" if alpha is None else cells.num(alpha),
           "beta": "null" if beta is None else cells.num(beta), "lda": str(lda), "ldb": str(ldb), "ldc": str(ldc),
           "a_fill": fills[0], "b_fill": fills[1], "c_fill": fills[2]}
    cells.set_expectation(row, faults(parse_row({**row, "expect_result": ""})), intended, (m, n))
    return row


def _gate() -> list[dict[str, str]]:
    rows = [_row(s, u, 16, 12, tag="basic") for s, u in COMBOS]
    rows += [_row(s, u, 8, 8, 2.0, 1.0, tag="alpha2_beta1") for s, u in COMBOS]
    rows += [_row(abi.SIDE_LEFT, abi.UPPER, 0, 4, lds=(0, 4, 4), tag="m0_quick_return"),
             _row(abi.SIDE_RIGHT, abi.LOWER, 4, 0, lds=(1, 1, 1), tag="n0_quick_return"),
             _row(abi.SIDE_LEFT, abi.UPPER, 0, 4, lds=(0, 4, 4), tag="m0_before_handle", handle_null=True,
                  intended=())]
    base = (abi.SIDE_LEFT, abi.UPPER, 8, 6)
    single = {
        "negative_m": dict(m=-1), "negative_n": dict(n=-1), "handle_null": dict(handle_null=True),
        "invalid_side": dict(side=999), "invalid_uplo": dict(uplo=abi.INVALID_ENUM_VALUE),
        "invalid_lda": dict(lds=(7, 6, 6)), "invalid_ldb": dict(lds=(8, 5, 6)), "invalid_ldc": dict(lds=(8, 6, 5)),
        "null_alpha": dict(alpha=None), "null_beta": dict(beta=None),
        "null_A": dict(fills=(NULLPTR, "RANDOM_1", "RANDOM_1")), "null_B": dict(fills=("RANDOM_1", NULLPTR,
                                                                                      "RANDOM_1")),
        "null_C": dict(fills=("RANDOM_1", "RANDOM_1", NULLPTR)),
    }
    for name, change in single.items():
        args = dict(zip(("side", "uplo", "m", "n"), base)) | change
        rows.append(_row(**args, tag=name, intended=(name,)))
    pairs = (  # two faults: the first in the ops-blas order decides
        (dict(m=-1, handle_null=True), ("negative_m",)),
        (dict(handle_null=True, side=999), ("handle_null", "invalid_side")),
        (dict(side=999, uplo=abi.INVALID_ENUM_VALUE), ("invalid_side", "invalid_uplo")),
        (dict(uplo=abi.INVALID_ENUM_VALUE, lds=(7, 6, 6)), ("invalid_uplo", "invalid_lda")),
        (dict(lds=(7, 6, 6), alpha=None), ("invalid_lda", "null_alpha")),
        (dict(beta=None, fills=(NULLPTR, "RANDOM_1", "RANDOM_1")), ("null_beta", "null_A")),
    )
    for change, intended in pairs:
        args = dict(zip(("side", "uplo", "m", "n"), base)) | change
        rows.append(_row(**args, tag="pair_" + "_".join(intended), intended=intended))
    return rows


def _coverage(rng: random.Random) -> list[dict[str, str]]:
    rows = []
    for side, uplo in COMBOS:
        for i, (m, n) in ((i, shape) for i, shape in enumerate(SHAPES) for _ in range(2)):
            alpha, beta = SCALARS[rng.randrange(len(SCALARS))]
            pad = rng.randint(0, 7)
            lds = tuple(lo + (rng.randint(1, 9) if pad >> bit & 1 else 0)
                        for bit, lo in enumerate(min_lds(side, m, n)))
            fills = FILLS[i % len(FILLS)] if beta == 0 or FILLS[i % len(FILLS)][2] != cells.NAN else FILLS[0]
            rows.append(_row(side, uplo, m, n, alpha, beta, lds, fills, tag=f"pad{pad}"))
    return rows


def _perf() -> list[dict[str, str]]:
    return [_row(side, uplo, m, n, 1.0, 0.0, fills=FILLS[0], tag="perf") for m, n, side, uplo in PERF]


def generate(seed: int = cells.DEFAULT_SEED) -> list[dict[str, str]]:
    rng = random.Random(seed)
    families = [("TC_L0", _gate()), ("TC_L1", _coverage(rng)), ("TC_PF", _perf())]
    return cells.finalize(families, HEADER, rng)
