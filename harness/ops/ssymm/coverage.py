"""Coverage categories of ssymm table rows (harness.generate.coverage counts them)."""
from __future__ import annotations

from typing import Any

from harness.generate.coverage import padded, real_class
from harness.generate import cells
from harness.ops import symm_family
from harness.ops.ssymm import min_lds

NEGATIVE = ("negative_m", "negative_n", "handle_null", "invalid_side", "invalid_uplo", "invalid_lda", "invalid_ldb",
            "invalid_ldc", "null_alpha", "null_beta", "null_A", "null_B", "null_C", "two_or_more_faults")


def categories(p: dict[str, Any], found: list, perf: bool) -> tuple[str, list[tuple[str, str]]]:
    """(crossing column, [(group, category)]) of one ssymm row."""
    column, out = symm_family.categories_head(p, found)
    if found:
        return column, out
    m, n = p["m"], p["n"]
    out += [("alpha", real_class(p["alpha"])), ("beta", real_class(p["beta"]))]
    if m == 0 or n == 0:
        out.append(("path", "quick_return_empty"))
    elif p["alpha"] == 0:
        out.append(("path", "quick_return_alpha0_beta1" if p["beta"] == 1 else "alpha0_scale_c"))
    out += [("leading dim", f"{name}_padded") for name in padded(p, min_lds(p["side"], m, n))]
    if not any((p["a_fill"], p["b_fill"], p["c_fill"])):
        out.append(("inputs", "upstream_index_sequence"))
    if p["c_fill"] == cells.NAN:
        out.append(("inputs", "nan_c_never_read"))
    return column, out


REQUIRED = (symm_family.REQUIRED_SIDE_UPLO
            + [("size", c) for c in ("one", "small_prime", "power_of_two", "unaligned")]
            + [(g, c) for g in ("alpha", "beta") for c in ("zero", "one", "other")]
            + [("path", c) for c in ("quick_return_empty", "quick_return_alpha0_beta1", "alpha0_scale_c")]
            + [("leading dim", f"{x}_padded") for x in ("lda", "ldb", "ldc")]
            + [("inputs", "upstream_index_sequence"), ("inputs", "nan_c_never_read")]
            + [("negative", c) for c in NEGATIVE])
