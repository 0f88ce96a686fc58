"""Seeded generator of `cases/sgemm_batched_test.csv`: a modest table (about 200 rows) in the upstream table's style.

Families: `TC_L0` gate (every transA x transB, quick returns, every check alone - the null scalar and pointer-array
columns included - and pairs of faults that pin the ops-blas check order), `TC_L1` coverage (transposes crossed with
shapes, batch counts, scalar classes, ld padding; alpha == 0 and k == 0 rows pass NULL A_i/B_i entries) and a few
small `TC_PF` rows. The header is the upstream one plus a seed.
"""
from __future__ import annotations

import random
from typing import Any

from harness.model import abi
from harness.model.abi import Status
from harness.generate import cells
from harness.ops.gemm_family import COMBOS, OPS, min_lds, parse_dims
from harness.ops.sgemm_batched import flops_of

OP = "sgemm_batched"
HEADER = ("case_name", "description", "transA", "transB", "m", "n", "k", "alpha", "beta", "lda", "ldb", "ldc",
          "batchCount", "a_fill", "b_fill", "c_fill", "alpha_null", "beta_null", "aarray_null", "barray_null",
          "carray_null", "expect_result", "random_seed")
SHAPES = ((1, 1, 1), (3, 5, 7), (8, 8, 8), (17, 19, 23), (33, 16, 64), (64, 33, 1), (1, 64, 100), (100, 1, 13),
          (128, 64, 32))
BATCHES = (1, 2, 3, 5, 16)
SCALARS = ((1.0, 0.0), (1.5, 0.3), (-1.0, 1.0), (0.0, 0.0), (0.0, 1.0), (0.0, 2.0), (2.0, -0.5))
FILLS = ("RANDOM_1", "RANDOM_1", "RANDOM_1")
PERF = ((128, 128, 128, 8), (256, 256, 256, 2), (64, 64, 64, 32))


def parse_row(row: dict[str, str]) -> dict[str, Any]:
    """Typed parameters of a row with sgemm_batched_param.h's defaults."""
    ta, tb, m, n, k = parse_dims(row)

    def scalar(col: str, default: float) -> float | None:
        return None if row[f"{col}_null"] == "true" else cells.real_cell(row[col], default)

    lds = min_lds(ta, tb, m, n, k)
    return {"transA": ta, "transB": tb, "m": m, "n": n, "k": k, "alpha": scalar("alpha", 1.0),
            "beta": scalar("beta", 0.0), "lda": cells.int_cell(row["lda"], lds[0]),
            "ldb": cells.int_cell(row["ldb"], lds[1]), "ldc": cells.int_cell(row["ldc"], lds[2]),
            "batchCount": cells.int_cell(row["batchCount"], 1), "a_fill": row["a_fill"], "b_fill": row["b_fill"],
            "c_fill": row["c_fill"], "nulls": {r for r in "abc" if row[f"{r}array_null"] == "true"},
            "handle_null": "handle_null" in row["description"], "expect": cells.status_value(row["expect_result"])}


def faults(p: dict[str, Any]) -> list[tuple[str, Status]]:
    """Every fault of a row in the ops-blas check order (operators/host/sgemm_batched_host.h); the first decides."""
    out = [("handle_null", Status.HANDLE_IS_NULLPTR)] if p["handle_null"] else []
    lds = min_lds(p["transA"], p["transB"], p["m"], p["n"], p["k"])
    checks = (("null_alpha", p["alpha"] is None), ("null_beta", p["beta"] is None), ("negative_m", p["m"] < 0),
              ("negative_n", p["n"] < 0), ("negative_k", p["k"] < 0), ("negative_batch", p["batchCount"] < 0),
              ("invalid_transA", p["transA"] not in OPS), ("invalid_transB", p["transB"] not in OPS),
              ("invalid_lda", p["lda"] < lds[0]), ("invalid_ldb", p["ldb"] < lds[1]),
              ("invalid_ldc", p["ldc"] < lds[2]))
    out += [(name, Status.INVALID_VALUE) for name, bad in checks if bad]
    if p["batchCount"] > 0:
        out += [(f"null_{r.upper()}array", Status.INVALID_VALUE) for r in "abc" if r in p["nulls"]]
    return out


def flops(p: dict[str, Any]) -> float:
    """The operator's own count (harness.ops.sgemm_batched.flops_of)."""
    return flops_of(p["m"], p["n"], p["k"], p["batchCount"])


def _op(value: int) -> str:
    return {abi.OP_N: "N", abi.OP_T: "T", abi.OP_C: "C"}.get(value, str(value))


def _row(ta: int, tb: int, m: int, n: int, k: int, batch: int = 1, alpha: float | None = 1.0,
         beta: float | None = 0.0, lds: tuple[str, str, str] = ("", "", ""), fills: tuple[str, str, str] = FILLS,
         nulls: str = "", tag: str = "", handle_null: bool = False,
         intended: tuple[str, ...] | None = None) -> dict[str, str]:
    """A rendered row; empty ld cells take the compact default."""
    desc = "_".join(x for x in (tag, "handle_null" if handle_null else "", _op(ta) + _op(tb),
                                f"{m}x{n}x{k}_b{batch}") if x)
    row = {"description": desc, "transA": _op(ta), "transB": _op(tb), "m": str(m), "n": str(n), "k": str(k),
           "alpha": "1" if alpha is None else cells.num(alpha), "beta": "0" if beta is None else cells.num(beta),
           "lda": lds[0], "ldb": lds[1], "ldc": lds[2], "batchCount": str(batch), "a_fill": fills[0],
           "b_fill": fills[1], "c_fill": fills[2], "alpha_null": "true" if alpha is None else "",
           "beta_null": "true" if beta is None else "",
           **{f"{r}array_null": "true" if r in nulls else "" for r in "abc"}}
    found = faults(parse_row({**row, "expect_result": ""}))
    if intended is not None and tuple(name for name, _ in found) != intended:
        raise AssertionError(f"{desc}: faults {found} != intended {intended}")
    row["expect_result"] = cells.status_cell(found[0][1] if found else Status.SUCCESS)
    return row


def _gate() -> list[dict[str, str]]:
    rows = [_row(ta, tb, 16, 12, 8, 3, 1.5, 0.5, tag="basic") for ta, tb in COMBOS]
    rows += [_row(abi.OP_N, abi.OP_N, 0, 16, 16, 4, tag="m0_quick_return"),
             _row(abi.OP_N, abi.OP_N, 16, 0, 16, 4, tag="n0_quick_return"),
             _row(abi.OP_N, abi.OP_N, 16, 16, 16, 0, tag="batch0_quick_return"),
             _row(abi.OP_N, abi.OP_N, 16, 16, 0, 4, 1.0, 0.0, tag="k0_beta0"),
             _row(abi.OP_N, abi.OP_N, 16, 16, 0, 4, 1.0, 1.0, tag="k0_beta1"),
             _row(abi.OP_T, abi.OP_N, 16, 16, 16, 4, 0.0, 0.5, tag="alpha0_beta_half"),
             _row(abi.OP_N, abi.OP_N, 16, 16, 16, 4, 1.0, 0.0, fills=("RANDOM_1", "RANDOM_1", cells.NAN),
                  tag="beta0_never_reads_C")]
    single = {
        "handle_null": dict(handle_null=True), "null_alpha": dict(alpha=None), "null_beta": dict(beta=None),
        "negative_m": dict(m=-1), "negative_n": dict(n=-1), "negative_k": dict(k=-1),
        "negative_batch": dict(batch=-1), "invalid_transA": dict(ta=999), "invalid_transB": dict(tb=999),
        "invalid_lda": dict(lds=("15", "", "")), "invalid_ldb": dict(lds=("", "7", "")),
        "invalid_ldc": dict(lds=("", "", "15")), "null_Aarray": dict(nulls="a"), "null_Barray": dict(nulls="b"),
        "null_Carray": dict(nulls="c"),
    }
    base = dict(ta=abi.OP_N, tb=abi.OP_N, m=16, n=12, k=8, batch=3)
    for name, change in single.items():
        rows.append(_row(**(base | change), tag=name, intended=(name,)))
    pairs = (
        (dict(handle_null=True, alpha=None), ("handle_null", "null_alpha")),
        (dict(alpha=None, m=-1), ("null_alpha", "negative_m")),
        (dict(batch=-1, ta=999), ("negative_batch", "invalid_transA")),
        (dict(tb=999, lds=("15", "", "")), ("invalid_transB", "invalid_lda")),
        (dict(lds=("", "", "15"), nulls="a"), ("invalid_ldc", "null_Aarray")),
        (dict(batch=0, nulls="abc"), ()),
    )
    for change, intended in pairs:
        rows.append(_row(**(base | change), tag="pair_" + ("_".join(intended) or "batch0_null_arrays"),
                         intended=intended))
    return rows


def _coverage(rng: random.Random) -> list[dict[str, str]]:
    rows = []
    for ta, tb in COMBOS:
        for m, n, k in SHAPES:
            alpha, beta = SCALARS[rng.randrange(len(SCALARS))]
            batch = rng.choice(BATCHES)
            pad = rng.randint(0, 7)
            lds = tuple(str(lo + rng.randint(1, 9)) if pad >> bit & 1 else ""
                        for bit, lo in enumerate(min_lds(ta, tb, m, n, k)))
            rows.append(_row(ta, tb, m, n, k, batch, alpha, beta, lds, tag=f"pad{pad}"))
    return rows


def _perf() -> list[dict[str, str]]:
    return [_row(abi.OP_N, abi.OP_N, m, n, k, batch, tag="perf") for m, n, k, batch in PERF]


def generate(seed: int = cells.DEFAULT_SEED) -> list[dict[str, str]]:
    rng = random.Random(seed)
    families = [("TC_L0", _gate()), ("TC_L1", _coverage(rng)), ("TC_PF", _perf())]
    return cells.finalize(families, HEADER, rng)
