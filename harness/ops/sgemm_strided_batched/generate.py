"""Seeded generator of `cases/sgemm_strided_batched_test.csv`: 1000 precision/edge/negative rows and 200 `TC_PF_*`.

Coverage follows the Sgemm seed: every transA x transB in {N, T, C}, stride-0 broadcast of A and of B, compact and
non-compact (gapped) strides, ld padding, k == 0, alpha == 0, beta in {0, 1, other}, batchCount 0 / 1 / large,
sizes around the 128 output tile and the 256 K chunk, m != n with ldc % 8 != 0 (the fast path falls back to a temp),
extreme inputs, and the 参数约束 negatives in their order: handle, trans (INVALID_VALUE), m/n/k/batchCount < 0,
alpha/beta null, lda, ldb, ldc, then A/B null when m, n, batchCount, k > 0 and C null when m, n, batchCount > 0.
Null matrices appear only where every reading of "when there is work" agrees: with m == 0 or batchCount == 0
(SUCCESS), or with k > 0, alpha != 0 and beta not in {0, 1} (INVALID_VALUE).
"""
from __future__ import annotations

import dataclasses
import random
import sys
from collections.abc import Iterator
from functools import partial
from typing import Any

from harness.model import abi
from harness.model.abi import Status
from harness.generate import cells, conditioning
from harness.generate.cells import NULLPTR, UNIFORM, Spec
from harness.ops.gemm_family import COMBOS, OPS, a_rows, b_rows, min_lds, parse_dims
from harness.ops.sgemm_strided_batched import flops_of

OP = "sgemm_strided_batched"
HEADER = ("case_name", "description", "transA", "transB", "m", "n", "k", "alpha", "beta", "lda", "strideA", "ldb",
          "strideB", "ldc", "strideC", "batchCount", "a_fill", "b_fill", "c_fill", "expect_result",
          "mere_threshold", "mare_multiplier", "random_seed")
#: Perf rows the issue names: (m, n, k, batchCount).
REQUIRED_PERF = ((1024, 1024, 1024, 16), (2048, 2048, 2048, 4), (2048, 2048, 2048, 8), (4096, 4096, 4096, 1),
                 (4096, 4096, 4096, 4))
SCALAR_CLASSES = ("zero", "one", "neg_one", "other", "large")


# ---------------------------------------------------------------- the seed's checks (参数约束), shared with coverage
def parse_row(row: dict[str, str]) -> dict[str, Any]:
    """Typed parameters with the table's defaults (empty ld/stride = compact, empty batchCount = 1)."""
    ta, tb, m, n, k = parse_dims(row)
    lds = min_lds(ta, tb, m, n, k)
    lda, ldb = cells.int_cell(row["lda"], lds[0]), cells.int_cell(row["ldb"], lds[1])
    ldc = cells.int_cell(row["ldc"], lds[2])
    return {
        "transA": ta, "transB": tb, "m": m, "n": n, "k": k,
        "alpha": cells.real_cell(row["alpha"], 1.0), "beta": cells.real_cell(row["beta"], 0.0),
        "lda": lda, "ldb": ldb, "ldc": ldc,
        "strideA": cells.int_cell(row["strideA"], lda * (k if ta == abi.OP_N else m)),
        "strideB": cells.int_cell(row["strideB"], ldb * (n if tb == abi.OP_N else k)),
        "strideC": cells.int_cell(row["strideC"], ldc * n),
        "batchCount": cells.int_cell(row["batchCount"], 1),
        "a_fill": row["a_fill"], "b_fill": row["b_fill"], "c_fill": row["c_fill"],
        "handle_null": "handle_null" in row["description"],
        "expect": cells.status_value(row["expect_result"]),
    }


def compact_strides(p: dict[str, Any]) -> tuple[int, int, int]:
    k, m, n = p["k"], p["m"], p["n"]
    return (p["lda"] * (k if p["transA"] == abi.OP_N else m), p["ldb"] * (n if p["transB"] == abi.OP_N else k),
            p["ldc"] * n)


def faults(p: dict[str, Any]) -> list[tuple[str, Status]]:
    """Every fault of a row in the seed's check order; the first one decides the status."""
    out: list[tuple[str, Status]] = []
    if p["handle_null"]:
        out.append(("handle_null", Status.HANDLE_IS_NULLPTR))
    lds = min_lds(p["transA"], p["transB"], p["m"], p["n"], p["k"])
    checks = (
        ("invalid_transA", p["transA"] not in OPS), ("invalid_transB", p["transB"] not in OPS),
        ("negative_m", p["m"] < 0), ("negative_n", p["n"] < 0), ("negative_k", p["k"] < 0),
        ("negative_batch", p["batchCount"] < 0),
        ("null_alpha", p["alpha"] is None), ("null_beta", p["beta"] is None),
        ("invalid_lda", p["lda"] < lds[0]), ("invalid_ldb", p["ldb"] < lds[1]), ("invalid_ldc", p["ldc"] < lds[2]),
    )
    out += [(name, Status.INVALID_VALUE) for name, bad in checks if bad]
    work = p["m"] > 0 and p["n"] > 0 and p["batchCount"] > 0
    for name, fill, needed in (("null_A", p["a_fill"], p["k"] > 0), ("null_B", p["b_fill"], p["k"] > 0),
                               ("null_C", p["c_fill"], True)):
        if work and needed and fill == NULLPTR:
            out.append((name, Status.INVALID_VALUE))
    return out


def flops(p: dict[str, Any]) -> float:
    """The operator's own count (harness.ops.sgemm_strided_batched.flops_of)."""
    return flops_of(p["m"], p["n"], p["k"], p["batchCount"])


# ---------------------------------------------------------------- rendering
def _spec(ta: int, tb: int, m: int, n: int, k: int, alpha: float | None = 1.0, beta: float | None = 0.0,
          batch: int | None = None, fills: tuple[str, str, str] = (UNIFORM, UNIFORM, UNIFORM),
          lds: tuple = (None, None, None), strides: tuple = (None, None, None), tag: str = "",
          handle_null: bool = False) -> Spec:
    return {"ta": ta, "tb": tb, "m": m, "n": n, "k": k, "alpha": alpha, "beta": beta, "batch": batch,
            "fills": fills, "lds": lds, "strides": strides, "tag": tag, "handle_null": handle_null}


def _op(value: int) -> str:
    return {abi.OP_N: "N", abi.OP_T: "T", abi.OP_C: "C"}.get(value, f"op{value}")


def _render(s: Spec, intended: tuple[str, ...] | None = None) -> dict[str, str]:
    batch = "" if s["batch"] is None else f"_b{s['batch']}"
    desc = "_".join(x for x in (s["tag"], "handle_null" if s["handle_null"] else "", _op(s["ta"]) + _op(s["tb"]),
                                f"{s['m']}x{s['n']}x{s['k']}{batch}") if x)

    def opt(v: int | None) -> str:
        return "" if v is None else str(v)

    row = {"description": desc, "transA": cells.enum_cell(s["ta"], cells.TRANS),
           "transB": cells.enum_cell(s["tb"], cells.TRANS),
           "m": str(s["m"]), "n": str(s["n"]), "k": str(s["k"]),
           "alpha": "null" if s["alpha"] is None else cells.num(s["alpha"]),
           "beta": "null" if s["beta"] is None else cells.num(s["beta"]),
           "lda": opt(s["lds"][0]), "strideA": opt(s["strides"][0]), "ldb": opt(s["lds"][1]),
           "strideB": opt(s["strides"][1]), "ldc": opt(s["lds"][2]), "strideC": opt(s["strides"][2]),
           "batchCount": opt(s["batch"]), "a_fill": s["fills"][0], "b_fill": s["fills"][1],
           "c_fill": s["fills"][2], "expect_result": ""}
    cells.set_expectation(row, faults(parse_row(row)), intended, (s["m"], s["n"], s["k"]))
    return row


# ---------------------------------------------------------------- value classes
def scalar(cls: str, rng: random.Random) -> float:
    if cls == "zero":
        return 0.0
    if cls == "one":
        return 1.0
    if cls == "neg_one":
        return -1.0
    if cls == "large":
        return rng.choice((1, -1)) * rng.randint(1000, 99999) * 10.0
    value = 0.0
    while value in (0.0, 1.0, -1.0):
        value = rng.choice((1, -1)) * rng.randint(1, 3000) / 1000
    return value


def _fills(rng: random.Random) -> tuple[str, str, str]:
    return cells.ordinary_fill(rng), cells.ordinary_fill(rng), cells.ordinary_fill(rng)


def _lds(ta: int, tb: int, m: int, n: int, k: int, pattern: int, rng: random.Random, big: bool = False) -> tuple:
    """Explicit leading dimensions (`cells.padded_lds`)."""
    return cells.padded_lds(min_lds(ta, tb, m, n, k), pattern, rng, big)


def _compact(s: Spec) -> tuple[int, int, int]:
    """Compact strides of a spec (its explicit or compact leading dimensions)."""
    m, n, k = s["m"], s["n"], s["k"]
    lda, ldb, ldc = (ld or lo for ld, lo in zip(s["lds"], min_lds(s["ta"], s["tb"], m, n, k)))
    return (lda * (k if s["ta"] == abi.OP_N else m), ldb * (n if s["tb"] == abi.OP_N else k), ldc * n)


#: Stride variants: which of A/B/C gets stride 0 ("0"), a gap after each batch ("gap") or stays compact ("").
STRIDE_KINDS = {"stride0_A": ("0", "", ""), "stride0_B": ("", "0", ""), "stride0_AB": ("0", "0", ""),
                "gap_A": ("gap", "", ""), "gap_B": ("", "gap", ""), "gap_C": ("", "", "gap"),
                "gap_all": ("gap", "gap", "gap"), "explicit_compact": ("=", "=", "=")}


def _with_strides(s: Spec, kind: str, rng: random.Random) -> Spec:
    compact = _compact(s)
    out = []
    for how, c in zip(STRIDE_KINDS[kind], compact):
        out.append(None if how == "" else 0 if how == "0" else c if how == "=" else c + rng.choice((1, 5, 8, 64)))
    return {**s, "strides": tuple(out), "tag": kind}


DIMS = (1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129)
KDIMS = (1, 8, 9, 16, 17, 63, 64, 100, 255, 256, 257)
SHAPES = ((1, 1, 1), (2, 3, 5), (7, 8, 9), (8, 8, 8), (9, 7, 17), (16, 16, 16), (17, 15, 31), (31, 33, 64),
          (32, 32, 32), (33, 31, 65), (64, 64, 64), (65, 63, 100), (100, 60, 30), (127, 128, 129), (128, 128, 128),
          (129, 127, 255), (96, 160, 256), (160, 96, 257), (1, 128, 64), (128, 1, 64), (256, 16, 32),
          (16, 256, 32), (200, 50, 17), (50, 200, 130))
SMALL = tuple(s for s in SHAPES if max(s) <= 65)
TILE_MN = ((127, 127), (128, 128), (129, 129), (255, 256), (256, 257), (257, 255), (128, 257), (257, 128),
           (129, 255), (255, 129), (384, 130), (130, 385))
TILE_K = (255, 256, 257, 511, 512, 513)
#: The few large precision rows (<= 3 touch 2048; budget asserted by tests/generate/test_generate.py).
LARGE = ((1024, 1024, 1024, 1, 0), (1024, 1024, 1024, 1, 4), (1024, 1024, 1024, 1, 8), (1000, 1030, 520, 2, 1),
         (513, 1025, 257, 2, 3), (2048, 2048, 1024, 1, 0), (2048, 256, 512, 1, 5), (256, 2048, 2048, 1, 7))


# ---------------------------------------------------------------- families
def _gate(rng: random.Random) -> list[dict[str, str]]:
    rows = []
    for ta, tb in COMBOS:
        rows.append(_render(_spec(ta, tb, 64, 64, 64, batch=2, fills=_fills(rng), tag="basic_fast_path")))
        rows.append(_render(_spec(ta, tb, 48, 40, 72, scalar("other", rng), scalar("other", rng), 3, _fills(rng),
                                  tag="basic_general")))
    for tag, shape, batch in (("m_zero", (0, 32, 32), 2), ("n_zero", (32, 0, 32), 2), ("batch_zero", (32, 32, 32), 0)):
        rows.append(_render(_spec(abi.OP_N, abi.OP_N, *shape, batch=batch, tag=tag)))
    for beta in (0.0, 1.0, 0.5):
        rows.append(_render(_spec(abi.OP_N, abi.OP_T, 32, 24, 0, 1.0, beta, 2, tag="k_zero")))
        rows.append(_render(_spec(abi.OP_T, abi.OP_N, 32, 24, 16, 0.0, beta, 2, tag="alpha_zero")))
    rows.append(_render(_with_strides(_spec(abi.OP_N, abi.OP_N, 32, 32, 32, batch=4, fills=_fills(rng)),
                                      "stride0_A", rng)))
    rows.append(_render(_with_strides(_spec(abi.OP_N, abi.OP_N, 32, 32, 32, batch=4, fills=_fills(rng)),
                                      "stride0_B", rng)))
    base = _spec(abi.OP_N, abi.OP_N, 32, 32, 32, 1.5, 0.5, 2)
    for fault in ("handle_null", "invalid_transA", "invalid_transB", "negative_m", "negative_n", "negative_k",
                  "negative_batch", "null_alpha", "null_beta", "invalid_lda", "invalid_ldb", "invalid_ldc",
                  "null_A", "null_B", "null_C"):
        rows.append(_faulty(base, (fault,)))
    return rows


def _apply(s: Spec, fault: str, variant: int = 0) -> Spec:
    s = dict(s)
    bounds = (a_rows(s["ta"], s["m"], s["k"]), b_rows(s["tb"], s["k"], s["n"]), s["m"])
    if cells.apply_shared_fault(s, fault, variant, bounds):
        return s
    invalid_ops = (0, 110, 114, 999, 255, 121, -1)
    if fault == "invalid_transA":
        s["ta"] = invalid_ops[variant % 7]
    elif fault == "invalid_transB":
        s["tb"] = invalid_ops[variant % 7]
    elif fault in ("negative_m", "negative_n", "negative_k"):
        s[fault[-1]] = (-1, -16, -2147483648)[variant % 3]
    elif fault == "negative_batch":
        s["batch"] = (-1, -2147483648)[variant % 2]
    else:
        raise ValueError(fault)
    return s


_faulty = partial(cells.faulty, _render, _apply)


MULTI_FAULTS = (
    ("handle_null", "invalid_transA"), ("handle_null", "negative_m"), ("handle_null", "null_beta"),
    ("handle_null", "invalid_ldc"), ("handle_null", "null_B"),
    ("invalid_transA", "invalid_transB"), ("invalid_transA", "negative_k"), ("invalid_transB", "negative_batch"),
    ("invalid_transB", "null_alpha"), ("invalid_transA", "invalid_lda"), ("invalid_transB", "null_C"),
    ("negative_m", "null_alpha"), ("negative_batch", "invalid_ldb"), ("negative_k", "null_beta"),
    ("null_alpha", "invalid_lda"), ("null_beta", "invalid_ldc"), ("invalid_lda", "invalid_ldb"),
    ("invalid_ldb", "invalid_ldc"), ("invalid_ldc", "null_A"), ("invalid_lda", "null_C"), ("null_A", "null_B"),
    ("null_B", "null_C"),
    ("handle_null", "invalid_transB", "negative_n"), ("invalid_transA", "null_beta", "null_A"),
)


def _edges(rng: random.Random) -> list[dict[str, str]]:
    rows = []
    for i, (ta, tb) in enumerate(COMBOS):
        g = scalar("other", rng)
        for shape, batch in (((0, 40, 24), 3), ((40, 0, 24), 3), ((40, 24, 16), 0), ((0, 0, 0), 1))[i % 2::2]:
            rows.append(_render(_spec(ta, tb, *shape, g, scalar("other", rng), batch, _fills(rng), tag="empty")))
        for shape in ((1, 1, 1), (1, 77, 33), (77, 1, 33), (20, 30, 1))[i % 2::2]:
            rows.append(_render(_spec(ta, tb, *shape, g, scalar("other", rng), 2, _fills(rng), tag="unit_dim")))
        for beta in ("zero", "one", "other"):
            rows.append(_render(_spec(ta, tb, 33, 20, 0, g, scalar(beta, rng), 3, _fills(rng),
                                      tag=f"k_zero_beta_{beta}")))
            rows.append(_render(_spec(ta, tb, 20, 33, 17, 0.0, scalar(beta, rng), 3, _fills(rng),
                                      tag=f"alpha_zero_beta_{beta}")))
    singles = ("handle_null", "negative_m", "negative_n", "negative_k", "negative_batch", "null_alpha", "null_beta",
               "null_A", "null_B", "null_C", "invalid_lda", "invalid_ldb", "invalid_ldc")
    for f, fault in enumerate(singles):
        for variant in range(3):
            ta, tb = COMBOS[(f + 3 * variant) % 9]
            base = _spec(ta, tb, 24 + 3 * f, 40 - 2 * variant, 16 + 5 * variant, scalar("other", rng),
                         scalar("other", rng), 2, _fills(rng))
            rows.append(_faulty(base, (fault,), variant))
    for variant in range(7):
        ta, tb = COMBOS[variant]
        base = _spec(ta, tb, 20, 12, 9, 1.5, 0.5, 2, _fills(rng))
        rows.append(_faulty(base, ("invalid_transA",), variant))
        rows.append(_faulty(base, ("invalid_transB",), variant))
    # ld bounds follow trans: A stored k x m under T/C, B stored n x k under T/C.
    for ta, tb, m, n, k in ((abi.OP_T, abi.OP_N, 64, 24, 32), (abi.OP_N, abi.OP_C, 32, 64, 24)):
        lds = (k if ta != abi.OP_N else m, n if tb != abi.OP_N else k, None)
        rows.append(_render(_spec(ta, tb, m, n, k, 1.0, 0.5, 2, _fills(rng), lds, tag="ld_follows_trans")))
    rows.append(_render(_spec(abi.OP_T, abi.OP_N, 32, 24, 64, 1.0, 0.5, 2, _fills(rng), (32, None, None),
                              tag="lda_m_but_trans_needs_k"), ("invalid_lda",)))
    rows.append(_render(_spec(abi.OP_N, abi.OP_T, 32, 64, 24, 1.0, 0.5, 2, _fills(rng), (None, 24, None),
                              tag="ldb_k_but_trans_needs_n"), ("invalid_ldb",)))
    rows.append(_faulty(_spec(abi.OP_N, abi.OP_N, 0, 16, 16), ("invalid_ldc",), 1))  # ldc >= max(1, m) at m == 0
    rows.append(_faulty(_spec(abi.OP_N, abi.OP_N, 0, 0, 0), ("invalid_transA",), 3))  # trans before quick return
    rows.append(_render(_spec(abi.OP_N, abi.OP_N, 0, 16, 16, fills=(NULLPTR, UNIFORM, UNIFORM), tag="null_A_m_zero")))
    rows.append(_render(_spec(abi.OP_T, abi.OP_N, 16, 16, 16, batch=0, fills=(NULLPTR, NULLPTR, NULLPTR),
                              tag="null_ABC_batch_zero")))

    def multi_base(j: int, k: int, names: tuple[str, ...]) -> Spec:
        ta, tb = COMBOS[(j + 4 * k) % 9]
        return _spec(ta, tb, 18 + j, 30 - j // 2, 12 + j, scalar("other", rng), scalar("other", rng), 2, _fills(rng))

    return rows + cells.multi_fault_rows(_faulty, MULTI_FAULTS, multi_base)


def _extremes(rng: random.Random) -> list[dict[str, str]]:
    u, z = UNIFORM, cells.ZEROS
    cases = (
        ("zeros_all", (z, z, z), 1.5, 0.5), ("zeros_A", (z, u, u), 1.0, 0.5), ("zeros_B_beta0", (u, z, u), 1.0, 0.0),
        ("alter_all", (cells.ALTERNATING,) * 3, 1.0, 1.0), ("alter_A", (cells.ALTERNATING, u, u), 1.0, 0.0),
        ("alter_B", (u, cells.ALTERNATING, u), -1.0, 0.5),
        ("extreme_A", (cells.EXTREMES, u, u), 1.0, 0.0), ("extreme_B", (u, cells.EXTREMES, u), 1.0, 0.0),
        ("extreme_C", (u, u, cells.EXTREMES), 1.0, 1.0),
        ("inf_A", (cells.INF, u, u), 1.0, 0.0), ("ninf_B", (u, cells.NINF, u), 0.5, 0.0),
        ("inf_C", (u, u, cells.INF), 1.0, 0.5),
        ("nan_A", (cells.NAN, u, u), 1.0, 0.0), ("nan_B", (u, cells.NAN, u), 2.0, 0.5),
        ("nan_C", (u, u, cells.NAN), 1.0, 1.0), ("nan_C_beta0_not_read", (u, u, cells.NAN), 1.5, 0.0),
        ("nan_A_alpha0_not_read", (cells.NAN, u, u), 0.0, 0.5),
        ("large_1e6_AB", (cells.LARGE, cells.LARGE, u), 1.0, 0.0),
    )
    shapes = ((8, 8, 8), (16, 16, 16), (16, 9, 12), (7, 13, 5))
    rows = []
    for j, (tag, fills, alpha, beta) in enumerate(cases):
        for k in range(4):
            ta, tb = COMBOS[(2 * j + 3 * k) % 9]
            rows.append(_render(_spec(ta, tb, *shapes[(j + k) % 4], alpha, beta, 1 + k % 3, fills, tag=tag)))
    return rows


def _random_spec(rng: random.Random, ta: int, tb: int, shapes: tuple, tag: str) -> Spec:
    m, n, k = rng.choice(shapes)
    return _spec(ta, tb, m, n, k, scalar(rng.choice(SCALAR_CLASSES), rng), scalar(rng.choice(("zero", "one",
                 "other")), rng), rng.choice((None, 1, 2, 3, 4)), _fills(rng), tag=tag)


def _coverage(rng: random.Random, count: int) -> list[dict[str, str]]:
    specs: list[Spec] = []
    for m, n, k in SHAPES:
        for ta, tb in COMBOS:
            specs.append(_spec(ta, tb, m, n, k, scalar(rng.choice(SCALAR_CLASSES), rng),
                               scalar(rng.choice(("zero", "one", "other")), rng), rng.choice((None, 1, 2, 3)),
                               _fills(rng), tag="shape"))
    for i, (m, n) in enumerate(TILE_MN):
        for j, k in enumerate(TILE_K):
            ta, tb = COMBOS[(i + j) % 9]
            specs.append(_spec(ta, tb, m, n, k, scalar("other", rng), scalar("other", rng), None, _fills(rng),
                               tag="tile_edges"))
    for kind in STRIDE_KINDS:
        for ta, tb in COMBOS:
            m, n, k = rng.choice(SMALL)
            s = _spec(ta, tb, m, n, k, scalar("other", rng), scalar("other", rng), rng.randint(3, 8), _fills(rng))
            specs.append(_with_strides(s, kind, rng))
    for pattern in range(8):
        for c, (ta, tb) in enumerate(COMBOS):
            m, n, k = rng.choice(SMALL)
            s = _spec(ta, tb, m, n, k, scalar("other", rng), scalar("other", rng), rng.randint(1, 3), _fills(rng),
                      _lds(ta, tb, m, n, k, pattern, rng, big=c % 2 == 1), tag=f"ld_pad{pattern:03b}")
            specs.append(_with_strides(s, "gap_all", rng) | {"tag": s["tag"] + "_gaps"} if c == 8 else s)
    for a_cls in SCALAR_CLASSES:
        for b_cls in ("zero", "one", "neg_one", "other"):
            for rep in range(2):
                ta, tb = rng.choice(COMBOS)
                m, n, k = rng.choice(SMALL)
                specs.append(_spec(ta, tb, m, n, k, scalar(a_cls, rng), scalar(b_cls, rng), rep + 1, _fills(rng),
                                   tag=f"alpha_{a_cls}_beta_{b_cls}"))
    for c, (ta, tb) in enumerate(COMBOS):
        for m, n, k in ((64, 64, 48), (40, 96, 33), (136, 72, 65)):  # ldc = m % 8 == 0: fast path
            specs.append(_spec(ta, tb, m, n, k, 1.0, 0.0, 2, _fills(rng), tag="fast_path_ldc8"))
        for m, n, k in ((63, 40, 32), (37, 100, 20), (129, 64, 100)):  # m != n, ldc % 8 != 0: fast path falls back
            lds = (None, None, m if c % 2 == 0 else m + 2)
            specs.append(_spec(ta, tb, m, n, k, 1.0, 0.0, 2, _fills(rng), lds=lds, tag="fast_path_ldc_unaligned"))
    for c, batch in enumerate((1, 2, 16, 64, 128, 200)):
        for rep in range(3):
            ta, tb = COMBOS[(3 * c + rep) % 9]
            m, n, k = rng.choice(((8, 8, 8), (7, 9, 5), (16, 17, 15), (32, 32, 32), (33, 31, 17)))
            s = _spec(ta, tb, m, n, k, scalar("other", rng), scalar("other", rng), batch, _fills(rng),
                      tag=f"batch_{batch}")
            specs.append(_with_strides(s, ("gap_all", "stride0_A", "stride0_B")[rep], rng) | {"tag": s["tag"]}
                         if batch >= 16 else s)
    for m, n, k, batch, combo in LARGE:
        ta, tb = COMBOS[combo]
        specs.append(_spec(ta, tb, m, n, k, scalar("other", rng), scalar("other", rng), batch, _fills(rng),
                           tag="large"))
    i = 0
    while len(specs) < count:
        ta, tb = COMBOS[i % 9]
        s = _random_spec(rng, ta, tb, SHAPES, "mixed")
        roll = rng.random()
        if roll < 0.3:
            s = _with_strides(s, rng.choice(tuple(STRIDE_KINDS)), rng) | {"tag": "mixed"}
        elif roll < 0.6:
            s["lds"] = _lds(ta, tb, s["m"], s["n"], s["k"], rng.randrange(8), rng)
        specs.append(s)
        i += 1
    if len(specs) > count:
        raise ValueError(f"sgemm coverage block needs {len(specs)} rows, only {count} left")
    return [_render(s) for s in specs]


PERF_SQUARES = (64, 128, 256, 512, 1024)


def _perf(rng: random.Random) -> list[dict[str, str]]:
    rows = [_render(_spec(abi.OP_N, abi.OP_N, m, n, k, batch=b, tag="perf_required")) for m, n, k, b in REQUIRED_PERF]
    for d in PERF_SQUARES:
        for ta, tb in COMBOS:
            rows.append(_render(_spec(ta, tb, d, d, d, batch=1, fills=_fills(rng), tag="perf_square")))
    for d in (64, 128, 256, 512):
        for b in (4, 16, 64):
            rows.append(_render(_spec(abi.OP_N, abi.OP_N, d, d, d, batch=b, fills=_fills(rng), tag="perf_batch")))
    shapes = ((1024, 1024, 4096, 1), (4096, 4096, 256, 1), (4096, 64, 4096, 1), (64, 4096, 4096, 1),
              (2048, 2048, 512, 2), (1000, 1000, 1000, 2), (1023, 1025, 1027, 1), (384, 384, 384, 32),
              (768, 768, 768, 4), (96, 96, 96, 256), (2048, 128, 2048, 2), (128, 2048, 2048, 2))
    for i, (m, n, k, b) in enumerate(shapes):
        ta, tb = COMBOS[i % 9]
        rows.append(_render(_spec(ta, tb, m, n, k, batch=b, fills=_fills(rng), tag="perf_rect")))
    for kind in ("stride0_A", "stride0_B", "gap_all"):
        for d, b in ((256, 16), (512, 8), (1024, 4)):
            for ta, tb in ((abi.OP_N, abi.OP_N), (abi.OP_T, abi.OP_N)):
                s = _spec(ta, tb, d, d, d, batch=b, fills=_fills(rng))
                rows.append(_render(_with_strides(s, kind, rng) | {"tag": f"perf_{kind}"}))
    for d in (127, 255, 257, 511, 513, 1000, 1023, 1025):
        for ta, tb in ((abi.OP_N, abi.OP_N), (abi.OP_N, abi.OP_T), (abi.OP_T, abi.OP_N)):
            rows.append(_render(_spec(ta, tb, d, d + 8, d, batch=2, fills=_fills(rng), tag="perf_unaligned")))
    for d in (256, 512, 1024):
        for ta, tb in ((abi.OP_N, abi.OP_N), (abi.OP_T, abi.OP_T), (abi.OP_C, abi.OP_N)):
            rows.append(_render(_spec(ta, tb, d, d, d, scalar("other", rng), scalar("other", rng), 4, _fills(rng),
                                      tag="perf_general_scalars")))
    i = 0
    while len(rows) < cells.PERF_ROWS:
        ta, tb = COMBOS[i % 9]
        d = (64, 128, 192, 256, 320, 384, 448, 512, 640, 768)[i % 10]
        b = (1, 2, 4, 8)[i % 4]
        rows.append(_render(_spec(ta, tb, d, d, d, 1.0, 1.0, b, _fills(rng),
                                  _lds(ta, tb, d, d, d, 7, rng, big=True), tag="perf_padded_ld")))
        i += 1
    return rows


# ---------------------------------------------------------------- official decidability (generate.conditioning)
#: Sign-coherent inputs for A and B (uniform and normal, both non-negative): the terms of every sum share a sign,
#: so no element cancels to near zero, where MERE/MARE's relative error has only the 2^-13 floor to stand on.
COHERENT = (("RANDOM_0_5", "RANDOM_0_5"), ("NORMAL_3.0_0.5", "RANDOM_0_5"), ("RANDOM_0_1", "RANDOM_0_1"))


def variants(row: dict[str, str]) -> Iterator[dict[str, str]]:
    """Replacements for a row the official gate cannot decide, same shape, scalars and coverage tags: A and B
    sign-coherent, C signed so that beta*C adds to alpha*A*B instead of cancelling it. Special inputs
    (`cells.SPECIAL_FILLS`) stay; where no such variant is decidable, the operands holding them are left unread
    (alpha = 0, or beta = 0 / beta = 1 for C), which keeps the input in the table as a not-read check."""
    p = parse_row(row)
    alpha, beta = p["alpha"], p["beta"]
    given = (row["a_fill"], row["b_fill"], row["c_fill"])
    c_fill = "RANDOM_0_5" if alpha * beta >= 0 else "RANDOM_5_0"

    def with_(fills: tuple[str, str, str], a: float, b: float) -> dict[str, str]:
        kept = tuple(f if f in cells.SPECIAL_FILLS else new for f, new in zip(given, fills))
        return {**row, "a_fill": kept[0], "b_fill": kept[1], "c_fill": kept[2], "alpha": cells.num(a),
                "beta": cells.num(b)}

    for a_fill, b_fill in COHERENT:
        yield with_((a_fill, b_fill, c_fill), alpha, beta)
    if any(f in cells.SPECIAL_FILLS for f in given):
        for a, b in ((0.0, beta), (alpha, 0.0), (0.0, 1.0)):
            yield with_(COHERENT[0] + ("RANDOM_0_5",), a, b)


def sample_args(args: Any, flops: float) -> Any:
    """The same row on its first batch and a block of C's columns, about `flops` FLOPs: those elements are computed
    from the same inputs (fills are column-major prefixes), so the block measures the row's conditioning."""
    keep = max(1, int(flops // (2.0 * max(1, args.m) * max(1, args.k))))
    return dataclasses.replace(args, n=min(args.n, keep), batch=min(args.batch, 1))


def generate(seed: int = cells.DEFAULT_SEED, part: tuple[int, int] = (0, 1)) -> list[dict[str, str]]:
    """The table's rows (`part`: every n-th of them, cells.table)."""
    with conditioning.single_threaded(), conditioning.kept_heap():
        return cells.table(OP, seed, HEADER, _gate, _edges, _extremes, _coverage, _perf,
                           lambda row: conditioning.decidable(OP, sys.modules[__name__], row), part)
