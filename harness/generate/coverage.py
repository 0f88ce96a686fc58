"""Coverage summary of a project case table: how many rows fall in each category of issue 4, and the FLOP sums.

The categories of an operator (`categories(p, faults, perf)` and `REQUIRED`) live in its package's `coverage`
module; the classes they share (dimensions, scalars, fills, statuses) are here.

Categories are computed from the cell values (parsed with the generator's own defaults and check order), never
from case names or descriptions, so a hand-edited row is counted for what it does. The one exception is the family
(`TC_PF_*` rows are the perf phase by convention of the task package).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tabulate import tabulate

from harness.model import operators as ops
from harness.generate import MODULES, cells, module, op_for_header

#: Runtime budgets of the 2-core machine (issue 4): GFLOP sums of one call per row.
PRECISION_GFLOP_BUDGET = 400.0
PERF_GFLOP_BUDGET = 2500.0
PERF_BIG_GFLOP = 256.0
PERF_BIG_ROWS_MAX = 4
PRECISION_2048_ROWS_MAX = 3

PRIMES = frozenset(p for p in range(2, 100) if all(p % d for d in range(2, p)))
TILE_EDGES = frozenset(e + d for e in (128, 256, 384, 512) for d in (-1, 0, 1))
K_CHUNK_EDGES = frozenset(e + d for e in (256, 512, 768) for d in (-1, 0, 1))
FILL_CLASSES = (("uniform", cells.UNIFORM), ("zeros", cells.ZEROS), ("alternating", cells.ALTERNATING),
                ("extremes", cells.EXTREMES), ("inf", cells.INF), ("ninf", cells.NINF), ("nan", cells.NAN),
                ("large_1e6", cells.LARGE), ("null", cells.NULLPTR))


def read_rows(path: Path | str) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows read the way the C++ frame reads them (harness.tables.cases), every header cell present ("" when
    empty). A table with reading errors raises ValueError with the first one."""
    from harness.tables.cases import ERROR, read_table

    table = read_table(str(path))
    errors = [d for d in table.diagnostics if d.severity == ERROR]
    if errors:
        raise ValueError(str(errors[0]))
    return table.header, [{c: row.cells.get(c, "") for c in table.header} for row in table.rows]


def dim_classes(dims: tuple[int, ...]) -> list[str]:
    out = []
    if any(d == 0 for d in dims):
        out.append("zero")
    if any(d == 1 for d in dims):
        out.append("one")
    if any(d in PRIMES for d in dims):
        out.append("small_prime")
    if any(d >= 2 and d & (d - 1) == 0 for d in dims):
        out.append("power_of_two")
    if any(d >= 3 and ((d - 1) & (d - 2) == 0 or (d + 1) & d == 0) for d in dims):
        out.append("power_of_two_pm1")
    if any(d > 1 and d % 16 for d in dims):
        out.append("unaligned")
    if max(dims) >= 1024:
        out.append("large_ge_1024")
    if max(dims) >= 2048:
        out.append("ge_2048")
    if max(dims) >= 4096:
        out.append("ge_4096")
    return out


def complex_class(z: complex) -> str:
    if z == 0:
        return "zero"
    if z == 1:
        return "one"
    if z == -1:
        return "neg_one"
    if abs(z) >= 1e3:
        return "large"
    if z.real == 0:
        return "imag"
    return "real_other" if z.imag == 0 else "general"


def real_class(x: float) -> str:
    if x in (0.0, 1.0, -1.0):
        return {0.0: "zero", 1.0: "one", -1.0: "neg_one"}[x]
    return "large" if abs(x) >= 1e3 else "other"


def fill_classes(fills: list[str]) -> list[str]:
    out = [name for name, spec in FILL_CLASSES if spec in fills]
    if any(f.startswith("NORMAL_") for f in fills):
        out.append("normal")
    return out


def padded(p: dict[str, Any], mins: tuple[int, int, int]) -> list[str]:
    """The leading dimensions of a row (lda, ldb, ldc) above their minimum `mins`."""
    return [name for name, ld, lo in zip(("lda", "ldb", "ldc"), (p["lda"], p["ldb"], p["ldc"]), mins) if ld > lo]


def status_categories(p: dict[str, Any], found: list) -> list[tuple[str, str]]:
    """The expected status and, for a row that must be rejected, its faults: all that such a row covers."""
    out = [("expected status", p["expect"].name)]
    out += [("negative", name) for name, _ in found]
    if len(found) >= 2:
        out.append(("negative", "two_or_more_faults"))
    return out


#: Categories issue 4 requires to be non-empty for every operator (each package adds its own).
COMMON_REQUIRED = (
    [("size", c) for c in ("zero", "one", "small_prime", "power_of_two", "power_of_two_pm1", "unaligned",
                           "large_ge_1024", "ge_2048", "ge_4096")]
    + [("leading dim", c) for c in ("lda_padded", "ldb_padded", "ldc_padded", "padded_count_0", "padded_count_1",
                                    "padded_count_2", "padded_count_3")]
    + [("inputs", c) for c in ("uniform", "normal", "zeros", "alternating", "extremes", "inf", "ninf", "nan",
                               "large_1e6", "null")]
    + [("negative", c) for c in ("handle_null", "null_alpha", "null_beta", "null_A", "null_B", "null_C",
                                 "negative_m", "negative_n", "invalid_lda", "invalid_ldb", "invalid_ldc",
                                 "two_or_more_faults")]
)
def is_perf(row: dict[str, str]) -> bool:
    return row["case_name"].startswith("TC_PF_")


def summarize(op: str, rows: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, int]]:
    """{(group, category): {"total": n, <crossing column>: n, ...}} with every required category present."""
    mod = module(op)
    categories = ops.part(op, "coverage")
    counts: dict[tuple[str, str], dict[str, int]] = {key: {"total": 0} for key in categories.REQUIRED}
    for row in rows:
        perf = is_perf(row)
        p = mod.parse_row(row)
        column, cats = categories.categories(p, mod.faults(p), perf)
        cats = [("family", row["case_name"].rsplit("_", 1)[0])] + cats
        for key in dict.fromkeys(cats):
            entry = counts.setdefault(key, {"total": 0})
            entry["total"] += 1
            entry[column] = entry.get(column, 0) + 1
    return counts


def missing(op: str, counts: dict[tuple[str, str], dict[str, int]]) -> list[tuple[str, str]]:
    """Required categories without a single row."""
    return [key for key in ops.part(op, "coverage").REQUIRED if counts.get(key, {}).get("total", 0) == 0]


def flop_sums(op: str, rows: list[dict[str, str]]) -> dict[str, float | int]:
    """One-call FLOP sums of the precision and perf phases and the counts the runtime budget limits."""
    mod = module(op)
    precision, perf = [], []
    big_dims = 0
    for row in rows:
        p = mod.parse_row(row)
        f = mod.flops(p)
        dims = [p[d] for d in ("m", "n", "k") if d in p]
        if is_perf(row):
            perf.append(f)
        else:
            precision.append(f)
            big_dims += max(dims) >= 2048
    return {
        "precision_rows": len(precision), "precision_gflop": sum(precision) / 1e9,
        "precision_max_row_gflop": max(precision, default=0.0) / 1e9, "precision_rows_ge_2048": big_dims,
        "perf_rows": len(perf), "perf_gflop": sum(perf) / 1e9,
        "perf_rows_above_256_gflop": sum(f > PERF_BIG_GFLOP * 1e9 for f in perf),
    }


def over_budget(sums: dict[str, float | int]) -> list[str]:
    out = []
    if sums["precision_gflop"] > PRECISION_GFLOP_BUDGET:
        out.append(f"precision FLOPs {sums['precision_gflop']:.1f} GFLOP > {PRECISION_GFLOP_BUDGET:g}")
    if sums["precision_rows_ge_2048"] > PRECISION_2048_ROWS_MAX:
        out.append(f"{sums['precision_rows_ge_2048']} precision rows at >= 2048 > {PRECISION_2048_ROWS_MAX}")
    if sums["perf_gflop"] > PERF_GFLOP_BUDGET:
        out.append(f"perf FLOPs {sums['perf_gflop']:.1f} GFLOP > {PERF_GFLOP_BUDGET:g}")
    if sums["perf_rows_above_256_gflop"] > PERF_BIG_ROWS_MAX:
        out.append(f"{sums['perf_rows_above_256_gflop']} perf rows above {PERF_BIG_GFLOP:g} GFLOP "
                   f"> {PERF_BIG_ROWS_MAX}")
    return out


def describe(path: Path | str) -> tuple[str, bool]:
    """(report text, ok): the category table with side x uplo / transA x transB crossings, the FLOP sums, and
    what is missing or over budget. Raises ValueError for a table that is not a project table."""
    header, rows = read_rows(path)
    op = op_for_header(header) or _op_by_name(path, header)
    if op is None:
        raise ValueError(f"{path}: the header matches no project table ({', '.join(ops.names())}) and the file "
                         "name (<op>_test.csv) no operator with a generator whose columns it has")
    rows = [{col: row.get(col, "") for col in module(op).HEADER} for row in rows]
    counts = summarize(op, rows)
    columns = sorted({c for entry in counts.values() for c in entry if c not in ("total", "negative")})
    table = [[g, c, e["total"], *(e.get(col, 0) or "" for col in columns)]
             for (g, c), e in sorted(counts.items(), key=_order)]
    text = [f"{path}: {op}, {len(rows)} rows", tabulate(table, headers=["group", "category", "rows", *columns])]
    sums = flop_sums(op, rows)
    text.append(f"precision phase: {sums['precision_rows']} rows, {sums['precision_gflop']:.1f} GFLOP "
                f"(budget {PRECISION_GFLOP_BUDGET:g}), largest row {sums['precision_max_row_gflop']:.1f} GFLOP, "
                f"{sums['precision_rows_ge_2048']} rows with a dimension >= 2048 (max {PRECISION_2048_ROWS_MAX})")
    text.append(f"perf phase: {sums['perf_rows']} rows, {sums['perf_gflop']:.1f} GFLOP for one call each "
                f"(budget {PERF_GFLOP_BUDGET:g}), {sums['perf_rows_above_256_gflop']} rows above "
                f"{PERF_BIG_GFLOP:g} GFLOP (max {PERF_BIG_ROWS_MAX})")
    empty = missing(op, counts)
    problems = [f"empty category: {g} / {c}" for g, c in empty] + over_budget(sums)
    text.append("\n".join(problems) if problems else "every required category is covered; budgets hold")
    return "\n".join(text), not problems


def _op_by_name(path: Path | str, header: list[str]) -> str | None:
    """The operator an upstream table is for, by its file name (`ssymm_test.csv`), when it has the operator's
    key columns: such a table lacks the project's extra columns (fills, seed), whose cells then read as empty,
    which is what the C++ frame does with a missing column."""
    stem = Path(path).stem
    op = stem[: -len("_test")] if stem.endswith("_test") else None
    if op not in MODULES:
        return None
    key = {"case_name", "m", "n"} | ({"side", "uplo"} if "side" in module(op).HEADER else {"transA", "transB"})
    return op if key <= set(header) else None


_GROUP_ORDER = ("family", "expected status", "side x uplo", "transA x transB", "size", "alpha", "beta", "path",
                "batchCount", "stride", "leading dim", "inputs", "negative", "taskbook", "required perf")


def _order(item: tuple[tuple[str, str], dict[str, int]]) -> int:
    """Groups in reading order; within a group the required categories first (sorting is stable)."""
    group = item[0][0]
    return _GROUP_ORDER.index(group) if group in _GROUP_ORDER else len(_GROUP_ORDER)

