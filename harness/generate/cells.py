"""Cell vocabulary shared by the case-table generators: enum names, fills, scalars, thresholds, row seeds.

Every cell is produced as a string from integers or Python floats (`repr`), never from numpy scalars or
locale-dependent formatting, so a table is byte-identical on every run and platform.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

from harness.model import abi

DEFAULT_SEED = 20261130
#: Every generated table: precision/edge/negative rows, then `TC_PF_*` rows.
PRECISION_ROWS, PERF_ROWS = 1000, 200

SIDES, UPLOS, TRANS = abi.SIDE_NAMES, abi.UPLO_NAMES, abi.TRANS_NAMES

#: FP32 MERE threshold 2^-13, written exactly (the ops-blas CSVs truncate it to 0.00012207031).
MERE_THRESHOLD = "0.0001220703125"

UNIFORM = "RANDOM_5_5"
ZEROS = "VALUE_NORM_0"
ALTERNATING = "RANDOM_ALTER"
EXTREMES = "RANDOM_EXTREME"
INF = "VALUE_NORM_INF"
NINF = "VALUE_NORM_NINF"
NAN = "VALUE_NORM_NAN"
LARGE = "RANDOM_NORM_1E6"
NULLPTR = "NULLPTR"
#: Fills the ordinary (non-extreme) rows never use: they are the `TC_EX_*` inputs.
SPECIAL_FILLS = (ZEROS, ALTERNATING, EXTREMES, INF, NINF, NAN, LARGE)


def enum_cell(value: int, names: dict[str, int]) -> str:
    """The column's `ACLBLAS_*` name for a valid value, the bare integer otherwise — also for a value that is valid
    in another column (side 121 stays `121`), never `INVALID` or `0xFF`."""
    for name, v in names.items():
        if v == value and name.startswith("ACLBLAS_"):
            return name
    return str(value)


def enum_value(cell: str, names: dict[str, int], default: int) -> int:
    """The integer the C++ `parseEnum` passes: the column's names, else `std::stoi`, else the default."""
    cell = cell.strip()
    if cell in names:
        return names[cell]
    try:
        return int(cell)
    except ValueError:
        return default


def is_null(cell: str) -> bool:
    """A scalar cell that stands for a NULL pointer."""
    return cell.strip().lower() in ("null", "nullptr")


def real_cell(cell: str, default: float) -> float | None:
    """A real scalar cell as the tables read it: `null` is NULL (None), empty is the default."""
    if is_null(cell):
        return None
    return float(cell) if cell.strip() else default


def int_cell(cell: str, default: int) -> int:
    """An integer cell; empty is the default."""
    return int(cell) if cell.strip() else default


def status_cell(status: abi.Status) -> str:
    return f"ACLBLAS_STATUS_{status.name}"


def status_value(cell: str) -> abi.Status:
    cell = cell.strip() or "SUCCESS"
    return abi.Status[cell.removeprefix("ACLBLAS_STATUS_")]


def num(x: float) -> str:
    """A scalar cell: the shortest repr of a Python float (platform independent)."""
    return repr(float(x))


def thresholds(success: bool, dims: Iterable[int]) -> tuple[str, str]:
    """(mere_threshold, mare_multiplier): 2^-13 with 10, or 50 once a dimension reaches 2048; `0,0` on rows that
    expect an error (nothing is verified there)."""
    if not success:
        return "0", "0"
    return MERE_THRESHOLD, "50" if max(dims, default=0) >= 2048 else "10"


def _tenths(t: int) -> str:
    """A number in the fill grammar from tenths: -25 -> `N2.5`."""
    return f"{'N' if t < 0 else ''}{abs(t) // 10}.{abs(t) % 10}"


def normal_fill(rng: random.Random) -> str:
    """`NORMAL_<mean>_<sigma>` (project extension) with mean in [-5, 5] and sigma in [0.1, 2] (task book §3.5)."""
    return f"NORMAL_{_tenths(rng.randint(-50, 50))}_{_tenths(rng.randint(1, 20))}"


def ordinary_fill(rng: random.Random) -> str:
    """Uniform [-5, 5) or normal, half and half."""
    return UNIFORM if rng.random() < 0.5 else normal_fill(rng)


def padded(minimum: int, rng: random.Random, big: bool = False) -> int:
    """A leading dimension above the minimum: a few elements, or a whole unaligned block."""
    return minimum + (rng.choice((17, 33, 64, 100)) if big else rng.randint(1, 7))


def padded_lds(mins: tuple[int, int, int], pattern: int, rng: random.Random, big: bool = False) -> tuple:
    """Explicit leading dimensions: bit 2/1/0 of `pattern` pads lda/ldb/ldc, the others are written minimal."""
    return tuple(padded(lo, rng, big) if pattern >> (2 - i) & 1 else lo for i, lo in enumerate(mins))


# ---------------------------------------------------------------- specs and faults, as both generators write them
#: A row before rendering: the generator's own keys plus `alpha`, `beta`, `fills`, `lds`, `tag`, `handle_null`.
Spec = dict[str, Any]
_NULL_MATRICES = {"null_A": 0, "null_B": 1, "null_C": 2}
_LEADING_DIMS = {"invalid_lda": 0, "invalid_ldb": 1, "invalid_ldc": 2}


def _replaced(values: tuple, index: int, value: Any) -> tuple:
    return values[:index] + (value,) + values[index + 1:]


def apply_shared_fault(s: Spec, fault: str, variant: int, ld_bounds: tuple[int, int, int],
                       ld_negatives: tuple[int, int, int] = (-1, -1, -1)) -> bool:
    """Apply to `s` in place a fault every operator has: null handle, scalar or matrix, or a leading dimension below
    its bound (`ld_bounds`: the rows of A, B, C; `variant` picks bound - 1, 0 or the negative value). False for
    any other fault."""
    if fault == "handle_null":
        s["handle_null"] = True
    elif fault in ("null_alpha", "null_beta"):
        s[fault.removeprefix("null_")] = None
    elif fault in _NULL_MATRICES:
        s["fills"] = _replaced(s["fills"], _NULL_MATRICES[fault], NULLPTR)
    elif fault in _LEADING_DIMS:
        i = _LEADING_DIMS[fault]
        s["lds"] = _replaced(s["lds"], i, (ld_bounds[i] - 1, 0, ld_negatives[i])[variant % 3])
    else:
        return False
    return True


def with_faults(base: Spec, names: tuple[str, ...], variant: int, apply: Callable[[Spec, str, int], Spec]) -> Spec:
    """`base` with each named fault applied in turn, tagged by their names (`two_fault_...` for a pair)."""
    s = base
    for name in names:
        s = apply(s, name, variant)
    prefix = {2: "two_fault_", 3: "three_fault_"}.get(len(names), "")
    s["tag"] = prefix + "_".join(x.replace("handle_null", "handle") for x in names)
    return s


def faulty(render: Callable[[Spec, tuple[str, ...]], dict[str, str]], apply: Callable[[Spec, str, int], Spec],
           base: Spec, names: tuple[str, ...], variant: int = 0) -> dict[str, str]:
    """The rendered row of `base` with the faults `names` applied (in order, `variant` picking among each one's
    invalid values); `render` checks they are the faults the row ends up with, in check order."""
    return render(with_faults(base, names, variant, apply), names)


def multi_fault_rows(faulty: Callable[[Spec, tuple[str, ...], int], dict[str, str]],
                     combinations: tuple[tuple[str, ...], ...],
                     base: Callable[[int, int, tuple[str, ...]], Spec]) -> list[dict[str, str]]:
    """Two rows per combination of faults, each on its own valid `base(j, k, names)` (the j-th combination's k-th,
    made in this order so a generator's seeded draws stay in place) with variant j + k: only the first fault's
    status is expected, which pins the operator's check order."""
    return [faulty(base(j, k, names), names, j + k) for j, names in enumerate(combinations) for k in range(2)]


def set_expectation(row: dict[str, str], found: list[tuple[str, abi.Status]], intended: tuple[str, ...] | None,
                    dims: Iterable[int]) -> None:
    """Fill `expect_result` and the thresholds of a rendered row from its faults in check order. `intended` (fault
    names) guards a generator against a row that does not carry exactly the faults its description claims."""
    if intended is not None and tuple(name for name, _ in found) != intended:
        raise AssertionError(f"{row['description']}: faults {found} != intended {intended}")
    status = found[0][1] if found else abi.Status.SUCCESS
    row["expect_result"] = status_cell(status)
    row["mere_threshold"], row["mare_multiplier"] = thresholds(status == abi.Status.SUCCESS, dims)


Family = Callable[[random.Random], list[dict[str, str]]]


def table(op: str, seed: int, header: tuple[str, ...], gate: Family, edges: Family, extremes: Family,
          coverage: Callable[[random.Random, int], list[dict[str, str]]], perf: Family,
          condition: Callable[[dict[str, str]], dict[str, str]] = lambda row: row,
          part: tuple[int, int] = (0, 1)) -> list[dict[str, str]]:
    """A generator's table: its families drawn from one seeded stream in a fixed order (the coverage block fills the
    precision rows up to PRECISION_ROWS), then named and seeded by `finalize`; `condition` may replace a named and
    seeded row (harness.generate.conditioning: rows the official gate cannot decide). `part` (i, n): only the
    rows at positions i, i + n, i + 2n, ... (each row is conditioned on its own, so n processes can share the
    cost of a table; n = 1 is the whole table)."""
    rng = random.Random(seed)
    gate_rows, edge_rows, extreme_rows = gate(rng), edges(rng), extremes(rng)
    coverage_rows = coverage(rng, PRECISION_ROWS - len(gate_rows) - len(edge_rows) - len(extreme_rows))
    perf_rows = perf(rng)
    if len(perf_rows) != PERF_ROWS:
        raise ValueError(f"{op} perf rows: {len(perf_rows)}")
    rows = finalize([("TC_L0", gate_rows), ("TC_L1", coverage_rows), ("TC_ED", edge_rows),
                     ("TC_EX", extreme_rows), ("TC_PF", perf_rows)], header, rng)
    index, count = part
    return [condition(row) for row in rows[index::count]]


def finalize(families: list[tuple[str, list[dict[str, str]]]], header: tuple[str, ...],
             rng: random.Random) -> list[dict[str, str]]:
    """Name rows `<family>_0001`..., give each a distinct uint32 seed, order the cells by the header.

    Seeds stay below 2^31 so per-array derivations (+1, +2, +3b, +7919) never wrap."""
    total = sum(len(rows) for _, rows in families)
    seeds = rng.sample(range(1, 2 ** 31 - 2 ** 20), total)
    out: list[dict[str, str]] = []
    for family, rows in families:
        for i, row in enumerate(rows, start=1):
            full = {**row, "case_name": f"{family}_{i:04d}", "random_seed": str(seeds[len(out)])}
            if set(full) != set(header):
                raise ValueError(f"row {full['case_name']} has cells {sorted(set(full) ^ set(header))} off the header")
            out.append({key: full[key] for key in header})
    return out
