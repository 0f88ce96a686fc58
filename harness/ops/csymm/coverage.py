"""Coverage categories of csymm table rows (harness.generate.coverage counts them)."""
from __future__ import annotations

from typing import Any

from harness.generate.coverage import COMMON_REQUIRED, complex_class, fill_classes, padded
from harness.generate import cells
from harness.ops import symm_family
from harness.ops.csymm import min_lds
from harness.ops.csymm.generate import TASKBOOK


def categories(p: dict[str, Any], found: list, perf: bool) -> tuple[str, list[tuple[str, str]]]:
    """(crossing column, [(group, category)]) of one csymm row."""
    column, out = symm_family.categories_head(p, found)
    if found:
        return column, out
    m, n = p["m"], p["n"]
    if m > 0 and n >= 4 * m:
        out.append(("size", "wide_n_ge_4m"))
    if n > 0 and m >= 4 * n:
        out.append(("size", "narrow_m_ge_4n"))
    out.append(("alpha", complex_class(p["alpha"])))
    out.append(("beta", complex_class(p["beta"])))
    if p["alpha"] == 0 and p["beta"] == 1:
        out.append(("path", "quick_return_alpha0_beta1"))
    elif p["alpha"] == 0:
        out.append(("path", "alpha0_scale_c"))
    if m == 0 or n == 0:
        out.append(("path", "quick_return_empty"))
    mins = min_lds(p["side"], m, n)
    pads = padded(p, mins)
    out += [("leading dim", f"{name}_padded") for name in pads]
    out.append(("leading dim", f"padded_count_{len(pads)}"))
    out += [("inputs", c) for c in fill_classes([p["a_fill"], p["b_fill"], p["c_fill"]])]
    compact = p["lda"] == mins[0] and p["ldb"] == mins[1] and p["ldc"] == mins[2]
    for tm, tn, side, uplo in TASKBOOK:
        if perf and (m, n, p["side"], p["uplo"]) == (tm, tn, side, uplo) and p["alpha"] == 1 and p["beta"] == 0 \
                and compact:
            out.append(("taskbook", f"{m}x{n} {column}"))
    return column, out


REQUIRED = (COMMON_REQUIRED
    + symm_family.REQUIRED_SIDE_UPLO
    + [("size", "wide_n_ge_4m"), ("size", "narrow_m_ge_4n")]
    + [(g, c) for g in ("alpha", "beta") for c in ("zero", "one", "neg_one", "imag", "large", "general")]
    + [("path", c) for c in ("quick_return_alpha0_beta1", "alpha0_scale_c", "quick_return_empty")]
    + [("negative", "invalid_side"), ("negative", "invalid_uplo")]
    + [("taskbook", f"{m}x{n} {cells.enum_cell(s, cells.SIDES).removeprefix('ACLBLAS_SIDE_')} "
        f"{cells.enum_cell(u, cells.UPLOS).removeprefix('ACLBLAS_')}") for m, n, s, u in TASKBOOK])
