"""Coverage categories of sgemm_strided_batched table rows (harness.coverage counts them)."""
from __future__ import annotations

from typing import Any

from harness import abi
from harness.ops.sgemm_strided_batched.generate import REQUIRED_PERF, compact_strides
from harness.coverage import (COMMON_REQUIRED, K_CHUNK_EDGES, TILE_EDGES, dim_classes, fill_classes, real_class,
                              status_categories)
from harness.generate import cells

def categories(p: dict[str, Any], found: list, perf: bool) -> tuple[str, list[tuple[str, str]]]:
    """(crossing column, [(group, category)]) of one sgemm_strided_batched row."""
    out = status_categories(p, found)
    if found:
        return "negative", out
    column = cells.enum_cell(p["transA"], cells.TRANS)[-1] + cells.enum_cell(p["transB"], cells.TRANS)[-1]
    m, n, k, batch = p["m"], p["n"], p["k"], p["batchCount"]
    out.append(("transA x transB", column))
    out += [("size", c) for c in dim_classes((m, n, k))]
    if m in TILE_EDGES or n in TILE_EDGES:
        out.append(("size", "tile_128_edge"))
    if k in K_CHUNK_EDGES:
        out.append(("size", "k_chunk_256_edge"))
    if k == 0:
        out.append(("path", "k_zero"))
    if p["alpha"] == 0:
        out.append(("path", "alpha_zero"))
    work = m > 0 and n > 0 and batch > 0 and k > 0 and p["alpha"] != 0
    if work and p["alpha"] == 1 and p["beta"] == 0:
        out.append(("path", "fast_path_ldc8" if p["ldc"] % 8 == 0 else "fast_path_ldc_unaligned"))
    if m > 0 and n > 0 and m != n and p["ldc"] % 8:
        out.append(("path", "rect_m_ne_n_ldc_mod8_ne0"))
    out.append(("alpha", real_class(p["alpha"])))
    out.append(("beta", real_class(p["beta"])))
    out.append(("batchCount", "0" if batch == 0 else "1" if batch == 1 else "2_15" if batch < 16 else "ge_16"))
    compact = compact_strides(p)
    strides = (p["strideA"], p["strideB"], p["strideC"])
    if batch > 1 and min(m, n, k) > 0:
        for name, stride, c in zip("ABC", strides, compact):
            if stride == 0:
                out.append(("stride", f"stride0_{name}"))
            elif stride > c:
                out.append(("stride", f"gap_{name}"))
        if all(s == c for s, c in zip(strides, compact)):
            out.append(("stride", "compact"))
    mins = (max(1, m if p["transA"] == abi.OP_N else k), max(1, k if p["transB"] == abi.OP_N else n), max(1, m))
    pads = [ld > lo for ld, lo in zip((p["lda"], p["ldb"], p["ldc"]), mins)]
    out += [("leading dim", f"{name}_padded") for name, pad in zip(("lda", "ldb", "ldc"), pads) if pad]
    out.append(("leading dim", f"padded_count_{sum(pads)}"))
    out += [("inputs", c) for c in fill_classes([p["a_fill"], p["b_fill"], p["c_fill"]])]
    if perf and (m, n, k, batch) in REQUIRED_PERF:
        out.append(("required perf", f"{m}x{n}x{k} x{batch}"))
    return column, out


REQUIRED = (COMMON_REQUIRED
    + [("transA x transB", a + b) for a in "NTC" for b in "NTC"]
    + [("size", "tile_128_edge"), ("size", "k_chunk_256_edge")]
    + [("path", c) for c in ("k_zero", "alpha_zero", "fast_path_ldc8", "fast_path_ldc_unaligned",
                             "rect_m_ne_n_ldc_mod8_ne0")]
    + [("alpha", c) for c in ("zero", "one", "other")] + [("beta", c) for c in ("zero", "one", "other")]
    + [("batchCount", c) for c in ("0", "1", "ge_16")]
    + [("stride", c) for c in ("stride0_A", "stride0_B", "gap_A", "gap_B", "gap_C", "compact")]
    + [("negative", c) for c in ("invalid_transA", "invalid_transB", "negative_k", "negative_batch")]
    + [("required perf", f"{m}x{n}x{k} x{b}") for m, n, k, b in REQUIRED_PERF])
