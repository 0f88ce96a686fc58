"""Coverage categories of sgemm_strided_batched table rows (harness.generate.coverage counts them)."""
from __future__ import annotations

from typing import Any

from harness.generate.coverage import COMMON_REQUIRED, K_CHUNK_EDGES, TILE_EDGES, fill_classes, padded, real_class
from harness.ops.gemm_family import REQUIRED_TRANS, batch_class, categories_head, min_lds
from harness.ops.sgemm_strided_batched.generate import REQUIRED_PERF, compact_strides


def categories(p: dict[str, Any], found: list, perf: bool) -> tuple[str, list[tuple[str, str]]]:
    """(crossing column, [(group, category)]) of one sgemm_strided_batched row."""
    column, out = categories_head(p, found)
    if found:
        return column, out
    m, n, k, batch = p["m"], p["n"], p["k"], p["batchCount"]
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
    out.append(("batchCount", batch_class(batch)))
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
    pads = padded(p, min_lds(p["transA"], p["transB"], m, n, k))
    out += [("leading dim", f"{name}_padded") for name in pads]
    out.append(("leading dim", f"padded_count_{len(pads)}"))
    out += [("inputs", c) for c in fill_classes([p["a_fill"], p["b_fill"], p["c_fill"]])]
    if perf and (m, n, k, batch) in REQUIRED_PERF:
        out.append(("required perf", f"{m}x{n}x{k} x{batch}"))
    return column, out


REQUIRED = (COMMON_REQUIRED
    + REQUIRED_TRANS
    + [("size", "tile_128_edge"), ("size", "k_chunk_256_edge")]
    + [("path", c) for c in ("k_zero", "alpha_zero", "fast_path_ldc8", "fast_path_ldc_unaligned",
                             "rect_m_ne_n_ldc_mod8_ne0")]
    + [("alpha", c) for c in ("zero", "one", "other")] + [("beta", c) for c in ("zero", "one", "other")]
    + [("batchCount", c) for c in ("0", "1", "ge_16")]
    + [("stride", c) for c in ("stride0_A", "stride0_B", "gap_A", "gap_B", "gap_C", "compact")]
    + [("negative", c) for c in ("invalid_transA", "invalid_transB", "negative_k", "negative_batch")]
    + [("required perf", f"{m}x{n}x{k} x{b}") for m, n, k, b in REQUIRED_PERF])
